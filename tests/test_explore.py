"""The exhaustive explorer: pinned state counts, shortest witnesses, verdicts on default.

An intended model change updates the pinned numbers in the same commit, so the
change shows up in review (as the TLA+ Examples pin `distinctStates`).
"""

import pytest

from acp_lifecycle.model.config import RFD_RULES, Config
from acp_lifecycle.model.properties import BY_ID, PROPERTIES
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.sims.search.check import check_suite
from acp_lifecycle.sims.configs import SUITES, get_suite
from acp_lifecycle.sims.search.explore import _cyclic_core, explore

#: member: distinct states, without symmetry (the reduced counts: tests/test_symmetry.py).
#: One number per member: a model change that adds or merges states moves it, and a
#: change that only reorders steps (transitions, depth, terminal states follow from the
#: states) is not pinned twice. Say why beside a count that changes.
PINNED = {
    "tiny": 216,
    "multi-client": 3478,
    # 952 -> 1008: which pending requests were cancelled (the judges, issue 21); 1008 -> 1040:
    # the agent's tool calls as the published agents report them (issue 22: first reported
    # completed or failed, pending -> completed, left open by a cancel); 1040 -> 1112: the judge
    # cancelled_only_when_cancelled remembers a session/cancel or $/cancel_request since the last idle (issue 34)
    "failures": 1112,
    # 1550 -> 1614: which pending requests were cancelled; 1614 -> 1734: the ghost of prompts
    # inserted and waiting when a session/cancel stopped other work (issue 23); 1734 -> 1912: the
    # judge cancelled_only_when_cancelled (issue 34: what the agent's own flag said, now read off the wire)
    "cancel-race": 1912,
    # 1332 -> 1416: the same; 1416 -> 1576: the tool calls of issue 22; 1576 -> 1592: the judge
    # cancelled_only_when_cancelled (issue 34)
    "permission": 1592,
    # 1706 -> 2026: one_response_per_request remembers which requests each connection answered
    "permission-2-clients": 2026,
    # 6348 -> 6922: no_second_stop_reason and the tool call judges remember the stop reason and the
    # work a resumed connection has not been told of yet; 6922 -> 6931: the judges of a whole
    # session (distinct_message_ids, every_inserted_message_echoed, cancelled_work_ends_cancelled)
    "lost-response": 6931,
    "restart": 452,  # 443 -> 452: the judges of a whole session
    "commands": 754,
    "import": 2876,  # 2709 -> 2876: the judges of a whole session
    # 12472 -> 12736: which pending requests were cancelled; 12736 -> 14128: cancelled_only_when_cancelled
    "fifo": 14128,
}


@pytest.fixture(scope="module")
def default():
    return check_suite(SUITES["default"])


@pytest.mark.parametrize("name", PINNED)
def test_state_counts_are_pinned(name):
    r = explore(get_suite(name).members[0], symmetry=False)  # reduced counts: tests/test_symmetry.py
    assert r.states == PINNED[name]


def test_the_default_suite_is_exactly_the_pinned_members():
    assert [m.name for m in SUITES["default"].members] == [n for n in PINNED if n != "tiny"]


def test_tiny_witnesses_are_shortest_and_pinned():
    r = explore(get_suite("tiny").members[0])
    lengths = {k: len(v.trace) for k, v in r.verdicts.items() if v.status == "reached"}
    assert lengths == {
        "sometimes_success_response": 4,
        "sometimes_error_response": 3,
        "sometimes_prompt_answered": 3,
        "sometimes_live_echo": 4,
        "sometimes_reserved_id_rejected": 4,
        "sometimes_work_ends": 6,
        "sometimes_echo_before_response": 5,
        "sometimes_echo_after_response": 5,
        "sometimes_prompt_work_ends": 6,
        "sometimes_internal_cancellation": 3,
    }
    actions = [step.action for _, step in r.verdicts["sometimes_error_response"].trace]
    assert actions == [
        ("ClientSubmitPrompt", 0, "a"),
        ("AgentReceive", 0, "prompt"),
        ("AgentRejectPrompt", 0, "invalid"),
    ]


def test_default_passes_with_every_verdict_as_expected(default):
    bad = {k: v.outcome for k, v in default.verdicts.items() if not v.ok}
    assert bad == {}
    assert default.ok


def test_default_holds_every_must_hold_property(default):
    for p in PROPERTIES:
        if p.expect == "must_hold":
            assert default.verdicts[p.id].status == "holds", p.id


def test_default_confirms_every_limitation_and_open_question_with_a_counterexample(default):
    for p in PROPERTIES:
        if p.expect in ("known_limitation", "open_question"):
            v = default.verdicts[p.id]
            assert v.status == "violated" and v.trace and v.message, p.id


def test_default_reaches_every_sometimes(default):
    for p in PROPERTIES:
        if p.kind == "sometimes":
            assert default.verdicts[p.id].status == "reached", p.id


def test_every_property_names_a_reachable_witness():
    witnesses = {p.id for p in PROPERTIES if p.kind == "sometimes"}
    for p in PROPERTIES:
        if p.kind != "sometimes":
            assert p.witnesses and set(p.witnesses) <= witnesses, p.id


def test_the_lost_response_counterexample_is_the_rfd_story(default):
    v = default.verdicts["lost_response_recoverable"]
    names = [step.action[0] for _, step in v.trace]
    assert names == ["ClientSubmitPrompt", "AgentReceive", "AgentInsert", "ConnectionLost", "ClientResume", "AgentResume"]


def test_the_2_4_0_snapshot_rule_closes_the_resume_question():
    rules = RFD_RULES.with_(resume_snapshot="must")
    r = explore(get_suite("lost-response").members[0], rules)
    assert r.verdicts["resumed_client_sees_current_state"].status == "holds"


def test_a_correlation_token_makes_the_lost_response_recoverable():
    rules = RFD_RULES.with_(correlation_token=True)
    r = check_suite(SUITES["default"], rules)
    assert r.verdicts["lost_response_recoverable"].status == "holds"
    assert r.verdicts["association_points_at_own_submission"].status == "holds"


def test_successors_are_deterministic():
    cfg = get_suite("failures").members[0]
    s = initial_state(cfg)
    for _ in range(6):
        a = successors(s, cfg, RFD_RULES)
        b = successors(s, cfg, RFD_RULES)
        assert a == b and a
        s = a[-1].state


def test_the_tiny_state_graph_is_acyclic():
    # Every step spends a budget or advances a phase; the liveness check relies
    # on bottom components, and this shows which kind the graph has.
    cfg = get_suite("tiny").members[0]
    s0 = initial_state(cfg)
    index, edges, frontier = {s0: 0}, [], [s0]
    while frontier:
        nxt = []
        for s in frontier:
            for step in successors(s, cfg, RFD_RULES):
                if step.state not in index:
                    index[step.state] = len(index)
                    nxt.append(step.state)
                edges.append((index[s], index[step.state]))
        frontier = nxt
    assert _cyclic_core(len(index), edges) == set()


def test_the_cyclic_core_finds_a_cycle_and_what_follows_it():
    # 0 -> 1 -> 2 -> 1, 2 -> 3, 4 -> 0
    assert _cyclic_core(5, [(0, 1), (1, 2), (2, 1), (2, 3), (4, 0)]) == {1, 2, 3}


def test_a_too_large_configuration_stops_with_a_clear_error():
    from acp_lifecycle.sims.search.explore import TooLarge

    with pytest.raises(TooLarge, match="passed 100 states"):
        explore(Config(name="big", clients=2), max_states=100)


def test_the_same_prompt_twice_gets_two_ids_and_each_client_its_own():
    r = explore(get_suite("multi-client").members[0])
    trace = r.verdicts["sometimes_identical_prompts_two_clients"].trace
    final = trace[-1][1].state
    mids = {c: [sub.mid for sub in cl.subs] for c, cl in enumerate(final.clients)}
    assert mids[0] != mids[1] and all(mids.values())
    assert BY_ID["association_points_at_own_submission"].check(final) is None


# ---------------------------------------------------------------------------
# Rule sets, and the choices the spec allows the agent
# ---------------------------------------------------------------------------

#: Every choice the spec allows the agent (or a combination of features) and
#: the witness that shows the model makes it. No such choice may be a
#: violation: ``check`` passes with each explored (issue 11).
ALLOWED_CHOICES = {
    "an idle that ends work without a stop reason": "sometimes_idle_without_stop_reason",
    "an error idle without an error object": "sometimes_error_idle_without_details",
    "work that starts blocked (start_blocked)": "sometimes_start_blocked",
    "a custom `_` stop reason": "sometimes_custom_stop_reason",
    "-32800 for an internal cancellation": "sometimes_internal_cancellation",
    "updates after session/cancel, before its idle": "sometimes_update_after_cancel",
    "a prompt inserted while busy and processed by later work": "sometimes_queued_insert",
    "a resume while still connected": "sometimes_resume_while_connected",
    "replay of a message under its own ID after it was live": "sometimes_replay_after_live",
    "a tool call first reported in_progress": "sometimes_tool_starts_running",
    "running before insertion (a foreground hook)": "sometimes_running_before_insertion",
    "a metadata-only user_message after the content": "sometimes_metadata_update",
    "a resume snapshot without the last stop reason": "sometimes_repeated_idle",
    "a permission request to the second of two clients": "sometimes_permission_to_second_client",
    "two locally handled commands in one run": "sometimes_two_commands",
}


@pytest.fixture(scope="module")
def default_240_lenient():
    from acp_lifecycle.model.config import S240_RULES

    return check_suite(SUITES["default"], S240_RULES.with_(lenient=True))


@pytest.mark.parametrize("choice", ALLOWED_CHOICES)
def test_each_allowed_choice_is_explored_and_check_passes(choice, default, default_240_lenient):
    witness = ALLOWED_CHOICES[choice]
    for result in (default, default_240_lenient):
        v = result.verdicts[witness]
        assert v.status == "reached" and v.trace, (choice, result.rules.name)
        assert result.ok, (result.rules.name, {k: x.outcome for k, x in result.verdicts.items() if not x.ok})


def test_a_lenient_agent_skips_shoulds_and_only_shoulds(default_240_lenient):
    skipped = {k for k, v in default_240_lenient.verdicts.items() if v.outcome == "SHOULD not followed"}
    assert skipped == {
        "tools_terminal_before_error_idle",
        "idle_ending_work_has_stop_reason",
        "cancelled_permission_requests_cancelled",
        "blocked_work_reported_requires_action",
    }
    assert all(BY_ID[k].level == "SHOULD" for k in skipped)


def _graph(cfg, rules):
    """The member's whole state graph, unreduced: its states, and every step with its pre-state."""
    seen, todo, steps = set(), [initial_state(cfg)], []
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        for step in successors(s, cfg, rules):
            steps.append((s, step))
            todo.append(step.state)
    return seen, steps


def _permission_steps(cfg, rules):
    """Every step of the member's state graph that sends a permission request, with its pre-state."""
    return [(s, step) for s, step in _graph(cfg, rules)[1] if any(m[0] == "perm" for _, m in step.emitted)]


def test_blocked_work_reported_requires_action_judges_the_permission_members(default):
    # Reachability: in `default` the permission members block work on permission requests (as
    # work starts and while it runs; 232 and 768 such steps), and the property judges each.
    from acp_lifecycle.model.config import S240_RULES

    from acp_lifecycle.model.properties import may_fire

    prop = BY_ID["blocked_work_reported_requires_action"]
    for name in ("permission", "permission-2-clients"):
        steps = _permission_steps(get_suite(name).members[0], S240_RULES)
        assert all(may_fire(prop, step) for _, step in steps), name  # the dispatch runs it on each
        assert {step.action[0] for _, step in steps} == {"AgentBeginWork", "AgentRequestPermission"}, name
        assert all(prop.check(pre, step) is None for pre, step in steps), name
        # The same steps without their requires_action are what the property is there to catch.
        for pre, step in steps[:20]:
            silent = step._replace(emitted=tuple((c, m) for c, m in step.emitted if m[0] != "state" or m[1] != "requires_action"))
            assert prop.check(pre, silent), (name, step.action)
    assert default.verdicts["blocked_work_reported_requires_action"].outcome == "not applicable"  # a 2.4.0 rule
    r = check_suite(SUITES["default"], S240_RULES)
    assert r.verdicts["blocked_work_reported_requires_action"].outcome == "holds"


def test_a_lenient_agent_may_block_work_without_reporting_requires_action():
    from acp_lifecycle.model.config import S240_RULES

    member = get_suite("permission").members[0]
    r = explore(member, S240_RULES.with_(lenient=True))
    v = r.verdicts["blocked_work_reported_requires_action"]
    assert v.status == "violated" and v.outcome == "SHOULD not followed"
    assert "unreported" in v.trace[-1][1].action
    # Only a lenient agent makes the choice: the strict 2.4.0 agent reports every block.
    assert explore(member, S240_RULES).verdicts["blocked_work_reported_requires_action"].status == "holds"


def test_rfd_240_passes_default_and_judges_its_own_rules():
    from acp_lifecycle.model.config import S240_RULES

    r = check_suite(SUITES["default"], S240_RULES)
    assert r.ok, {k: v.outcome for k, v in r.verdicts.items() if not v.ok}
    own = [p for p in PROPERTIES if p.spec == "2.4.0" and p.kind != "sometimes"]
    assert own and all(r.verdicts[p.id].outcome == "holds" for p in own)
    assert r.verdicts["resumed_client_sees_current_state"].outcome == "holds"


def test_rules_of_the_2_4_0_text_are_not_applicable_under_rfd(default):
    for p in PROPERTIES:
        if p.spec == "2.4.0":
            assert default.verdicts[p.id].outcome == "not applicable", p.id


def test_the_response_does_not_wait_for_processing():
    # Every normal end of work in the model comes after the responses of the
    # prompts the work took (a failure or a cancel may end it first).
    r = explore(get_suite("tiny").members[0])
    assert r.verdicts["answered_before_its_work_ends"].status == "holds"
    late = explore(get_suite("tiny").members[0], RFD_RULES.with_(respond_late=True))
    v = late.verdicts["answered_before_its_work_ends"]
    assert v.status == "violated" and [s.action[0] for _, s in v.trace][-1] == "AgentEndWork"


def test_total_prompts_caps_the_clients_together_and_lets_any_one_take_two():
    """``Config.total_prompts``: two clients with two prompts each, at most two in all. No run
    submits a third, and both pairings happen: one client's two prompts, and one from each."""
    from acp_lifecycle.model.config import ConfigError

    cfg = Config(name="cap", clients=2, prompts=2, total_prompts=2, reserve=False, live_only=False,
                 chunks=False, hook=False, down_latency=False).validate()
    pairings = {tuple(sorted(cl.submitted for cl in s.clients)) for s in _graph(cfg, RFD_RULES)[0]}
    assert max(map(sum, pairings)) == 2
    assert {(0, 2), (1, 1)} <= pairings
    with pytest.raises(ConfigError, match="total_prompts"):
        cfg.with_(total_prompts=10)


# --- the choices `trace --model` turns on for published agents (issue 34) ------------------------------


def _walk(cfg, rules, labels):
    """The state after taking the steps whose action starts with each label in turn."""
    s = initial_state(cfg)
    for label in labels:
        s = next(st.state for st in successors(s, cfg, rules) if st.action[:len(label)] == label)
    return s


def test_a_lenient_agent_withdraws_a_kept_permission_request_later_and_only_with_the_switch():
    """opencode behind the bridge: session/cancel, the call reported `failed`, then `$/cancel_request`
    for the permission request, then the idle. The model's agent withdrew it only in the step that
    received the cancel; with `withdraw_permission` a lenient agent that kept it may withdraw it at
    any point before the idle."""
    from acp_lifecycle.model.config import S240_RULES

    lenient = S240_RULES.with_(lenient=True)
    cfg = Config(prompts=1, permissions=1, cancels=1, tool_calls=1, down_latency=False).validate()
    before = ("ClientSubmitPrompt",), ("AgentReceive", 0, "prompt"), ("AgentInsert", 0, "retained"), \
        ("AgentRespond",), ("AgentEcho",), ("AgentBeginWork", "input"), ("AgentToolCall", 1, "start"), \
        ("AgentRequestPermission", 0), ("ClientCancelSession", 0), ("AgentReceive", 0, "cancel", "keeps-permission-request")
    for switch, withdrawn in ((False, False), (True, True)):
        on = cfg.with_(withdraw_permission=switch)
        s = _walk(on, lenient, before + (("AgentToolCall", 1, "fail"),))
        steps = {st.action: st for st in successors(s, on, lenient)}
        assert (("AgentRequestPermission", 0, "withdrawn") in steps) == withdrawn
        if withdrawn:
            step = steps[("AgentRequestPermission", 0, "withdrawn")]
            assert step.emitted == ((0, ("perm_cancel", 1)),)
            after = {st.action for st in successors(step.state, on, lenient)}
            assert ("AgentEndWork", "cancelled") in after
    # the strict agent withdraws it in the step that receives the cancel, switch or not
    strict = cfg.with_(withdraw_permission=True)
    s = _walk(strict, S240_RULES, before[:-1] + (("AgentReceive", 0, "cancel"),))
    assert not any(st.action[-1] == "withdrawn" for st in successors(s, strict, S240_RULES))


def test_a_failure_of_work_blocked_on_a_permission_request_may_withdraw_it_before_its_idle():
    cfg = Config(prompts=1, permissions=1, failures=1, down_latency=False, withdraw_permission=True).validate()
    s = _walk(cfg, RFD_RULES, [("ClientSubmitPrompt",), ("AgentReceive", 0, "prompt"), ("AgentInsert", 0, "retained"),
                               ("AgentRespond",), ("AgentEcho",), ("AgentBeginWork", "input", "blocked")])
    fails = {st.action: st for st in successors(s, cfg, RFD_RULES) if st.action[0] == "AgentFailWork"}
    withdraw = fails[("AgentFailWork", "stops-work", "withdraws-permission")]
    assert [m[0] for _, m in withdraw.emitted] == ["perm_cancel", "state"]  # before the error idle
    assert ("AgentFailWork", "stops-work") in fails  # or it leaves the request open, as before
    off = cfg.with_(withdraw_permission=False)
    assert not any("withdraws-permission" in st.action for st in successors(s, off, RFD_RULES))


def test_a_resume_may_be_rejected_with_the_switch_and_the_client_may_resume_again():
    cfg = Config(prompts=0, resumes=2, losses=1, down_latency=False).validate()
    lost = _walk(cfg, RFD_RULES, [("ConnectionLost", 0), ("ClientResume", 0, "no-replay")])
    assert not any(st.action[2:3] == ("rejected",) for st in successors(lost, cfg, RFD_RULES))
    on = cfg.with_(reject_resume=True)
    step = next(st for st in successors(lost, on, RFD_RULES) if st.action == ("AgentResume", 0, "rejected", "no-snapshot"))
    assert step.emitted == ((0, ("err", 1, -32602)),) and not step.state.agent.attached & 1
    assert step.state.clients[0].resuming == 0
    assert any(st.action[0] == "ClientResume" for st in successors(step.state, on, RFD_RULES))


def test_an_update_that_repeats_a_tool_call_s_status_is_a_refinement():
    """opencode repeats `in_progress` once the permission is answered: under the refinement budget
    the agent may send an update that repeats the status the call has, as one without a status."""
    cfg = Config(prompts=1, tool_calls=1, tool_refinements=1, down_latency=False).validate()
    s = _walk(cfg, RFD_RULES, [("ClientSubmitPrompt",), ("AgentReceive", 0, "prompt"), ("AgentInsert", 0, "retained"),
                               ("AgentRespond",), ("AgentEcho",), ("AgentBeginWork", "input"),
                               ("AgentToolCall", 1, "start-running")])
    steps = {st.action: st for st in successors(s, cfg, RFD_RULES)}
    assert steps[("AgentToolCall", 1, "repeat")].emitted == ((0, ("tool", 1, "in_progress", False)),)
    assert steps[("AgentToolCall", 1, "refine")].emitted == ((0, ("tool", 1, None, False)),)
    assert not any(a[-1] == "repeat" for a in (st.action for st in successors(s, cfg.with_(tool_refinements=0), RFD_RULES)))
