"""`bridge serve` with an agent that cannot start (`node v1-agent.js` where there is no such file):
one line of ours on stderr, exit 2, the program's stack trace summarised, no record written and
none overwritten. An agent that started and then failed keeps its stderr and its exit status."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acp_lifecycle.sims.bridge.serve import record_sides

BRIDGE = [sys.executable, "-c", "import sys; from acp_lifecycle.sims.cli import main; sys.exit(main())", "bridge", "serve"]
V2_INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}

CANNOT_START = [
    ([sys.executable, "-c", "import no_such_module_here"], "(ModuleNotFoundError: No module named 'no_such_module_here')"),
    ([sys.executable, "-c", "raise SystemExit(7)"], "exited with status 7 before it wrote anything; "),
    pytest.param(["node", "v1-agent-that-is-not-here.js"], "(Error: Cannot find module",
                 marks=pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")),
]


def _serve(agent: list[str], *options: str, send: bytes = b"") -> tuple[int, str, bytes]:
    """`bridge serve --to v2 OPTIONS -- AGENT` with the client's stdin open until the bridge exits
    (an editor waiting for its agent), after writing ``send``: exit status, stderr, stdout."""
    proc = subprocess.Popen([*BRIDGE, "--to", "v2", *options, "--", *agent],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if send:
            proc.stdin.write(send)
            proc.stdin.flush()
        code = proc.wait(timeout=60)
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
    return code, proc.stderr.read().decode(), proc.stdout.read()


@pytest.mark.parametrize("agent, said", CANNOT_START)
def test_an_agent_that_cannot_start_is_one_line_and_exit_2(agent, said):
    code, err, out = _serve(agent, send=(json.dumps(V2_INIT) + "\n").encode())
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("acp-lifecycle: error: the agent could not start: `") and said in err
    assert err.rstrip().endswith("the bridge stops")
    assert "Traceback" not in err and "    at " not in err  # summarised, not shown
    assert out == b""  # nothing but JSON-RPC ever reaches the client, and here nothing at all


@pytest.mark.parametrize("agent, said", CANNOT_START)
def test_an_agent_that_cannot_start_is_one_line_when_the_client_sent_a_line_and_left(agent, said):
    """`echo LINE | bridge serve --to v2 -- node v1-agent.js`: the client's stdin ends before the
    agent has failed; still one line of ours and exit 2, not the program's stack trace."""
    proc = subprocess.run([*BRIDGE, "--to", "v2", "--", *agent], input=(json.dumps(V2_INIT) + "\n").encode(),
                          capture_output=True, timeout=60)
    err = proc.stderr.decode()
    failure = [ln for ln in err.splitlines() if "could not start" in ln]
    assert proc.returncode == 2 and len(failure) == 1 and said in failure[0], err
    assert "Traceback" not in err and "    at " not in err and proc.stdout == b""


def test_an_agent_that_cannot_start_writes_no_record_and_overwrites_none(tmp_path):
    agent = CANNOT_START[0][0]
    record = tmp_path / "r.jsonl"
    code, err, _ = _serve(agent, "--record", str(record))
    assert code == 2 and f"{record} not written" in err
    assert sorted(tmp_path.iterdir()) == []  # so the retry needs no --force
    sides = [record, tmp_path / "r.v1.jsonl", tmp_path / "r.v2.jsonl"]
    for path in sides:
        path.write_text("precious\n")
    code, err, _ = _serve(agent, "--record", str(record), "--force")
    assert code == 2 and "could not start" in err
    assert [p.read_text() for p in sides] == ["precious\n"] * 3


def test_an_agent_that_answered_then_failed_keeps_its_stderr_its_status_and_the_record(tmp_path):
    agent = [sys.executable, "-c",
             "import sys, json\n"
             "m = json.loads(sys.stdin.readline())\n"
             "print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': 1}}), flush=True)\n"
             "sys.stderr.write('agent: giving up\\n')\n"
             "sys.exit(3)\n"]
    record = tmp_path / "r.jsonl"
    code, err, out = _serve(agent, "--record", str(record), send=(json.dumps(V2_INIT) + "\n").encode())
    assert code == 3 and "agent: giving up\n" in err and "could not start" not in err
    assert json.loads(out.splitlines()[0])["id"] == 0
    sides = record_sides(record)
    assert sides["v2"][0]["msg"] == V2_INIT and {"client", "agent"} <= {e["from"] for e in sides["v1"]}


FAKE_AGENT = [sys.executable, str(Path(__file__).resolve().parent / "bridge" / "fake_agent.py")]


def test_a_file_on_stdin_is_the_clients_input_read_to_its_end(tmp_path):
    """`bridge serve --to v2 -- AGENT < session.jsonl`: the file is what the client sends (the loop
    cannot watch a file: it was `ValueError: Pipe transport is for pipes/sockets only`)."""
    lines = tmp_path / "client.jsonl"
    lines.write_text(json.dumps(V2_INIT) + "\n")
    with lines.open("rb") as stdin:
        proc = subprocess.run([*BRIDGE, "--to", "v2", "--", *FAKE_AGENT], stdin=stdin, capture_output=True, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    assert json.loads(proc.stdout.splitlines()[0])["id"] == 0  # answered


def test_dev_null_on_stdin_is_an_immediate_end_of_input():
    """`bridge serve ... </dev/null`: no client at all; the agent sees end of input and the bridge
    ends (it was a traceback, then a hang)."""
    with open(os.devnull, "rb") as stdin:
        proc = subprocess.run([*BRIDGE, "--to", "v2", "--", *FAKE_AGENT], stdin=stdin, capture_output=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, b"") and "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
