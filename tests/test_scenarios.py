"""Scenarios: scripted runs of the RFD's implementation checklist on the correct model."""

import re
from dataclasses import replace

import pytest

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.config import RFD_RULES
from acp_lifecycle.model.properties import BY_ID
from acp_lifecycle.model.system import initial_state
from acp_lifecycle.sims.scenarios import CHECKED, SCENARIOS, Scenario, ScenarioError, render, run

#: The RFD's implementation checklist and the race cases, in checklist order.
REQUIRED = (
    "reserved-id-no-early-success",
    "echo-before-response",
    "echo-after-response",
    "identical-prompts-distinct-ids",
    "two-clients-one-session",
    "retained-association-across-replay",
    "imported-message",
    "full-and-streamed-echo",
    "live-only-command",
    "retained-command-replayed",
    "lost-response-retry",
    "streamed-replay-no-duplicate",
    "failure-before-response",
    "cancel-request-wins",
    "insertion-wins",
    "session-cancel-held-prompt",
    "abort-raises-still-cancelled",
    "failure-retried-work-continues",
    "background-failure-while-idle",
    "agent-initiated-work",
    "stale-idle",
)


#: A scenario shows a rule doing what it says, so the seeded bug that breaks the rule must
#: break the scenario too (a label no longer enabled, a property violated on the way, or the
#: expectation failing). Not a restatement of ``run``'s output: a scenario whose steps or
#: expectation stopped depending on the rule passes under its bug, and fails here.
SHOWN_BY = {
    "reserved-id-no-early-success": "answer-at-reserve",
    "echo-before-response": "never-echo",
    "echo-after-response": "echo-under-other-id",
    "identical-prompts-distinct-ids": "same-id-for-same-content",
    "two-clients-one-session": "client-keeps-optimistic-copy",
    "retained-association-across-replay": "ids-reset-on-restart",
    "retained-command-replayed": "replay-reexecutes-command",
    "lost-response-retry": "client-associates-by-content",
    "streamed-replay-no-duplicate": "replay-chunks-without-reset",
    "failure-before-response": "error-after-insertion",
    "insertion-wins": "cancel-after-insertion",
    "session-cancel-held-prompt": "end-turn-for-cancel",
    "abort-raises-still-cancelled": "error-when-abort-raises",
    "stale-idle": "client-idle-completes-prompt",
    "failed-tool-before-error-idle": "no-tool-terminal-before-error",
    "cancel-stops-next-work": "end-turn-for-cancel",
}


def _under(sc: Scenario, bug: str) -> Scenario:
    return replace(sc, rules=BUGS[bug].on(sc.rules))


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_scenario_runs_on_the_correct_model_and_its_expectation_says_something(name):
    sc = SCENARIOS[name]
    r = run(name)
    assert len(r.trace) == len(sc.steps) and r.final == r.trace[-1][1].state
    with pytest.raises((AssertionError, LookupError)):  # not true of a run that did nothing
        sc.expect(initial_state(sc.config), [])


@pytest.mark.parametrize("name, bug", SHOWN_BY.items())
def test_the_seeded_bug_that_breaks_a_scenarios_rule_breaks_the_scenario(name, bug):
    with pytest.raises((ScenarioError, AssertionError)):
        run(_under(SCENARIOS[name], bug))


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_scenario_fails_under_some_seeded_bug(name):
    """A scenario no seeded bug can break would show nothing the bugs get wrong."""
    sc = SCENARIOS[name]
    for bug in BUGS:
        try:
            run(_under(sc, bug))
        except (ScenarioError, AssertionError):
            return
    pytest.fail(f"{name} passes under every seeded bug")


def test_the_checklist_scenarios_exist_in_checklist_order():
    names = list(SCENARIOS)
    assert [n for n in names if n in REQUIRED] == list(REQUIRED)


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_scenario_is_a_small_named_run_with_a_title_a_quote_and_explicit_deliveries(name):
    sc = SCENARIOS[name]
    assert sc.name == name and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name)
    assert sc.title and sc.rfd and sc.steps
    # The cancellation races of docs/findings.md deliver to clients instantly: what
    # matters there is when the agent reads the cancel, not when clients read updates.
    if not name.startswith("cancel-"):
        assert sc.config.down_latency, "deliveries to clients should be ClientReceive steps of their own"
    assert sc.config.validate() is sc.config
    assert sc.summary and not sc.summary.startswith("_")


def test_scenario_titles_are_distinct():
    titles = [sc.title for sc in SCENARIOS.values()]
    assert len(titles) == len(set(titles))


def test_a_label_the_model_does_not_offer_raises_a_one_line_error_naming_the_step_and_the_enabled_labels():
    sc = SCENARIOS["echo-before-response"]
    bad = replace(sc, steps=sc.steps[:2] + (("AgentRespond", 0),) + sc.steps[3:])
    with pytest.raises(ScenarioError) as e:
        run(bad)
    msg = str(e.value)
    assert "\n" not in msg
    assert "step 3 AgentRespond(0) is not enabled" in msg
    assert "enabled: AgentInsert(0, 'retained'), AgentRejectPrompt(0, 'invalid'), AgentRejectPrompt(0, 'cancelled')" in msg


def test_an_unknown_action_name_is_reported_like_any_disabled_label():
    sc = SCENARIOS["agent-initiated-work"]
    with pytest.raises(ScenarioError, match=r"step 1 AgentDance\(\) is not enabled; enabled: AgentInitiateWork\(\)"):
        run(replace(sc, steps=(("AgentDance",),)))


def test_an_unknown_scenario_name_raises_a_scenario_error_listing_the_known_ones():
    with pytest.raises(ScenarioError, match="unknown scenario 'no-such'; known: reserved-id-no-early-success"):
        run("no-such")


def test_a_scenario_whose_expectation_is_wrong_fails():
    sc = SCENARIOS["echo-before-response"]

    def wrong(final, trace):
        """The client shows its prompt twice."""
        assert len(final.clients[0].view) == 2, "the client should show its prompt twice"

    with pytest.raises(AssertionError, match="the client should show its prompt twice"):
        run(replace(sc, expect=wrong))


@pytest.mark.parametrize(
    "one, other",
    [
        ("echo-before-response", "echo-after-response"),
        ("cancel-request-wins", "insertion-wins"),
        ("full-and-streamed-echo", "two-clients-one-session"),
        ("live-only-command", "retained-command-replayed"),
        ("abort-raises-still-cancelled", "failure-before-response"),
    ],
)
def test_the_expectations_of_contrasting_scenarios_reject_each_other(one, other):
    a, b = SCENARIOS[one], SCENARIOS[other]
    with pytest.raises(AssertionError):
        run(replace(a, expect=b.expect))
    with pytest.raises(AssertionError):
        run(replace(b, expect=a.expect))


def test_a_rule_broken_during_a_run_stops_it_naming_the_property():
    # The seeded client bug of claude-agent-acp#480: the stale idle is taken as
    # completion of the prompt the agent has not even received.
    sc = SCENARIOS["stale-idle"]
    buggy = replace(sc, rules=RFD_RULES.with_(name="bug", client_idle_completes=True))
    with pytest.raises(ScenarioError) as e:
        run(buggy)
    assert "after step 5 ClientReceive(0, 'state'), property client_completion_belief_is_true is violated" in str(e.value)
    assert "\n" not in str(e.value)


def test_runs_check_every_must_hold_always_and_step_property():
    ids = {p.id for p in CHECKED}
    assert "success_only_after_insertion" in ids and "inserted_prompt_never_rejected" in ids
    assert all(p.kind in ("always", "step") and p.expect == "must_hold" for p in CHECKED)
    assert "retry_does_not_duplicate" not in ids  # a known limitation: lost-response-retry shows it


def test_the_lost_response_retry_confirms_the_known_limitation():
    final = run("lost-response-retry").final
    assert BY_ID["retry_does_not_duplicate"].expect == "known_limitation"
    assert "became two messages" in BY_ID["retry_does_not_duplicate"].check(final)


def test_rejecting_a_held_prompt_on_session_cancel_is_not_required_by_the_rfd_alone():
    sc = SCENARIOS["session-cancel-held-prompt"]
    assert sc.rules.cancel_rejects_held == "must" and "2.4.0" in sc.title
    with pytest.raises(ScenarioError, match=r"ClientReceive\(0, 'err'\) is not enabled"):
        run(replace(sc, rules=RFD_RULES))


def test_render_shows_the_title_then_the_numbered_steps_with_json_rpc_then_the_expectation():
    r = run("echo-before-response")
    lines = render(r)
    assert lines[0] == f"echo-before-response: {SCENARIOS['echo-before-response'].title}"
    assert lines[1] == "  1. ClientSubmitPrompt(0, 'a')"
    assert any('"messageId":"msg_1"' in line for line in lines)
    assert sum(1 for line in lines if re.match(r"\s*\d+\. ", line)) == len(r.trace)
    assert lines[-1].startswith("expected: ") and lines[-1].endswith(" ... ok")


def test_a_scenario_is_a_frozen_value():
    sc = SCENARIOS["imported-message"]
    assert isinstance(sc, Scenario)
    with pytest.raises(Exception):
        sc.name = "x"
