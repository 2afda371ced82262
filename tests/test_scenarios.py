"""Scenarios: scripted runs of the RFD's implementation checklist on the correct model."""

import re
from dataclasses import replace

import pytest

from acp_lifecycle.model.config import RFD_RULES
from acp_lifecycle.model.properties import BY_ID
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.sims.scenarios import CHECKED, SCENARIOS, Scenario, ScenarioError, ScenarioRun, render, run

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


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_scenario_is_a_real_run_of_the_model_that_keeps_every_rule_and_meets_its_expectation(name):
    """Replayed here, apart from ``run``: each labelled step is one the model itself offers in the
    state before it, no must-hold property breaks on the way, and the expectation holds at the
    end but not at the start (it says something about what the run did)."""
    sc = SCENARIOS[name]
    r = run(name)
    assert isinstance(r, ScenarioRun) and len(r.trace) == len(sc.steps)
    state = initial_state(sc.config)
    for (pre, step), label in zip(r.trace, sc.steps):
        assert pre == state and step.action == label
        assert step in successors(pre, sc.config, sc.rules), label
        for p in CHECKED:
            if p.expectation(sc.rules) != "must_hold":
                continue  # not a rule of the scenario's rule set (a 2.4.0 rule under rfd)
            assert not (p.check(pre, step) if p.kind == "step" else p.check(step.state)), (p.id, label)
        state = step.state
    assert r.final == state
    sc.expect(state, r.trace)
    with pytest.raises((AssertionError, LookupError)):
        sc.expect(initial_state(sc.config), [])


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
