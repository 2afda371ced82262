"""`--to v2` in front of v1 agents that behave as the published ones did on the wire.

claude-agent-acp, gemini-cli and qwen-code (docs/bridges.md, "v1 agents that do not echo"):
no echo of the prompt, chunks without messageId, a second prompt ending the first turn
`cancelled`, permission requests left open by cancelled work, errors after streamed output,
`usage_update` with `used: null`; and a long session through `bridge serve`, whose memory
must stay flat.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tracemalloc
from pathlib import Path

import pytest

from acp_lifecycle.sims.bridge import V1AgentToV2Client, check_properties, run_bridge
from acp_lifecycle.sims.bridge.core import EVIDENCE

SID = "s1"


def prompt(rid, text="hi", conn="c0"):
    return {"conn": conn, "from": "client", "msg": {"jsonrpc": "2.0", "id": rid, "method": "session/prompt",
                                                    "params": {"sessionId": SID, "prompt": [{"type": "text", "text": text}]}}}


def update(u, conn="c0"):
    return {"conn": conn, "from": "agent", "msg": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": u}}}


def chunk(text, kind="agent_message_chunk"):
    return update({"sessionUpdate": kind, "content": {"type": "text", "text": text}})


def result(rid, reason="end_turn"):
    return {"conn": "c0", "from": "agent", "msg": {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": reason}}}


def error(rid, code=-32603, message="Internal error", data=None):
    err = {"code": code, "message": message, **({"data": data} if data is not None else {})}
    return {"conn": "c0", "from": "agent", "msg": {"jsonrpc": "2.0", "id": rid, "error": err}}


def permission(rid, tool="t1"):
    return {"conn": "c0", "from": "agent", "msg": {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": {
        "sessionId": SID, "toolCall": {"toolCallId": tool, "title": "Run ls", "kind": "execute", "status": "pending"},
        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}}}


def answer(rid, outcome=None, err=None):
    msg = {"jsonrpc": "2.0", "id": rid}
    msg.update({"error": err} if err else {"result": {"outcome": outcome or {"outcome": "selected", "optionId": "allow"}}})
    return {"conn": "c0", "from": "client", "msg": msg}


COMMANDS = update({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "init", "description": "x"}]})
TOOL = update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run ls", "kind": "execute", "status": "pending"})


def run(entries, **options):
    r = run_bridge(entries, "v2", **options)
    assert {k: v for k, v in check_properties(r).items() if v} == {}
    return r


def at(r, line):
    """What the bridge sent while fed input line ``line``, in compact form."""
    out = []
    for o in r.out:
        if o.at != line or o.entry["from"] != "agent":
            continue
        m = o.entry["msg"]
        if "method" not in m:
            out.append(("result", m["result"]) if "result" in m else ("error", m["error"]))
        elif m["method"] == "session/update":
            u = m["params"]["update"]
            out.append((u["sessionUpdate"], u.get("messageId") or u.get("state")))
        else:
            out.append((m["method"], m.get("id", (m.get("params") or {}).get("requestId"))))
    return out


def message_ids(r, kind="agent_message_chunk"):
    return [o.entry["msg"]["params"]["update"]["messageId"] for o in r.out
            if o.entry["msg"].get("method") == "session/update" and o.entry["msg"]["params"]["update"]["sessionUpdate"] == kind]


# ---------------------------------------------------------------------------
# The insertion point: the first evidence that the agent took the prompt
# ---------------------------------------------------------------------------


EVIDENCE_LINES = {
    "agent_message_chunk": chunk("Sure"),
    "agent_thought_chunk": chunk("Hmm", "agent_thought_chunk"),
    "tool_call": TOOL,
    "tool_call_update": update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"}),
    "plan": update({"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "high", "status": "pending"}]}),
    "session/request_permission": permission(7),
}
NOT_EVIDENCE = {
    "available_commands_update": COMMANDS,
    "usage_update": update({"sessionUpdate": "usage_update", "used": 10, "size": 100}),
    "session_info_update": update({"sessionUpdate": "session_info_update", "title": "A chat"}),
    "current_mode_update": update({"sessionUpdate": "current_mode_update", "currentModeId": "ask"}),
    "config_option_update": update({"sessionUpdate": "config_option_update", "configOptions": []}),
}


@pytest.mark.parametrize("kind", sorted(EVIDENCE_LINES))
def test_an_agent_that_does_not_echo_is_answered_at_its_first_output_of_the_turn(kind):
    more = answer(7) if kind == "session/request_permission" else chunk("more")
    r = run([prompt(1), EVIDENCE_LINES[kind], more, result(1)])
    sent = at(r, 2)
    # running, the response and the user message, then the evidence itself
    assert sent[:3] == [("state_update", "running"), ("result", {"messageId": "bridge_msg_1"}), ("user_message", "bridge_msg_1")]
    assert len(sent) == 4
    assert at(r, 4) == [("state_update", "idle")]


def test_the_evidence_kinds_are_the_turns_output_and_the_echo():
    assert EVIDENCE >= {k for k in EVIDENCE_LINES if k != "session/request_permission"} | {"user_message_chunk"}
    assert not EVIDENCE & set(NOT_EVIDENCE)


@pytest.mark.parametrize("kind", sorted(NOT_EVIDENCE))
def test_session_metadata_after_the_prompt_is_no_evidence_of_insertion(kind):
    r = run([prompt(1), NOT_EVIDENCE[kind], chunk("Sure"), result(1)])
    assert all(s == kind for s, _ in at(r, 2))  # forwarded (or no-v2-equivalent): nothing reported inserted
    assert at(r, 3)[1] == ("result", {"messageId": "bridge_msg_1"})
    # and alone it never inserts: the prompt waits for the v1 response
    r = run([prompt(1), NOT_EVIDENCE[kind], result(1)])
    assert ("result", {"messageId": "bridge_msg_1"}) in at(r, 3)


def test_a_later_echo_replaces_the_bridges_report_under_the_same_id():
    echo = update({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}})
    r = run([prompt(1), chunk("Sure"), echo, result(1)])
    assert at(r, 3) == [("user_message", "bridge_msg_1")]
    assert [p.kind for p in r.problems] == []


def test_a_second_prompt_is_not_inserted_by_output_while_the_first_turn_is_held():
    # claude-agent-acp queues prompt 2 and streams on; the output is prompt 1's until its response.
    r = run([prompt(1), chunk("one"), prompt(2), chunk("still one"), result(1), chunk("two"), result(2)])
    assert at(r, 4) == [("agent_message_chunk", "bridge_msg_2")]
    assert at(r, 6)[:2] == [("result", {"messageId": "bridge_msg_3"}), ("user_message", "bridge_msg_3")]
    # gemini-cli and qwen-code end turn 1 cancelled when prompt 2 arrives
    r = run([prompt(1), chunk("one"), prompt(2), result(1, "cancelled"), chunk("two"), result(2)])
    assert at(r, 5)[:2] == [("result", {"messageId": "bridge_msg_3"}), ("user_message", "bridge_msg_3")]


def test_two_prompts_awaiting_insertion_when_output_comes_is_an_ambiguity_reported():
    r = run_bridge([prompt(1), prompt(2, conn="c1"), chunk("x"), result(1), result(2)], "v2")
    assert [(p.line, p.kind) for p in r.problems][:1] == [(3, "ambiguous-echo")]
    assert "first evidence of insertion" in r.problems[0].message


def test_immediate_insertion_is_unchanged():
    r = run([prompt(1), chunk("Sure"), result(1)], insertion="immediate")
    assert ("result", {"messageId": "bridge_msg_1"}) in at(r, 1)


# ---------------------------------------------------------------------------
# messageIds: one per agent message, never across turns
# ---------------------------------------------------------------------------


def test_a_cancelled_turn_ends_the_message_and_the_next_turn_starts_a_new_one():
    r = run([prompt(1), chunk("a"), chunk("b"), result(1, "cancelled"), prompt(2), chunk("c"), result(2)])
    first, second, third = message_ids(r)
    assert first == second != third


def test_an_unrelated_update_does_not_split_a_message_and_a_tool_call_does():
    r = run([prompt(1), chunk("a"), COMMANDS, update({"sessionUpdate": "usage_update", "used": 1, "size": 9}), chunk("b"),
             TOOL, chunk("c"), update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
             chunk("d"), result(1)])
    a, b, c, d = message_ids(r)
    assert a == b != c == d


def test_a_thought_and_a_message_are_separate_messages_in_turn():
    r = run([prompt(1), chunk("t1", "agent_thought_chunk"), chunk("m1"), chunk("t2", "agent_thought_chunk"), chunk("m2"), result(1)])
    thoughts, messages = message_ids(r, "agent_thought_chunk"), message_ids(r)
    assert len(set(thoughts + messages)) == 4


# ---------------------------------------------------------------------------
# Permission requests of ended work
# ---------------------------------------------------------------------------


def test_a_turn_that_ends_with_a_permission_request_open_cancels_it_before_the_idle():
    cancel = {"conn": "c0", "from": "client", "msg": {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}}}
    entries = [prompt(1), TOOL, permission(7), cancel, result(1, "cancelled")]
    r = run(entries + [answer(7, {"outcome": "cancelled"})])
    assert at(r, 5) == [("$/cancel_request", 7), ("state_update", "idle")]
    # the client answers the cancelled request with -32800: the v1 agent gets v1's cancelled outcome
    b = V1AgentToV2Client()
    for n, e in enumerate(entries + [answer(7, err={"code": -32800, "message": "Request cancelled"})], 1):
        sent = b.feed(e, n)
    assert sent == [{"conn": "c0", "from": "client", "msg": {"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "cancelled"}}}}]


def test_a_permission_request_answered_or_cancelled_by_the_agent_is_not_cancelled_again():
    r = run([prompt(1), permission(7), answer(7), result(1)])
    assert at(r, 4) == [("state_update", "idle")]
    own = {"conn": "c0", "from": "agent", "msg": {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}}}
    r = run([prompt(1), permission(7), own, result(1, "cancelled"), answer(7, {"outcome": "cancelled"})])
    assert at(r, 3) == [("$/cancel_request", 7)] and at(r, 4) == [("state_update", "idle")]


def test_an_error_ending_the_turn_cancels_its_open_permission_request_too():
    r = run([prompt(1), permission(7), error(1), answer(7, {"outcome": "cancelled"})])
    assert at(r, 3) == [("$/cancel_request", 7), ("state_update", "idle")]


# ---------------------------------------------------------------------------
# Errors after insertion
# ---------------------------------------------------------------------------


def test_an_error_after_streamed_output_is_the_idle_error_with_the_same_object():
    data = {"details": "the provider returned 500"}
    r = run([prompt(1), chunk("Trying..."), error(1, data=data)])
    idle = r.out[-1].entry["msg"]["params"]["update"]
    assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error",
                    "error": {"code": -32603, "message": "Internal error", "data": data}}
    assert not any("error" in o.entry["msg"] and "id" in o.entry["msg"] for o in r.out)


def test_an_error_with_only_session_metadata_before_it_is_a_rejection():
    r = run([prompt(1), COMMANDS, error(1, -32602, "Invalid params")])
    assert at(r, 3) == [("error", {"code": -32602, "message": "Invalid params"})]


def test_gemini_http_status_codes_ride_on_the_idle_unchanged():
    r = run([prompt(1), chunk("x"), error(1, 500, "Internal Server Error")])
    assert r.out[-1].entry["msg"]["params"]["update"]["error"] == {"code": 500, "message": "Internal Server Error"}


# ---------------------------------------------------------------------------
# The converter's schema gate
# ---------------------------------------------------------------------------


def _claude_like(tmp_path) -> Path:
    path = tmp_path / "claude.jsonl"
    lines = [prompt(1), chunk("Hi"), update({"sessionUpdate": "usage_update", "used": None, "size": 200000}), result(1)]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


def test_the_converter_has_the_live_bridges_output_gate(tmp_path, capsys):
    from acp_lifecycle.sims.cli import main
    from acp_lifecycle.sims.wire.schema import SchemaError, locate

    try:
        locate(version="v1"), locate(version="v2")
    except SchemaError as e:
        pytest.fail(f"the v1 and v2 schemas are needed and could not be had: {e}")
    path = _claude_like(tmp_path)
    assert main(["bridge", "--to", "v2", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "usage_update" not in out and len(out.splitlines()) == 6
    assert err.splitlines() == [line for line in err.splitlines() if line.startswith(f"{path}:3: invalid-output: ")] and err
    assert "used: None is not of type 'integer'" in err


def test_without_schemas_the_converter_says_so_once_and_passes_everything(tmp_path, capsys, monkeypatch):
    from acp_lifecycle.sims.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    path = _claude_like(tmp_path)
    assert main(["bridge", "--to", "v2", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "usage_update" in out
    assert len(err.splitlines()) == 1 and err.startswith("acp-lifecycle bridge: messages are not checked against the schemas")


# ---------------------------------------------------------------------------
# Memory: a live bridge keeps only what the translation needs
# ---------------------------------------------------------------------------


def _bench():
    spec = importlib.util.spec_from_file_location("bench_bridge_memory", Path(__file__).parents[1] / "bench" / "bridge_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_live_bridges_memory_stays_flat_over_many_turns():
    bench = _bench()
    b = V1AgentToV2Client(history=False)
    n = 0

    def feed_turn(turn):
        nonlocal n
        lines = [prompt(turn)] + [{"conn": "c0", "from": "agent", "msg": json.loads(raw)} for raw in bench._turn_lines(SID, turn, 300)]
        for e in lines + [result(turn)]:
            n += 1
            b.feed(e, n)
        b.problems.clear()  # (serve says them and forgets them)

    tracemalloc.start()
    try:
        for turn in range(1, 4):
            feed_turn(turn)
        early = tracemalloc.get_traced_memory()[0]
        for turn in range(4, 64):
            feed_turn(turn)
        late = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert b.trace == [] and b.agent_side == [] and b.absorbed == []
    # 60 turns of 300 updates (18,000 messages) later: what is left grows by one user message's
    # IDs a turn (the ID map a resume's replay needs), a few hundred bytes, never by the updates.
    assert late - early < 60 * 1024, late - early


@pytest.mark.slow
def test_bench_bridge_serve_memory_stays_within_one_and_a_half_times_turn_one():
    r = _bench().run(turns=40, updates=2000, gate=False)
    assert r["ratio"] <= 1.5, r


def test_a_live_v2_to_v1_bridge_keeps_a_digest_of_each_message_not_its_text():
    from acp_lifecycle.sims.bridge import V2AgentToV1Client

    b = V2AgentToV1Client(history=False)
    n = 0

    def feed(e):
        nonlocal n
        n += 1
        return b.feed(e, n)

    def turn(t):
        feed(prompt(t))
        agent = [{"jsonrpc": "2.0", "id": t, "result": {"messageId": f"u{t}"}},
                 {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": {"sessionUpdate": "state_update", "state": "running"}}}]
        agent += [{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": {
            "sessionUpdate": "agent_message_chunk", "messageId": f"a{t}", "content": {"type": "text", "text": f"word {i} " * 8}}}}
            for i in range(300)]
        agent.append({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": {
            "sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}}})
        sent = [out for m in agent for out in feed({"conn": "c0", "from": "agent", "msg": m})]
        b.problems.clear()
        return sent

    tracemalloc.start()
    try:
        for t in range(1, 4):
            assert turn(t)[-1]["msg"] == {"jsonrpc": "2.0", "id": t, "result": {"stopReason": "end_turn"}}
        early = tracemalloc.get_traced_memory()[0]
        for t in range(4, 64):
            turn(t)
        late = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # 60 turns of 300 chunks of 64 characters: the text alone is over a megabyte
    assert late - early < 120 * 1024, late - early  # (keeping the text: 5.6 MB)
