"""`acp-lifecycle record`: a transparent stdio proxy that writes the transcript.

End to end twice: on the tiny Python agent of tests/corpus (runs everywhere),
and on the corpus's SDK agent driven by an SDK client (needs node and the
generator's node_modules: `cd tests/corpus/gen && npm ci`; skipped otherwise).
Each agent writes its own view of the traffic (ACP_CORPUS_TAP); the recording
must carry the same messages, byte for byte, and `trace` must pass it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.wire.record import Recorder, stderr_summary
from acp_lifecycle.sims.wire.transcript import check_transcript, parse

CORPUS = Path(__file__).resolve().parent / "corpus"
GEN = CORPUS / "gen"
TINY = [sys.executable, str(CORPUS / "tiny_agent.py")]
RECORD = [sys.executable, "-c", "import sys; from acp_lifecycle.sims.cli import main; sys.exit(main())", "record"]


def _by_direction(path: Path) -> dict[str, list[str]]:
    """The message bytes of each direction, in order (the text after "msg": of each line)."""
    out: dict[str, list[str]] = {"client": [], "agent": []}
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        head = line.index('"msg":') if "msg" in entry else line.index('"raw":')
        out[entry["from"]].append(line[head:])
    return out


class Session:
    """A client talking to `acp-lifecycle record OUT -- AGENT` over pipes, one line at a time."""

    def __init__(self, out: Path, agent: list[str], env: dict, extra: list[str] = ()):
        self.proc = subprocess.Popen(
            [*RECORD, str(out), *extra, "--", *agent],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )

    def send(self, raw: bytes) -> None:
        self.proc.stdin.write(raw)
        self.proc.stdin.flush()

    def call(self, msg: dict) -> list[dict]:
        """Send a request; read lines until its response; all lines read."""
        self.send(json.dumps(msg).encode() + b"\n")
        got = []
        while True:
            line = self.proc.stdout.readline()
            assert line, "the agent closed its output"
            got.append(json.loads(line))
            if "method" not in got[-1] and got[-1].get("id") == msg["id"]:
                return got

    def end(self) -> tuple[int, str]:
        self.proc.stdin.close()
        self.rest = self.proc.stdout.read()  # what the agent sent after the last response
        code = self.proc.wait(timeout=30)
        return code, self.proc.stderr.read().decode()


def _env(tap: Path, **extra) -> dict:
    env = dict(os.environ, ACP_CORPUS_TAP=str(tap), **extra)
    return env


def test_record_round_trips_a_session_with_the_tiny_python_agent(tmp_path, capsys):
    out, tap = tmp_path / "rec.jsonl", tmp_path / "tap.jsonl"
    s = Session(out, TINY, _env(tap))
    s.call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}})
    sid = s.call({"jsonrpc": "2.0", "id": "new", "method": "session/new", "params": {"cwd": "/work"}})[-1]["result"]["sessionId"]
    huge = 2**63 - 1
    got = s.call({"jsonrpc": "2.0", "id": huge, "method": "session/prompt",
                  "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "héllo \u2028 there"}]}})
    assert got[-1] == {"jsonrpc": "2.0", "id": huge, "result": {"messageId": "m1"}}
    code, err = s.end()
    assert code == 0 and "tiny agent: ready" in err  # the agent's stderr passes through
    assert _by_direction(out) == _by_direction(tap)
    assert f'"id":{huge},' in out.read_text()  # the id as sent, not through a float
    assert check_transcript(parse(out)) == []
    assert main(["trace", "--no-schema", str(out)]) == 0
    assert "no findings" in capsys.readouterr().out


def test_record_relays_bytes_unchanged_and_keeps_a_line_that_is_not_json(tmp_path):
    out, tap = tmp_path / "rec.jsonl", tmp_path / "tap.jsonl"
    s = Session(out, TINY, _env(tap))
    odd = b'{ "jsonrpc" : "2.0", "id" : 1.0, "method" : "initialize", "params" : {"protocolVersion":2,"info":{"name":"t","version":"1"}} }\r\n'
    s.send(odd)
    assert json.loads(s.proc.stdout.readline())["result"]["protocolVersion"] == 2
    s.send(b"this is not json\n")
    assert json.loads(s.proc.stdout.readline())["error"]["code"] == -32700
    code, _ = s.end()
    assert code == 0
    lines = out.read_text().splitlines()
    assert lines[0] == '{"conn":"stdio","from":"client","msg":' + odd.decode().rstrip("\r\n") + "}"
    assert json.loads(lines[1])["msg"]["id"] == 1.0 and '"id":1.0,' in lines[1]  # answered 1.0, not 1
    assert json.loads(lines[2]) == {"conn": "stdio", "from": "client", "raw": "this is not json"}
    assert _by_direction(out) == _by_direction(tap)
    # The line that is not JSON is the one finding (its -32700 with id null pairs with nothing, rightly).
    assert [(f.line, f.property) for f in check_transcript(parse(out))] == [(3, "wire_message_is_json")]


def test_record_exits_with_the_agent_status_and_never_overwrites(tmp_path):
    out, tap = tmp_path / "rec.jsonl", tmp_path / "tap.jsonl"
    s = Session(out, TINY, _env(tap, TINY_AGENT_EXIT="3"))
    s.call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}})
    code, _ = s.end()
    assert code == 3 and len(out.read_text().splitlines()) == 2
    out.write_text("precious\n")
    proc = subprocess.run([*RECORD, str(out), "--", *TINY], input=b"", capture_output=True, env=_env(tap))
    assert proc.returncode == 2 and b"exists" in proc.stderr and b"--force" in proc.stderr
    assert proc.stderr.count(b"\n") == 1 and b"Traceback" not in proc.stderr
    assert out.read_text() == "precious\n"
    proc = subprocess.run([*RECORD, str(out), "--force", "--", *TINY], input=b"", capture_output=True, env=_env(tap))
    assert proc.returncode == 0 and out.read_text() == ""


def _record_while_connected(out: Path, agent: list[str], *extra: str) -> tuple[int, str]:
    """`record OUT -- AGENT` with the client's stdin left open until the recorder exits (an editor
    waiting for the agent): exit status and stderr."""
    proc = subprocess.Popen([*RECORD, str(out), *extra, "--", *agent], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        code = proc.wait(timeout=60)
    finally:
        proc.stdin.close()
    return code, proc.stderr.read().decode()


NODE_MISSING = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
CANNOT_START = [
    ([sys.executable, "-c", "import no_such_module_here"], "ModuleNotFoundError: No module named 'no_such_module_here'"),
    ([sys.executable, "-c", "import sys; sys.stderr.write('bad config\\n'); sys.exit(5)"], "status 5 before it wrote anything (bad config)"),
    pytest.param(["node", "missing-agent.js"], "(Error: Cannot find module", marks=NODE_MISSING),
]


@pytest.mark.parametrize("agent, said", CANNOT_START)
def test_an_agent_that_cannot_start_is_one_line_exit_2_and_no_file(tmp_path, agent, said):
    out = tmp_path / "s.jsonl"
    code, err = _record_while_connected(out, agent)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("acp-lifecycle: error: the agent could not start: `") and said in err
    assert "Traceback" not in err and "    at " not in err  # the program's stack trace is summarised, not shown
    assert not out.exists()  # so the retry needs no --force
    out.write_text("precious\n")  # and --force does not lose the user's file when it fails again
    code, err = _record_while_connected(out, agent, "--force")
    assert code == 2 and "could not start" in err and out.read_text() == "precious\n"


@pytest.mark.parametrize("agent, said", CANNOT_START)
def test_an_agent_that_cannot_start_is_one_line_when_the_client_sent_a_line_and_left(tmp_path, agent, said):
    """`echo LINE | record s.jsonl -- node missing.js`: the client's stdin ends at once, before the
    agent has failed; that race must not turn its stack trace into the user's output or leave a
    file holding only the client's line (the retry would fail with "exists")."""
    out = tmp_path / "s.jsonl"
    line = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}})
    proc = subprocess.run([*RECORD, str(out), "--", *agent], input=(line + "\n").encode(), capture_output=True, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1 and said in err, err
    assert "Traceback" not in err and "    at " not in err
    assert not out.exists()


def test_an_agent_that_ends_with_an_error_after_the_window_keeps_its_stderr(tmp_path):
    """An agent that ran past START_WINDOW before it failed did start: its stderr passes through."""
    out = tmp_path / "s.jsonl"
    agent = [sys.executable, "-c", "import sys, time; sys.stdin.read(); time.sleep(3.5); sys.stderr.write('it broke\\n'); sys.exit(4)"]
    proc = subprocess.run([*RECORD, str(out), "--", *agent], input=b'{"jsonrpc":"2.0","method":"x"}\n', capture_output=True, timeout=60)
    assert proc.returncode == 4 and proc.stderr == b"it broke\n"
    assert out.read_text() == '{"conn":"stdio","from":"client","msg":{"jsonrpc":"2.0","method":"x"}}\n'


def test_an_agent_that_started_keeps_its_stderr_and_its_exit_status(tmp_path):
    """Writing first, then failing, is the agent's own exit: its stderr passes through, the transcript stays."""
    out = tmp_path / "s.jsonl"
    agent = [sys.executable, "-c", "import sys; print('{}', flush=True); sys.stderr.write('it broke\\n'); sys.exit(4)"]
    code, err = _record_while_connected(out, agent)
    assert code == 4 and err == "it broke\n"
    assert out.read_text() == '{"conn":"stdio","from":"agent","msg":{}}\n'


def test_the_summary_of_a_stack_trace_is_its_error_line():
    node = (b"node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module '/x/a.js'\n"
            b"    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)\n  code: 'MODULE_NOT_FOUND',\n"
            b"  requireStack: []\n}\n\nNode.js v20.20.2\n")
    assert stderr_summary(node) == "Error: Cannot find module '/x/a.js'"
    assert stderr_summary(b"Traceback (most recent call last):\n  File x\nValueError: bad: 3\n") == "ValueError: bad: 3"
    assert stderr_summary(b"usage: agent [--port N]\n") == "usage: agent [--port N]"
    assert stderr_summary(b"") == "" and len(stderr_summary(b"x" * 500)) == 160


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["record", "OUT"], "agent command after --"),
        (["record", "DIR", "--", "true"], "is a directory"),
        (["record", "NEW", "--", "/no/such/agent"], "cannot run"),
        (["record", "NEW", "--bogus", "--", "true"], "unrecognized"),
    ],
)
def test_record_bad_usage_is_one_line_and_exit_2(tmp_path, capsys, argv, needle):
    argv = [str(tmp_path / a) if a in ("OUT", "NEW") else str(tmp_path) if a == "DIR" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
    assert not (tmp_path / "NEW").exists()


def test_the_recorder_splits_lines_across_chunks_and_keeps_a_last_line_without_newline():
    import io

    buf = io.BytesIO()
    r = Recorder(buf, conn="c")
    for chunk in (b'{"jsonrpc":"2.0",', b'"method":"x"}\n{"a"', b":1}\r\n\n[1,2]\n", b'{"tail":true}'):
        r.feed("client", chunk)
    r.flush("client")
    lines = buf.getvalue().decode().splitlines()
    assert lines == [
        '{"conn":"c","from":"client","msg":{"jsonrpc":"2.0","method":"x"}}',
        '{"conn":"c","from":"client","msg":{"a":1}}',
        '{"conn":"c","from":"client","raw":"[1,2]"}',
        '{"conn":"c","from":"client","msg":{"tail":true}}',
    ]


def _sdk_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (GEN / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        return "the SDK is not installed: .ci/setup (or cd tests/corpus/gen && npm ci)"
    return None


@pytest.mark.skipif(_sdk_missing() is not None, reason=_sdk_missing() or "")
def test_record_round_trips_the_sdk_agent_driven_by_the_sdk_client(tmp_path):
    out, tap = tmp_path / "rec.jsonl", tmp_path / "tap.jsonl"
    proc = subprocess.run(
        ["node", str(GEN / "stdio-client.mjs"), *RECORD, str(out), "--", "node", str(GEN / "stdio-agent.mjs")],
        capture_output=True, env=_env(tap), timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"corpus agent: ready on stdio" in proc.stderr
    recorded, seen = _by_direction(out), _by_direction(tap)
    assert recorded == seen and len(recorded["client"]) > 10 and len(recorded["agent"]) > 30
    assert [(f.line, f.property, f.message) for f in check_transcript(parse(out))] == []
    assert main(["trace", "--no-schema", str(out)]) == 0
