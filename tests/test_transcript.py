"""Transcripts: the format, exports of model runs, the monitor's rules, bad input.

The conformance corpus (traffic of the official SDK) is tested in test_corpus.py; here:
the model's seeded bugs are flagged at the right line, clean random walks stay clean under
both rule sets, each rule the corpus cannot isolate has its own case, and no input crashes
the parser or the monitor.
"""

import json
import random

import pytest

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.clauses import CLAUSES
from acp_lifecycle.model.monitor import RULES, Monitor, RawFloat, id_key
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.model.variants import get_variant
from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.configs import SUITES, get_suite
from acp_lifecycle.sims.search.explore import explore
from acp_lifecycle.sims.wire.transcript import TranscriptError, check_transcript, dumps, export, parse_text

# Bugs whose counterexample shows on the wire: the property flagged and the line.
VISIBLE = {
    "never-echo": ("every_inserted_message_echoed", 2),
    "error-when-abort-raises": ("cancelled_work_ends_cancelled", 4),
    "end-turn-for-cancel": ("cancelled_work_ends_cancelled", 4),
    "second-stop-reason": ("no_second_stop_reason", 5),
    "tool-update-after-idle": ("no_update_after_idle_of_its_work", 6),
    "error-beside-end-turn": ("error_only_with_error_stop_reason", 4),
    "no-tool-terminal-before-error": ("tools_terminal_before_error_idle", 4),
    "replay-chunks-without-reset": ("chunked_replay_resets_first", 3),
    "replay-without-replay-from": ("no_replay_without_replay_from", 3),
    "same-id-for-same-content": ("distinct_message_ids", 4),
    "ids-reset-on-restart": ("distinct_message_ids", 6),
}
# Bugs whose shortest counterexample ends in a step the wire cannot show, and why.
INVISIBLE = {
    "answer-at-receipt": "insertion is internal: a success before it looks like a success after it",
    "answer-at-reserve": "the same: reserving an ID is internal",
    "error-after-insertion": "the error response cannot be tied to the inserted message without content matching",
    "cancel-after-insertion": "the same, for -32800",
    "echo-under-other-id": "the counterexample stops at the echo; a cut log cannot say the right ID never comes",
    "no-idle-after-failure": "a cut log cannot say the idle never comes",
    "replay-under-new-id": "a replayed ID new to this connection may be an imported or an earlier message",
    "replay-reexecutes-command": "executing a command is internal",
    "client-associates-by-content": "client-side: nothing on the wire changes",
    "client-associates-by-order": "client-side",
    "client-idle-completes-prompt": "client-side",
    "client-keeps-optimistic-copy": "client-side",
}
# Rules no single mutation of an SDK transcript can isolate (test_corpus.py checks the list):
# the case that shows each.
UNIT_ONLY = {
    # The permission request stays unanswered, so the client's own every_request_answered
    # comes first, on an earlier line.
    "cancel_stops_waiting_for_permissions": "test_cancel_that_waits_for_a_permission_answer_never_ends",
}


def _rules_of(rules) -> str:
    """The monitor's rule set for transcripts of a model run under ``rules``."""
    return "rfd+2.4.0" if rules.resume_snapshot == "must" else "rfd"


def _counterexample(name):
    bug = BUGS[name]
    return explore(get_suite(bug.member).members[0], bug.rules).verdicts[bug.breaks]


def _lines(*items, conn="c"):
    """Transcript entries from (sender, message) pairs, numbered from 1."""
    return [(n, {"conn": conn, "from": f, "msg": m}) for n, (f, m) in enumerate(items, 1)]


def _req(rid, method, **params):
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _note(method, **params):
    return {"jsonrpc": "2.0", "method": method, "params": params}


def _ok(rid, **result):
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _upd(sid, **update):
    return _note("session/update", sessionId=sid, update=update)


INIT = [("client", _req(0, "initialize", protocolVersion=2, info={"name": "t", "version": "1"})),
        ("agent", _ok(0, protocolVersion=2, info={"name": "a", "version": "1"}))]


def _found(items, **kw):
    return [(f.line, f.property, f.severity) for f in check_transcript(_lines(*items), **kw)]


# ---------------------------------------------------------------------------
# The model's runs, judged by the same rules


def test_every_bug_is_classified_as_visible_or_not():
    assert set(VISIBLE) | set(INVISIBLE) == set(BUGS)
    assert not set(VISIBLE) & set(INVISIBLE)


@pytest.mark.parametrize("name", sorted(VISIBLE))
def test_each_visible_bug_is_flagged_at_the_line_of_its_last_step(name):
    v = _counterexample(name)
    lines = export(v.trace)
    before = len(export(v.trace[:-1]))
    findings = check_transcript(list(enumerate(lines, 1)), partial=v.ending != "terminal", rules=_rules_of(BUGS[name].rules))
    flagged = [(f.property, f.line) for f in findings if f.property == VISIBLE[name][0]]
    assert flagged and flagged[0] == VISIBLE[name]
    if v.ending != "terminal":
        assert before < flagged[0][1] <= len(lines)  # the violating step's own messages


@pytest.mark.parametrize("name", sorted(INVISIBLE))
def test_invisible_bugs_raise_no_false_violation_on_their_cut_log(name):
    v = _counterexample(name)
    findings = check_transcript(list(enumerate(export(v.trace), 1)), partial=True, rules=_rules_of(BUGS[name].rules))
    assert [f for f in findings if f.severity == "violation"] == []


@pytest.mark.parametrize("variant", ["rfd", "rfd+2.4.0"])
def test_a_thousand_random_walks_of_the_correct_model_are_clean(variant):
    rules = get_variant(variant).rules
    assert _rules_of(rules) == variant
    rng = random.Random(2026)
    members = SUITES["default"].members
    seen = set()
    for i in range(1000):
        cfg = members[i % len(members)]
        s, trace = initial_state(cfg), []
        while succ := successors(s, cfg, rules):
            step = rng.choice(succ)
            trace.append((s, step))
            s = step.state
        findings = check_transcript(list(enumerate(export(trace), 1)), rules=variant)
        assert [f.data() for f in findings if f.severity == "violation"] == [], (cfg.name, i)
        seen |= {f.property for f in findings}
    # The model sends no $/cancel_request for a pending permission (a SHOULD of 2.4.0); under the
    # RFD's rules the resume snapshot is an open question; the model agent explores the error idle
    # without details (RFD-ERROR-OPTIONAL, "optional and nullable", against the SHOULD beside it) and,
    # under the RFD's rules, a failure's idle without a stop reason (a SHOULD of 2.4.0): warnings only.
    assert seen <= {"pending_permissions_cancelled", "resume_snapshot_before_response",
                    "error_idle_has_details", "stop_reason_when_work_ends"}


def test_export_writes_the_documented_line_format():
    v = _counterexample("second-stop-reason")
    for line in export(v.trace):
        assert set(line) in ({"conn", "from", "msg"}, {"conn", "event"})
        if "msg" in line:
            assert line["msg"]["jsonrpc"] == "2.0" and line["from"] in ("client", "agent")


# ---------------------------------------------------------------------------
# What the issue found: sessions, directions, ids


def test_a_session_created_by_session_new_is_open_on_its_connection():
    # the reproduction: initialize, session/new -> sess_1, then updates for sess_1
    items = [*INIT, ("client", _req(1, "session/new", cwd="/w")), ("agent", _ok(1, sessionId="sess_1")),
             ("agent", _upd("sess_1", sessionUpdate="available_commands_update", availableCommands=[]))]
    assert _found(items) == []


def test_updates_may_come_before_the_session_new_response_but_only_for_the_session_it_names():
    early = ("agent", _upd("sess_1", sessionUpdate="state_update", state="idle"))
    new = ("client", _req(1, "session/new", cwd="/w"))
    assert _found([*INIT, new, early, ("agent", _ok(1, sessionId="sess_1"))]) == []
    assert _found([*INIT, new, early, ("agent", _ok(1, sessionId="sess_2"))]) == [
        (4, "updates_only_for_opened_sessions", "violation")]
    assert _found([*INIT, early]) == [(3, "updates_only_for_opened_sessions", "violation")]


def test_each_direction_has_its_own_id_space():
    items = [*INIT, ("client", _req(1, "session/new", cwd="/w")), ("agent", _ok(1, sessionId="s")),
             ("client", _req(3, "session/prompt", sessionId="s", prompt=[{"type": "text", "text": "hi"}])),
             ("agent", _upd("s", sessionUpdate="state_update", state="running")),
             ("agent", _req(3, "session/request_permission", sessionId="s", title="ok?",
                            options=[{"optionId": "y", "name": "Yes", "kind": "allow_once"}])),
             ("client", _ok(3, outcome={"outcome": "selected", "optionId": "y"})),  # answers the agent's 3
             ("agent", _ok(3, messageId="m1")),  # answers the client's 3
             ("agent", _upd("s", sessionUpdate="user_message", messageId="m1", content=[])),
             ("agent", _upd("s", sessionUpdate="state_update", state="idle", stopReason="end_turn"))]
    assert _found(items) == []


@pytest.mark.parametrize("rules", ["rfd", "rfd+2.4.0"])
def test_a_finding_quotes_the_clause_about_its_case(rules):
    """Issue 34: a second answer to a permission request is JSON-RPC's one reply to a call, not 2.4.0's sentence
    about $/cancel_request; a prompt withdrawn with $/cancel_request and never answered is owed its reply
    under both rule sets, quoting JSON-RPC (it may never have been inserted)."""
    perm = _req(7, "session/request_permission", sessionId="s", title="ok?",
                options=[{"optionId": "y", "name": "Yes", "kind": "allow_once"}])
    items = [*INIT, ("client", _req(1, "session/new", cwd="/w")), ("agent", _ok(1, sessionId="s")),
             ("client", _req(2, "session/prompt", sessionId="s", prompt=[{"type": "text", "text": "hi"}])),
             ("agent", _upd("s", sessionUpdate="state_update", state="running")), ("agent", perm),
             ("client", _ok(7, outcome={"outcome": "selected", "optionId": "y"})),
             ("client", _ok(7, outcome={"outcome": "selected", "optionId": "y"})),
             ("client", _note("$/cancel_request", requestId=2))]
    found = {f.property: f for f in check_transcript(_lines(*items), rules=rules)}
    second = found["one_response_per_request"]
    assert (second.line, second.clause) == (9, "JSONRPC-REPLY")
    assert second.quote.startswith('JSON-RPC 2.0: "When a rpc call is made, the Server MUST reply with a Response')
    owed = found["every_prompt_answered"]
    assert owed.severity == "violation" and owed.clause == "JSONRPC-REPLY"
    assert "cancelled with $/cancel_request, is never answered" in owed.message


def test_ids_are_compared_exactly_as_sent():
    assert [id_key(x) for x in (1, "1", RawFloat("1.0"), 2**70, -0)] == ["1", '"1"', "1.0", str(2**70), "0"]
    text = "\n".join(json.dumps({"conn": "c", "from": f, "msg": m}) for f, m in [
        ("client", _req(2**64 + 1, "_x/y")), ("agent", {"jsonrpc": "2.0", "id": 2**64, "result": {}}),
        ("client", _req(7, "_x/z")), ("agent", {"jsonrpc": "2.0", "id": "7", "result": {}}),
    ]).replace('"id": 7,', '"id": 7.0,', 0)
    text += "\n" + json.dumps({"conn": "c", "from": "client", "msg": _req(1, "_x/w")})
    text += '\n{"conn": "c", "from": "agent", "msg": {"jsonrpc": "2.0", "id": 1.0, "result": {}}}'
    entries = parse_text(text)
    assert isinstance(entries[-1][1]["msg"]["id"], RawFloat)
    got = [(f.line, f.property) for f in check_transcript(entries, partial=True)]
    assert got == [(2, "response_matches_a_request"), (4, "response_matches_a_request"), (6, "response_matches_a_request")]


def test_message_ids_and_echoes_are_per_session():
    prompt = lambda rid, sid: ("client", _req(rid, "session/prompt", sessionId=sid, prompt=[{"type": "text", "text": "x"}]))  # noqa: E731
    items = [*INIT, ("client", _req(1, "session/new", cwd="/a")), ("agent", _ok(1, sessionId="a")),
             ("client", _req(2, "session/new", cwd="/b")), ("agent", _ok(2, sessionId="b")),
             prompt(3, "a"), ("agent", _ok(3, messageId="msg_1")),
             prompt(4, "b"), ("agent", _ok(4, messageId="msg_1")),  # msg_1 again: another session
             ("agent", _upd("a", sessionUpdate="user_message", messageId="msg_1", content=[])),
             ("agent", _upd("a", sessionUpdate="user_message", messageId="msg_1", content=[]))]  # b's echo sent to a
    assert _found(items) == [(10, "every_inserted_message_echoed", "violation")]  # at the ack
    items[-1] = ("agent", _upd("b", sessionUpdate="user_message", messageId="msg_1", content=[]))
    assert _found(items) == []
    items.insert(9, prompt(5, "a"))
    items.insert(10, ("agent", _ok(5, messageId="msg_1")))
    assert (11, "distinct_message_ids", "violation") in _found(items)


def test_cancel_that_waits_for_a_permission_answer_never_ends():
    items = [*INIT, ("client", _req(1, "session/new", cwd="/w")), ("agent", _ok(1, sessionId="s")),
             ("agent", _upd("s", sessionUpdate="state_update", state="running")),
             ("agent", _req(0, "session/request_permission", sessionId="s", title="ok?",
                            options=[{"optionId": "y", "name": "Yes", "kind": "allow_once"}])),
             ("agent", _upd("s", sessionUpdate="state_update", state="requires_action")),
             ("client", _note("session/cancel", sessionId="s"))]
    found = _found(items)
    assert (8, "cancel_stops_waiting_for_permissions", "violation") in found
    assert (6, "every_request_answered", "violation") in found  # and the client never answered
    # Stopping to wait, cancelling the request and ending idle cancelled is right; the
    # client's late answer is still owed and given.
    items += [("agent", _note("$/cancel_request", requestId=0)),
              ("agent", _upd("s", sessionUpdate="state_update", state="idle", stopReason="cancelled")),
              ("client", _ok(0, outcome={"outcome": "cancelled"}))]
    assert _found(items) == []
    # Without the $/cancel_request: a SHOULD, a warning.
    del items[8]
    assert _found(items) == [(9, "pending_permissions_cancelled", "warning")]


def test_the_resume_snapshot_is_a_violation_under_2_4_0_and_a_warning_under_the_rfd():
    items = [*INIT, ("client", _req(1, "session/resume", sessionId="s", cwd="/w")), ("agent", _ok(1))]
    assert _found(items) == [(4, "resume_snapshot_before_response", "violation")]
    assert _found(items, rules="rfd") == [(4, "resume_snapshot_before_response", "warning")]
    items.insert(3, ("agent", _upd("s", sessionUpdate="state_update", state="idle")))
    assert _found(items) == []


def test_a_resume_s_replay_is_history_and_the_same_update_outside_it_is_live():
    # The corpus has the SDK-made case (resume-replay-same-connection and its mutation); here
    # the window's edges: replayFrom asked, and before the snapshot.
    tool = lambda status: ("agent", _upd("s", sessionUpdate="tool_call_update", toolCallId="t", status=status))  # noqa: E731
    echo = ("agent", _upd("s", sessionUpdate="user_message", messageId="m1", content=[{"type": "text", "text": "x"}]))
    resume = ("client", _req(3, "session/resume", sessionId="s", cwd="/w", replayFrom={"type": "start"}))
    snapshot = ("agent", _upd("s", sessionUpdate="state_update", state="idle", stopReason="end_turn"))
    items = [*INIT, ("client", _req(1, "session/new", cwd="/w")), ("agent", _ok(1, sessionId="s")),
             ("client", _req(2, "session/prompt", sessionId="s", prompt=[{"type": "text", "text": "x"}])),
             echo, ("agent", _ok(2, messageId="m1")),
             ("agent", _upd("s", sessionUpdate="state_update", state="running")), tool("pending"), tool("completed"),
             snapshot,  # line 11: the idle that ends the work
             resume, echo, tool("pending"), tool("completed"), snapshot, ("agent", _ok(3))]  # lines 12-17
    assert _found(items) == []
    # A resume without replayFrom replays nothing: the same updates are a replay it did not
    # ask for (the user message) and a live update after the idle of its work (the tool call).
    del items[11][1]["params"]["replayFrom"]
    assert _found(items) == [(13, "no_replay_without_replay_from", "violation"),
                             (14, "no_update_after_idle_of_its_work", "violation")]
    items[11][1]["params"]["replayFrom"] = {"type": "start"}
    # After the snapshot the replay is over: the tool call's update is live again.
    items[13], items[15] = items[15], items[13]
    assert _found(items) == [(15, "no_update_after_idle_of_its_work", "violation")]


def test_every_rule_cites_registered_clauses_and_quotes_one():
    from acp_lifecycle.model.clauses import lookup
    from acp_lifecycle.model.proposals import PROPOSALS

    for rule in RULES.values():
        assert rule.clauses or rule.external or rule.id == "schema_valid", rule.id  # its problems name the schema pointer
        # a core rule cites the core's clauses; a proposal's rule, the core's or its proposal's own
        own = {c.id for c in PROPOSALS[rule.proposal].clauses} if rule.proposal else set()
        for cid in rule.clauses:
            assert cid in CLAUSES or cid in own, f"{rule.id} cites unknown clause {cid}"
        sources = ("RFD: ", "2.4.0: ", "JSON-RPC 2.0: ") + ((f"{rule.proposal}: ",) if rule.proposal else ())
        assert rule.quote.startswith(sources) or rule.id == "schema_valid", rule.id
        assert lookup(rule.clauses[0]) is not None if rule.clauses else True
        assert rule.level in ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT") and rule.since in ("rfd", "2.4.0")


def test_the_monitor_refuses_an_unknown_rule_set():
    with pytest.raises(ValueError, match="rfd"):
        Monitor("v3")


# ---------------------------------------------------------------------------
# Parsing and bad input


@pytest.mark.parametrize(
    "text, needle",
    [
        ("nope", ":1: not JSON"),
        ('\n\n{"conn": 1, "from": "agent"}', ':3: a line needs "msg"'),
        ('[1, 2]', "must be a JSON object"),
        ('{"from": "agent", "msg": {}}', 'needs "conn"'),
        ('{"conn": true, "from": "agent", "msg": {}}', 'needs "conn"'),
        ('{"conn": "x", "from": "server", "msg": {}}', '"from" must be'),
    ],
)
def test_unusable_lines_are_one_line_errors_naming_file_and_line(text, needle):
    with pytest.raises(TranscriptError) as e:
        parse_text(text, "t.jsonl")
    assert needle in str(e.value) and str(e.value).startswith("t.jsonl") and "\n" not in str(e.value)


def test_a_byte_order_mark_crlf_and_a_line_separator_inside_a_string_are_fine():
    line = json.dumps({"conn": "c", "from": "client", "msg": _note("_x", text="a\u2028b")}, ensure_ascii=False)
    entries = parse_text("\ufeff" + line + "\r\n\r\n" + line + "\n")
    assert [n for n, _ in entries] == [1, 3] and entries[0][1]["msg"]["params"]["text"] == "a\u2028b"


def test_a_raw_line_from_a_recorder_is_read_and_reported():
    entries = parse_text('{"conn": "stdio", "from": "agent", "raw": "oops"}')
    assert [(f.line, f.property) for f in check_transcript(entries)] == [(1, "wire_message_is_json")]


def _mutants(rng, seed_text, n):
    alphabet = '{}[]":,\\ \n0123456789abcdefnulltrue-_/$.' + "\x00\ufffd\ufeff"
    for _ in range(n):
        chars = list(seed_text)
        for _ in range(rng.randint(1, 6)):
            op = rng.random()
            i = rng.randrange(len(chars) + 1)
            if op < 0.4 and chars:
                del chars[min(i, len(chars) - 1)]
            elif op < 0.8:
                chars.insert(i, rng.choice(alphabet))
            elif chars:
                j = rng.randrange(len(chars))
                chars[min(i, len(chars) - 1)], chars[j] = chars[j], chars[min(i, len(chars) - 1)]
        yield "".join(chars)


def test_a_hundred_thousand_malformed_transcripts_never_crash_the_checker():
    from pathlib import Path

    rng = random.Random(7)
    seeds = []
    for name in ("second-stop-reason", "replay-chunks-without-reset", "tool-update-after-idle"):
        seeds.append(dumps(export(_counterexample(name).trace)))
    corpus = Path(__file__).resolve().parent / "corpus" / "conforming"
    seeds.append((corpus / "permission-cancel.jsonl").read_text())
    seeds.append((corpus / "two-connections.jsonl").read_text()[:3000])
    count = errors = 0
    for i, text in enumerate(_mutants(rng, seeds[0], 100_000 // 2)):
        text = text if i % 2 else seeds[i % len(seeds)][: rng.randrange(1, 400)] + text[-50:]
        count += 1
        try:
            entries = parse_text(text)
        except TranscriptError:
            errors += 1
            continue
        check_transcript(entries, partial=bool(i % 3), rules=("rfd", "rfd+2.4.0")[i % 2])
    for k, seed in enumerate(seeds[1:]):
        for text in _mutants(rng, seed, 100_000 // 2 // 4 if k < 3 else 100_000 // 2 // 4 + 100_000 // 2 % 4):
            count += 1
            try:
                check_transcript(parse_text(text))
            except TranscriptError:
                errors += 1
    assert count >= 100_000 and 0 < errors < count


def test_structurally_odd_messages_never_crash_the_checker():
    odd = [{}, {"id": None}, {"method": 5}, {"method": "session/update", "params": []},
           {"method": "session/update", "params": {"update": "x"}}, {"id": [], "result": 3},
           {"method": "session/prompt", "id": {}, "params": None}, {"error": {}, "id": 1},
           {"method": "session/update", "params": {"update": {"sessionUpdate": "state_update", "state": "idle", "stopReason": 5, "error": 1}}},
           {"method": "session/update", "params": {"update": {"sessionUpdate": "user_message", "content": 7}}},
           {"method": "session/update", "params": {"sessionId": [1], "update": {"sessionUpdate": "state_update", "state": "running", "background": [3, {"type": 1}]}}},
           {"method": "session/resume", "id": 1, "params": {"sessionId": {"a": 1}, "replayFrom": 7}},
           {"method": "session/request_permission", "id": [2], "params": {"sessionId": None, "subject": {"type": "tool_call", "toolCall": 4}}},
           {"method": "tool_call/cancel", "id": 3, "params": {"sessionId": "s", "toolCallId": {}}},
           {"method": "$/cancel_request", "params": {"requestId": {"x": [1]}}},
           {"method": "session/update", "params": {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": [1]}}}]
    for sender in ("client", "agent"):
        for m in odd:
            check_transcript([(1, {"conn": 0, "from": sender, "msg": m})])
        check_transcript([(n, {"conn": 0, "from": sender if n % 2 else ("agent" if sender == "client" else "client"), "msg": m})
                          for n, m in enumerate(odd, 1)])


# ---------------------------------------------------------------------------
# The trace command


def test_the_trace_command_checks_files_end_to_end(tmp_path, capsys):
    good = tmp_path / "ok.jsonl"
    good.write_text(dumps(export(_counterexample("never-echo").trace[:2])))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dumps(export(_counterexample("second-stop-reason").trace)))
    assert main(["trace", "--no-schema", "--partial", str(good)]) == 0
    capsys.readouterr()
    assert main(["trace", "--no-schema", "--json", "--partial", "--rules", "rfd", str(bad)]) == 1
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]  # JSON Lines: one record a line
    summary = records[-1]
    assert summary["record"] == "summary" and summary["rules"] == "rfd" and summary["schema"] is False
    first = records[0]
    assert first["record"] == "finding" and first["file"] == str(bad)
    assert first["property"] == "no_second_stop_reason" and first["clause"] and first["quote"].startswith("2.4.0: ")
    assert summary["violations"] + summary["warnings"] == len(records) - 1
    assert main(["trace", "--no-schema", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["trace", "--no-schema", "--rules", "rfd+2.5", str(good)]) == 2
    rng = random.Random(3)
    for i, text in enumerate(_mutants(rng, bad.read_text(), 200)):
        f = tmp_path / f"m{i}.jsonl"
        f.write_text(text)
        assert main(["trace", "--no-schema", str(f)]) in (0, 1, 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err


@pytest.mark.parametrize("text", ["", "\n\n", "\ufeff", '{"conn": "c", "event": "closed"}\n'])
def test_an_empty_transcript_is_exit_2_with_a_one_line_reason(tmp_path, capsys, text):
    f = tmp_path / "empty.jsonl"
    f.write_text(text, encoding="utf-8")
    assert main(["trace", "--no-schema", str(f)]) == 2
    err = capsys.readouterr().err
    assert "no JSON-RPC message" in err and err.count("\n") == 1


def test_without_a_pulled_schema_trace_checks_the_rules_and_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    good = tmp_path / "ok.jsonl"
    good.write_text(dumps(export(_counterexample("never-echo").trace[:2])))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dumps(export(_counterexample("second-stop-reason").trace)))
    assert main(["trace", "--partial", str(good)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "schema validation skipped" in err and "acp-lifecycle schema pull" in err
    assert main(["trace", "--rules", "rfd", str(bad)]) == 1
    captured = capsys.readouterr()
    assert "no_second_stop_reason" in captured.out and "schema validation skipped" in captured.err
    assert main(["trace", "--schema", str(tmp_path / "nope.json"), str(good)]) == 2  # asked for: an error


def test_the_rule_table_in_docs_transcripts_md_is_the_monitor_s():
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "transcripts.md").read_text()
    rows = {}
    for line in doc.splitlines():
        if line.startswith("| `") and line.count("|") == 5:
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = cells
    # the core's rules; a proposal's are listed with its clauses (docs/clauses.md, generated from its file)
    assert list(rows) == [rid for rid, rule in RULES.items() if not rule.proposal]
    for rid, (_, severity, clauses, summary) in rows.items():
        rule = RULES[rid]
        want = "warning" if rule.level.startswith("SHOULD") else (
            "violation" if rule.since == "rfd" else "violation (warning under `rfd`)")
        assert severity == want, rid
        assert clauses.replace("`", "").split(", ")[0] == (rule.clause or "the schema pointer named in each problem"), rid
        assert summary == rule.summary, rid


# ---------------------------------------------------------------------------
# Rules added to make the clause index's wire column complete (each has a violating corpus
# transcript too, but the SHOULDs): the case that breaks each and the neighbours it must pass.

NEW = [*INIT, ("client", _req(1, "session/new", cwd="/w")), ("agent", _ok(1, sessionId="s"))]
TEXT = [{"type": "text", "text": "hi"}]


def _turn(rid, mid, *work, stop="end_turn", **idle):
    """A prompt, its echo and response, running, the work's updates, and its idle."""
    end = {"stopReason": stop, **idle} if stop is not None else idle
    return [("client", _req(rid, "session/prompt", sessionId="s", prompt=TEXT)),
            ("agent", _upd("s", sessionUpdate="user_message", messageId=mid, content=TEXT)),
            ("agent", _ok(rid, messageId=mid)),
            ("agent", _upd("s", sessionUpdate="state_update", state="running")),
            *work,
            ("agent", _upd("s", sessionUpdate="state_update", state="idle", **end))]


def test_the_error_idle_without_details_and_the_idle_without_stop_reason_are_warnings():
    assert _found([*NEW, *_turn(2, "m1", stop="error")]) == [(9, "error_idle_has_details", "warning")]
    assert _found([*NEW, *_turn(2, "m1", stop="error", error={"code": -32603, "message": "boom"})]) == []
    assert _found([*NEW, *_turn(2, "m1", stop=None)]) == [(9, "stop_reason_when_work_ends", "warning")]
    assert _found([*NEW, *_turn(2, "m1", stop=None)], rules="rfd") == [(9, "stop_reason_when_work_ends", "warning")]
    # a repeated idle (no work ended) needs neither
    again = ("agent", _upd("s", sessionUpdate="state_update", state="idle"))
    assert _found([*NEW, *_turn(2, "m1"), again]) == []


def _tool(tid, status, **more):
    return ("agent", _upd("s", sessionUpdate="tool_call_update", toolCallId=tid, status=status, **more))


def test_progress_after_requires_action_needs_running_first():
    blocked = ("agent", _upd("s", sessionUpdate="state_update", state="requires_action"))
    running = ("agent", _upd("s", sessionUpdate="state_update", state="running"))
    pending = _tool("t1", "pending", title="Edit")
    assert _found([*NEW, *_turn(2, "m1", pending, blocked, _tool("t1", "in_progress"), _tool("t1", "completed"))]) == [
        (11, "requires_action_then_running", "violation")]
    assert _found([*NEW, *_turn(2, "m1", pending, blocked, _tool("t1", "completed"))]) == [
        (11, "requires_action_then_running", "violation")]
    assert _found([*NEW, *_turn(2, "m1", pending, blocked, _tool("t1", "in_progress"))], rules="rfd") == [
        (11, "requires_action_then_running", "warning")]
    # running first; or the tool was rejected; or the work ends without resuming: all fine
    assert _found([*NEW, *_turn(2, "m1", pending, blocked, running, _tool("t1", "in_progress"), _tool("t1", "completed"))]) == []
    assert _found([*NEW, *_turn(2, "m1", pending, blocked, _tool("t1", "failed"))]) == []
    assert _found([*NEW, *_turn(2, "m1", pending, blocked, _tool("t1", "failed"), stop="end_turn")]) == []
    # a tool call already running (a parallel one) that completes is not judged: ambiguous
    assert _found([*NEW, *_turn(2, "m1", _tool("t0", "in_progress", title="Grep"), pending, blocked,
                                _tool("t0", "completed"), running, _tool("t1", "in_progress"), _tool("t1", "completed"))]) == []


def test_a_background_tool_may_progress_while_foreground_work_requires_action():
    bg = ("agent", _upd("s", sessionUpdate="state_update", state="requires_action",
                        background=[{"type": "tool_call", "toolCallId": "b1"}]))
    items = [*NEW, *_turn(2, "m1", _tool("b1", "pending", title="Build"), bg, _tool("b1", "in_progress"),
                          background=[{"type": "tool_call", "toolCallId": "b1"}])]
    assert _found(items) == []


def test_work_may_end_cancelled_only_if_something_cancelled_it():
    cancel = ("client", _note("session/cancel", sessionId="s"))
    assert _found([*NEW, *_turn(2, "m1", stop="cancelled")]) == [(9, "cancelled_only_when_cancelled", "violation")]
    assert _found([*NEW, *_turn(2, "m1", stop="cancelled")], rules="rfd") == [(9, "cancelled_only_when_cancelled", "warning")]
    assert _found([*NEW, *_turn(2, "m1", cancel, stop="cancelled")]) == []
    # a session/cancel the agent read before it reported running (a race) counts
    t = _turn(2, "m1", stop="cancelled")
    assert _found([*NEW, *t[:3], cancel, *t[3:]]) == []
    # $/cancel_request of the prompt, read before the agent answered it, counts too
    withdraw = ("client", _note("$/cancel_request", requestId=2))
    assert _found([*NEW, t[0], withdraw, *t[1:]]) == []
    # a cancel of earlier work does not cover the next
    first = _turn(2, "m1", cancel, stop="cancelled")
    assert _found([*NEW, *first, *_turn(3, "m2", stop="cancelled")]) == [(15, "cancelled_only_when_cancelled", "violation")]
    # a session the log did not see created: another connection may have cancelled it
    resumed = [*INIT, _resume(1, replay=False), ("agent", _upd("s", sessionUpdate="state_update", state="running")),
               ("agent", _ok(1)), ("agent", _upd("s", sessionUpdate="state_update", state="idle", stopReason="cancelled"))]
    assert _found(resumed) == []


def test_a_custom_state_does_not_replace_the_standard_ones():
    custom = ("agent", _upd("s", sessionUpdate="state_update", state="_thinking"))
    idle = ("agent", _upd("s", sessionUpdate="state_update", state="idle", stopReason="end_turn"))
    prompt = ("client", _req(2, "session/prompt", sessionId="s", prompt=TEXT))
    echo = ("agent", _upd("s", sessionUpdate="user_message", messageId="m1", content=TEXT))
    items = [*NEW, prompt, echo, ("agent", _ok(2, messageId="m1")), custom, idle]
    assert _found(items) == [(8, "standard_states_reported", "violation")]
    # beside running (a refinement of it), the standard state is reported
    assert _found([*NEW, *_turn(2, "m1", custom)]) == []
    # a client whose initialize carries an extension may have advertised the state
    init = [("client", _req(0, "initialize", protocolVersion=2, info={"name": "t", "version": "1"},
                            capabilities={"_meta": {"states": ["_thinking"]}})), INIT[1]]
    assert [f for f in _found([*init, *items[2:]]) if f[1] == "standard_states_reported"] == []


def _resume(rid, replay=True):
    params = {"sessionId": "s", "cwd": "/w", **({"replayFrom": {"type": "start"}} if replay else {})}
    return ("client", _req(rid, "session/resume", **params))


def test_a_connection_attached_since_session_new_is_replayed_only_ids_it_knows():
    snapshot = ("agent", _upd("s", sessionUpdate="state_update", state="idle", stopReason="end_turn"))
    replayed = ("agent", _upd("s", sessionUpdate="user_message", messageId="m1", content=TEXT))
    renamed = ("agent", _upd("s", sessionUpdate="user_message", messageId="m7", content=TEXT))
    base = [*NEW, *_turn(2, "m1")]
    assert _found([*base, _resume(3), replayed, snapshot, ("agent", _ok(3))]) == []
    assert _found([*base, _resume(3), renamed, snapshot, ("agent", _ok(3))]) == [(11, "replayed_ids_are_known", "violation")]
    # a cut log cannot say the ID never comes live; a later live echo of it makes it known
    assert _found([*base, _resume(3), renamed, snapshot, ("agent", _ok(3))], partial=True) == []
    assert _found([*base, _resume(3), renamed, snapshot, ("agent", _ok(3)), renamed]) == []
    # but a prompt sent after the replay is a new message: answering it with m7 reuses the ID
    assert _found([*base, _resume(3), renamed, snapshot, ("agent", _ok(3)), *_turn(4, "m7")]) == [
        (16, "distinct_message_ids", "violation")]
    # a new connection (no session/new on it) may be replayed messages inserted while none was attached
    other = [(n, {**e, "conn": "d"}) for n, e in _lines(*INIT, ("client", _req(3, "session/resume", sessionId="s", cwd="/w",
                                                                               replayFrom={"type": "start"})),
                                                        renamed, snapshot, ("agent", _ok(3)))]
    first = _lines(*base)
    items = first + [(len(first) + n, e) for n, e in other]
    assert [(f.line, f.property) for f in check_transcript(items)] == []


_WIRE_REASON_STARTS = ("not on the wire", "not decidable on the wire", "nothing on the wire", "not a rule",
                       "holds by the message format")


@pytest.mark.parametrize("cid", list(CLAUSES))
def test_every_clause_has_a_wire_rule_or_a_reason_why_no_transcript_shows_it_broken(cid):
    rules = [r.id for r in RULES.values() if cid in r.clauses]
    reason = CLAUSES[cid].wire
    assert bool(rules) != bool(reason), (cid, rules, reason)  # exactly one of the two
    assert not reason or reason.startswith(_WIRE_REASON_STARTS), reason
