"""The rules of the v2 prompt lifecycle as named properties of the model.

Each property is one claim (one conjunct: a violation names exactly one rule),
a plain function defined once here and used by every explorer:

* ``always``     ``check(state) -> message | None``: true in every reachable state.
* ``step``       ``check(pre, step) -> message | None``: true of every transition
                 (a rule about what a step may send, like "no tool update after idle").
* ``eventually`` ``check(state) -> obligation | None``: the obligation named must
                 not stay open forever: no reachable terminal state or bottom
                 strongly connected component of the state graph has it open.
* ``sometimes``  ``check(pre, step) -> bool``: some reachable step has it. Every
                 other property names its ``witnesses``: the situations it guards,
                 which must be reached, or the property holds only because
                 nothing happens.

``expect`` says what the RFD leads us to expect: ``must_hold``; ``known_limitation``
(the RFD says it does not hold: a lost response is ambiguous, a retry may create a
second message); ``open_question`` (the RFD defers it: cancellation races,
current-state synchronization on resume); ``reachable`` for ``sometimes``.
Clause ids come from ``clauses.CITATIONS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .clauses import CITATIONS, CLAUSES
from .system import IDLE, Step, System

__all__ = ["Property", "PROPERTIES", "BY_ID", "KINDS", "EXPECTATIONS", "step_tags"]

KINDS = ("always", "step", "eventually", "sometimes")
EXPECTATIONS = ("must_hold", "known_limitation", "open_question", "reachable")


@dataclass(frozen=True, slots=True)
class Property:
    id: str
    kind: str
    expect: str
    summary: str
    check: Callable
    witnesses: tuple[str, ...] = ()
    level: str = "MUST"  # MUST or SHOULD: the strength of the rule
    #: step/sometimes only: the action names and sent message kinds that can
    #: make the check true; the explorer skips the check for other steps
    #: (an optimisation only: ``None`` means every step).
    on: frozenset | None = None
    #: whether a configuration can exhibit the situation at all (a sometimes
    #: about replay needs resumes); where it cannot, the verdict is "not
    #: applicable" instead of "not reached" or "not confirmed"
    applies: Callable = lambda cfg: True

    @property
    def clauses(self) -> tuple[str, ...]:
        return CITATIONS.get(self.id, ())

    @property
    def quote(self) -> str:
        """The first cited clause's sentence, with its source."""
        if not self.clauses:
            return ""
        c = CLAUSES[self.clauses[0]]
        return f'{c.source}: "{c.text}"'


PROPERTIES: list[Property] = []


def _prop(kind: str, expect: str = "must_hold", witnesses: tuple[str, ...] = (), level: str = "MUST", on=None):
    def register(fn: Callable) -> Callable:
        doc = (fn.__doc__ or "").strip().splitlines()[0]
        PROPERTIES.append(Property(fn.__name__, kind, expect, doc, fn, witnesses, level, _on(on), _APPLIES.get(fn.__name__, _always)))
        return fn

    return register


def _always(cfg) -> bool:
    return True


def _lost(c) -> bool:
    return c.losses > 0 or c.restarts > 0


def _resume(c) -> bool:
    return c.resumes > 0 and _lost(c)


def _works(c) -> int:
    return c.agent_work + c.clients * c.prompts + c.retries


#: Which configurations can exhibit each situation (see Property.applies).
_APPLIES = {
    "sometimes_cancel_request_after_insertion": lambda c: c.cancels > 0,
    "sometimes_reserved_id_rejected": lambda c: c.reserve,
    "sometimes_cancel_request_after_answer": lambda c: c.cancels > 0,
    "sometimes_failure_before_response": lambda c: c.failures > 0,
    "sometimes_identical_prompts_inserted": lambda c: c.clients * c.prompts + c.retries >= 2,
    "sometimes_insert_after_restart": lambda c: c.restarts > 0 and c.resumes > 0 and (c.imports > 0 or c.prompts > 1),
    "sometimes_echo_to_two_clients": lambda c: c.clients > 1,
    "sometimes_failure_ends_work": lambda c: c.failures > 0,
    "sometimes_error_idle": lambda c: c.failures > 0,
    "sometimes_unfinished_tool_at_failure": lambda c: c.failures > 0 and c.tool_calls > 0,
    "sometimes_abort_raises": lambda c: c.failures > 0 and c.cancels > 0,
    "sometimes_cancel_ends_work": lambda c: c.cancels > 0,
    "sometimes_idle_ends_work_with_tools": lambda c: c.tool_calls > 0,
    "sometimes_repeated_idle": _resume,
    "sometimes_identical_prompts_two_clients": lambda c: c.clients > 1,
    "sometimes_chunked_replay_over_held_copy": lambda c: _resume(c) and c.chunks,
    "sometimes_replay": _resume,
    "sometimes_chunked_replay": lambda c: _resume(c) and c.chunks,
    "sometimes_resume_without_replay": _resume,
    "sometimes_client_resumed": _resume,
    "sometimes_command_replayed": lambda c: _resume(c) and "/c" in c.alphabet,
    "sometimes_response_lost": _lost,
    "sometimes_retry": lambda c: c.retries > 0 and _lost(c),
    "sometimes_cancel_reaches_running_work": lambda c: c.cancels > 0,
    "sometimes_stale_idle": lambda c: _works(c) >= 2 or c.hook,
    "lost_response_recoverable": _resume,
    "retry_does_not_duplicate": lambda c: c.retries > 0 and _lost(c),
    "session_cancel_stops_only_work_it_saw": lambda c: c.cancels > 0 and (_works(c) >= 2 or c.hook),
    "resumed_client_sees_current_state": _resume,
}


def _on(tags) -> frozenset | None:
    return None if tags is None else frozenset((tags,) if isinstance(tags, str) else tags)


def step_tags(step: Step) -> frozenset:
    """The action name and the kinds of message a step sent (matched against ``Property.on``)."""
    return frozenset([step.action[0], *(m[0] for _, m in step.emitted)])


def _req_of(s: System, c: int, rid: int):
    for r in s.agent.reqs:
        if r.cid == c and r.rid == rid and not r.orphan:
            return r
    return None


def _states(step: Step):
    """The state_update messages a step sent, once each (broadcasts collapsed)."""
    seen = []
    for _, m in step.emitted:
        if m[0] == "state" and m not in seen:
            seen.append(m)
    return seen


def _idles(step: Step):
    return [m for m in _states(step) if m[1] == IDLE]


# ---------------------------------------------------------------------------
# The session/prompt response
# ---------------------------------------------------------------------------


@_prop("always", witnesses=("sometimes_success_response",))
def success_only_after_insertion(s: System):
    """A prompt is answered successfully only once its message is inserted."""
    for r in s.agent.reqs:
        for ans in r.answers:
            if ans[0] == "ok" and not r.ins:
                return (
                    f"client {r.cid}'s session/prompt {r.rid} was answered with messageId "
                    f"{ans[1]} while its message was {r.phase}, not inserted"
                )
    return None


@_prop("always", witnesses=("sometimes_success_response",))
def success_carries_message_id(s: System):
    """A success response carries the ID of the message it inserted."""
    for r in s.agent.reqs:
        for ans in r.answers:
            if ans[0] == "ok" and (not ans[1] or ans[1] != r.mid):
                return f"client {r.cid}'s session/prompt {r.rid} got messageId {ans[1]}, its message is {r.mid}"
    return None


@_prop("step", witnesses=("sometimes_error_response",), on="AgentInsert")
def rejected_prompt_never_inserted(pre: System, step: Step):
    """A prompt answered with an error is never inserted afterwards."""
    if step.action[0] == "AgentInsert":
        r = pre.agent.reqs[step.action[1]]
        if any(a[0] == "err" for a in r.answers):
            return f"client {r.cid}'s session/prompt {r.rid} was inserted after an error response"
    return None


@_prop("step", witnesses=("sometimes_cancel_request_after_insertion", "sometimes_failure_before_response"), on="err")
def inserted_prompt_never_rejected(pre: System, step: Step):
    """After insertion a prompt is answered only with success, whatever fails or cancels."""
    for c, m in step.emitted:
        if m[0] == "err":
            r = _req_of(pre, c, m[1])
            if r is not None and r.ins:
                return (
                    f"client {c}'s session/prompt {m[1]} was answered with error {m[2]} "
                    f"after its message {r.mid} was inserted"
                )
    return None


@_prop("always", witnesses=("sometimes_cancel_request_after_answer",))
def one_response_per_request(s: System):
    """Every request gets at most one response."""
    for r in s.agent.reqs:
        if len(r.answers) > 1:
            return f"client {r.cid}'s session/prompt {r.rid} got {len(r.answers)} responses: {list(r.answers)}"
    return None


@_prop("eventually", witnesses=("sometimes_prompt_answered",))
def every_prompt_answered(s: System):
    """Every prompt on a live connection is eventually answered."""
    for r in s.agent.reqs:
        if not r.orphan and not r.answers and r.phase != "dropped":
            return f"client {r.cid}'s session/prompt {r.rid} ({r.phase}) is never answered"
    return None


# ---------------------------------------------------------------------------
# Message IDs and the user-message echo
# ---------------------------------------------------------------------------


@_prop("always", witnesses=("sometimes_identical_prompts_inserted", "sometimes_insert_after_restart"))
def distinct_message_ids(s: System):
    """Every accepted submission gets its own message ID, never reused (also across restart)."""
    issued = s.agent.issued
    for (m1, o1), (m2, o2) in zip(issued, issued[1:]):
        if m1 == m2 and o1 != o2:
            return f"message ID {m1} was given to two submissions (requests #{o1} and #{o2})"
    return None


@_prop("step", witnesses=("sometimes_live_echo",), on=("um", "chunk"))
def echo_names_an_inserted_message(pre: System, step: Step):
    """A live user-message update names an inserted message by its returned ID."""
    mids = {m.mid for m in pre.agent.conv}
    for c, m in step.emitted:
        if m[0] in ("um", "chunk") and not m[3] and m[1] not in mids:
            return f"client {c} got a {_name(m)} for messageId {m[1]}, which no inserted message has"
    return None


@_prop("step", witnesses=("sometimes_reserved_id_rejected",), on=("um", "chunk"))
def rejected_submission_never_echoed(pre: System, step: Step):
    """A rejected submission never appears as a user message."""
    rejected = {r.mid for r in pre.agent.reqs if r.mid and any(a[0] == "err" for a in r.answers)}
    for c, m in step.emitted:
        if m[0] in ("um", "chunk") and m[1] in rejected:
            return f"client {c} got a {_name(m)} for messageId {m[1]}, whose prompt was rejected"
    return None


@_prop("eventually", witnesses=("sometimes_echo_to_two_clients",))
def every_inserted_message_echoed(s: System):
    """Every inserted message is eventually reported to every client attached at insertion."""
    for m in s.agent.conv:
        if m.owed:
            who = [c for c in range(len(s.clients)) if m.owed >> c & 1]
            return f"message {m.mid} is never reported to client(s) {who}"
    return None


def _name(m: tuple) -> str:
    return "user_message" if m[0] == "um" else "user_message_chunk"


# ---------------------------------------------------------------------------
# Ending foreground work
# ---------------------------------------------------------------------------


@_prop("step", witnesses=("sometimes_failure_ends_work", "sometimes_failure_before_response"), on="AgentFailWork")
def failed_work_ends_with_error_idle(pre: System, step: Step):
    """A failure that stops work after insertion ends it with an idle carrying stopReason error."""
    if step.action == ("AgentFailWork", "stops-work"):
        if not pre.agent.attached:
            # No connection to report on: the agent must still be idle afterwards.
            a = step.state.agent
            if a.fg != IDLE or a.stop != "error":
                return f"a failure stopped the foreground work and the session stays {a.fg}"
            return None
        idles = _idles(step)
        if not idles:
            return "a failure stopped the foreground work and no idle state_update was sent"
        if idles[-1][2] != "error":
            return f"a failure stopped the foreground work and the idle says stopReason {idles[-1][2]!r}"
    return None


@_prop("step", witnesses=("sometimes_cancel_ends_work", "sometimes_abort_raises"), on="state")
def cancelled_work_ends_cancelled(pre: System, step: Step):
    """Cancelled work ends with stopReason cancelled, even when aborting raises."""
    w = pre.agent.work
    if w is not None and w.cancelling:
        for m in _idles(step):
            if m[2] != "cancelled":
                return f"work cancelled by session/cancel ended with stopReason {m[2]!r}"
    return None


@_prop("step", witnesses=("sometimes_idle_ends_work_with_tools",), on="tool")
def no_update_after_idle_of_its_work(pre: System, step: Step):
    """The idle follows all updates of the work it ends: no tool call update after it."""
    for c, m in step.emitted:
        if m[0] == "tool" and m[1] in pre.agent.ended_tools:
            return f"tool call {m[1]} was updated ({m[2]}) after the idle that ended its work"
    return None


@_prop("step", witnesses=("sometimes_unfinished_tool_at_failure",), level="SHOULD", on="state")
def tools_terminal_before_error_idle(pre: System, step: Step):
    """Before an error idle, every unfinished tool call of the work gets a terminal status."""
    w = pre.agent.work
    if w is None:
        return None
    status = dict(w.tools)
    for _, m in step.emitted:
        if m[0] == "tool":
            status[m[1]] = m[2]
        elif m[0] == "state" and m[1] == IDLE and m[2] == "error":
            open_ = [t for t, st in status.items() if st not in ("completed", "failed")]
            if open_:
                return f"the error idle was sent while tool call(s) {open_} were still unfinished"
            return None
    return None


@_prop("step", witnesses=("sometimes_error_idle",), on="state")
def error_only_with_error_stop_reason(pre: System, step: Step):
    """An error object appears only beside stopReason error."""
    for m in _idles(step):
        if m[3] and m[2] != "error":
            return f"an idle with stopReason {m[2]!r} carries an error object {m[3]}"
    return None


@_prop("step", witnesses=("sometimes_repeated_idle",), on="state")
def no_second_stop_reason(pre: System, step: Step):
    """Work already reported idle never gets a second, different stop reason."""
    a = pre.agent
    if a.fg == IDLE and a.stop:
        for m in _idles(step):
            if m[2] and m[2] != a.stop:
                return f"work already reported idle with {a.stop!r} was reported idle again with {m[2]!r}"
    return None


@_prop("eventually", witnesses=("sometimes_work_ends",))
def ended_work_reported_idle(s: System):
    """Foreground work that ends is eventually reported idle."""
    a = s.agent
    if a.work is None and a.fg != IDLE:
        return f"no foreground work remains but the session was last reported {a.fg}"
    return None


# ---------------------------------------------------------------------------
# Clients
# ---------------------------------------------------------------------------


@_prop("always", witnesses=("sometimes_echo_before_response", "sometimes_echo_after_response"))
def single_canonical_copy(s: System):
    """A client holds one copy of its acknowledged message, whatever the order of response and echo."""
    for c, cl in enumerate(s.clients):
        for sub in cl.subs:
            if sub.mid and sub.status == "acknowledged":
                n = sum(1 for key, _, _ in cl.view if key == sub.mid or key == -sub.rid)
                if n > 1:
                    return f"client {c} shows its prompt {sub.rid} (message {sub.mid}) {n} times"
    return None


@_prop("always", witnesses=("sometimes_identical_prompts_two_clients",))
def association_points_at_own_submission(s: System):
    """A client associates its submission with its own message, never an identical one."""
    origin = dict(s.agent.issued)
    reqs = s.agent.reqs
    for c, cl in enumerate(s.clients):
        for sub in cl.subs:
            if sub.mid:
                o = origin.get(sub.mid)
                if o is None or o < 0 or (reqs[o].cid, reqs[o].rid) != (c, sub.rid):
                    who = "no submission" if o is None else "an imported message" if o < 0 else (
                        f"client {reqs[o].cid}'s request {reqs[o].rid}")
                    return f"client {c} associates its prompt {sub.rid} with message {sub.mid}, which is {who}"
    return None


@_prop("always", witnesses=("sometimes_chunked_replay_over_held_copy",))
def client_content_matches_agent(s: System):
    """A client's copy of a message never holds more than the agent's content (no duplicated chunks)."""
    content = {m.mid: (m.content,) for m in s.agent.conv}
    for c, cl in enumerate(s.clients):
        for key, got, opt in cl.view:
            if key > 0 and not opt and key in content and got not in ((), content[key]):
                return f"client {c} holds {list(got)} for message {key}, the agent holds {list(content[key])}"
    return None


def _processed(s: System, c: int, rid: int) -> bool:
    """Was client c's prompt rid inserted and taken by work that has ended?

    Derived, not recorded: an inserted message waits in ``pending`` until work
    takes it and stays in the work's inputs until that work ends. (A message
    whose work a restart dropped counts as processed: a blind spot, see
    docs/model.md.)
    """
    r = _req_of_any(s, c, rid)
    if r is None or not r.ins:
        return False
    w = s.agent.work
    return r.mid not in s.agent.pending and (w is None or r.mid not in w.inputs)


def _req_of_any(s: System, c: int, rid: int):
    for r in s.agent.reqs:
        if r.cid == c and r.rid == rid:
            return r
    return None


@_prop("always", witnesses=("sometimes_stale_idle",))
def client_completion_belief_is_true(s: System):
    """A client believes its prompt processed only once work that took it has ended."""
    for c, cl in enumerate(s.clients):
        for rid in cl.done:
            if not _processed(s, c, rid):
                return f"client {c} took an idle as the end of its prompt {rid}, which no ended work has processed"
    return None


@_prop("always", witnesses=("sometimes_work_ends", "sometimes_failure_ends_work"))
def client_sees_current_state(s: System):
    """While no connection has been lost, a client that has received everything sees the current foreground state."""
    if s.used.losses or s.used.restarts:
        return None  # resumed clients: see resumed_client_sees_current_state
    a = s.agent
    for c, cl in enumerate(s.clients):
        if not s.down[c] and cl.fg != a.fg:
            return f"client {c} has received everything and believes the session is {cl.fg}; it is {a.fg}"
    return None


# ---------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------


@_prop("step", witnesses=("sometimes_replay",), on=("um", "chunk"))
def replay_preserves_ids(pre: System, step: Step):
    """Retained messages replay under the IDs they were returned with."""
    retained = {m.mid for m in pre.agent.conv if m.retained}
    for c, m in step.emitted:
        if m[0] in ("um", "chunk") and m[3] and m[1] not in retained:
            return f"replay to client {c} sent messageId {m[1]}, which no retained message has"
    return None


@_prop("step", witnesses=("sometimes_chunked_replay",), on="chunk")
def chunked_replay_resets_first(pre: System, step: Step):
    """Replay by chunks first clears the message with user_message content []."""
    cleared = set()
    for c, m in step.emitted:
        if m[0] == "um" and m[3] and m[2] == ():
            cleared.add((c, m[1]))
        elif m[0] == "chunk" and m[3] and (c, m[1]) not in cleared:
            return f"replay to client {c} sent a chunk of message {m[1]} without user_message content []"
    return None


@_prop("always", witnesses=("sometimes_command_replayed",))
def replayed_command_not_reexecuted(s: System):
    """A replayed command is reported again, never executed again."""
    for m in s.agent.conv:
        if m.runs > 1:
            return f"command message {m.mid} was executed {m.runs} times"
    return None


@_prop("step", witnesses=("sometimes_resume_without_replay",), on="AgentResume")
def no_replay_without_replay_from(pre: System, step: Step):
    """A resume without replayFrom replays nothing."""
    if step.action[0] == "AgentResume" and not pre.up[step.action[1]][0][2]:
        if any(m[0] in ("um", "chunk") and m[3] for _, m in step.emitted):
            return f"client {step.action[1]} resumed without replayFrom and got replayed messages"
    return None


# ---------------------------------------------------------------------------
# What the RFD itself leaves unresolved
# ---------------------------------------------------------------------------


@_prop("step", expect="known_limitation", witnesses=("sometimes_response_lost",), on=("resumed", "ClientReceive"))
def lost_response_recoverable(pre: System, step: Step):
    """After a resume with replay, a client knows which message its lost submission became."""
    s = step.state
    by_key = {(r.cid, r.rid): r for r in s.agent.reqs}
    retained = {m.mid for m in s.agent.conv if m.retained}
    for c, (before, cl) in enumerate(zip(pre.clients, s.clients)):
        if before.resuming != 2 or cl.resuming:
            continue  # check when the client has just processed its replay's response
        held = {key for key, _, opt in cl.view if key > 0 and not opt}
        for sub in cl.subs:
            r = by_key.get((c, sub.rid))
            if sub.status == "unknown" and not sub.mid and r is not None and r.ins and r.mid in retained & held:
                return (
                    f"client {c} replayed the session and holds message {r.mid}, but cannot tell "
                    f"that it is its prompt {sub.rid} whose response was lost"
                )
    return None


@_prop("always", expect="known_limitation", witnesses=("sometimes_retry",))
def retry_does_not_duplicate(s: System):
    """Retrying a submission whose response was lost never creates a second message."""
    inserted = {(r.cid, r.rid): r.mid for r in s.agent.reqs if r.ins}
    for c, cl in enumerate(s.clients):
        for sub in cl.subs:
            if sub.retry_of and (c, sub.retry_of) in inserted and (c, sub.rid) in inserted:
                return (
                    f"client {c}'s prompt {sub.retry_of} and its retry {sub.rid} became two messages "
                    f"({inserted[(c, sub.retry_of)]} and {inserted[(c, sub.rid)]})"
                )
    return None


@_prop("step", expect="open_question", witnesses=("sometimes_cancel_reaches_running_work",), on="AgentReceive")
def session_cancel_stops_only_work_it_saw(pre: System, step: Step):
    """A session/cancel stops only the work that was running when the client sent it."""
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel":
        w = pre.agent.work
        sent_during = pre.up[step.action[1]][0][1]
        if w is not None and not w.cancelling and w.serial != sent_during:
            seen = f"work #{sent_during}" if sent_during else "no work"
            return f"client {step.action[1]} sent session/cancel while {seen} ran; it stopped work #{w.serial}"
    return None


@_prop("always", expect="open_question", witnesses=("sometimes_client_resumed",))
def resumed_client_sees_current_state(s: System):
    """A resumed client that has received everything sent to it sees the current foreground state."""
    a = s.agent
    for c, cl in enumerate(s.clients):
        if cl.connected and not cl.resuming and a.attached >> c & 1 and not s.down[c] and cl.fg != a.fg:
            return f"client {c} has received everything and believes the session is {cl.fg}; it is {a.fg}"
    return None


# ---------------------------------------------------------------------------
# Witnesses: situations that must be reachable (sometimes)
# ---------------------------------------------------------------------------


def _sometimes(*on: str):
    def register(fn: Callable) -> Callable:
        doc = (fn.__doc__ or "").strip().splitlines()[0]
        PROPERTIES.append(Property(fn.__name__, "sometimes", "reachable", doc, fn, on=_on(on), applies=_APPLIES.get(fn.__name__, _always)))
        return fn

    return register


def _sent(step: Step, kind: str, pred=lambda m: True) -> bool:
    return any(m[0] == kind and pred(m) for _, m in step.emitted)


@_sometimes("ok")
def sometimes_success_response(pre, step):
    """A prompt is answered with its messageId."""
    return _sent(step, "ok")


@_sometimes("err")
def sometimes_error_response(pre, step):
    """A prompt is answered with an error before insertion."""
    return _sent(step, "err")


@_sometimes("AgentReceive")
def sometimes_cancel_request_after_insertion(pre, step):
    """$/cancel_request reaches the agent after the prompt was inserted and before it was answered."""
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel_req":
        r = _req_of(pre, step.action[1], pre.up[step.action[1]][0][1])
        return r is not None and r.phase == "inserted"
    return False


@_sometimes("AgentReceive")
def sometimes_cancel_request_after_answer(pre, step):
    """$/cancel_request reaches the agent after the prompt was answered."""
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel_req":
        r = _req_of(pre, step.action[1], pre.up[step.action[1]][0][1])
        return r is not None and bool(r.answers)
    return False


@_sometimes("AgentFailWork")
def sometimes_failure_before_response(pre, step):
    """Work fails after insertion and before the prompt's response."""
    if step.action == ("AgentFailWork", "stops-work"):
        w = pre.agent.work
        return any(r.phase == "inserted" and not r.answers and r.mid in w.inputs for r in pre.agent.reqs)
    return False


@_sometimes("ok", "err")
def sometimes_prompt_answered(pre, step):
    """A prompt gets a response, success or error."""
    return _sent(step, "ok") or _sent(step, "err")


@_sometimes("AgentInsert")
def sometimes_identical_prompts_inserted(pre, step):
    """Two prompts with identical content are inserted."""
    contents = [m.content for m in step.state.agent.conv if m.kind == "prompt"]
    return len(contents) != len(set(contents))


@_sometimes("AgentInsert")
def sometimes_insert_after_restart(pre, step):
    """A prompt is inserted after the agent restarted with a retained message."""
    return step.action[0] == "AgentInsert" and pre.used.restarts > 0 and bool(pre.agent.conv)


@_sometimes("um", "chunk")
def sometimes_live_echo(pre, step):
    """An inserted message is reported live."""
    return any(m[0] in ("um", "chunk") and not m[3] for _, m in step.emitted)


@_sometimes("AgentRejectPrompt")
def sometimes_reserved_id_rejected(pre, step):
    """A prompt with an ID reserved in advance is rejected."""
    return step.action[0] == "AgentRejectPrompt" and pre.agent.reqs[step.action[1]].mid != 0


@_sometimes("um", "chunk")
def sometimes_echo_to_two_clients(pre, step):
    """A live echo goes to two clients."""
    return len({c for c, m in step.emitted if m[0] in ("um", "chunk") and not m[3]}) > 1


@_sometimes("AgentFailWork")
def sometimes_failure_ends_work(pre, step):
    """A failure stops foreground work."""
    return step.action == ("AgentFailWork", "stops-work")


@_sometimes("state")
def sometimes_cancel_ends_work(pre, step):
    """session/cancel ends foreground work."""
    w = pre.agent.work
    return w is not None and w.cancelling and bool(_idles(step))


@_sometimes("AgentFailWork")
def sometimes_abort_raises(pre, step):
    """Aborting cancelled work raises an error."""
    return step.action == ("AgentFailWork", "while-cancelling")


@_sometimes("state")
def sometimes_idle_ends_work_with_tools(pre, step):
    """An idle ends work that made tool calls."""
    w = pre.agent.work
    return w is not None and bool(w.tools) and bool(_idles(step))


@_sometimes("AgentFailWork")
def sometimes_unfinished_tool_at_failure(pre, step):
    """A failure stops work while a tool call is unfinished."""
    w = pre.agent.work
    return (
        step.action == ("AgentFailWork", "stops-work")
        and any(st not in ("completed", "failed") for _, st in w.tools)
    )


@_sometimes("state")
def sometimes_error_idle(pre, step):
    """An idle carries stopReason error with an error object."""
    return any(m[2] == "error" and m[3] for m in _idles(step))


@_sometimes("state")
def sometimes_repeated_idle(pre, step):
    """An idle is reported again while the session is already idle (a resume snapshot)."""
    return pre.agent.fg == IDLE and pre.agent.stop != "" and bool(_idles(step))


@_sometimes("state")
def sometimes_work_ends(pre, step):
    """Foreground work ends and is reported idle."""
    return pre.agent.work is not None and bool(_idles(step))


@_sometimes("um", "chunk", "ok", "ClientReceive")
def sometimes_echo_before_response(pre, step):
    """A client receives the echo of its own prompt before the response."""
    return _own_echo_state(step.state, optimistic=False, status="sent")


@_sometimes("um", "chunk", "ok", "ClientReceive")
def sometimes_echo_after_response(pre, step):
    """A client receives the response to its prompt before the echo."""
    return _own_echo_state(step.state, optimistic=True, status="acknowledged")


def _own_echo_state(s: System, optimistic: bool, status: str) -> bool:
    for c, cl in enumerate(s.clients):
        for sub in cl.subs:
            if sub.status != status:
                continue
            r = _req_of(s, c, sub.rid)
            if r is None or not r.ins:
                continue
            for key, _, opt in cl.view:
                if key == r.mid and opt == optimistic:
                    return True
    return False


@_sometimes("um", "chunk", "ok", "ClientReceive")
def sometimes_identical_prompts_two_clients(pre, step):
    """Two clients have each associated an identical prompt with its own message."""
    seen = {}
    for c, cl in enumerate(step.state.clients):
        for sub in cl.subs:
            if sub.mid:
                seen.setdefault(sub.content, set()).add(c)
    return any(len(v) > 1 for v in seen.values())


@_sometimes("AgentResume")
def sometimes_chunked_replay_over_held_copy(pre, step):
    """Replay by chunks reaches a client that already holds the message."""
    if step.action[0] == "AgentResume" and step.action[2] == "chunks":
        held = {k for k, _, _ in pre.clients[step.action[1]].view if k > 0}
        return any(m.retained and m.mid in held for m in pre.agent.conv)
    return False


@_sometimes("um", "chunk")
def sometimes_replay(pre, step):
    """A retained message is replayed."""
    return any(m[0] in ("um", "chunk") and m[3] for _, m in step.emitted)


@_sometimes("chunk")
def sometimes_chunked_replay(pre, step):
    """A retained message is replayed by chunks."""
    return any(m[0] == "chunk" and m[3] for _, m in step.emitted)


@_sometimes("um", "chunk")
def sometimes_command_replayed(pre, step):
    """A retained command is replayed."""
    cmds = {m.mid for m in pre.agent.conv if m.kind == "command"}
    return any(m[0] in ("um", "chunk") and m[3] and m[1] in cmds for _, m in step.emitted)


@_sometimes("AgentResume")
def sometimes_resume_without_replay(pre, step):
    """A client resumes without replayFrom."""
    return step.action[0] == "AgentResume" and step.action[2] == "none"


@_sometimes("ConnectionLost", "AgentRestart", "AgentInsert")
def sometimes_response_lost(pre, step):
    """A client loses the response to a prompt the agent inserted."""
    for c, cl in enumerate(step.state.clients):
        for sub in cl.subs:
            if sub.status == "unknown":
                for r in step.state.agent.reqs:
                    if r.cid == c and r.rid == sub.rid and r.ins:
                        return True
    return False


@_sometimes("ClientRetryPrompt")
def sometimes_retry(pre, step):
    """A client retries a submission whose response was lost."""
    return step.action[0] == "ClientRetryPrompt"


@_sometimes("state", "ClientReceive")
def sometimes_stale_idle(pre, step):
    """An idle reaches a client whose prompt no ended work has processed yet."""
    for c, (before, after) in enumerate(zip(pre.clients, step.state.clients)):
        got_idle = any(cc == c and m[0] == "state" and m[1] == IDLE for cc, m in step.emitted)
        if step.action[:2] == ("ClientReceive", c) and pre.down[c][0][:2] == ("state", IDLE):
            got_idle = True
        if got_idle and after.connected:
            for sub in after.subs:
                if sub.status in ("sent", "acknowledged") and not _processed(step.state, c, sub.rid):
                    return True
    return False


@_sometimes("AgentReceive")
def sometimes_cancel_reaches_running_work(pre, step):
    """session/cancel reaches the agent while work runs."""
    return step.action[0] == "AgentReceive" and step.action[2] == "cancel" and pre.agent.work is not None


@_sometimes("resumed", "ClientReceive")
def sometimes_client_resumed(pre, step):
    """A client completes a resume."""
    return any(p.resuming and not q.resuming and q.connected for p, q in zip(pre.clients, step.state.clients))


BY_ID: dict[str, Property] = {p.id: p for p in PROPERTIES}
