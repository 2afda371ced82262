"""Every seeded bug is caught by the exhaustive checker with the expected property."""

import pytest

from acp_lifecycle.model.bugs import BUGS, get_bug
from acp_lifecycle.model.properties import BY_ID
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.search.explore import explore

# bug: length of the shortest counterexample on its member
PINNED_LENGTHS = {
    "answer-at-receipt": 2,
    "answer-at-reserve": 3,
    "error-after-insertion": 5,
    "cancel-after-insertion": 5,
    "same-id-for-same-content": 8,  # the wire shows the reuse at the second response, not at insertion
    "ids-reset-on-restart": 8,  # the wire shows the reuse once a resume replays the older message
    "echo-under-other-id": 4,
    "never-echo": 9,
    "no-idle-after-failure": 5,
    "error-when-abort-raises": 7,
    "end-turn-for-cancel": 7,
    "second-stop-reason": 6,
    "tool-update-after-idle": 7,
    "error-beside-end-turn": 6,
    "no-tool-terminal-before-error": 6,
    "replay-chunks-without-reset": 5,
    "replay-under-new-id": 5,
    "replay-reexecutes-command": 5,
    "replay-without-replay-from": 5,
    "client-associates-by-content": 5,
    "client-associates-by-order": 5,
    "client-idle-completes-prompt": 3,
    "client-keeps-optimistic-copy": 7,
}


def test_every_bug_has_a_pinned_length():
    assert set(PINNED_LENGTHS) == set(BUGS)


@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_checker_catches_each_seeded_bug(name):
    bug = BUGS[name]
    assert bug.breaks in BY_ID and BY_ID[bug.breaks].expect == "must_hold"
    r = explore(get_suite(bug.member).members[0], bug.rules)
    v = r.verdicts[bug.breaks]
    assert v.status == "violated", f"{name} was not caught by {bug.breaks}"
    assert len(v.trace) == PINNED_LENGTHS[name]
    assert v.message
    assert not r.ok


@pytest.mark.parametrize("name", sorted(BUGS))
def test_each_bug_member_is_clean_without_the_bug(name):
    # The property is caught because of the bug, not because the member breaks it anyway.
    r = explore(get_suite(BUGS[name].member).members[0])
    assert r.verdicts[BUGS[name].breaks].status == "holds"


def test_an_agent_that_answers_at_receipt_is_caught_in_two_steps():
    r = explore(get_suite("tiny").members[0], get_bug("answer-at-receipt").rules)
    v = r.verdicts["success_only_after_insertion"]
    assert [s.action for _, s in v.trace] == [("ClientSubmitPrompt", 0, "a"), ("AgentReceive", 0, "prompt")]
    assert v.trace[-1][1].emitted == ((0, ("ok", 1, 1)),)


def test_an_agent_that_answers_minus_32800_after_insertion_is_caught():
    r = explore(get_suite("failures").members[0], get_bug("cancel-after-insertion").rules)
    v = r.verdicts["inserted_prompt_never_rejected"]
    names = [s.action[0] for _, s in v.trace]
    assert names[-1] == "AgentReceive" and "AgentInsert" in names
    assert v.trace[-1][1].emitted[0][1][:3] == ("err", 1, -32800)


def test_an_agent_that_never_sends_idle_after_a_failure_is_caught_twice():
    r = explore(get_suite("failures").members[0], get_bug("no-idle-after-failure").rules)
    assert r.verdicts["failed_work_ends_with_error_idle"].status == "violated"
    live = r.verdicts["ended_work_reported_idle"]
    assert live.status == "violated" and live.ending == "terminal"


def test_unknown_bug_names_say_how_to_list_them():
    with pytest.raises(KeyError, match="bugs --list"):
        get_bug("nope")
