"""`acp-lifecycle trace` as a person and a program see it: output into a pipe and into a
terminal, --json records, a v1 transcript, Ctrl-C, reading one line at a time."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acp_lifecycle.model.wire_rules import Finding
from conftest import STARTED_MAIN, await_started
from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.cli.trace import finding_lines, rule_sentence
from acp_lifecycle.sims.wire.transcript import Reader, TranscriptError

ROOT = Path(__file__).resolve().parent
EXAMPLES = ROOT.parent / "examples"
V1_RECORDS = ROOT / "bridge" / "fixtures"

UNANSWERED = {"conn": "c", "from": "client",
              "msg": {"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}}


def _write(path: Path, entries) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def _long_finding_transcript(tmp_path) -> Path:
    """A transcript whose findings are long lines: a 200-character JSON-RPC id, a schema problem."""
    rid = "r" * 200
    return _write(tmp_path / "long.jsonl", [
        {"conn": "c", "from": "client", "msg": {"jsonrpc": "2.0", "id": rid, "method": "session/new", "params": {"cwd": "/"}}},
        {"conn": "c", "from": "agent", "msg": {"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "idle", "stopReason": "finished_somehow"}}}},
    ])


# ---------------------------------------------------------------------------
# Output


def test_piped_output_is_one_line_per_finding_never_wrapped(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")  # a pipe is never wrapped, whatever the width says
    path = _long_finding_transcript(tmp_path)
    assert main(["trace", "--no-schema", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    findings = [ln for ln in lines if ln.startswith(f"{path}:")]
    sentences = [ln for ln in lines if ln.startswith("    ")]
    assert len(findings) >= 2 and len(sentences) == len(findings)
    assert len(findings) + len(sentences) + 1 == len(lines)  # nothing else but the summary
    assert any("r" * 200 in ln for ln in findings) and max(map(len, lines)) > 200
    assert re.fullmatch(r"1 file\(s\), \d+ violation\(s\), \d+ warning\(s\) \(rules rfd\+2\.4\.0\)", lines[-1])


def test_a_terminal_gets_findings_wrapped_to_its_width_with_a_hanging_indent(tmp_path, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    monkeypatch.setenv("COLUMNS", "72")
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.chdir(tmp_path)  # a short name: a path wider than the terminal is cut like any long word
    path = _long_finding_transcript(tmp_path).relative_to(tmp_path)
    assert main(["trace", "--no-schema", str(path)]) == 1
    lines = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()).splitlines()
    assert max(len(ln) for ln in lines) <= 72
    starts = [i for i, ln in enumerate(lines) if ln.startswith(f"{path}:")]
    assert len(starts) >= 2
    # everything between two findings is indented: continuation lines and the rule's sentence
    for a, b in zip(starts, starts[1:] + [len(lines) - 1]):
        assert all(ln.startswith("    ") for ln in lines[a + 1:b]), lines[a:b]
    assert "r" * 60 in out.getvalue()  # the 200-character id, cut into indented pieces


def test_finding_lines_wrap_with_hanging_indents_and_lose_no_word():
    f = Finding(3, "every_request_answered", "violation", "the client's session/new " + "x" * 150 + " on c is never answered")
    lines = [text for text, _ in finding_lines("some/log.jsonl", f, 50)]
    assert all(len(ln) <= 50 for ln in lines)
    assert lines[0].startswith("some/log.jsonl:3: violation")
    sentence_at = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("JSONRPC-REPLY:"))
    assert all(ln.startswith("    ") and not ln.startswith("     ") for ln in lines[1:sentence_at + 1])
    assert all(ln.startswith("      ") for ln in lines[sentence_at + 1:])
    assert "".join(ln.strip() for ln in lines[:sentence_at]).replace(" ", "") == \
        f"some/log.jsonl:3: violation every_request_answered: {f.message}".replace(" ", "")
    # unwrapped (a pipe): one line for the finding, one for its sentence
    assert len(finding_lines("some/log.jsonl", f, None)) == 2


def test_a_json_rpc_rule_names_its_source_once(tmp_path, capsys):
    path = _write(tmp_path / "one.jsonl", [UNANSWERED])
    assert main(["trace", "--no-schema", str(path)]) == 1
    out = capsys.readouterr().out
    assert '    JSONRPC-REPLY: JSON-RPC 2.0: "When a rpc call is made' in out and "JSON-RPC 2.0: JSON-RPC 2.0" not in out
    assert rule_sentence("RFD-X", 'RFD: "text"') == 'RFD-X: RFD: "text"'
    assert rule_sentence("JSON-RPC 2.0", 'JSON-RPC 2.0: "text"') == 'JSON-RPC 2.0: "text"'


def test_json_is_one_record_per_line(tmp_path, capsys):
    path = _long_finding_transcript(tmp_path)
    assert main(["trace", "--json", "--no-schema", str(path), str(EXAMPLES / "session.jsonl")]) == 1
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["record"] for r in records[:-1]} == {"finding"} and records[-1]["record"] == "summary"
    assert {r["file"] for r in records[:-1]} == {str(path)}
    assert all(set(r) >= {"file", "line", "property", "severity", "message", "clause", "quote"} for r in records[:-1])
    assert records[-1]["files"] == 2 and records[-1]["violations"] == sum(r["severity"] == "violation" for r in records[:-1])


# ---------------------------------------------------------------------------
# ACP v1


def _v1_side(record: str, tmp_path) -> Path:
    from acp_lifecycle.sims.bridge.serve import record_sides

    return _write(tmp_path / f"{record}.v1.jsonl", record_sides(V1_RECORDS / f"{record}.jsonl")["v1"])


@pytest.mark.parametrize("options", [[], ["--no-schema"], ["--json"]])
def test_a_v1_transcript_is_named_in_one_line_with_the_bridge_to_run(tmp_path, capsys, options):
    path = _v1_side("ts-v1-agent", tmp_path)
    assert main(["trace", *options, str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "ACP v1 transcript" in captured.err and "protocolVersion 1" in captured.err
    assert f"acp-lifecycle bridge --to v2 {path} > {tmp_path / 'ts-v1-agent.v1.v2.jsonl'}" in captured.err


def test_the_bridge_command_it_suggests_gives_a_transcript_trace_checks(tmp_path, capsys):
    path = _v1_side("ts-v1-agent", tmp_path)
    main(["trace", str(path)])
    command = re.search(r"`acp-lifecycle (bridge [^`]*) > ([^`]*)`", capsys.readouterr().err)
    main(command.group(1).split())
    Path(command.group(2)).write_text(capsys.readouterr().out)
    assert main(["trace", command.group(2)]) == 0
    assert "no findings" in capsys.readouterr().out


def test_the_negotiated_version_is_the_agent_s_answer(tmp_path, capsys):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    asked_only = _write(tmp_path / "asked.jsonl", [{"conn": "c", "from": "client", "msg": init}])
    assert main(["trace", "--no-schema", str(asked_only)]) == 2
    assert "asks for protocolVersion 1" in capsys.readouterr().err
    answered_v2 = _write(tmp_path / "v2.jsonl", [
        {"conn": "c", "from": "client", "msg": init},
        {"conn": "c", "from": "agent", "msg": {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}}}])
    assert main(["trace", "--no-schema", str(answered_v2)]) == 0
    assert "v1" not in capsys.readouterr().err


def test_without_an_initialize_a_v1_looking_log_is_checked_with_a_hint(capsys):
    path = ROOT / "vectors" / "bridge-v1-turn.jsonl"
    assert main(["trace", "--no-schema", str(path)]) == 1
    captured = capsys.readouterr()
    assert "success_carries_message_id" in captured.out
    assert captured.err.count("\n") == 1 and "looks like ACP v1" in captured.err and "bridge --to v2" in captured.err


# ---------------------------------------------------------------------------
# Reading one line at a time; Ctrl-C


def test_the_reader_hands_out_lines_before_it_reads_the_rest(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(UNANSWERED) + "\n" + json.dumps(UNANSWERED) + "\nnot json\n")
    lines = iter(Reader(path))
    assert next(lines)[0] == 1 and next(lines)[0] == 2
    with pytest.raises(TranscriptError, match=r"t\.jsonl:3: not JSON"):
        next(lines)


def test_a_bad_line_after_findings_is_exit_2_and_nothing_on_stdout(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(UNANSWERED) + "\n" * 3 + '{"conn": "c"}\n')
    assert main(["trace", "--no-schema", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "t.jsonl:4:" in captured.err


def test_reading_leaves_the_garbage_collector_as_it_found_it(tmp_path, capsys):
    """trace collects only young garbage while it reads (``_young_collections``); after it, whether
    the file was read to its end or not, the collector is back as it was."""
    import gc

    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    good = _write(tmp_path / "good.jsonl", [UNANSWERED])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(UNANSWERED) + "\nnot json\n")
    assert main(["trace", "--no-schema", str(good)]) == 1
    assert main(["trace", "--no-schema", str(bad)]) == 2
    capsys.readouterr()
    assert gc.get_threshold() == threshold and gc.get_freeze_count() == frozen


def _long_log(path: Path, copies: int) -> Path:
    entries = [json.loads(ln) for ln in (ROOT / "corpus" / "conforming" / "long-conversation.jsonl").read_text().splitlines()]
    with path.open("w") as out:
        for k in range(copies):
            for e in entries:
                text = json.dumps({**e, "conn": f"{e['conn']}-{k}"})
                out.write(re.sub(r'"(sessionId|messageId)": "([^"]*)"', rf'"\1": "\2-{k}"', text) + "\n")
    return path


@pytest.mark.parametrize("after, slow_site", [(0.05, False), (1.0, False), (0.05, True)])
def test_ctrl_c_stops_trace_within_a_second_with_one_line_and_exit_130(tmp_path, after, slow_site):
    """``slow_site``: the interpreter's start-up as a loaded machine stretches it (a ``sitecustomize``
    that takes a second); counted from the handler alone, the Ctrl-C landed in it (exit 1)."""
    log = _long_log(tmp_path / "long.jsonl", 400)
    started = tmp_path / "started"
    env = {**os.environ, "ACP_LIFECYCLE_TEST_STARTED": str(started)}
    if slow_site:
        (tmp_path / "site").mkdir()
        (tmp_path / "site" / "sitecustomize.py").write_text("import time\ntime.sleep(1.0)\n")
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), *filter(None, [os.environ.get("PYTHONPATH")])])
    # Under a shell job SIGINT may be ignored here, and a child inherits that (Python then leaves
    # it ignored): while starting the child, catch it, so that the child starts as from a terminal.
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-c", STARTED_MAIN, "trace", str(log)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
    finally:
        signal.signal(signal.SIGINT, saved)
    # Until the interpreter has started (its SIGINT handler in, ``site`` imported), a Ctrl-C ends any
    # Python program before a line of it runs (-2, or "Fatal Python error: init_import_site" and 1):
    # count ``after`` from the child's first line (the start-up this test is about is trace's, not
    # the interpreter's, which a loaded machine can stretch past 0.05 s).
    await_started(started, proc)
    time.sleep(after)
    if proc.poll() is not None:
        pytest.skip("trace finished before the interrupt")  # pragma: no cover - a very fast machine
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert time.monotonic() - t0 < 1.0
    assert proc.returncode == 130 and err.decode() == "acp-lifecycle: interrupted\n" and out == b""
    assert os.path.exists(log)
