"""Transcripts: export of model traces, the rule-based checker, bad input."""

import json
import random

import pytest

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.config import RFD_RULES
from acp_lifecycle.model.system import initial_state, successors
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
    "error-beside-end-turn": ("error_only_with_error_stop_reason", 3),
    "no-tool-terminal-before-error": ("tools_terminal_before_error_idle", 4),
    "replay-chunks-without-reset": ("chunked_replay_resets_first", 4),
    "replay-without-replay-from": ("no_replay_without_replay_from", 4),
}
# Bugs whose shortest counterexample ends in a step the wire cannot show, and why.
INVISIBLE = {
    "answer-at-receipt": "insertion is internal: a success before it looks like a success after it",
    "answer-at-reserve": "the same: reserving an ID is internal",
    "error-after-insertion": "the error response cannot be tied to the inserted message without content matching",
    "cancel-after-insertion": "the same, for -32800",
    "same-id-for-same-content": "the collision happens when the ID is assigned, before it is sent",
    "ids-reset-on-restart": "the same, after a restart",
    "echo-under-other-id": "the counterexample stops at the echo; a cut log cannot say the right ID never comes",
    "no-idle-after-failure": "a cut log cannot say the idle never comes",
    "replay-under-new-id": "a replayed ID new to this connection may be an imported or an earlier message",
    "replay-reexecutes-command": "executing a command is internal",
    "client-associates-by-content": "client-side: nothing on the wire changes",
    "client-associates-by-order": "client-side",
    "client-idle-completes-prompt": "client-side",
    "client-keeps-optimistic-copy": "client-side",
}


def _counterexample(name):
    bug = BUGS[name]
    return explore(get_suite(bug.member).members[0], bug.rules).verdicts[bug.breaks]


def test_every_bug_is_classified_as_visible_or_not():
    assert set(VISIBLE) | set(INVISIBLE) == set(BUGS)
    assert not set(VISIBLE) & set(INVISIBLE)


@pytest.mark.parametrize("name", sorted(VISIBLE))
def test_each_visible_bug_is_flagged_at_the_line_of_its_last_step(name):
    v = _counterexample(name)
    lines = export(v.trace)
    before = len(export(v.trace[:-1]))
    findings = check_transcript(list(enumerate(lines, 1)), partial=v.ending != "terminal")
    flagged = [(f.property, f.line) for f in findings if f.property == VISIBLE[name][0]]
    assert flagged and flagged[0] == VISIBLE[name]
    if v.ending != "terminal":
        assert before < flagged[0][1] <= len(lines)  # the violating step's own messages


@pytest.mark.parametrize("name", sorted(INVISIBLE))
def test_invisible_bugs_raise_no_false_violation_on_their_cut_log(name):
    v = _counterexample(name)
    findings = check_transcript(list(enumerate(export(v.trace), 1)), partial=True)
    assert [f for f in findings if f.severity == "violation"] == []


def test_a_thousand_random_walks_of_the_correct_model_are_clean():
    rng = random.Random(2026)
    members = SUITES["default"].members
    for i in range(1000):
        cfg = members[i % len(members)]
        s, trace = initial_state(cfg), []
        while succ := successors(s, cfg, RFD_RULES):
            step = rng.choice(succ)
            trace.append((s, step))
            s = step.state
        findings = check_transcript(list(enumerate(export(trace), 1)))
        assert [f.data() for f in findings if f.severity == "violation"] == [], (cfg.name, i)


def test_export_writes_the_documented_line_format():
    v = _counterexample("second-stop-reason")
    for line in export(v.trace):
        assert set(line) in ({"conn", "from", "msg"}, {"conn", "event"})
        if "msg" in line:
            assert line["msg"]["jsonrpc"] == "2.0" and line["from"] in ("client", "agent")


def test_updates_for_a_session_the_connection_never_opened_are_flagged():
    text = "\n".join(json.dumps(x) for x in [
        {"conn": "a", "from": "client", "msg": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}},
        {"conn": "a", "from": "agent", "msg": {"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "s9", "update": {"sessionUpdate": "state_update", "state": "running"}}}},
    ])
    findings = check_transcript(parse_text(text))
    assert [(f.line, f.property) for f in findings] == [(2, "updates_only_for_opened_sessions")]


def test_a_v1_result_and_a_response_to_nothing_are_flagged():
    msgs = [
        ("client", {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}),
        ("agent", {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}),
        ("agent", {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "m"}}),
        ("agent", {"jsonrpc": "2.0", "id": 7, "result": {}}),
    ]
    text = "\n".join(json.dumps({"conn": 0, "from": f, "msg": m}) for f, m in msgs)
    got = [(f.line, f.property) for f in check_transcript(parse_text(text), partial=True)]
    assert (2, "success_carries_message_id") in got
    assert (3, "one_response_per_request") in got
    assert (4, "response_matches_a_request") in got


@pytest.mark.parametrize(
    "text, needle",
    [
        ("nope", ":1: not JSON"),
        ('\n\n{"conn": 1, "from": "agent"}', ':3: a line needs "msg"'),
        ('[1, 2]', "must be a JSON object"),
        ('{"from": "agent", "msg": {}}', 'needs "conn"'),
        ('{"conn": "x", "from": "server", "msg": {}}', '"from" must be'),
    ],
)
def test_unusable_lines_are_one_line_errors_naming_file_and_line(text, needle):
    with pytest.raises(TranscriptError) as e:
        parse_text(text, "t.jsonl")
    assert needle in str(e.value) and str(e.value).startswith("t.jsonl") and "\n" not in str(e.value)


def _mutants(rng, seed_text, n):
    alphabet = '{}[]":,\\ \n0123456789abcdefnulltrue-_/$' + "\x00\ufffd"
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
    rng = random.Random(7)
    seeds = []
    for name in ("second-stop-reason", "replay-chunks-without-reset", "tool-update-after-idle"):
        seeds.append(dumps(export(_counterexample(name).trace)))
    count = errors = 0
    for i, text in enumerate(_mutants(rng, seeds[0], 100_000 // 2)):
        text = text if i % 2 else seeds[i % len(seeds)][: rng.randrange(1, 400)] + text[-50:]
        count += 1
        try:
            entries = parse_text(text)
        except TranscriptError:
            errors += 1
            continue
        check_transcript(entries, partial=bool(i % 3))
    for text in _mutants(rng, seeds[1], 100_000 // 2):
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
           {"method": "session/update", "params": {"update": {"sessionUpdate": "user_message", "content": 7}}}]
    for sender in ("client", "agent"):
        for m in odd:
            check_transcript([(1, {"conn": 0, "from": sender, "msg": m})])


def test_the_trace_command_checks_files_end_to_end(tmp_path, capsys):
    good = tmp_path / "ok.jsonl"
    good.write_text(dumps(export(_counterexample("never-echo").trace[:2])))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dumps(export(_counterexample("second-stop-reason").trace)))
    assert main(["trace", "--no-schema", "--partial", str(good)]) == 0
    capsys.readouterr()
    assert main(["trace", "--no-schema", "--json", str(bad)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["files"][0]["violations"][0]["property"] == "no_second_stop_reason"
    assert main(["trace", "--no-schema", str(tmp_path / "missing.jsonl")]) == 2
    rng = random.Random(3)
    for i, text in enumerate(_mutants(rng, bad.read_text(), 200)):
        f = tmp_path / f"m{i}.jsonl"
        f.write_text(text)
        assert main(["trace", "--no-schema", str(f)]) in (0, 1, 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err
