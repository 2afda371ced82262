"""`acp-lifecycle find`: the shortest run matching a pattern (sims/find)."""

from __future__ import annotations

import json

import pytest

from acp_lifecycle.model.config import RFD_RULES, S240_RULES
from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.find import PatternError, find, parse

#: The issue's run: a prompt inserted while other work runs, then session/cancel, then that prompt's work starts.
CANCEL_RUN = ("AgentInsert(_, _, queued) then ClientCancelSession then AgentBeginWork(input) "
              "and never AgentEndWork(end_turn)")


@pytest.mark.parametrize("rules", [RFD_RULES, S240_RULES], ids=["rfd", "rfd+2.4.0"])
def test_the_cancel_run_is_8_steps_under_both_rule_sets(rules):
    r = find(get_suite("default").members, rules, parse(CANCEL_RUN))
    f = r.found
    assert f is not None and f.member.name == "cancel-race" and len(f.run) == 8
    assert [step.action for _, step in f.run][3] == ("AgentInsert", 0, "retained", "queued")
    assert f.at == [4, 5, 8]
    assert f.run[6][1].action == ("AgentEndWork", "cancelled")  # the other work was cancelled


def test_message_labels_as_diff_prints_them():
    members = get_suite("cancel-race").members
    p = parse("AgentInsert(_, _, queued) then session/cancel then state_update idle stopReason=cancelled "
              "then c0 <- state_update running")
    f = find(members, RFD_RULES, p).found
    assert len(f.run) == 8 and f.at == [4, 5, 7, 8]
    # the kind diff groups by matches too
    p = parse("response to session/prompt: result")
    assert find(members, RFD_RULES, p).found is not None


def test_negation_cuts_every_run_with_the_event():
    members = get_suite("failures").members
    assert find(members, RFD_RULES, parse("state_update idle")).found is not None
    assert find(members, RFD_RULES, parse("state_update idle and never state_update running")).found is None


def test_shortest_and_one_step_may_match_two_events():
    members = get_suite("tiny").members
    f = find(members, RFD_RULES, parse("AgentBeginWork then state_update running")).found
    assert f.at[0] == f.at[1] == len(f.run)
    f = find(members, RFD_RULES, parse("ClientSubmitPrompt(0, 'a') then the run ends")).found
    from acp_lifecycle.model.spec import Lifecycle

    assert not Lifecycle(members[0]).next_steps(f.run[-1][1].state) and f.at[-1] == len(f.run)


@pytest.mark.parametrize("text, message", [
    ("", "the pattern is empty"),
    ("AgentFoo", "unknown action 'AgentFoo'"),
    ("x then", "an empty event"),
    ("the run ends then x", "can only be the last event"),
    ("x and never a then b", "not a sequence"),
    ("AgentInsert({)", "argument '{'"),
    # searched the whole space for a message with these words (89 s on default), then exit 1
    ("Nonsense(((", "unknown action 'Nonsense' with arguments that do not parse"),
    ("AgentInsert(_, _", "an action 'AgentInsert' with arguments that do not parse"),
    ("c0 <- state_update (running", "its brackets do not close"),
])
def test_bad_patterns(text, message):
    with pytest.raises(PatternError, match=message):
        parse(text)


def test_a_step_matches_two_messages_only_in_the_order_it_sends_them():
    """AgentResume sends the replayed echo, then the result: a pattern in the other order matched
    that one step (a wrong run to quote); it needs a run that sends them in its order."""
    members = [m for m in get_suite("default").members if m.name == "lost-response"]
    f = find(members, RFD_RULES, parse("c0 <- user_message msg_1 then c0 <- result id=2")).found
    assert f.at[0] == f.at[1] and f.run[-1][1].action[0] == "AgentResume"  # its order: one step
    f = find(members, RFD_RULES, parse("c0 <- result id=2 then c0 <- user_message msg_1")).found
    assert f.at[0] < f.at[1] and f.run[f.at[0] - 1][1].action[0] == "AgentResume"


def test_a_bad_pattern_is_refused_before_the_search(capsys):
    assert main(["find", "Nonsense((("]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("acp-lifecycle: error: PATTERN: event 'Nonsense((('")


def test_cli_found_none_and_bad_input(capsys):
    assert main(["find", CANCEL_RUN, "--config", "cancel-race", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["found"] and data["steps"] == 8 and data["member"] == "cancel-race"
    assert data["matched"][2] == {"event": "AgentBeginWork(input)", "step": 8}
    assert data["explore"]["query"].startswith("config=cancel-race&path=")
    assert data["explore"]["command"].startswith("acp-lifecycle explore --config cancel-race --run ")
    assert main(["find", "AgentRestart", "--config", "failures"]) == 1
    assert "No run matches within the bounds" in capsys.readouterr().out
    assert main(["find", "AgentFoo"]) == 2
    err = capsys.readouterr().err
    assert "unknown action 'AgentFoo'" in err and err.count("\n") == 1
    assert main(["find", "x", "--rules", "nope"]) == 2
    assert main(["find", "AgentInsert", "--variant", "ack-at-receipt", "--config", "tiny", "--set", "cancels=1",
                 "--json"]) == 0
    link = json.loads(capsys.readouterr().out.splitlines()[-1])["explore"]
    assert "--variant ack-at-receipt --set cancels=1 --run " in link["command"]
    assert "rules=ack-at-receipt&set=cancels%3D1&path=" in link["query"]  # as explore writes its own query
