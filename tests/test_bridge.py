"""The v1 <-> v2 bridges: exhaustively against the model, seeded bugs, open questions, round trips, bad input."""

import io
import json
import random
from pathlib import Path

import pytest

from acp_lifecycle.sims.bridge import (
    BRIDGE_BUGS,
    OPEN_QUESTIONS,
    PROPERTIES,
    Problem,
    V1AgentToV2Client,
    V2AgentToV1Client,
    bridge_command,
    bridge_file,
    bridge_transcript,
    check_properties,
    client_view,
    explore_bridge,
    run_bridge,
)
from acp_lifecycle.sims.wire.transcript import TranscriptError, check_transcript, parse, parse_text

VECTORS = Path(__file__).parent / "vectors"

# The small members bridged exhaustively. multi-client is bridged to v1 on client
# 0's connection only (one v1 client); to v2 with both connections.
MEMBERS_TO_V1 = (("tiny", None), ("failures", None), ("cancel-race", None), ("multi-client", "c0"))
MEMBERS_TO_V2 = (("tiny", None), ("failures", None), ("cancel-race", None), ("multi-client", None))

# What the model reaches, per direction: the open questions (problem kinds).
REACHED_TO_V1 = {
    "agent-initiated-work", "background-update", "idle-without-prompt", "insertion-after-idle", "echo-after-turn",
    "custom-stop-reason", "missing-stop-reason",
}
REACHED_TO_V2 = {
    "ambiguous-echo", "echo-after-error", "several-stop-reasons", "failure-while-work-continues", "v1-cancel-not-cancelled",
}


@pytest.fixture(scope="module")
def to_v1():
    return {m: explore_bridge(m, "v1", conn=c) for m, c in MEMBERS_TO_V1}


@pytest.fixture(scope="module")
def to_v2():
    return {
        (m, ins): explore_bridge(m, "v2", conn=c, insertion=ins)
        for m, c in MEMBERS_TO_V2
        for ins in ("echo", "immediate")
    }


def _load(name):
    return parse(VECTORS / name)


def _kinds(problems):
    return sorted((p.line, p.kind) for p in problems)


# ---------------------------------------------------------------------------
# Exhaustive checks against the model
# ---------------------------------------------------------------------------


def test_every_terminal_path_of_the_v2_model_bridges_to_v1_with_every_bridge_property_holding(to_v1):
    for member, r in to_v1.items():
        assert r.transcripts > 0 and r.paths >= r.transcripts, member
        assert r.violations == {}, (member, {k: v[1] for k, v in r.violations.items()})
    assert sum(r.paths for r in to_v1.values()) > 1_000_000  # every path, deduplicated by transcript


def test_every_terminal_path_of_the_v1_model_bridges_to_v2_clean_under_both_insertion_policies(to_v2):
    for key, r in to_v2.items():
        assert r.transcripts > 0, key
        assert r.violations == {}, (key, {k: v[1] for k, v in r.violations.items()})


def test_the_open_questions_the_v2_model_reaches_through_a_v1_bridge_are_these(to_v1):
    reached = set().union(*(r.questions for r in to_v1.values()))
    assert reached == REACHED_TO_V1
    shortest = {k: min(len(r.questions[k][0]) for r in to_v1.values() if k in r.questions) for k in reached}
    assert shortest == {
        "agent-initiated-work": 4,
        "idle-without-prompt": 4,
        "background-update": 3,
        "insertion-after-idle": 5,
        "echo-after-turn": 5,
        "custom-stop-reason": 6,
        "missing-stop-reason": 6,
    }


def test_the_open_questions_the_v1_model_reaches_through_a_v2_bridge_are_these(to_v2):
    reached = set().union(*(r.questions for r in to_v2.values()))
    assert reached == REACHED_TO_V2
    # echo-after-error needs the echo policy: immediate insertion reports the prompt inserted at once.
    assert "echo-after-error" not in set().union(*(r.questions for (m, ins), r in to_v2.items() if ins == "immediate"))


def test_a_response_reported_after_the_idle_that_ended_its_work_is_the_shortest_open_question(to_v1):
    # The model answers before a normal end (the response does not wait for
    # processing), so the shortest case is a failure before the response.
    trace, problem = to_v1["failures"].questions["insertion-after-idle"]
    assert [e["msg"].get("method") or "response" for e in trace] == [
        "session/prompt", "session/update", "session/update", "response", "session/update"]
    assert problem.line == 4
    out, _ = bridge_transcript(trace, "v1")
    assert out[-1]["msg"] == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "Authentication required"}}


def test_every_open_question_kind_names_its_direction_and_a_sentence():
    for kind, (direction, title, quote) in OPEN_QUESTIONS.items():
        assert direction in ("v1", "v2", "both") and title and quote, kind
    assert REACHED_TO_V1 | REACHED_TO_V2 <= set(OPEN_QUESTIONS)


def test_every_bridge_property_has_an_id_a_side_and_its_sentence():
    assert len({p.id for p in PROPERTIES}) == len(PROPERTIES)
    for p in PROPERTIES:
        assert p.to in ("v1", "v2") and p.id.startswith(p.to) and p.quote and p.source


# ---------------------------------------------------------------------------
# Seeded bridge bugs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("bug", sorted(BRIDGE_BUGS))
def test_each_seeded_bridge_bug_is_caught_by_its_property_on_a_short_model_path(bug):
    to, prop, _ = BRIDGE_BUGS[bug]
    member = "tiny" if bug == "v2-answer-before-insertion" else "failures"
    r = explore_bridge(member, to, until=prop, bug=bug)
    assert prop in r.violations
    trace, messages = r.violations[prop]
    assert len(trace) <= 5 and messages


def test_a_v1_stop_reason_of_error_is_the_deepseek_reasonix_8241_bug():
    entries = _load("bridge-v2-rfd-error.jsonl")
    good = run_bridge(entries, "v1")
    bad = run_bridge(entries, "v1", bug="v1-error-stop-reason")
    assert good.entries[-1]["msg"]["error"] == {"code": -32000, "message": "Authentication required"}
    assert bad.entries[-1]["msg"]["result"] == {"stopReason": "error"}
    assert check_properties(good)["v1-stop-reason-never-error"] == []
    assert check_properties(bad)["v1-stop-reason-never-error"]


def test_dropping_the_error_object_is_caught_in_both_directions():
    v2 = run_bridge(_load("bridge-v2-rfd-error.jsonl"), "v1", bug="v1-drop-error-code")
    assert check_properties(v2)["v1-error-idle-becomes-error-response"]
    v1 = run_bridge(_load("bridge-v1-errors.jsonl"), "v2", bug="v2-idle-drop-error")
    assert check_properties(v1)["v2-error-after-insertion-becomes-error-idle"]


def test_an_unknown_bug_name_is_refused():
    with pytest.raises(ValueError):
        V2AgentToV1Client(bug="v2-idle-drop-error")
    with pytest.raises(ValueError):
        V1AgentToV2Client(insertion="later")


# ---------------------------------------------------------------------------
# The mapping, on the vectors
# ---------------------------------------------------------------------------


def test_an_error_idle_becomes_an_error_response_for_the_held_v1_prompt_with_the_same_code_and_message():
    out, problems = bridge_transcript(_load("bridge-v2-rfd-error.jsonl"), "v1")
    assert problems == []
    assert out[-1]["msg"] == {"jsonrpc": "2.0", "id": "req_12345", "error": {"code": -32000, "message": "Authentication required"}}
    assert not any("messageId" in json.dumps(e["msg"].get("result", {})) for e in out)  # the v2 result was swallowed


def test_an_error_idle_without_details_becomes_internal_error():
    out, problems = bridge_transcript(_load("bridge-v2-error-absent.jsonl"), "v1")
    assert problems == []
    assert out[-1]["msg"]["error"] == {"code": -32603, "message": "Internal error"}
    for null in (None,):
        entries = _load("bridge-v2-error-absent.jsonl")
        entries[-1][1]["msg"]["params"]["update"]["error"] = null
        assert bridge_transcript(entries, "v1")[0][-1]["msg"]["error"]["code"] == -32603


@pytest.mark.parametrize("reason", ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"])
def test_the_five_v1_stop_reasons_pass_unchanged(reason):
    entries = _load("bridge-v2-rfd-prompt.jsonl")
    entries[-1][1]["msg"]["params"]["update"]["stopReason"] = reason
    out, problems = bridge_transcript(entries, "v1")
    assert problems == [] and out[-1]["msg"]["result"] == {"stopReason": reason}


def test_a_v1_error_after_the_echo_becomes_an_idle_error_with_the_same_error_object():
    for insertion in ("echo", "immediate"):
        run = run_bridge(_load("bridge-v1-errors.jsonl"), "v2", insertion=insertion)
        idles = [e["msg"]["params"]["update"] for e in run.entries if '"state_update"' in json.dumps(e) and '"idle"' in json.dumps(e)]
        assert idles[0] == {
            "sessionUpdate": "state_update", "state": "idle", "stopReason": "error",
            "error": {"code": -32000, "message": "Authentication required", "data": {"provider": "x"}},
        }
        assert [f for f in check_transcript(list(enumerate(run.entries, 1))) if f.severity == "violation"] == []
        assert run.absorbed == [6]  # the v1 agent's late "failed" repeats what the bridge sent before the idle


def test_a_v1_error_before_any_echo_is_forwarded_as_the_v2_error_response():
    out, _ = bridge_transcript(_load("bridge-v1-errors.jsonl"), "v2", insertion="echo")
    rejected = [e["msg"] for e in out if e["msg"].get("id") == 2 and "method" not in e["msg"]]
    assert rejected == [{"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Invalid params"}}]


def test_echo_insertion_answers_with_the_echos_message_id_and_immediate_with_the_bridges_own():
    echo, _ = bridge_transcript(_load("bridge-v1-turn.jsonl"), "v2", insertion="echo")
    immediate, _ = bridge_transcript(_load("bridge-v1-turn.jsonl"), "v2", insertion="immediate")
    result = lambda out: next(e["msg"]["result"] for e in out if "result" in e["msg"])  # noqa: E731
    assert result(echo) == {"messageId": "v1_msg_1"}
    assert result(immediate) == {"messageId": "bridge_msg_1"}
    # immediate: the response comes with the prompt; echo: at the echo (input line 2)
    assert [e["msg"].get("method", "response") for e in immediate[:4]] == ["session/prompt", "session/update", "response", "session/update"]
    assert [e["msg"].get("method", "response") for e in echo[:3]] == ["session/prompt", "session/update", "response"]


def test_a_v1_agent_that_rejects_a_prompt_at_once_reports_no_running_work_to_v2():
    entries = parse_text(
        '{"conn":"c0","from":"client","msg":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}}\n'
        '{"conn":"c0","from":"agent","msg":{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}}\n'
    )
    out, problems = bridge_transcript(entries, "v2")
    assert [e["msg"] for e in out] == [entries[0][1]["msg"], entries[1][1]["msg"]] and problems == []


@pytest.mark.parametrize("name", sorted(p.name for p in VECTORS.glob("bridge-v*.jsonl") if ".to-" not in p.name))
def test_each_vector_bridges_to_its_expected_transcript(name):
    to = "v1" if name.startswith("bridge-v2-") else "v2"
    policies = ("",) if to == "v1" else ("-echo", "-immediate")
    for policy in policies:
        options = {"insertion": policy[1:]} if policy else {}
        text, _ = bridge_file(VECTORS / name, to, **options)
        expected = VECTORS / name.replace(".jsonl", f".to-{to}{policy}.jsonl")
        assert text == expected.read_text(), expected.name
        run = run_bridge(_load(name), to, **options)
        assert {k: v for k, v in check_properties(run).items() if v} == {}, name


# ---------------------------------------------------------------------------
# Unrepresentable situations: reported with their line, never dropped silently
# ---------------------------------------------------------------------------


def test_every_unrepresentable_situation_is_reported_with_its_input_line():
    run = run_bridge(_load("bridge-v2-open-questions.jsonl"), "v1")
    assert _kinds(run.problems) == [
        (1, "agent-initiated-work"),
        (2, "background-update"),
        (3, "idle-without-prompt"),
        (4, "background-update"),
        (6, "several-prompts"),
        (10, "whole-after-chunks"),
        (12, "whole-message-clear"),
        (13, "custom-stop-reason"),
        (17, "missing-stop-reason"),
        (18, "echo-after-turn"),
    ]
    assert [p for p in run.problems if "v1 has no way to replace earlier chunks" in p.message][0].line == 10
    assert check_properties(run)["v1-nothing-representable-lost"] == []


def test_no_input_line_disappears_without_a_message_or_a_problem():
    for name in sorted(p.name for p in VECTORS.glob("bridge-v*.jsonl") if ".to-" not in p.name):
        to = "v1" if name.startswith("bridge-v2-") else "v2"
        run = run_bridge(_load(name), to)
        accounted = {o.cause for o in run.out} | {p.line for p in run.problems} | set(run.absorbed)
        swallowed = {n for n, e in run.inp if n not in accounted}
        for n in swallowed:  # only what carries nothing across: the v2 {messageId} result, running, v1 answers
            m = dict(run.inp)[n]["msg"]
            assert "messageId" in json.dumps(m.get("result", {})) or "state_update" in json.dumps(m) or "result" in m or "error" in m, (name, n)


def test_the_background_option_drops_out_of_turn_updates_but_still_reports_them():
    forward = run_bridge(_load("bridge-v2-open-questions.jsonl"), "v1")
    drop = run_bridge(_load("bridge-v2-open-questions.jsonl"), "v1", background="drop")
    assert _kinds(forward.problems) == _kinds(drop.problems)
    assert len(drop.entries) == len(forward.entries) - 3  # lines 2, 4, 18
    assert check_properties(drop)["v1-nothing-representable-lost"] == []


def test_problems_are_line_and_message_pairs_with_a_kind():
    p = Problem(7, "something", "custom-stop-reason")
    line, message = p
    assert (line, message, p.kind) == (7, "something", "custom-stop-reason") and p == (7, "something")
    assert p.data() == {"line": 7, "kind": "custom-stop-reason", "message": "something"}


# ---------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------


def test_the_rfd_prompt_example_round_trips_v2_to_v1_to_v2_keeping_its_message_shapes():
    original = _load("bridge-v2-rfd-prompt.jsonl")
    v1, p1 = bridge_transcript(original, "v1")
    v2, p2 = bridge_transcript(v1, "v2")
    assert p1 == [] and p2 == []
    assert sorted(json.dumps(e, sort_keys=True) for e in v2) == sorted(json.dumps(e, sort_keys=True) for _, e in original)


def test_the_rfd_error_example_round_trips_with_the_same_error_object():
    original = _load("bridge-v2-rfd-error.jsonl")
    v2, _ = bridge_transcript(bridge_transcript(original, "v1")[0], "v2")
    assert client_view(v2) == client_view(original)
    assert v2[-1] == original[-1][1]


def test_an_error_idle_without_details_comes_back_as_internal_error_the_one_shape_a_round_trip_changes():
    original = _load("bridge-v2-error-absent.jsonl")
    back = client_view(bridge_transcript(bridge_transcript(original, "v1")[0], "v2")[0])
    assert back["c0"]["idles"] == [("error", {"code": -32603, "message": "Internal error"})]
    assert client_view(original)["c0"]["idles"] == [("error", None)]


def test_a_v1_turn_round_trips_v1_to_v2_to_v1():
    original = _load("bridge-v1-turn.jsonl")
    for insertion in ("echo", "immediate"):
        back, problems = bridge_transcript(bridge_transcript(original, "v2", insertion=insertion)[0], "v1")
        assert problems == []
        a, b = client_view(original)["c0"], client_view(back)["c0"]
        # v2 gives the id-less agent message an ID, and immediate insertion its own
        # ID to the user message (the echo comes later); everything else is as it was
        agent_id, user_id = ("bridge_msg_1", "v1_msg_1") if insertion == "echo" else ("bridge_msg_2", "bridge_msg_1")
        assert b["messages"].pop(("agent_message", agent_id)) == a["messages"].pop(("agent_message", None))
        assert b["messages"].pop(("user_message", user_id)) == a["messages"].pop(("user_message", "v1_msg_1"))
        assert a == b


def test_every_v2_model_transcript_that_crosses_to_v1_without_a_problem_comes_back_the_same(to_v1):
    from acp_lifecycle.model.config import RFD_RULES
    from acp_lifecycle.sims.bridge import model_transcripts
    from acp_lifecycle.sims.configs import get_suite

    trs, _ = model_transcripts(get_suite("cancel-race").members[0], RFD_RULES)
    clean = same = 0
    for tr in trs:
        v1, p1 = bridge_transcript(tr, "v1")
        if p1:
            continue
        clean += 1
        v2, p2 = bridge_transcript(v1, "v2")
        if p2:
            # the one exception: v2 work ended before a v1 cancel the bridge held the
            # prompt across, so the v1 side shows end_turn after session/cancel
            assert {p.kind for p in p2} == {"v1-cancel-not-cancelled"}
            continue
        assert client_view(v2) == client_view(tr)
        same += 1
    assert clean and same


# ---------------------------------------------------------------------------
# Bad input, the online interface, the command
# ---------------------------------------------------------------------------

NOT_JSONRPC = [
    {"hello": 1},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}},
    {"jsonrpc": "2.0", "method": 7},
    {"jsonrpc": "2.0", "method": "session/update", "params": "x"},
    {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}},
    {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"sessionUpdate": "user_message", "messageId": "m", "content": "x"}}},
    {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": "x"}},
    {"jsonrpc": "2.0", "id": 1, "error": "boom"},
]


@pytest.mark.parametrize("to", ["v1", "v2"])
def test_a_line_that_is_not_a_json_rpc_message_is_reported_with_its_line_not_crashed(to):
    entries = [(n, {"conn": "c0", "from": "agent" if n % 2 else "client", "msg": m}) for n, m in enumerate(NOT_JSONRPC, 1)]
    entries += [(99, {"conn": "c0", "from": "nobody", "msg": {}}), (100, "not an entry")]
    out, problems = bridge_transcript(entries, to)
    assert {p.line for p in problems if p.kind == "malformed"} >= {1, 2, 3, 4, 99, 100}
    assert all(isinstance(p.line, int) for p in problems)


def test_random_garbage_never_crashes_either_bridge():
    rng = random.Random(2026)
    atoms = [None, 0, 1, -32000, "x", "session/prompt", "session/update", "state_update", "idle", "running", "error", [], {}, True]
    keys = ["jsonrpc", "id", "method", "params", "result", "error", "sessionId", "update", "sessionUpdate", "state",
            "stopReason", "messageId", "content", "prompt", "code", "message"]

    def junk(depth=0):
        if depth > 3 or rng.random() < 0.3:
            return rng.choice(atoms)
        if rng.random() < 0.2:
            return [junk(depth + 1) for _ in range(rng.randint(0, 2))]
        return {rng.choice(keys): junk(depth + 1) for _ in range(rng.randint(0, 4))}

    for i in range(3000):
        entries = [(n, {"conn": rng.choice(["c0", "c1"]), "from": rng.choice(["client", "agent"]), "msg": junk()}) for n in range(1, 6)]
        for to in ("v1", "v2"):
            run_bridge(entries, to)  # must not raise


def test_feeding_entries_one_by_one_gives_the_same_output_as_the_whole_transcript():
    entries = _load("bridge-v2-rfd-error.jsonl")
    b = V2AgentToV1Client()
    fed = [out for n, e in entries for out in b.feed(e)] + b.finish()
    whole = bridge_transcript(entries, "v1")[0]
    # what went to the client is the transcript's agent side; what went to the agent is the
    # client's lines again, here the same in both versions
    assert [e for e in fed if e["from"] == "agent"] == [e for e in whole if e["from"] == "agent"]
    assert [e for e in fed if e["from"] == "client"] == [e for e in whole if e["from"] == "client"]
    assert [o.entry for o in b.trace] == whole


def test_the_bridge_command_writes_the_transcript_and_reports_problems_with_exit_status(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    assert bridge_command(VECTORS / "bridge-v1-turn.jsonl", "v2", out=out, err=err) == 0
    assert out.getvalue() == (VECTORS / "bridge-v1-turn.to-v2-echo.jsonl").read_text() and err.getvalue() == ""
    out, err = io.StringIO(), io.StringIO()
    path = VECTORS / "bridge-v2-open-questions.jsonl"
    assert bridge_command(path, "v1", out=out, err=err) == 1
    assert err.getvalue().splitlines()[0].startswith(f"{path}:1: agent-initiated-work: ")
    out = io.StringIO()
    assert bridge_command(path, "v1", as_json=True, out=out) == 1
    assert out.getvalue().count("\n") == 1  # one record, one line (it was one indented document)
    data = json.loads(out.getvalue())
    assert data["problems"][0] == {"line": 1, "kind": "agent-initiated-work", "message": data["problems"][0]["message"]}
    assert len(data["transcript"]) == 10
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(TranscriptError, match="bad.jsonl:1"):
        bridge_command(bad, "v1", out=io.StringIO())
    for wrong in ({"to": "v1", "insertion": "echo"}, {"to": "v2", "background": "drop"}, {"to": "v3"},
                  {"to": "v2", "insertion": "later"}):
        with pytest.raises(ValueError):
            bridge_command(path, out=io.StringIO(), **wrong)


def test_a_bridged_transcript_passes_the_trace_command(tmp_path):
    from acp_lifecycle.sims.cli import main

    text, _ = bridge_file(VECTORS / "bridge-v1-errors.jsonl", "v2")
    path = tmp_path / "bridged.jsonl"
    path.write_text(text)
    assert main(["trace", "--no-schema", str(path)]) == 0
