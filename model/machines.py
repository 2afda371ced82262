"""Component lifecycles of the v2 prompt lifecycle, one small machine each.

Rule 1: these classes are the single source of truth for each component's
states and transitions. The composed model (``system.py``) never writes a
transition by hand: it looks the next state up in the tables derived below
(``REQUEST``, ``FOREGROUND``, ``TOOL``, ``SUBMISSION``), and
``tests/test_machines.py`` proves that each table equals its class.

Rule 2: nothing here knows about clients, channels or the wire. Data that goes
with a transition (the stop reason of ``end``, the error code of ``reject``) is
carried by the composed model, not by these states.

Theory of operation:

* ``PromptRequestMachine`` is one ``session/prompt`` as the agent sees it.
  Acceptance means insertion (RFD "Change the session/prompt response"):
  received -> (held, optionally with an ID reserved) -> inserted -> answered.
  Before insertion the request may be rejected with an error response (invalid
  input, ``$/cancel_request`` answered -32800, ``session/cancel`` of a prompt not
  yet inserted, a failure before insertion). There is deliberately no path from
  ``inserted`` to ``rejected``: "Once the user message is inserted, the Agent
  MUST NOT report a later failure as an error response to session/prompt".
* ``ForegroundMachine`` is the session's foreground state as reported by
  ``state_update``. "A new session defaults to idle" (2.4.0), so ``idle`` is
  initial. ``end`` carries a stop reason (end_turn, max_tokens,
  max_turn_requests, refusal, cancelled, error with a JSON-RPC error or none).
* ``ToolCallMachine`` is one tool call of foreground work.
* ``SubmissionMachine`` is one prompt as the submitting client sees it: the
  response either acknowledges it with a messageId, rejects it with a code, or
  never arrives (``unknown``: the connection was lost, "A lost response remains
  an ambiguous outcome").

WARNING: ``diagrams/`` is generated from these classes; regenerate it
(``acp-lifecycle diagrams``) whenever a state or transition changes.
"""

from __future__ import annotations

from statemachine import State, StateMachine

__all__ = [
    "PromptRequestMachine",
    "ForegroundMachine",
    "ToolCallMachine",
    "SubmissionMachine",
    "MACHINES",
    "transition_table",
    "REQUEST",
    "FOREGROUND",
    "TOOL",
    "SUBMISSION",
    "STOP_REASONS",
]


class PromptRequestMachine(StateMachine):
    """One ``session/prompt`` request on the agent side."""

    received = State(initial=True)
    held = State()
    # "Receiving the request, assigning an ID, or holding the input for later
    # insertion is not acceptance." -- an ID reserved in advance is still held.
    reserved = State()
    inserted = State()
    answered = State(final=True)
    rejected = State(final=True)
    # The agent process exited: no response can be sent ("The Agent process
    # exits or the connection is lost: Detected by the Client; no update can
    # report it"). Not an error response: the submission stays unanswered.
    dropped = State(final=True)

    hold = received.to(held)
    reserve = received.to(reserved) | held.to(reserved)
    insert = received.to(inserted) | held.to(inserted) | reserved.to(inserted)
    # "The agent MUST respond successfully once the user message has been inserted"
    respond = inserted.to(answered)
    # "A request rejected before insertion uses a JSON-RPC error response instead."
    reject = received.to(rejected) | held.to(rejected) | reserved.to(rejected)
    drop = received.to(dropped) | held.to(dropped) | reserved.to(dropped) | inserted.to(dropped)


class ForegroundMachine(StateMachine):
    """The session's foreground state, as ``state_update`` reports it."""

    idle = State(initial=True)
    running = State()
    requires_action = State()

    # "the agent MUST report `running` when foreground work starts, or
    # `requires_action` if it starts blocked on user action" (2.4.0)
    start = idle.to(running)
    start_blocked = idle.to(requires_action)
    block = running.to(requires_action)
    unblock = requires_action.to(running)
    # "... and `idle` when it ends" -- with a stop reason carried as data.
    end = running.to(idle) | requires_action.to(idle)


class ToolCallMachine(StateMachine):
    """A tool call of foreground work."""

    pending = State(initial=True)
    in_progress = State()
    completed = State(final=True)
    failed = State(final=True)

    run = pending.to(in_progress)
    # Nothing requires a call to be reported in_progress before it ends:
    # claude-agent-acp goes from pending to completed.
    complete = in_progress.to(completed) | pending.to(completed)
    # "using failed for calls that did not complete": a pending call that never
    # ran can fail too (the work around it failed).
    fail = pending.to(failed) | in_progress.to(failed)


class SubmissionMachine(StateMachine):
    """One prompt as the submitting client sees it."""

    sent = State(initial=True)
    acknowledged = State(final=True)
    rejected = State(final=True)
    unknown = State(final=True)

    acknowledge = sent.to(acknowledged)
    reject = sent.to(rejected)
    # The connection was lost before the response arrived.
    lose = sent.to(unknown)


MACHINES = (PromptRequestMachine, ForegroundMachine, ToolCallMachine, SubmissionMachine)

#: The stop reasons of an idle ``state_update`` (defined in ``config``).
from .config import STOP_REASONS  # noqa: E402


def transition_table(machine: type[StateMachine]) -> dict[tuple[str, str], str]:
    """``{(state, event): next_state}`` read off a machine class.

    >>> transition_table(ToolCallMachine)[("pending", "run")]
    'in_progress'
    """
    table: dict[tuple[str, str], str] = {}
    for state in machine.states:
        for transition in state.transitions:
            for event in transition.events:
                key = (transition.source.id, str(event))
                if list(transition.cond):
                    # The tables are unconditional; a guard would make them lie.
                    raise ValueError(f"{machine.__name__}: guarded transition at {key} cannot be tabled")
                if key in table:
                    raise ValueError(f"{machine.__name__} is not deterministic at {key}")
                table[key] = transition.target.id
    return table


# The hot loop uses these dicts; tests/test_machines.py checks them against the classes.
REQUEST = transition_table(PromptRequestMachine)
FOREGROUND = transition_table(ForegroundMachine)
TOOL = transition_table(ToolCallMachine)
SUBMISSION = transition_table(SubmissionMachine)
