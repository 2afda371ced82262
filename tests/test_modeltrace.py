"""Model-based trace validation: a transcript is explained iff some run of the model produces it."""

import json
import random

import pytest

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.config import RFD_RULES
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.sims.configs import SUITES, get_suite
from acp_lifecycle.sims.search.explore import explore
from acp_lifecycle.sims.wire.modeltrace import abstract, config_for, explain
from acp_lifecycle.sims.wire.transcript import export, parse_text

# bug -> (property, line the rule-based checker flags): one table for both checkers.
from test_transcript import VISIBLE  # noqa: E402
# Visible bugs the correct model explains, and why. never-echo: its
# counterexample is a log that ends before the echo; a transcript is a prefix
# of a run, and the correct model may still echo after the log ends. Only an
# end-of-log rule can say "never": explain(..., complete=True), like the
# rule-based checker's partial=False, catches it at the end of the log.
EXPLAINED_BY_CORRECT_MODEL = {"never-echo"}
# Visible bugs that break only a SHOULD: the model explains what the spec
# allows (a lenient agent), and the rule-based monitor reports the SHOULD.
SHOULD_ONLY = {"no-tool-terminal-before-error"}


def _entries(lines):
    return list(enumerate(lines, 1))


def _walks(n, seed):
    rng = random.Random(seed)
    members = SUITES["default"].members
    for i in range(n):
        cfg = members[i % len(members)]
        s, trace = initial_state(cfg), []
        while succ := successors(s, cfg, RFD_RULES):
            step = rng.choice(succ)
            trace.append((s, step))
            s = step.state
        yield cfg, i, trace


def test_random_walks_of_the_correct_model_are_explained():
    count = 0
    for cfg, i, trace in _walks(320, 2027):
        r = explain(_entries(export(trace)))
        assert r.explained, (cfg.name, i, r.text())
        count += 1
    assert count == 320


def test_walks_to_a_terminal_state_are_complete():
    for cfg, i, trace in _walks(40, 11):
        assert explain(_entries(export(trace)), complete=True).explained, (cfg.name, i)


def test_cut_walks_are_explained_too():
    # A transcript may stop anywhere: every prefix of a run is explained.
    for cfg, i, trace in _walks(40, 5):
        lines = export(trace)
        cut = lines[: random.Random(i).randrange(len(lines) + 1)]
        assert explain(_entries(cut)).explained, (cfg.name, i)


def _counterexample(name):
    bug = BUGS[name]
    return explore(get_suite(bug.member).members[0], bug.rules).verdicts[bug.breaks]


@pytest.mark.parametrize("name", sorted(VISIBLE))
def test_visible_bugs_are_not_explained_by_the_correct_model(name):
    lines = export(_counterexample(name).trace)
    r = explain(_entries(lines))
    if name in SHOULD_ONLY:
        assert r.explained
        return
    if name in EXPLAINED_BY_CORRECT_MODEL:
        assert r.explained
        r = explain(_entries(lines), complete=True)
        assert not r.explained and r.at_end and r.first_unexplained_line == len(lines) + 1
        assert "c0 agent: user_message msg_1 ['a']" in r.allowed
        assert r.text().startswith(f"end of transcript (after line {len(lines)}): no run of the model ends here")
        return
    assert not r.explained and not r.exhausted
    assert r.first_unexplained_line <= VISIBLE[name][1]
    assert r.prefix_lines == r.first_unexplained_line - 1
    assert r.allowed and all(isinstance(a, str) for a in r.allowed)


@pytest.mark.parametrize("name", sorted(VISIBLE))
def test_each_bug_explains_its_own_counterexample(name):
    # The search is not too strict: the buggy rules do explain the log.
    bug = BUGS[name]
    lines = export(_counterexample(name).trace)
    assert explain(_entries(lines), rules=bug.rules).explained


def test_the_allowed_messages_name_the_expected_alternative():
    r = explain(_entries(export(_counterexample("end-turn-for-cancel").trace)))
    assert "c0 agent: state_update idle stopReason=cancelled" in r.allowed


def _line(conn, sender, msg):
    return {"conn": conn, "from": sender, "msg": msg}


def _update(update):
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}


def _turn(rid, text, mid):
    return [
        _line("c0", "client", {"jsonrpc": "2.0", "id": rid, "method": "session/prompt",
                               "params": {"sessionId": "s", "prompt": [{"type": "text", "text": text}]}}),
        _line("c0", "agent", {"jsonrpc": "2.0", "id": rid, "result": {"messageId": mid}}),
        _line("c0", "agent", _update({"sessionUpdate": "user_message", "messageId": mid,
                                      "content": [{"type": "text", "text": text}]})),
        _line("c0", "agent", _update({"sessionUpdate": "state_update", "state": "running"})),
        _line("c0", "agent", _update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}})),
        _line("c0", "agent", _update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})),
    ]


def _text(lines):
    return "\n".join(json.dumps(x) for x in lines)


def test_five_prompts_on_one_connection_are_explained():
    init = [
        _line("c0", "client", {"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": {"protocolVersion": 2}}),
        _line("c0", "agent", {"jsonrpc": "2.0", "id": "i", "result": {"protocolVersion": 2}}),
        # a connection whose handshake is in the log uses only sessions it opened
        _line("c0", "client", {"jsonrpc": "2.0", "id": "n", "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
        _line("c0", "agent", {"jsonrpc": "2.0", "id": "n", "result": {"sessionId": "s"}}),
    ]
    lines = init + [x for k in range(5) for x in _turn(10 + k, "/compact" if k == 2 else f"hello {k}", f"m-{k}")]
    entries = parse_text(_text(lines))
    cfg = config_for(entries, clamp=False)
    assert cfg.prompts == 5 and cfg.alphabet == ("a", "/c")
    r = explain(entries)
    assert r.explained, r.text()
    assert r.skipped == 2 + 2 + 5  # initialize, session/new and their responses, agent_message_chunk
    assert any("prompts=5" in c for c in r.clamped)
    assert config_for(entries).prompts == 3  # clamped to LIMITS by default


def test_a_reused_message_id_is_not_explained():
    lines = _turn(1, "a", "m-1") + _turn(2, "b", "m-1")
    r = explain(parse_text(_text(lines)))
    assert not r.explained
    assert r.first_unexplained_line == 8  # the second result reuses m-1
    assert "c0 agent: result id=2 messageId=<new>" in r.allowed


def test_the_text_report():
    r = explain(_entries(export(_counterexample("second-stop-reason").trace)))
    assert r.text().startswith("line 5: no run of the model explains this; explained up to line 4; the model allows here: ")
    assert json.loads(json.dumps(r.data()))["first_unexplained_line"] == 5


def test_abstract_maps_messages_to_model_vocabulary():
    assert abstract(_turn(7, "/x", "m")[0]) == ("prompt", "7", "/c")
    assert abstract(_turn(7, "x", "m")[1]) == ("ok", "7", '"m"')
    assert abstract(_turn(7, "x", "m")[2]) == ("user_message", '"m"', ("a",))
    assert abstract(_turn(7, "x", "m")[5]) == ("state", "idle", "end_turn", 0)
    assert abstract(_turn(7, "x", "m")[4]) is None
    assert abstract({"conn": "c0", "event": "closed"}) == ("closed",)
