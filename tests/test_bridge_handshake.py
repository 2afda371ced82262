"""The bridges outside the prompt lifecycle: the handshake, session methods, ids, the output
gate, and `bridge serve` as a process (with a rough fake agent) and as a command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from acp_lifecycle.sims.bridge import V1AgentToV2Client, V2AgentToV1Client, bridge_transcript, run_bridge
from acp_lifecycle.sims.bridge.serve import record_sides, recorded_sent, replay_record, schema_problems
from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.wire.schema import SchemaError, Validator, pull
from acp_lifecycle.sims.wire.transcript import parse, parse_text

HERE = Path(__file__).resolve().parent
VECTORS = HERE / "vectors"
FAKE = HERE / "bridge" / "fake_agent.py"
BRIDGE = [sys.executable, "-c", "import sys; from acp_lifecycle.sims.cli import main; sys.exit(main())", "bridge"]


@pytest.fixture(scope="module")
def schemas() -> dict:
    try:
        return {v: Validator(pull(version=v)) for v in ("v1", "v2")}
    except SchemaError as e:
        pytest.fail(f"the v1 and v2 schemas are needed and could not be had: {e}")


def rq(rid, method, params=None):
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params if params is not None else {}}


def nt(method, params):
    return {"jsonrpc": "2.0", "method": method, "params": params}


def ok(rid, result):
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def feed(bridge, *steps):
    """Feed ``(sender, msg)`` steps; returns everything the bridge sent, as (to, msg)."""
    sent = []
    for n, (sender, msg) in enumerate(steps, len(bridge.trace) + len(bridge.agent_side) + 1):
        for e in bridge.feed({"conn": "c0", "from": sender, "msg": msg}, n):
            sent.append(("agent" if e["from"] == "client" else "client", e["msg"]))
    return sent


V2_INIT = rq(0, "initialize", {"protocolVersion": 2, "info": {"name": "ed", "version": "1"},
                               "capabilities": {"auth": {"terminal": {}}, "elicitation": {"form": {}}}})
V1_INIT_RESULT = {
    "protocolVersion": 1, "agentInfo": {"name": "old-agent", "version": "0.9"},
    "agentCapabilities": {"loadSession": True, "promptCapabilities": {"image": True, "audio": False},
                          "mcpCapabilities": {"http": True, "sse": True}, "sessionCapabilities": {"list": {}}},
    "authMethods": [{"id": "login", "name": "Log in"}],
}


# ---------------------------------------------------------------------------
# initialize
# ---------------------------------------------------------------------------


def test_a_v2_clients_initialize_reaches_the_v1_agent_in_v1_and_its_answer_comes_back_in_v2(schemas):
    b = V1AgentToV2Client()
    (to, down), = feed(b, ("client", V2_INIT))
    assert to == "agent" and down["params"]["protocolVersion"] == 1
    assert down["params"]["clientInfo"] == {"name": "ed", "version": "1"}
    assert down["params"]["clientCapabilities"]["fs"] == {"readTextFile": False, "writeTextFile": False}
    assert down["params"]["clientCapabilities"]["auth"] == {"terminal": True}
    (to, up), = feed(b, ("agent", ok(0, V1_INIT_RESULT)))
    assert to == "client" and up["result"]["protocolVersion"] == 2 and up["result"]["info"] == V1_INIT_RESULT["agentInfo"]
    assert up["result"]["capabilities"]["session"] == {"prompt": {"image": {}}, "mcp": {"stdio": {}, "http": {}}}
    assert up["result"]["authMethods"] == [{"type": "agent", "methodId": "login", "name": "Log in"}]
    assert schemas["v1"].check(down, "client") == [] and schemas["v2"].check(up, "agent", "initialize") == []
    kinds = [(p.kind, p.message) for p in b.problems]
    assert any("SSE" in m for _, m in kinds) and any("session/close" in m for _, m in kinds)


def test_a_v1_agent_without_agent_info_is_named_by_the_bridge_and_says_so(schemas):
    b = V1AgentToV2Client()
    feed(b, ("client", V2_INIT))
    (_, up), = feed(b, ("agent", ok(0, {"protocolVersion": 1})))
    assert up["result"]["info"]["name"] == "acp-lifecycle-bridge"
    assert schemas["v2"].check(up, "agent", "initialize") == []
    assert "no agentInfo" in b.problems[-1].message


def test_a_client_asking_protocol_version_1_of_the_v2_side_gets_minus_32022():
    b = V1AgentToV2Client()
    sent = feed(b, ("client", rq(0, "initialize", {"protocolVersion": 1})))
    assert sent == [("client", {"jsonrpc": "2.0", "id": 0, "error": {
        "code": -32022, "message": "Unsupported protocol version", "data": {"requested": 1, "supported": [2]}}})]


def test_a_v1_clients_initialize_reaches_the_v2_agent_in_v2_and_comes_back_in_v1(schemas):
    b = V2AgentToV1Client()
    v1 = rq(0, "initialize", {"protocolVersion": 1, "clientInfo": {"name": "zed", "version": "1"},
                              "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}})
    (_, down), = feed(b, ("client", v1))
    assert down["params"] == {"protocolVersion": 2, "info": {"name": "zed", "version": "1"}, "capabilities": {}}
    assert "v2 has no client file system or terminal methods" in b.problems[-1].message
    result = {"protocolVersion": 2, "info": {"name": "new", "version": "2"},
              "capabilities": {"session": {"prompt": {"embeddedContext": {}}, "mcp": {"stdio": {}}, "delete": {}}},
              "authMethods": [{"type": "terminal", "methodId": "t", "name": "T", "env": [{"name": "A", "value": "1"}]}]}
    (_, up), = feed(b, ("agent", ok(0, result)))
    caps = up["result"]["agentCapabilities"]
    assert up["result"]["protocolVersion"] == 1 and up["result"]["agentInfo"] == {"name": "new", "version": "2"}
    assert caps["loadSession"] is True and caps["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}, "delete": {}}
    assert up["result"]["authMethods"] == [{"id": "t", "type": "terminal", "name": "T", "env": {"A": "1"}}]
    assert schemas["v2"].check(down, "client") == [] and schemas["v1"].check(up, "agent", "initialize") == []


# ---------------------------------------------------------------------------
# Session setup: new, resume/load, close
# ---------------------------------------------------------------------------


def _v1_agent(caps: dict) -> V1AgentToV2Client:
    b = V1AgentToV2Client()
    feed(b, ("client", V2_INIT), ("agent", ok(0, {"protocolVersion": 1, "agentInfo": {"name": "a", "version": "1"},
                                                   "agentCapabilities": caps})))
    return b


def test_session_new_carries_mcp_servers_in_each_versions_shape(schemas):
    b = _v1_agent({"loadSession": True})
    servers = [{"type": "stdio", "name": "fs", "command": "/bin/mcp"}, {"type": "http", "name": "w", "url": "https://x"}]
    (_, down), = feed(b, ("client", rq(1, "session/new", {"cwd": "/p", "mcpServers": servers})))
    assert down["params"]["mcpServers"] == [{"name": "fs", "command": "/bin/mcp", "args": [], "env": []},
                                            {"type": "http", "name": "w", "url": "https://x", "headers": []}]
    assert schemas["v1"].check(down, "client") == []
    v2 = V2AgentToV1Client()
    (_, up), = feed(v2, ("client", rq(1, "session/new", {"cwd": "/p", "mcpServers": [
        {"name": "fs", "command": "/bin/mcp", "args": [], "env": []},
        {"type": "sse", "name": "old", "url": "https://y", "headers": []}]})))
    assert up["params"]["mcpServers"] == [{"type": "stdio", "name": "fs", "command": "/bin/mcp", "args": [], "env": []}]
    assert 'transport "sse", which v2 does not have' in v2.problems[-1].message


def test_resume_with_replay_is_v1_session_load_and_the_replay_is_reset_then_ends_with_the_state(schemas):
    b = _v1_agent({"loadSession": True})
    sent = feed(b, ("client", rq(2, "session/resume", {"sessionId": "s", "cwd": "/p", "replayFrom": {"type": "start"}})))
    assert sent[0][1]["method"] == "session/load" and sent[0][1]["params"] == {"sessionId": "s", "cwd": "/p", "mcpServers": []}
    chunk = {"sessionUpdate": "user_message_chunk", "messageId": "u1", "content": {"type": "text", "text": "hi"}}
    sent = feed(b, ("agent", nt("session/update", {"sessionId": "s", "update": chunk})),
                ("agent", nt("session/update", {"sessionId": "s", "update": chunk})),
                ("agent", ok(2, {"modes": None})))
    kinds = [m["params"]["update"] if "method" in m else m["result"] for _, m in sent]
    assert kinds == [
        {"sessionUpdate": "user_message", "messageId": "u1", "content": []},  # "MUST first send ... content: []"
        chunk, chunk,
        {"sessionUpdate": "state_update", "state": "idle"},  # 2.4.0: a current state before the response
        {},
    ]
    assert schema_problems([{"conn": "c0", "from": "agent", "msg": m} for _, m in sent], schemas["v2"]) == []


def test_resume_without_replay_for_an_agent_that_only_loads_withholds_the_replay():
    b = _v1_agent({"loadSession": True})
    before = len(b.problems)
    (_, down), = feed(b, ("client", rq(2, "session/resume", {"sessionId": "s", "cwd": "/p"})))
    assert down["method"] == "session/load"
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "old"}}
    assert feed(b, ("agent", nt("session/update", {"sessionId": "s", "update": chunk}))) == []
    sent = feed(b, ("agent", ok(2, {})))
    assert [m.get("result", m.get("params", {}).get("update")) for _, m in sent] == [
        {"sessionUpdate": "state_update", "state": "idle"}, {}]
    assert [p.kind for p in b.problems[before:]] == ["resume-through-load"]


def test_an_unsupported_replay_cursor_or_an_agent_that_cannot_load_gets_minus_32602():
    b = _v1_agent({"loadSession": True})
    (to, m), = feed(b, ("client", rq(2, "session/resume", {"sessionId": "s", "cwd": "/p", "replayFrom": {"type": "_mine"}})))
    assert to == "client" and m["error"]["code"] == -32602
    b = _v1_agent({"sessionCapabilities": {"resume": {}}})
    before = len(b.problems)
    (to, m), = feed(b, ("client", rq(2, "session/resume", {"sessionId": "s", "cwd": "/p", "replayFrom": {"type": "start"}})))
    assert to == "client" and m["error"]["code"] == -32602 and [p.kind for p in b.problems[before:]] == ["no-replay"]
    (to, m), = feed(b, ("client", rq(3, "session/resume", {"sessionId": "s", "cwd": "/p"})))
    assert to == "agent" and m["method"] == "session/resume"


def test_close_for_a_v1_agent_without_it_cancels_the_turn_and_answers_after_its_idle():
    b = _v1_agent({})
    feed(b, ("client", rq(1, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}]})),
         ("agent", nt("session/update", {"sessionId": "s", "update": {
             "sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "x"}}})))
    sent = feed(b, ("client", rq(2, "session/close", {"sessionId": "s"})))
    assert sent == [("agent", nt("session/cancel", {"sessionId": "s"}))]
    sent = feed(b, ("agent", ok(1, {"stopReason": "cancelled"})))
    assert [m for _, m in sent] == [
        nt("session/update", {"sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}}),
        ok(2, {}),
    ]
    assert "close-emulated" in [p.kind for p in b.problems]
    b = _v1_agent({})
    assert feed(b, ("client", rq(2, "session/close", {"sessionId": "s"}))) == [("client", ok(2, {}))]


def test_a_v1_clients_session_load_is_resume_with_replay_and_the_snapshot_is_absorbed(schemas):
    b = V2AgentToV1Client()
    (_, down), = feed(b, ("client", rq(3, "session/load", {"sessionId": "s", "cwd": "/p", "mcpServers": []})))
    assert down["method"] == "session/resume" and down["params"]["replayFrom"] == {"type": "start"}
    sent = feed(b,
                ("agent", nt("session/update", {"sessionId": "s", "update": {"sessionUpdate": "user_message", "messageId": "u", "content": [{"type": "text", "text": "a"}]}})),
                ("agent", nt("session/update", {"sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "idle"}})),
                ("agent", ok(3, {"availableCommands": [{"type": "command", "name": "c", "description": "d"}]})))
    assert [m.get("result", m.get("params", {}).get("update")) for _, m in sent] == [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "a"}, "messageId": "u"},
        {},
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "c", "description": "d"}]},
    ]
    assert b.problems == [] and schema_problems([{"conn": "c0", "from": "agent", "msg": m} for _, m in sent], schemas["v1"]) == []


# ---------------------------------------------------------------------------
# Requests across: permissions, $/cancel_request, methods one side lacks
# ---------------------------------------------------------------------------


def test_a_v1_permission_request_becomes_v2s_with_title_and_subject_and_the_answer_comes_back(schemas):
    b = _v1_agent({})
    feed(b, ("agent", nt("session/update", {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Edit"}})))
    req = rq("p1", "session/request_permission", {"sessionId": "s", "toolCall": {"toolCallId": "t"},
                                                  "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]})
    (_, up), = feed(b, ("agent", req))
    assert up["params"]["title"] == "Edit" and up["params"]["subject"] == {"type": "tool_call", "toolCall": {"toolCallId": "t"}}
    assert schemas["v2"].check(up, "agent") == []
    (_, down), = feed(b, ("client", ok("p1", {"outcome": {"outcome": "_later"}})))
    assert down == ok("p1", {"outcome": {"outcome": "cancelled"}})
    # no options: v2 cannot ask; the v1 agent is answered cancelled
    (to, m), = feed(b, ("agent", rq("p2", "session/request_permission", {"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": []})))
    assert to == "agent" and m == ok("p2", {"outcome": {"outcome": "cancelled"}})


def test_cancel_request_for_an_inserted_prompt_is_ignored_by_v2_and_is_session_cancel_for_v1():
    b = _v1_agent({})
    prompt = rq(5, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}]})
    feed(b, ("client", prompt), ("agent", nt("session/update", {"sessionId": "s", "update": {
        "sessionUpdate": "user_message_chunk", "messageId": "m", "content": {"type": "text", "text": "x"}}})))
    assert feed(b, ("client", nt("$/cancel_request", {"requestId": 5}))) == []  # answered at insertion: ignored
    assert feed(b, ("client", nt("$/cancel_request", {"requestId": 99}))) == [("agent", nt("$/cancel_request", {"requestId": 99}))]
    v2 = V2AgentToV1Client()
    feed(v2, ("client", prompt), ("agent", ok(5, {"messageId": "m"})))
    assert feed(v2, ("client", nt("$/cancel_request", {"requestId": 5}))) == [("agent", nt("session/cancel", {"sessionId": "s"}))]


@pytest.mark.parametrize("bridge, sender, msg", [
    (V1AgentToV2Client, "client", rq(7, "tool_call/cancel", {"sessionId": "s", "toolCallId": "t"})),
    (V1AgentToV2Client, "agent", rq(7, "fs/read_text_file", {"sessionId": "s", "path": "/x"})),
    (V2AgentToV1Client, "client", rq(7, "session/set_mode", {"sessionId": "s", "modeId": "m"})),
])
def test_a_method_the_other_side_lacks_is_answered_method_not_found_by_the_bridge(bridge, sender, msg):
    b = bridge()
    (to, m), = feed(b, (sender, msg))
    assert to == sender and m["id"] == 7 and m["error"]["code"] == -32601
    assert [p.kind for p in b.problems] == ["unbridged-method"]


def test_renamed_methods_cross_under_their_other_name():
    b = _v1_agent({})
    assert feed(b, ("client", rq(9, "auth/login", {"methodId": "x"}))) == [("agent", rq(9, "authenticate", {"methodId": "x"}))]
    v2 = V2AgentToV1Client()
    assert feed(v2, ("client", rq(9, "logout", {}))) == [("agent", rq(9, "auth/logout", {}))]


# ---------------------------------------------------------------------------
# Ids, plain problems, the output gate
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("to", ["v1", "v2"])
def test_a_nan_id_is_refused_with_a_problem_and_the_output_stays_json(to):
    text = (VECTORS / "bridge-v1-turn.jsonl").read_text().replace('"id": 1,', '"id": NaN,', 1)
    entries = parse_text(text)  # Python's json reads NaN; JSON does not have it
    out, problems = bridge_transcript(entries, to)
    assert any("NaN" in p.message for p in problems if p.line == 1)
    dumped = "".join(json.dumps(e, allow_nan=False) + "\n" for e in out)  # raises if a NaN got through
    assert "NaN" not in dumped


def test_ids_cross_exactly_strings_huge_and_fractional():
    for rid in ("req_\u00e9", 2**70, -3, 1.5, "1"):
        b = _v1_agent({})
        sent = feed(b, ("client", rq(rid, "session/list", {})), ("agent", ok(rid, {"sessions": []})))
        assert [m["id"] for _, m in sent] == [rid, rid] and all(type(m["id"]) is type(rid) for _, m in sent)


PYTHON_REPR = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|KeyError|TypeError|AttributeError|\{'|\['|': ")


def test_problem_messages_are_plain_sentences_never_python_reprs():
    messages = []
    for name in sorted(p.name for p in VECTORS.glob("bridge-v*.jsonl") if ".to-" not in p.name):
        for to in ("v1", "v2"):
            messages += [p.message for p in run_bridge(parse(VECTORS / name), to).problems]
    junk = [{"hello": 1}, {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}},
            {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": None}},
            {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "idle"}}}]
    for to in ("v1", "v2"):
        messages += [p.message for p in run_bridge([{"conn": "c0", "from": "agent", "msg": m} for m in junk], to).problems]
    prompt = {"conn": "c0", "from": "client", "msg": rq(1, "session/prompt", {"sessionId": "s", "prompt": []})}
    messages += [p.message for p in run_bridge([prompt, {"conn": "c0", "from": "agent", "msg": ok(1, {})}], "v2").problems]
    assert messages and [m for m in messages if PYTHON_REPR.search(m)] == []
    assert any("without a stopReason" in m for m in messages)


def test_the_output_gate_sends_nothing_its_side_rejects(schemas):
    b = V1AgentToV2Client(validators={"client": schemas["v1"], "agent": schemas["v2"]})
    feed(b, ("client", V2_INIT))
    bad = {"protocolVersion": 1, "agentInfo": {"name": 5, "version": "1"}}
    (to, m), = feed(b, ("agent", ok(0, bad)))
    assert to == "client" and m["error"]["code"] == -32603
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "weird"}
    assert feed(b, ("agent", nt("session/update", {"sessionId": "s", "update": update}))) == []
    assert [p.kind for p in b.problems][-2:] == ["invalid-output", "invalid-output"]


# ---------------------------------------------------------------------------
# bridge serve: the process and the command
# ---------------------------------------------------------------------------


def test_serve_keeps_the_clients_stream_json_rpc_and_reports_what_it_could_not_read(tmp_path):
    record = tmp_path / "s.jsonl"
    proc = subprocess.Popen(BRIDGE + ["serve", "--to", "v2", "--record", str(record), "--", sys.executable, str(FAKE)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got = []
    for m in (V2_INIT, rq(1, "session/new", {"cwd": "/p"})):
        proc.stdin.write(json.dumps(m) + "\n")
        proc.stdin.flush()
        got.append(json.loads(proc.stdout.readline()))  # every line the client reads is JSON-RPC
    proc.stdin.close()
    rest, stderr = proc.stdout.read(), proc.stderr.read()
    assert proc.wait(timeout=60) == 0 and rest == "", stderr
    proc = subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr)
    assert [m.get("id") for m in got] == [0, 1] and got[1]["result"] == {"sessionId": "s1"}
    problems = [line for line in proc.stderr.splitlines() if line.startswith("bridge: ")]
    assert any("not JSON; answered with a parse error" in p for p in problems)
    assert any("NaN or Infinity" in p for p in problems)
    # the agent got the parse errors; the client got nothing of it
    assert proc.stderr.count('fake agent got: {"jsonrpc":"2.0","id":null,"error":{"code":-32700') == 2
    sides = record_sides(record)
    assert [e["msg"].get("method") for e in sides["v2"] if e["from"] == "client"] == ["initialize", "session/new"]
    assert len(sides["problems"]) == len(problems)
    _, sent = replay_record(record, "v2")
    assert sent == recorded_sent(record)
    assert (tmp_path / "s.v1.jsonl").exists() and (tmp_path / "s.v2.jsonl").exists()


@pytest.mark.parametrize("argv, needle", [
    (["bridge", "serve", "--to", "v2"], "needs the agent's command after --"),
    (["bridge", "serve", "--to", "v2", "--json", "--", "x"], "--json does not apply to `bridge serve`"),
    (["bridge", "serve", "--to", "v1", "--insertion", "echo", "--", "x"], "--insertion does not apply with --to v1"),
    (["bridge", "serve", "--to", "v2", "--force", "--", "x"], "--force applies only with --record"),
    (["bridge", str(VECTORS / "bridge-v1-turn.jsonl"), "--to", "v2", "--", "x"], "applies to `bridge serve`"),
    (["bridge", str(VECTORS / "bridge-v1-turn.jsonl"), "--to", "v2", "--record", "r.jsonl"], "--record does not apply to a transcript"),
])
def test_bridge_command_mistakes_are_one_line_and_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_serve_never_overwrites_a_record_and_starts_nothing_then(tmp_path, capsys):
    (tmp_path / "r.v2.jsonl").write_text("mine")
    code = main(["bridge", "serve", "--to", "v2", "--record", str(tmp_path / "r.jsonl"), "--", sys.executable, str(FAKE)])
    err = capsys.readouterr().err
    assert code == 2 and "r.v2.jsonl: exists; pass --force" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.v2.jsonl"] and (tmp_path / "r.v2.jsonl").read_text() == "mine"


def test_an_agent_that_cannot_start_is_one_line_and_leaves_no_record(tmp_path, capsys):
    code = main(["bridge", "serve", "--to", "v2", "--record", str(tmp_path / "r.jsonl"), "--", str(tmp_path / "no-such-agent")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot start the agent" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_an_agent_that_outlives_its_client_is_stopped_after_a_grace(monkeypatch, tmp_path):
    import asyncio
    import io

    import acp_lifecycle.sims.bridge.serve as serve_module

    monkeypatch.setattr(serve_module, "AGENT_GRACE", 0.3)
    stubborn = tmp_path / "stubborn.py"
    stubborn.write_text("import sys, time\nfor _ in sys.stdin:\n    pass\ntime.sleep(60)\n")

    async def run():
        reader = asyncio.StreamReader()
        reader.feed_data((json.dumps(nt("session/cancel", {"sessionId": "s"})) + "\n").encode())
        reader.feed_eof()
        out = io.BytesIO()
        code = await asyncio.wait_for(serve_module.serve("v2", [sys.executable, str(stubborn)], stdin=reader, stdout=out,
                                                         stderr=io.StringIO()), 20)
        return code, out.getvalue()

    code, out = asyncio.run(run())
    assert code == 0 and out == b""  # stopped by the bridge: not the agent's failure
