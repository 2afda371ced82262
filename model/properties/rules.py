"""The properties: what the RFD and the 2.4.0 text say must (or should) hold, and what they
leave open, one function each, registered in ``PROPERTIES`` in this order."""

from __future__ import annotations

from ..system import IDLE, REQUIRES_ACTION, Step, System
from ._core import (delivers, echoes, idle_updates, judged_property, prop, request_of, request_of_any, state_updates,
                    stops_work, was_processed)

__all__: list[str] = []

# ---------------------------------------------------------------------------
# The session/prompt response
# ---------------------------------------------------------------------------


@prop("always", witnesses=("sometimes_success_response",))
def success_only_after_insertion(s: System):
    """A prompt is answered successfully only once its message is inserted."""
    for r in s.agent.reqs:
        for ans in r.answers:
            if ans[0] == "ok" and not r.ever_inserted:
                return (
                    f"client {r.cid}'s session/prompt {r.rid} was answered with messageId "
                    f"{ans[1]} while its message was {r.phase}, not inserted"
                )
    return None


judged_property("success_carries_message_id")


@prop("step", witnesses=("sometimes_error_response",))
def rejected_prompt_never_inserted(pre: System, step: Step):
    """A prompt answered with an error is never inserted afterwards."""
    if step.action[0] == "AgentInsert":
        r = pre.agent.reqs[step.action[1]]
        if any(a[0] == "err" for a in r.answers):
            return f"client {r.cid}'s session/prompt {r.rid} was inserted after an error response"
    return None


@prop("step", witnesses=("sometimes_cancel_request_after_insertion", "sometimes_failure_before_response"))
def inserted_prompt_never_rejected(pre: System, step: Step):
    """After insertion a prompt is answered only with success, whatever fails or cancels."""
    for c, m in step.emitted:
        if m[0] == "err":
            r = request_of(pre, c, m[1])
            if r is not None and r.ever_inserted:
                return (
                    f"client {c}'s session/prompt {m[1]} was answered with error {m[2]} "
                    f"after its message {r.mid} was inserted"
                )
    return None


judged_property("one_response_per_request")


judged_property("every_prompt_answered")


judged_property("cancelled_request_still_answered")


@prop("step", witnesses=("sometimes_prompt_work_ends",))
def answered_before_its_work_ends(pre: System, step: Step):
    """A prompt is answered before the work that took it ends normally: the response does not wait for processing."""
    idles = idle_updates(step)
    if not idles:
        return None
    w = pre.agent.work
    if w is None or w.cancelling or step.action[0] == "AgentFailWork":
        return None  # a cancellation or a failure may end the work before the response
    for m in idles:
        for r in pre.agent.reqs:
            if r.ever_inserted and not r.answers and not r.orphan and r.mid in w.inputs:
                return (
                    f"the work that took message {r.mid} ended ({m[2] or 'no stop reason'}) before client "
                    f"{r.cid}'s session/prompt {r.rid} was answered: the response waited for processing"
                )
    return None


@prop("step", witnesses=("sometimes_cancel_finds_prompt_not_inserted",), spec="2.4.0")
def cancelled_prompt_never_inserted(pre: System, step: Step):
    """A prompt that a session/cancel found not yet inserted is never inserted, and is answered -32800."""
    if step.action[0] == "AgentInsert":
        r = pre.agent.reqs[step.action[1]]
        if r.session_cancel_before_insertion:
            return f"client {r.cid}'s session/prompt {r.rid} was inserted after a session/cancel found it not yet inserted"
    for c, m in step.emitted:
        if m[0] == "err" and m[2] != -32800:
            r = request_of(pre, c, m[1])
            if r is not None and r.session_cancel_before_insertion:
                return f"client {c}'s session/prompt {m[1]}, cancelled by session/cancel, was answered {m[2]}, not -32800"
    return None


# ---------------------------------------------------------------------------
# Message IDs and the user-message echo
# ---------------------------------------------------------------------------


judged_property("distinct_message_ids")


@prop("step", witnesses=("sometimes_live_echo",))
def echo_names_an_inserted_message(pre: System, step: Step):
    """A live user-message update names an inserted message by its returned ID."""
    updates = echoes(step)
    if not updates:
        return None
    # inserted by the end of the step: a proposal's delivery inserts and reports in one step, insertion first
    mids = {m.mid for m in step.state.agent.conv}
    for c, m in updates:
        if not m[3] and m[1] not in mids:
            return f"client {c} got a {_name(m)} for messageId {m[1]}, which no inserted message has"
    return None


@prop("step", witnesses=("sometimes_reserved_id_rejected",))
def rejected_submission_never_echoed(pre: System, step: Step):
    """A rejected submission never appears as a user message."""
    updates = echoes(step)
    if not updates:
        return None
    rejected = {r.mid for r in pre.agent.reqs if r.mid and any(a[0] == "err" for a in r.answers)}
    for c, m in updates:
        if m[1] in rejected:
            return f"client {c} got a {_name(m)} for messageId {m[1]}, whose prompt was rejected"
    return None


judged_property("every_inserted_message_echoed")


def _name(m: tuple) -> str:
    return "user_message" if m[0] == "user_message" else "user_message_chunk"


# ---------------------------------------------------------------------------
# Ending foreground work
# ---------------------------------------------------------------------------


@prop("step", witnesses=("sometimes_failure_ends_work", "sometimes_failure_before_response"))
def failed_work_ends_with_error_idle(pre: System, step: Step):
    """A failure that stops work after insertion ends it with an idle carrying stopReason error."""
    if stops_work(step):
        if not pre.agent.attached:
            # No connection to report on: the agent must still be idle afterwards.
            a = step.state.agent
            if a.fg != IDLE or a.stop != "error":
                return f"a failure stopped the foreground work and the session stays {a.fg}"
            return None
        idles = idle_updates(step)
        if not idles:
            return "a failure stopped the foreground work and no idle state_update was sent"
        if idles[-1][2] != "error":
            return f"a failure stopped the foreground work and the idle says stopReason {idles[-1][2]!r}"
    return None


judged_property("cancelled_work_ends_cancelled")


judged_property("no_update_after_idle_of_its_work")


judged_property("tools_terminal_before_error_idle")


@prop("step", witnesses=("sometimes_unfinished_tool_at_failure",), level="SHOULD")
def failure_marks_unfinished_tools_failed(pre: System, step: Step):
    """A failure marks the tool calls it left unfinished failed, the value its clause names.

    "Before sending it, the Agent SHOULD give each tool call that the failed work left unfinished a
    terminal status, using failed for calls that did not complete": the terminal statuses a failure sends
    with its error idle are those of calls it left unfinished (tools_terminal_before_error_idle, a judge,
    checks that they are terminal; which calls the failure left is the agent's own knowledge)."""
    sent = step.emitted
    if not any(m[0] == "state" and m[2] == "error" for _, m in sent):
        return None
    for _, m in sent:
        if m[0] == "tool" and m[2] is not None and m[2] != "failed":
            return f"{_what(step)} ended the work with an error idle and gave tool call {m[1]} the status {m[2]!r}"
    return None


judged_property("error_only_with_error_stop_reason")


judged_property("no_second_stop_reason")


@prop("eventually", witnesses=("sometimes_work_ends",))
def ended_work_reported_idle(s: System):
    """Foreground work that ends is eventually reported idle to every client in the session.

    What a client was told: the last state_update on its way to it, else the last it received (the
    agent's own record of what it reported is what a fault in its messages leaves as it was)."""
    a = s.agent
    if a.work is not None:
        return None
    if s.used.losses or s.used.restarts:  # resumed clients: resumed_client_sees_current_state judges what they saw
        return None if a.fg == IDLE else f"no foreground work remains but the session was last reported {a.fg}"
    for c, cl in enumerate(s.clients):
        if not cl.connected or not a.attached >> c & 1:
            continue  # a lost connection is told nothing; a resume brings it a snapshot
        told = next((m[1] for m in reversed(s.down[c]) if m[0] == "state"), cl.fg)
        if told != IDLE:
            return f"no foreground work remains but client {c} was last told the session is {told}"
    return None


@prop("step", witnesses=("sometimes_failure_ends_work", "sometimes_failure_work_continues"))
def error_idle_only_for_failure(pre: System, step: Step):
    """An idle says stopReason error only when a failure ended the foreground work (or repeats that idle)."""
    for m in idle_updates(step):
        if m[2] != "error":
            continue
        a = pre.agent
        if step.action[:2] == ("AgentFailWork", "stops-work") and a.work is not None:
            continue
        if a.work is None and a.fg == IDLE and a.stop == "error":
            continue  # a repeated or resume snapshot carries the last stop reason
        return f"{_what(step)} sent an idle with stopReason error, and no failure ended foreground work"
    return None


# An idle cancelled only for a cancellation: judged on what the agent received (a session/cancel, a client's
# $/cancel_request of its prompt) and what the connection was told, not on the agent's own flag (issue 34).
judged_property("cancelled_only_when_cancelled")


#: The steps that may change the foreground state: work starts, blocks,
#: resumes or ends, a permission holder is lost, a resume sends its snapshot.
_STATE_STEPS = frozenset({
    "AgentBeginWork", "AgentInitiateWork", "AgentRequestPermission", "AgentEndWork", "AgentFailWork",
    "AgentResume", "ConnectionLost",
})


@prop("step", witnesses=("sometimes_failure_work_continues", "sometimes_error_response"))
def state_changes_only_with_work(pre: System, step: Step):
    """A state_update is sent only when foreground work starts, blocks, resumes or ends, or as a resume snapshot."""
    name = step.action[0]
    if name in _STATE_STEPS:
        return None
    sent = state_updates(step)
    if not sent or (name == "AgentReceive" and step.action[2] == "perm_ans"):
        return None
    # 2.4.0: "Repeated snapshots are idempotent, not additional work, completions, or usage. A
    # repeated state may carry updated information without another state transition."
    a = pre.agent
    states = [m for m in sent if not (m[1] == a.fg and (m[1] != IDLE or m[2] in ("", a.stop)))]
    if states:
        shown = ", ".join(m[1] + (f" stopReason={m[2]}" if m[2] else "") for m in states)
        return f"{_what(step)} sent state_update {shown}, though it neither starts, blocks, resumes nor ends work"
    return None


@prop("step", witnesses=("sometimes_work_ends",), level="SHOULD", spec="2.4.0")
def idle_ending_work_has_stop_reason(pre: System, step: Step):
    """The idle that ends foreground work carries a stop reason."""
    idles = idle_updates(step)
    if idles and pre.agent.work is not None:
        for m in idles:
            if not m[2]:
                return f"{_what(step)} ended foreground work with an idle that carries no stop reason"
    return None


@prop("step", witnesses=("sometimes_failure_ends_work",), level="SHOULD")
def error_idle_carries_details(pre: System, step: Step):
    """An error idle carries the error object of the failure when the agent has one."""
    if stops_work(step) and "no-details" not in step.action:
        for m in idle_updates(step):
            if m[2] == "error" and not m[3]:
                return "a failure with details (-32000) ended the work with an error idle that carries no error object"
    return None


judged_property("custom_stop_reason_prefixed")


@prop("eventually", witnesses=("sometimes_cancel_ends_work",))
def cancelled_work_ends(s: System):
    """Work a session/cancel reached eventually ends, whether or not its permission request is answered."""
    w = s.agent.work
    if w is not None and w.cancelling:
        return f"work #{w.serial}, which a session/cancel reached, never ends"
    return None


@prop("step", witnesses=("sometimes_permission_cancelled",), spec="2.4.0")
def cancelled_work_never_resumes(pre: System, step: Step):
    """Work a session/cancel reached never reports running or requires_action again."""
    sent = state_updates(step)
    w = pre.agent.work if sent else None
    if w is not None and w.cancelling:
        for m in sent:
            if m[1] != IDLE:
                return f"work #{w.serial}, which a session/cancel reached, reported {m[1]} again ({_what(step)})"
    return None


@prop("step", witnesses=("sometimes_start_blocked", "sometimes_permission_to_second_client"), level="SHOULD", spec="2.4.0")
def blocked_work_reported_requires_action(pre: System, step: Step):
    """A step that blocks foreground work on a permission request reports requires_action to every attached client."""
    perms = [m[1] for _, m in step.emitted if m[0] == "perm"]
    if not perms:
        return None
    told = {c for c, m in step.emitted if m[0] == "state" and m[1] == REQUIRES_ACTION}
    attached = pre.agent.attached
    missing = [c for c in range(attached.bit_length()) if attached >> c & 1 and c not in told]
    if missing:
        return (
            f"{_what(step)} sent permission request {perms[0]} and client(s) {missing} got no "
            "requires_action: the work cannot progress and the session still looks running"
        )
    return None


@prop("step", witnesses=("sometimes_late_answer",), level="SHOULD", spec="2.4.0")
def late_answer_ignored(pre: System, step: Step):
    """An answer to a permission request the agent no longer waits for changes no state."""
    if step.action[0] == "AgentReceive" and step.action[2] == "perm_ans":
        w = pre.agent.work
        pid = pre.up[step.action[1]][0][1]
        if (w is None or w.cancelling or w.perm != pid) and state_updates(step):
            return f"a late answer to permission request {pid} changed the state: {state_updates(step)[0][1]}"
    return None


@prop("step", witnesses=("sometimes_permission_cancelled",), level="SHOULD", spec="2.4.0")
def cancelled_permission_requests_cancelled(pre: System, step: Step):
    """When session/cancel finds the work waiting for a permission answer, the agent cancels that request with $/cancel_request."""
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel":
        w = pre.agent.work
        if w is not None and not w.cancelling and w.perm:
            if not any(m == ("perm_cancel", w.perm) for _, m in step.emitted):
                return f"session/cancel stopped work #{w.serial} and its permission request {w.perm} was not cancelled"
    return None


def _what(step: Step) -> str:
    """The step, for a message: its action label."""
    name, *args = step.action
    return f"{name}({', '.join(repr(a) for a in args)})"


# ---------------------------------------------------------------------------
# Clients
# ---------------------------------------------------------------------------


@prop("always", witnesses=("sometimes_echo_before_response", "sometimes_echo_after_response"))
def single_canonical_copy(s: System):
    """A client shows its acknowledged message exactly once, under the ID the response returned."""
    for c, cl in enumerate(s.clients):
        for sub in cl.subs:
            if sub.status != "acknowledged":
                continue
            r = request_of_any(s, c, sub.rid)
            got = [a[1] for a in r.answers if a[0] == "ok"] if r is not None else []
            if got and got[0] and sub.mid != got[0]:  # got[0] == 0: the result carried no ID
                return f"client {c} associates its prompt {sub.rid} with message {sub.mid}; its response returned {got[0]}"
            n = sum(1 for key, _, _ in cl.view if key == sub.mid or key == -sub.rid)
            if n != 1:
                return f"client {c} shows its acknowledged prompt {sub.rid} (message {sub.mid}) {n} times"
    return None


@prop("always", witnesses=("sometimes_identical_prompts_two_clients",))
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


@prop("always", witnesses=("sometimes_chunked_replay_over_held_copy", "sometimes_metadata_update"))
def client_content_matches_agent(s: System):
    """Once every update for a message has reached a client, its copy holds exactly the agent's content."""
    content = {m.mid: (m.content,) for m in s.agent.conv}
    for c, cl in enumerate(s.clients):
        for key, got, opt in cl.view:
            if key > 0 and not opt and key in content and got != content[key]:
                if got == () and (cl.missed_messages or any(m[0] in ("user_message", "chunk") and m[1] == key for m in s.down[c])):
                    continue  # the rest of the update is on its way, or was lost with the connection
                return f"client {c} holds {list(got)} for message {key}, the agent holds {list(content[key])}"
    return None






@prop("always", witnesses=("sometimes_stale_idle",))
def client_completion_belief_is_true(s: System):
    """A client believes its prompt processed only once work that took it has ended."""
    for c, cl in enumerate(s.clients):
        for rid in cl.done:
            if not was_processed(s, c, rid):
                return f"client {c} took an idle as the end of its prompt {rid}, which no ended work has processed"
    return None


@prop("always", witnesses=("sometimes_work_ends", "sometimes_failure_ends_work"))
def client_sees_current_state(s: System):
    """While no connection has been lost, a client in the session that has received everything sees its state.

    The current foreground state, that is; a client whose connection left the session is told nothing more."""
    if s.used.losses or s.used.restarts:
        return None  # resumed clients: see resumed_client_sees_current_state
    a = s.agent
    for c, cl in enumerate(s.clients):
        if not s.down[c] and a.attached >> c & 1 and cl.fg != a.fg:
            return f"client {c} has received everything and believes the session is {cl.fg}; it is {a.fg}"
    return None


@prop("step", witnesses=("sometimes_permission_cancelled",), spec="2.4.0")
def cancelled_permission_answered_cancelled(pre: System, step: Step):
    """A client answers a permission request the agent cancelled with the cancelled outcome."""
    if step.action[0] == "ClientAnswerPermission":
        c, pid = step.action[1], step.action[2]
        if (pid, "cancelled") in pre.clients[c].perms:
            sent = step.state.up[c][-1]
            if sent[0] == "perm_ans" and sent[2] != "cancelled":
                return f"client {c} answered permission request {pid}, which the agent cancelled, with {sent[2]!r}"
    return None


# ---------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------


@prop("step", witnesses=("sometimes_replay",))
def replay_preserves_ids(pre: System, step: Step):
    """Retained messages replay under the IDs they were returned with."""
    updates = echoes(step)
    if not updates:
        return None
    retained = {m.mid for m in pre.agent.conv if m.retained}
    for c, m in updates:
        if m[3] and m[1] not in retained:
            return f"replay to client {c} sent messageId {m[1]}, which no retained message has"
    return None


judged_property("chunked_replay_resets_first")


@prop("always", witnesses=("sometimes_command_replayed",))
def replayed_command_not_reexecuted(s: System):
    """A replayed command is reported again, never executed again."""
    for m in s.agent.conv:
        if m.runs > 1:
            return f"command message {m.mid} was executed {m.runs} times"
    return None


judged_property("no_replay_without_replay_from")


# ---------------------------------------------------------------------------
# What the RFD itself leaves unresolved
# ---------------------------------------------------------------------------


@prop("step", expect="known_limitation", witnesses=("sometimes_response_lost",))
def lost_response_recoverable(pre: System, step: Step):
    """After a resume with replay, a client knows which message its lost submission became."""
    if not delivers(step, "resumed"):
        return None  # no client takes a message in the step, and no resume's response is sent
    s = step.state
    by_key = {(r.cid, r.rid): r for r in s.agent.reqs}
    retained = {m.mid for m in s.agent.conv if m.retained}
    for c, (before, cl) in enumerate(zip(pre.clients, s.clients)):
        if before.resuming != 2 or cl.resuming or not cl.replayed:
            continue  # check when the client has just processed its replay's response (not lost the connection)
        held = {key for key, _, opt in cl.view if key > 0 and not opt}
        for sub in cl.subs:
            r = by_key.get((c, sub.rid))
            if sub.status == "unknown" and not sub.mid and r is not None and r.ever_inserted and r.mid in retained & held:
                return (
                    f"client {c} replayed the session and holds message {r.mid}, but cannot tell "
                    f"that it is its prompt {sub.rid} whose response was lost"
                )
    return None


@prop("always", expect="known_limitation", witnesses=("sometimes_retry",))
def retry_does_not_duplicate(s: System):
    """Retrying a submission whose response was lost never creates a second message."""
    inserted = {(r.cid, r.rid): r.mid for r in s.agent.reqs if r.ever_inserted}
    for c, cl in enumerate(s.clients):
        for sub in cl.subs:
            if sub.retry_of and (c, sub.retry_of) in inserted and (c, sub.rid) in inserted:
                return (
                    f"client {c}'s prompt {sub.retry_of} and its retry {sub.rid} became two messages "
                    f"({inserted[(c, sub.retry_of)]} and {inserted[(c, sub.rid)]})"
                )
    return None


@prop("step", expect="open_question", witnesses=("sometimes_cancel_reaches_running_work",))
def session_cancel_stops_only_work_it_saw(pre: System, step: Step):
    """A session/cancel stops only the work that was running when the client sent it, or work for the sender's own prompt."""
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel":
        w = pre.agent.work
        c = step.action[1]
        sent_during = pre.up[c][0][1]
        reqs = pre.agent.reqs
        # Work for a prompt the sender had sent before the cancel (work before its
        # insertion, or work that took its message) is the work it asked to stop:
        # 2.4.0 "Cancels a session's foreground work and its prompts not yet inserted."
        own = w is not None and (
            (w.before_insertion_of and reqs[w.before_insertion_of - 1].cid == c)
            or any(r.cid == c and r.ever_inserted and r.mid in w.inputs for r in reqs)
        )
        stopped = step.state.agent.work is not None and step.state.agent.work.cancelling
        if w is not None and not w.cancelling and stopped and w.serial != sent_during and not own:
            seen = f"work #{sent_during}" if sent_during else "no work"
            return f"client {step.action[1]} sent session/cancel while {seen} ran; it stopped work #{w.serial}"
    return None


@prop("step", expect="open_question", witnesses=("sometimes_queued_insert",))
def session_cancel_stops_inserted_waiting_prompt(pre: System, step: Step):
    """A prompt inserted while other work runs does not start its work after a session/cancel that came before it began."""
    if step.state.agent is pre.agent:
        return None  # the agent's state, its work with it, is as it was
    w = step.state.agent.work
    if w is None or (pre.agent.work is not None and pre.agent.work.serial == w.serial):
        return None
    for r in pre.agent.reqs:
        if r.waiting_at_session_cancel and r.mid in w.inputs:
            return (
                f"client {r.cid}'s prompt {r.rid} (message {r.mid}) was inserted while other work ran and waited "
                f"when session/cancel stopped that work; its work starts now: the cancel stopped neither it (not "
                f"foreground work yet) nor its prompt (inserted already)"
            )
    return None


judged_property("resume_snapshot_before_response")


@prop("always", expect="open_question", witnesses=("sometimes_client_resumed",), expect_240="must_hold")
def resumed_client_sees_current_state(s: System):
    """A resumed client that has received everything sent to it sees the current foreground state."""
    a = s.agent
    for c, cl in enumerate(s.clients):
        if cl.connected and not cl.resuming and a.attached >> c & 1 and not s.down[c] and cl.fg != a.fg:
            return f"client {c} has received everything and believes the session is {cl.fg}; it is {a.fg}"
    return None
