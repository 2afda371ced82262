"""Tests of the component machines (``model/machines.py``).

The composed model never calls these classes in its hot loop: it looks next
states up in the tables ``REQUEST``, ``FOREGROUND``, ``TOOL`` and
``SUBMISSION``, which ``transition_table`` reads off the classes. So what is
proven here is not that a table equals the class it was computed from, but:

1. each lifecycle is the one the RFD describes, written out by hand (``EXPECTED``);
2. the composed model moves a request's phase, the foreground, a tool call and a
   submission only along those lifecycles, on every step of several explored
   members (an agent step that set a phase directly, past its machine, fails);
3. named stories walk each machine, in the style of h11's ``tests/test_state.py``,
   checked against ``EXPECTED`` at every step.
"""

from __future__ import annotations

import pytest
from statemachine import State, StateMachine
from statemachine.exceptions import TransitionNotAllowed

from acp_lifecycle.model.machines import (
    FOREGROUND,
    MACHINES,
    REQUEST,
    STOP_REASONS,
    SUBMISSION,
    TOOL,
    ForegroundMachine,
    PromptRequestMachine,
    SubmissionMachine,
    ToolCallMachine,
    transition_table,
)

#: Each machine class with the table the composed model uses for it.
TABLES = {
    PromptRequestMachine: REQUEST,
    ForegroundMachine: FOREGROUND,
    ToolCallMachine: TOOL,
    SubmissionMachine: SUBMISSION,
}

machine_params = pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.__name__)


def state_ids(machine: type[StateMachine]) -> list[str]:
    return [s.id for s in machine.states]


def event_ids(machine: type[StateMachine]) -> list[str]:
    return [e.id for e in machine.events]


def snapshot(sm: StateMachine) -> tuple[str, bool]:
    """The whole state of a single machine: where it is, and whether it is over."""
    assert len(sm.configuration_values) == 1, "these machines are flat: one active state"
    return (sm.current_state_value, sm.is_terminated)


def step(sm: StateMachine, event: str) -> None:
    """Send ``event`` and check the move against the lifecycle written out by hand."""
    before = sm.current_state_value
    sm.send(event)
    assert EXPECTED[type(sm)][(before, event)] == sm.current_state_value


def refused(sm: StateMachine, event: str) -> None:
    """``event`` is not allowed: it raises, leaves the state alone, and has no table entry."""
    before = snapshot(sm)
    with pytest.raises(TransitionNotAllowed):
        sm.send(event)
    assert snapshot(sm) == before
    assert (sm.current_state_value, event) not in TABLES[type(sm)]


# --- 1. The tables equal the classes ---------------------------------------


#: The lifecycles as the RFD describes them, written out by hand (not read off the classes):
#: a change to a machine that the RFD does not call for fails here.
EXPECTED = {
    PromptRequestMachine: {
        # Received: the agent may hold it (queue), reserve an ID, insert it, reject it, or lose it.
        ("received", "hold"): "held", ("received", "reserve"): "reserved", ("received", "insert"): "inserted",
        ("received", "reject"): "rejected", ("received", "drop"): "dropped",
        ("held", "reserve"): "reserved", ("held", "insert"): "inserted", ("held", "reject"): "rejected",
        ("held", "drop"): "dropped",
        # An ID reserved before insertion: still rejectable (no early success).
        ("reserved", "insert"): "inserted", ("reserved", "reject"): "rejected", ("reserved", "drop"): "dropped",
        # Inserted: answered with success (the messageId), never rejected; a failure drops it.
        ("inserted", "respond"): "answered", ("inserted", "drop"): "dropped",
    },
    ForegroundMachine: {
        ("idle", "start"): "running", ("idle", "start_blocked"): "requires_action",
        ("running", "block"): "requires_action", ("running", "end"): "idle",
        ("requires_action", "unblock"): "running", ("requires_action", "end"): "idle",
    },
    ToolCallMachine: {
        ("pending", "run"): "in_progress", ("pending", "fail"): "failed",
        ("pending", "complete"): "completed",
        ("in_progress", "complete"): "completed", ("in_progress", "fail"): "failed",
    },
    SubmissionMachine: {
        ("sent", "acknowledge"): "acknowledged", ("sent", "reject"): "rejected", ("sent", "lose"): "unknown",
    },
}


def test_every_machine_has_a_table_and_each_table_is_the_lifecycle_the_rfd_describes():
    assert set(TABLES) == set(MACHINES) == set(EXPECTED)
    for machine, table in TABLES.items():
        assert table == EXPECTED[machine], machine.__name__
        assert transition_table(machine) == EXPECTED[machine], machine.__name__


def test_the_transitions_the_rfd_forbids_are_in_no_table():
    assert ("inserted", "reject") not in REQUEST  # an inserted prompt is never rejected
    assert not [k for k in REQUEST if k[0] in ("answered", "rejected", "dropped")]  # final: one response
    assert not [k for k in TOOL if k[0] in ("completed", "failed")]  # a terminal tool call stays terminal
    assert ("idle", "end") not in FOREGROUND and ("idle", "block") not in FOREGROUND  # no work: nothing ends


#: Members explored below (a few seconds in all): faults, cancels, a lost response, two clients.
MEMBERS = ("tiny", "failures", "lost-response", "multi-client")


def _moves(table: dict) -> set[tuple[str, str]]:
    return {(before, after) for (before, _event), after in table.items()}


ALLOWED = {"request": _moves(REQUEST), "foreground": _moves(FOREGROUND), "tool": _moves(TOOL),
           "submission": _moves(SUBMISSION)}


def _component_changes(pre, post) -> list[tuple[str, str, str]]:
    """(machine, before, after) for every component a step moved: the agent's requests (by
    position in ``reqs``), its foreground, the tool calls of work that goes on, each
    client's submissions (by request id)."""
    out = [("request", a.phase, b.phase) for a, b in zip(pre.agent.reqs, post.agent.reqs)]
    out.append(("foreground", pre.agent.fg, post.agent.fg))
    if pre.agent.work and post.agent.work and pre.agent.work.serial == post.agent.work.serial:
        before = dict(pre.agent.work.tools)
        out += [("tool", before[t], status) for t, status in post.agent.work.tools if t in before]
    for a, b in zip(pre.clients, post.clients):
        before = {sub.rid: sub.status for sub in a.subs}
        out += [("submission", before[sub.rid], sub.status) for sub in b.subs if sub.rid in before]
    return [c for c in out if c[1] != c[2]]


def _off_the_machines(pre, post) -> list[tuple[str, str, str]]:
    return [c for c in _component_changes(pre, post) if (c[1], c[2]) not in ALLOWED[c[0]]]


@pytest.mark.parametrize("member", MEMBERS)
def test_the_composed_model_moves_each_component_only_along_its_machine(member):
    from acp_lifecycle.model.spec import Lifecycle
    from acp_lifecycle.sims.configs import get_suite

    model = Lifecycle(get_suite(member).members[0])
    (s0,) = model.init_states()
    seen, frontier, moved = {s0}, [s0], set()
    while frontier:
        nxt = []
        for pre in frontier:
            for st in model.next_steps(pre):
                assert not _off_the_machines(pre, st.state), (st.action, _off_the_machines(pre, st.state))
                moved.update((c[0], c[1], c[2]) for c in _component_changes(pre, st.state))
                if st.state not in seen:
                    seen.add(st.state)
                    nxt.append(st.state)
        frontier = nxt
    assert ("request", "received", "inserted") in moved or ("request", "held", "inserted") in moved


def test_a_step_that_rejects_an_inserted_request_past_its_machine_is_caught():
    from acp_lifecycle.model.spec import Lifecycle
    from acp_lifecycle.sims.configs import get_suite

    model = Lifecycle(get_suite("tiny").members[0])
    (state,) = model.init_states()
    while not any(r.phase == "inserted" for r in state.agent.reqs):
        state = model.next_steps(state)[0].state
    req = state.agent.reqs[0]
    forged = state._replace(agent=state.agent._replace(reqs=(req._replace(phase="rejected"),)))
    assert _off_the_machines(state, forged) == [("request", "inserted", "rejected")]


@machine_params
def test_every_event_and_every_state_is_used_by_the_table(machine):
    table = TABLES[machine]
    assert {e for _, e in table} == set(event_ids(machine))
    reachable = {machine.initial_state.id} | set(table.values())
    assert reachable == set(state_ids(machine))


# --- 2. Scenarios: the prompt request (agent side) -------------------------


def test_a_request_is_received_held_reserved_inserted_and_answered():
    sm = PromptRequestMachine()
    assert snapshot(sm) == ("received", False)
    step(sm, "hold")
    assert snapshot(sm) == ("held", False)
    step(sm, "reserve")
    assert snapshot(sm) == ("reserved", False)
    step(sm, "insert")
    assert snapshot(sm) == ("inserted", False)
    step(sm, "respond")
    assert snapshot(sm) == ("answered", True)


def test_a_received_request_can_be_rejected():
    sm = PromptRequestMachine()
    assert snapshot(sm) == ("received", False)
    step(sm, "reject")
    assert snapshot(sm) == ("rejected", True)


def test_a_request_with_an_id_reserved_can_still_be_rejected():
    sm = PromptRequestMachine()
    step(sm, "reserve")
    assert snapshot(sm) == ("reserved", False)
    step(sm, "reject")
    assert snapshot(sm) == ("rejected", True)


def test_an_inserted_prompt_cannot_be_rejected():
    sm = PromptRequestMachine()
    step(sm, "insert")
    assert snapshot(sm) == ("inserted", False)
    refused(sm, "reject")
    assert snapshot(sm) == ("inserted", False)
    # It still has to be answered.
    step(sm, "respond")
    assert snapshot(sm) == ("answered", True)


def test_no_state_that_reaches_inserted_can_be_rejected_after_it():
    after_insertion = {"inserted", "answered"}
    assert not [key for key in REQUEST if key[0] in after_insertion and key[1] == "reject"]
    for state in after_insertion:
        refused(PromptRequestMachine(start_value=state), "reject")


def test_an_inserted_prompt_is_dropped_by_a_restart_without_a_response():
    sm = PromptRequestMachine()
    step(sm, "insert")
    assert snapshot(sm) == ("inserted", False)
    step(sm, "drop")
    assert snapshot(sm) == ("dropped", True)
    refused(sm, "respond")


def test_an_answered_request_is_final():
    sm = PromptRequestMachine(start_value="answered")
    assert snapshot(sm) == ("answered", True)
    assert sm.allowed_events == []
    for event in event_ids(PromptRequestMachine):
        refused(sm, event)
    assert snapshot(sm) == ("answered", True)


# --- 2. Scenarios: the foreground ------------------------------------------


def test_a_new_session_defaults_to_idle():
    assert ForegroundMachine.initial_state.id == "idle"
    assert snapshot(ForegroundMachine()) == ("idle", False)


def test_foreground_work_runs_blocks_on_the_user_resumes_and_ends():
    sm = ForegroundMachine()
    assert snapshot(sm) == ("idle", False)
    step(sm, "start")
    assert snapshot(sm) == ("running", False)
    step(sm, "block")
    assert snapshot(sm) == ("requires_action", False)
    step(sm, "unblock")
    assert snapshot(sm) == ("running", False)
    step(sm, "end")
    assert snapshot(sm) == ("idle", False)
    # The session lives on: the next turn can start.
    step(sm, "start")
    assert snapshot(sm) == ("running", False)


def test_foreground_work_can_start_blocked_and_end_from_there():
    sm = ForegroundMachine()
    step(sm, "start_blocked")
    assert snapshot(sm) == ("requires_action", False)
    step(sm, "end")
    assert snapshot(sm) == ("idle", False)


def test_an_idle_session_cannot_end():
    sm = ForegroundMachine()
    refused(sm, "end")
    assert snapshot(sm) == ("idle", False)


def test_running_work_cannot_start_again():
    sm = ForegroundMachine(start_value="running")
    refused(sm, "start")
    refused(sm, "start_blocked")
    refused(sm, "unblock")
    assert snapshot(sm) == ("running", False)


# --- 2. Scenarios: a tool call ---------------------------------------------


def test_a_tool_call_runs_and_completes():
    sm = ToolCallMachine()
    assert snapshot(sm) == ("pending", False)
    step(sm, "run")
    assert snapshot(sm) == ("in_progress", False)
    step(sm, "complete")
    assert snapshot(sm) == ("completed", True)


def test_a_pending_tool_call_that_never_ran_can_fail():
    sm = ToolCallMachine()
    step(sm, "fail")
    assert snapshot(sm) == ("failed", True)


def test_a_completed_tool_call_cannot_fail_afterwards():
    sm = ToolCallMachine()
    step(sm, "run")
    step(sm, "complete")
    assert snapshot(sm) == ("completed", True)
    refused(sm, "fail")
    assert snapshot(sm) == ("completed", True)


def test_a_pending_tool_call_may_complete_without_a_report_of_running():
    # claude-agent-acp reports pending, then completed: no text asks for in_progress between
    sm = ToolCallMachine()
    step(sm, "complete")
    assert snapshot(sm) == ("completed", True)
    refused(sm, "run")


# --- 2. Scenarios: a submission (client side) ------------------------------


def test_a_submission_is_acknowledged():
    sm = SubmissionMachine()
    assert snapshot(sm) == ("sent", False)
    step(sm, "acknowledge")
    assert snapshot(sm) == ("acknowledged", True)


def test_a_submission_is_rejected():
    sm = SubmissionMachine()
    step(sm, "reject")
    assert snapshot(sm) == ("rejected", True)


def test_a_submission_whose_response_is_lost_stays_unknown():
    sm = SubmissionMachine()
    step(sm, "lose")
    assert snapshot(sm) == ("unknown", True)
    # A lost response remains ambiguous: nothing can resolve it later.
    refused(sm, "acknowledge")
    refused(sm, "reject")


def test_an_acknowledged_submission_cannot_be_lost():
    sm = SubmissionMachine()
    step(sm, "acknowledge")
    refused(sm, "lose")
    assert snapshot(sm) == ("acknowledged", True)


# --- 3. Final states -------------------------------------------------------

FINAL = {
    PromptRequestMachine: {"answered", "rejected", "dropped"},
    ForegroundMachine: set(),
    ToolCallMachine: {"completed", "failed"},
    SubmissionMachine: {"acknowledged", "rejected", "unknown"},
}


@machine_params
def test_the_final_states_are_exactly_the_expected_ones(machine):
    assert {s.id for s in machine.states if s.final} == FINAL[machine]
    assert {s.id for s in machine.final_states} == FINAL[machine]


@machine_params
def test_final_states_have_no_way_out_and_every_other_state_has_one(machine):
    sources = {s for s, _ in TABLES[machine]}
    assert sources == set(state_ids(machine)) - FINAL[machine]
    for state in state_ids(machine):
        assert machine(start_value=state).is_terminated == (state in FINAL[machine])


# --- 4. Stop reasons -------------------------------------------------------


def test_the_stop_reasons_are_the_five_of_v1_plus_error():
    assert STOP_REASONS == ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error")
    assert len(set(STOP_REASONS)) == len(STOP_REASONS)


# --- 5. The tables are read from the classes -------------------------------


def test_a_machine_that_gains_a_transition_gains_a_table_entry():
    class ToolCallThatPauses(StateMachine):
        pending = State(initial=True)
        in_progress = State()
        completed = State(final=True)
        failed = State(final=True)

        run = pending.to(in_progress)
        complete = in_progress.to(completed) | pending.to(completed)
        fail = pending.to(failed) | in_progress.to(failed)
        # The one extra transition: a running call reported pending again.
        pause = in_progress.to(pending)

    assert ("in_progress", "pause") not in TOOL
    table = transition_table(ToolCallThatPauses)
    assert table == {**TOOL, ("in_progress", "pause"): "pending"}
    sm = ToolCallThatPauses()
    sm.send("run")
    sm.send("pause")
    assert sm.current_state_value == table[("in_progress", "pause")]


def test_a_machine_with_two_targets_for_one_event_has_no_table():
    class Ambiguous(StateMachine):
        a = State(initial=True)
        b = State(final=True)
        c = State(final=True)

        go = a.to(b) | a.to(c)

    with pytest.raises(ValueError, match="not deterministic"):
        transition_table(Ambiguous)


def test_a_guarded_transition_cannot_be_tabled():
    class Guarded(StateMachine):
        a = State(initial=True)
        b = State(final=True)

        go = a.to(b, cond="ready")

        def ready(self):
            return False

    with pytest.raises(ValueError, match="guarded"):
        transition_table(Guarded)
