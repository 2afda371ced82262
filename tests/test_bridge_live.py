"""`bridge serve` between programs written on the official SDKs, and the converter on their traffic.

Four sessions each (a prompt, a cancelled one, a failing one, a resume/load with
replay), through ``acp-lifecycle bridge serve``:

* ``ts-v1-agent``: the TypeScript SDK's experimental v2 ``client()`` -> ``serve --to v2``
  -> a v1 agent on the TypeScript SDK's v1 ``agent()``;
* ``py-v1-agent`` (and ``-immediate``): the same client -> ``serve --to v2`` -> a v1 agent
  on the Python SDK (PyPI ``agent-client-protocol`` 0.12.1);
* ``ts-v2-agent``: the TypeScript SDK's v1 ``client()`` -> ``serve --to v1`` -> a v2 agent
  on its experimental v2 ``agent()``; ``corpus-v2-agent``: the same client and bridge in front of
  the conformance corpus's v2 agent (tests/corpus/gen, on the same SDK);
* ``ts-v1-direct``, ``py-v1-direct``: the v1 client straight against each v1 agent (no
  bridge): the SDKs' own v1 transcripts, which ``bridge --to v2`` converts.

Offline, every check runs on the committed runs in ``tests/bridge/fixtures/`` (written
by ``tests/bridge/regenerate.py``); live, the same checks run on fresh runs where node,
the npm package and the Python SDK are installed (CI installs them), else they are
skipped with the reason. The schemas come from ``pull`` (v1 and v2 of the pinned
``@agentclientprotocol/sdk@2.4.0``), as in test_schema.py: without them the tests fail.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from acp_lifecycle.sims.bridge import run_bridge
from acp_lifecycle.sims.bridge.serve import record_sides, recorded_sent, replay_record, schema_problems
from acp_lifecycle.sims.wire.schema import SchemaError, Validator, pull
from acp_lifecycle.sims.wire.transcript import check_transcript

sys.path.insert(0, str(Path(__file__).resolve().parent / "bridge"))
import live  # noqa: E402

BRIDGED = [n for n, run in live.RUNS.items() if run[0] is not None]
DIRECT = [n for n, run in live.RUNS.items() if run[0] is None]

#: The problems each bridged run reports, by kind (what cannot cross for these agents).
EXPECTED_PROBLEMS = {
    # the v1 agent does not advertise session/list, which v2's session capability promises
    "ts-v1-agent": {"no-v2-equivalent": 1},
    # ... nor session/close (the bridge answers it: three sessions closed); its echoes carry no
    # messageId, so replayed messages cannot get the IDs returned at insertion (a user and an
    # agent message of session 1)
    "py-v1-agent": {"no-v2-equivalent": 1, "replay-message-id": 2, "close-emulated": 3},
    "py-v1-agent-immediate": {"no-v2-equivalent": 1, "replay-message-id": 2, "close-emulated": 3},
    # like the published agents: its usage_update with `used: null` is stopped by the output gate;
    # its chunks carry no messageId, so its replayed messages (a thought, two agent messages) get
    # fresh IDs
    "ts-v1-published": {"no-v2-equivalent": 1, "invalid-output": 1, "replay-message-id": 3},
    # the v2 agent advertises no stdio MCP servers; its permission title differs from its tool
    # call's; its cancelled tool call is "failed" in v1
    "ts-v2-agent": {"no-v1-equivalent": 3},
    # the corpus agent (issue 10) also advertises no stdio MCP servers, gives its slow tool call a
    # cancel capability, and ends it cancelled
    "corpus-v2-agent": {"no-v1-equivalent": 3},
}


@pytest.fixture(scope="module")
def validators() -> dict:
    try:
        return {v: Validator(pull(version=v)) for v in ("v1", "v2")}
    except SchemaError as e:
        pytest.fail(f"the v1 and v2 schemas are needed and could not be had: {e}")


def _options(name: str) -> dict:
    to, _, _, flags = live.RUNS[name]
    if to == "v2":
        return {"insertion": flags[1] if flags[:1] == ["--insertion"] else "echo"}
    return {"background": "forward"}


def _replay_windows(entries) -> set[int]:
    """Lines (1-based) between a session/resume with replay and its response, per connection."""
    inside, open_ = set(), {}
    for n, e in enumerate(entries, 1):
        m = e.get("msg", {})
        if e.get("from") == "client" and m.get("method") == "session/resume" and (m.get("params") or {}).get("replayFrom"):
            open_[(e["conn"], json.dumps(m.get("id")))] = n
        elif e.get("from") == "agent" and "method" not in m and (e["conn"], json.dumps(m.get("id"))) in open_:
            del open_[(e["conn"], json.dumps(m.get("id")))]
        elif any(c == e.get("conn") for c, _ in open_):
            inside.add(n)
    return inside


def trace_findings(entries, validator, problems=()) -> list[str]:
    """Everything ``trace`` reports on a v2 transcript (violations and warnings), but what the
    bridge itself reports.

    Tool call updates that a resume replays (a v1 agent's ``session/load`` replay carried by the
    bridge, or a v2 agent's own) are history, which the monitor judges by the replay rules: see
    docs/transcripts.md, "A resume's replay is history". A replayed user message the bridge had to
    give a fresh ID (its problem ``replay-message-id``: the v1 agent's echoes carry no messageId)
    breaks RFD-REPLAY-SAME-ID, and trace says so (``replayed_ids_are_known``) only where the
    bridge reported the problem (``problems``: the kinds it reported); those findings are left out.
    (A replayed agent message with a fresh ID is a problem too, which trace cannot see: no response
    returned its ID; an agent that does not echo replays no user message.)
    """
    findings = check_transcript(list(enumerate(entries, 1)), validator=validator)
    fresh = [f for f in findings if f.property == "replayed_ids_are_known"]
    assert not fresh or "replay-message-id" in problems, [f.message for f in fresh]
    return [f"line {f.line}: {f.severity} {f.property}: {f.message}" for f in findings if f not in fresh]


def _split(entries, sender):
    return [e["msg"] for e in entries if e.get("from") == sender]


def check_bridged_run(name: str, record: Path, log: Path, validators: dict) -> None:
    to = live.RUNS[name][0]
    sides = record_sides(record)
    # The same bridge classes, fed the record's received messages again, send exactly what
    # the live bridge sent, and report the same problems.
    # (with the same output gate: what each side's schema rejects is not sent)
    gate = {"client": validators["v1"], "agent": validators["v2"]} if to == "v2" else {"client": validators["v2"], "agent": validators["v1"]}
    bridge, sent = replay_record(record, to, _options(name), gate)
    assert sent == recorded_sent(record)
    assert [p.data() for p in bridge.problems] == sides["problems"]
    kinds: dict = {}
    for p in sides["problems"]:
        kinds[p["kind"]] = kinds.get(p["kind"], 0) + 1
    assert kinds == EXPECTED_PROBLEMS[name], sides["problems"]
    # The client saw every message the bridge sent it, in order; the bridge got all it sent.
    client = live.client_transcript(log)
    assert _split(client, "agent") == _split(sides[to], "agent")
    assert _split(client, "client") == _split(sides[to], "client")
    # Each side validates against its schema, message by message (but what a published agent
    # sends invalid: claude-agent-acp's usage_update with `used: null`, which the bridge stops).
    v1_invalid = [p for p in schema_problems(sides["v1"], validators["v1"]) if '"used": null' not in p]
    assert v1_invalid == []
    assert schema_problems(sides["v2"], validators["v2"]) == []
    # The v2 side passes trace, with no finding but the bridge's own problem.
    assert trace_findings(sides["v2"], validators["v2"], kinds) == []
    # The four sessions completed as the SDK reports them.
    outcome = json.loads(log.read_text())["outcome"]
    assert outcome["ok"] is True, outcome.get("failure")
    assert outcome["prompt"]["stopReason"] == "end_turn"
    assert outcome["cancelled"]["stopReason"] == "cancelled"
    idle_errors = [u["error"] for u in _idles(sides["v2"]) if u.get("stopReason") == "error"]
    if _options(name).get("insertion") == "immediate":
        # Immediate insertion answers every prompt at once: the agent's rejection comes after
        # the insertion the bridge reported, so it ends the work as an idle error instead.
        assert outcome["rejected"]["error"] is None and idle_errors[-1]["code"] == -32602
    else:
        assert outcome["rejected"]["error"]["code"] == -32602
    v1_agent_errors = [e["msg"]["error"] for e in sides["v1"] if e["from"] == "agent" and "error" in e["msg"]]
    if to == "v2":
        # The v1 error after the echo is an idle error with the same error object, not an error response.
        assert outcome["failed"]["stopReason"] == "error"
        assert outcome["failed"]["error"] == v1_agent_errors[0]
        assert v1_agent_errors[0]["code"] == (-32603 if name == "ts-v1-published" else -32000)
        assert outcome["resumed"]["result"] == {} and outcome["resumed"]["replay"][-1] == "state_update"
        if name == "ts-v1-published":
            check_published_run(sides, outcome)
        else:
            assert "user_message" in outcome["resumed"]["replay"]
    else:
        # The v2 agent's error idle is the v1 client's error response, with its code, message and data.
        agent_error = next(u["error"] for u in _idles(sides["v2"]) if u.get("stopReason") == "error")
        got = outcome["failed"]["error"]
        assert {"code": got["code"], "message": got["message"], **({"data": got["data"]} if got["data"] is not None else {})} == agent_error
        assert outcome["loaded"]["result"] == {}
        load = next(e["msg"] for e in sides["v2"] if e["msg"].get("method") == "session/resume")
        assert load["params"]["replayFrom"] == {"type": "start"}
        replayed = _replay_windows(sides["v2"])
        assert any(sides["v2"][n - 1]["msg"]["params"]["update"]["sessionUpdate"] == "user_message" for n in replayed)


def check_published_run(sides: dict, outcome: dict) -> None:
    """What the fixes for agents like the published ones do (docs/bridges.md, "Agents that do not echo")."""
    v2 = sides["v2"]
    updates = [(n, e["msg"]["params"]["update"]) for n, e in enumerate(v2) if e["msg"].get("method") == "session/update"]
    # 1. No echo: each prompt is answered at the first evidence that the agent took it, before
    #    any of the turn's output, never at the end of the turn.
    for n, e in enumerate(v2):
        m = e["msg"]
        if e["from"] == "agent" and "messageId" in (m.get("result") or {}):
            before, after = v2[n - 1]["msg"], v2[n + 1]["msg"]
            assert before["params"]["update"] == {"sessionUpdate": "state_update", "state": "running"}
            assert after["params"]["update"]["sessionUpdate"] == "user_message"
            assert after["params"]["update"]["messageId"] == m["result"]["messageId"]
    assert outcome["prompt"]["updates"][:3] == ["state_update", "user_message", "agent_thought_chunk"]
    # 2. One messageId per agent message: the commands update inside the reply does not split it,
    #    the tool call does, and no ID crosses a turn.
    live = [u for n, u in updates if u["sessionUpdate"] == "agent_message_chunk" and n < next(
        i for i, e in enumerate(v2) if e["msg"].get("method") == "session/resume")]
    texts = [(u["content"]["text"], u["messageId"]) for u in live]
    assert texts[0][1] == texts[1][1] and [t for t, _ in texts[:2]] == ["Let me", " read it."]
    assert texts[2][1] != texts[0][1] and texts[2][0].startswith("You said")
    assert texts[3][0] == "Trying..." and texts[3][1] not in {m for _, m in texts[:3]}
    # 3. The cancelled turn ended with its permission request unanswered: the bridge cancelled it
    #    with $/cancel_request before the idle, and the client's cancelled outcome reached the agent.
    assert outcome["slowPermission"] == {"cancelledBy": "$/cancel_request"}
    asked = next(e["msg"]["id"] for e in v2 if e["msg"].get("method") == "session/request_permission"
                 and e["msg"]["params"]["title"] == "Long search")
    cancel = next(n for n, e in enumerate(v2) if e["msg"].get("method") == "$/cancel_request")
    assert v2[cancel]["msg"]["params"] == {"requestId": asked}
    assert v2[cancel + 1]["msg"]["params"]["update"] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
    # 4. The error after streamed output is the idle error, never an error response (see above),
    #    and 5. the invalid usage_update never reached the v2 side.
    assert not any(u["sessionUpdate"] == "usage_update" for _, u in updates)


def _idles(entries) -> list[dict]:
    return [e["msg"]["params"]["update"] for e in entries if e["msg"].get("method") == "session/update"
            and e["msg"]["params"]["update"].get("sessionUpdate") == "state_update" and e["msg"]["params"]["update"].get("state") == "idle"]


def check_direct_run(name: str, log: Path, validators: dict) -> None:
    """The SDKs' own v1 transcript: valid v1, and converted by `bridge --to v2` into valid v2
    that passes trace, the error after the echo an idle error with the same object."""
    transcript = live.client_transcript(log)
    assert json.loads(log.read_text())["outcome"]["ok"] is True
    assert schema_problems(transcript, validators["v1"]) == []
    fail = next(e["msg"] for e in transcript if e["msg"].get("method") == "session/prompt"
                and e["msg"]["params"]["prompt"][0]["text"].lstrip("/").startswith("fail"))
    v1_error = next(e["msg"]["error"] for e in transcript if e["from"] == "agent" and e["msg"].get("id") == fail["id"] and "error" in e["msg"])
    for insertion in ("echo", "immediate"):
        run = run_bridge(transcript, "v2", insertion=insertion)
        assert schema_problems(run.entries, validators["v2"]) == [], insertion
        assert trace_findings(run.entries, validators["v2"], [p.kind for p in run.problems]) == [], insertion
        answers = [e["msg"] for e in run.entries if e["from"] == "agent" and e["msg"].get("id") == fail["id"] and "method" not in e["msg"]]
        assert answers == [{"jsonrpc": "2.0", "id": fail["id"], "result": {"messageId": answers[0]["result"]["messageId"]}}]
        errors = [u["error"] for u in _idles(run.entries) if u.get("stopReason") == "error"]
        # (immediate: the rejected prompt was reported inserted too, so its error is an idle error)
        assert errors[0] == v1_error and len(errors) == (1 if insertion == "echo" else 2)
        assert not any("error" in e["msg"] and e["msg"].get("id") == fail["id"] for e in run.entries)


@pytest.mark.parametrize("name", BRIDGED)
def test_the_recorded_bridge_run_holds(name, validators):
    check_bridged_run(name, live.FIXTURES / f"{name}.jsonl", live.FIXTURES / f"{name}.client.json", validators)


@pytest.mark.parametrize("name", DIRECT)
def test_the_converter_turns_the_sdks_own_v1_transcript_into_v2_that_trace_passes(name, validators):
    check_direct_run(name, live.FIXTURES / f"{name}.client.json", validators)


@pytest.mark.parametrize("name", BRIDGED + DIRECT)
def test_live_run(name, validators, tmp_path):
    why = live.missing(name)
    if why:
        pytest.skip(f"live run {name}: {why}")
    record, log = live.run(name, tmp_path)
    if name in BRIDGED:
        check_bridged_run(name, record, log, validators)
    else:
        check_direct_run(name, log, validators)


def _replayed_ended_tools(entries) -> list[int]:
    """Lines of tool call updates inside a resume's replay whose tool call was already seen
    on that connection before the resume (tool calls of ended work, replayed as history)."""
    window, seen, out = _replay_windows(entries), set(), []
    for n, e in enumerate(entries, 1):
        m = e.get("msg", {})
        update = (m.get("params") or {}).get("update") or {} if m.get("method") == "session/update" else {}
        if update.get("sessionUpdate") != "tool_call_update":
            continue
        key = (e["conn"], m["params"].get("sessionId"), update.get("toolCallId"))
        if n in window and key in seen:
            out.append(n)
        elif n not in window:
            seen.add(key)
    return out


def test_the_bridged_replays_carry_tool_calls_of_ended_work_and_trace_passes_them(validators):
    # The case trace_findings used to set aside is there in every bridged run (both directions:
    # a v1 agent's session/load replay carried into v2, and v2 agents replaying their own), and
    # the monitor passes it; moved after the resume response, the same update is flagged.
    for name in BRIDGED:
        v2 = record_sides(live.FIXTURES / f"{name}.jsonl")["v2"]
        replayed = _replayed_ended_tools(v2)
        assert replayed, name
        assert trace_findings(v2, validators["v2"], [p["kind"] for p in record_sides(live.FIXTURES / f"{name}.jsonl")["problems"]]) == [], name
        first = replayed[0]
        resume_id = next(e["msg"]["id"] for e in reversed(v2[:first]) if e["msg"].get("method") == "session/resume")
        answer = next(n for n, e in enumerate(v2, 1) if n > first and e["from"] == "agent"
                      and "method" not in e["msg"] and e["msg"].get("id") == resume_id)
        moved = v2[:first - 1] + v2[first:answer] + [v2[first - 1]] + v2[answer:]
        assert [f.property for f in check_transcript(list(enumerate(moved, 1)), validator=validators["v2"])
                if f.line == answer] == ["no_update_after_idle_of_its_work"], name
