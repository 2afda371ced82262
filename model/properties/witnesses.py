"""The witnesses (``sometimes``): situations that must be reachable, or a property that
guards them holds only because nothing happens."""

from __future__ import annotations

from typing import Callable

from ... import docstring
from ..system import IDLE, Step, System
from ._core import (APPLIES, PROPERTIES, Property, always_applies, delivers, echoes, has_received, idle_updates,
                    request_of, stops_work, was_processed)

__all__: list[str] = []

# ---------------------------------------------------------------------------
# Witnesses: situations that must be reachable (sometimes)
# ---------------------------------------------------------------------------


def _sometimes(lenient_240: bool = False):
    def register(fn: Callable) -> Callable:
        doc = docstring(fn).strip().splitlines()[0]
        PROPERTIES.append(Property(fn.__name__, "sometimes", "reachable", doc, fn,
                                   applies=APPLIES.get(fn.__name__, always_applies), lenient_240=lenient_240))
        return fn

    return register


def _every(m) -> bool:
    return True


def _sent(step: Step, kind: str, pred=_every) -> bool:
    # (a module-level default: mypyc cannot compile a lambda as a default)
    return any(m[0] == kind and pred(m) for _, m in step.emitted)


@_sometimes()
def sometimes_success_response(pre: System, step: Step):
    """A prompt is answered with its messageId."""
    return _sent(step, "ok")


@_sometimes()
def sometimes_error_response(pre: System, step: Step):
    """A prompt is answered with an error before insertion."""
    return _sent(step, "err")


@_sometimes()
def sometimes_cancel_request_after_insertion(pre: System, step: Step):
    """$/cancel_request reaches the agent after the prompt was inserted and before it was answered."""
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel_req":
        r = request_of(pre, step.action[1], pre.up[step.action[1]][0][1])
        return r is not None and r.phase == "inserted"
    return False


@_sometimes()
def sometimes_cancel_request_after_answer(pre: System, step: Step):
    """$/cancel_request reaches the agent after the prompt was answered."""
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel_req":
        r = request_of(pre, step.action[1], pre.up[step.action[1]][0][1])
        return r is not None and bool(r.answers)
    return False


@_sometimes()
def sometimes_failure_before_response(pre: System, step: Step):
    """Work fails after insertion and before the prompt's response."""
    if stops_work(step):
        w = pre.agent.work
        return any(r.phase == "inserted" and not r.answers and r.mid in w.inputs for r in pre.agent.reqs)
    return False


@_sometimes()
def sometimes_prompt_answered(pre: System, step: Step):
    """A prompt gets a response, success or error."""
    return _sent(step, "ok") or _sent(step, "err")


@_sometimes()
def sometimes_identical_prompts_inserted(pre: System, step: Step):
    """Two prompts with identical content are inserted."""
    if step.action[0] != "AgentInsert":
        return False
    contents = [m.content for m in step.state.agent.conv if m.kind == "prompt"]
    return len(contents) != len(set(contents))


@_sometimes()
def sometimes_insert_after_restart(pre: System, step: Step):
    """A prompt is inserted after the agent restarted with a retained message."""
    return step.action[0] == "AgentInsert" and pre.used.restarts > 0 and bool(pre.agent.conv)


@_sometimes()
def sometimes_live_echo(pre: System, step: Step):
    """An inserted message is reported live."""
    return any(m[0] in ("user_message", "chunk") and not m[3] for _, m in step.emitted)


@_sometimes()
def sometimes_reserved_id_rejected(pre: System, step: Step):
    """A prompt with an ID reserved in advance is rejected."""
    return step.action[0] == "AgentRejectPrompt" and pre.agent.reqs[step.action[1]].mid != 0


@_sometimes()
def sometimes_echo_to_two_clients(pre: System, step: Step):
    """A live echo goes to two clients."""
    return len({c for c, m in step.emitted if m[0] in ("user_message", "chunk") and not m[3]}) > 1


@_sometimes()
def sometimes_failure_ends_work(pre: System, step: Step):
    """A failure stops foreground work."""
    return stops_work(step)


@_sometimes()
def sometimes_cancel_ends_work(pre: System, step: Step):
    """session/cancel ends foreground work."""
    if not idle_updates(step):
        return False
    w = pre.agent.work
    return w is not None and w.cancelling


@_sometimes()
def sometimes_abort_raises(pre: System, step: Step):
    """Aborting cancelled work raises an error."""
    return step.action[0] == "AgentFailWork" and step.action == ("AgentFailWork", "while-cancelling")


@_sometimes()
def sometimes_idle_ends_work_with_tools(pre: System, step: Step):
    """An idle ends work that made tool calls."""
    if not idle_updates(step):
        return False
    w = pre.agent.work
    return w is not None and bool(w.tools)


@_sometimes()
def sometimes_unfinished_tool_at_failure(pre: System, step: Step):
    """A failure stops work while a tool call is unfinished."""
    return stops_work(step) and any(st not in ("completed", "failed") for _, st in pre.agent.work.tools)


@_sometimes()
def sometimes_error_idle(pre: System, step: Step):
    """An idle carries stopReason error."""
    return any(m[2] == "error" for m in idle_updates(step))


@_sometimes()
def sometimes_error_idle_without_details(pre: System, step: Step):
    """An error idle carries no error object (the agent has no details)."""
    return any(m[2] == "error" and not m[3] for m in idle_updates(step))


@_sometimes()
def sometimes_repeated_idle(pre: System, step: Step):
    """An idle is reported again while the session is already idle (a resume snapshot)."""
    return bool(idle_updates(step)) and pre.agent.fg == IDLE and pre.agent.stop != ""


@_sometimes()
def sometimes_work_ends(pre: System, step: Step):
    """Foreground work ends and is reported idle."""
    return bool(idle_updates(step)) and pre.agent.work is not None


@_sometimes()
def sometimes_echo_before_response(pre: System, step: Step):
    """A client receives the echo of its own prompt before the response."""
    return delivers(step, "user_message", "chunk", "ok") and _own_echo_state(step.state, optimistic=False, status="sent")


@_sometimes()
def sometimes_echo_after_response(pre: System, step: Step):
    """A client receives the response to its prompt before the echo."""
    return delivers(step, "user_message", "chunk", "ok") and _own_echo_state(step.state, optimistic=True, status="acknowledged")


def _own_echo_state(s: System, optimistic: bool, status: str) -> bool:
    for c, cl in enumerate(s.clients):
        for sub in cl.subs:
            if sub.status != status:
                continue
            r = request_of(s, c, sub.rid)
            if r is None or not r.ever_inserted:
                continue
            for key, _, opt in cl.view:
                if key == r.mid and opt == optimistic:
                    return True
    return False


@_sometimes()
def sometimes_identical_prompts_two_clients(pre: System, step: Step):
    """Two clients have each associated an identical prompt with its own message."""
    if not delivers(step, "user_message", "chunk", "ok"):
        return False
    seen = {}
    for c, cl in enumerate(step.state.clients):
        for sub in cl.subs:
            if sub.mid:
                seen.setdefault(sub.content, set()).add(c)
    return any(len(v) > 1 for v in seen.values())


@_sometimes()
def sometimes_chunked_replay_over_held_copy(pre: System, step: Step):
    """Replay by chunks reaches a client that already holds the message."""
    if step.action[0] == "AgentResume" and step.action[2] == "chunks":
        held = {k for k, _, _ in pre.clients[step.action[1]].view if k > 0}
        return any(m.retained and m.mid in held for m in pre.agent.conv)
    return False


@_sometimes()
def sometimes_replay(pre: System, step: Step):
    """A retained message is replayed."""
    return any(m[0] in ("user_message", "chunk") and m[3] for _, m in step.emitted)


@_sometimes()
def sometimes_chunked_replay(pre: System, step: Step):
    """A retained message is replayed by chunks."""
    return any(m[0] == "chunk" and m[3] for _, m in step.emitted)


@_sometimes()
def sometimes_command_replayed(pre: System, step: Step):
    """A retained command is replayed."""
    replays = [m for _, m in echoes(step) if m[3]]
    if not replays:
        return False
    cmds = {m.mid for m in pre.agent.conv if m.kind == "command"}
    return any(m[1] in cmds for m in replays)


@_sometimes()
def sometimes_resume_without_replay(pre: System, step: Step):
    """A client resumes without replayFrom."""
    return step.action[0] == "AgentResume" and step.action[2] == "none"


@_sometimes()
def sometimes_response_lost(pre: System, step: Step):
    """A client loses the response to a prompt the agent inserted."""
    if step.action[0] not in ("ConnectionLost", "AgentRestart", "AgentInsert"):
        return False  # a response is lost with the connection, or a request inserted after its loss
    for c, cl in enumerate(step.state.clients):
        for sub in cl.subs:
            if sub.status == "unknown":
                for r in step.state.agent.reqs:
                    if r.cid == c and r.rid == sub.rid and r.ever_inserted:
                        return True
    return False


@_sometimes()
def sometimes_retry(pre: System, step: Step):
    """A client retries a submission whose response was lost."""
    return step.action[0] == "ClientRetryPrompt"


@_sometimes()
def sometimes_stale_idle(pre: System, step: Step):
    """An idle reaches a client whose prompt no ended work has processed yet."""
    if not delivers(step, "state"):
        return False
    for c, (before, after) in enumerate(zip(pre.clients, step.state.clients)):
        got_idle = any(cc == c and m[0] == "state" and m[1] == IDLE for cc, m in step.emitted)
        if step.action[:2] == ("ClientReceive", c) and pre.down[c][0][:2] == ("state", IDLE):
            got_idle = True
        if got_idle and after.connected:
            for sub in after.subs:
                if sub.status in ("sent", "acknowledged") and not was_processed(step.state, c, sub.rid):
                    return True
    return False


@_sometimes()
def sometimes_cancel_reaches_running_work(pre: System, step: Step):
    """session/cancel reaches the agent while work runs."""
    return step.action[0] == "AgentReceive" and step.action[2] == "cancel" and pre.agent.work is not None


@_sometimes()
def sometimes_client_resumed(pre: System, step: Step):
    """A client completes a resume."""
    return delivers(step, "resumed") and any(p.resuming and not q.resuming and q.connected for p, q in zip(pre.clients, step.state.clients))


@_sometimes()
def sometimes_prompt_work_ends(pre: System, step: Step):
    """Work that took a prompt's message ends normally."""
    idles = idle_updates(step)
    w = pre.agent.work if idles else None
    return w is not None and not w.cancelling and bool(w.inputs) and any(m[2] not in ("error", "cancelled") for m in idles)


@_sometimes()
def sometimes_failure_work_continues(pre: System, step: Step):
    """A failure is reported by a notice and the work (or the idle session) goes on."""
    return step.action[0] in ("AgentFailAndRetry", "AgentFailInBackground")


@_sometimes()
def sometimes_custom_stop_reason(pre: System, step: Step):
    """Work ends with a custom `_` stop reason."""
    return any(m[2].startswith("_") for m in idle_updates(step))


@_sometimes(lenient_240=True)
def sometimes_idle_without_stop_reason(pre: System, step: Step):
    """Work ends with an idle that carries no stop reason."""
    idles = idle_updates(step)
    return bool(idles) and pre.agent.work is not None and any(not m[2] for m in idles)


@_sometimes()
def sometimes_start_blocked(pre: System, step: Step):
    """Work starts blocked on a permission request (requires_action without running first)."""
    return (step.action[0] in ("AgentBeginWork", "AgentInitiateWork")
            and "blocked" in step.action and "unreported" not in step.action)


@_sometimes()
def sometimes_internal_cancellation(pre: System, step: Step):
    """The agent cancels a prompt not yet inserted on its own (-32800)."""
    return step.action[0] == "AgentRejectPrompt" and step.action[2] == "cancelled"


@_sometimes()
def sometimes_update_after_cancel(pre: System, step: Step):
    """Work a session/cancel reached still reports a tool call before its idle."""
    if step.action[0] != "AgentToolCall":
        return False
    w = pre.agent.work
    return w is not None and w.cancelling


@_sometimes()
def sometimes_queued_insert(pre: System, step: Step):
    """A prompt is inserted while work runs, and left for later work to process."""
    return step.action[0] == "AgentInsert" and "queued" in step.action


@_sometimes()
def sometimes_resume_while_connected(pre: System, step: Step):
    """A client resumes the session on the connection it still has."""
    return step.action[0] == "ClientResume" and pre.clients[step.action[1]].connected


@_sometimes()
def sometimes_replay_after_live(pre: System, step: Step):
    """A message is replayed, under its own ID, to a client that received it live."""
    for c, m in step.emitted:
        if m[0] in ("user_message", "chunk") and m[3] and has_received(pre.clients[c], m[1]):
            return True
    return False


@_sometimes()
def sometimes_tool_starts_running(pre: System, step: Step):
    """A tool call is first reported already in_progress."""
    return step.action[0] == "AgentToolCall" and step.action[2] == "start-running"


@_sometimes()
def sometimes_running_before_insertion(pre: System, step: Step):
    """Foreground work runs before the prompt it runs for is inserted (a foreground hook)."""
    return step.action[0] == "AgentBeginWork" and step.action[1] == "before-insertion"


@_sometimes()
def sometimes_permission_cancelled(pre: System, step: Step):
    """The agent cancels the permission request of cancelled work with $/cancel_request."""
    return _sent(step, "perm_cancel")


@_sometimes()
def sometimes_late_answer(pre: System, step: Step):
    """A permission answer reaches the agent after it stopped waiting for it."""
    if step.action[0] == "AgentReceive" and step.action[2] == "perm_ans":
        w = pre.agent.work
        return w is None or w.cancelling or w.perm != pre.up[step.action[1]][0][1]
    return False


@_sometimes()
def sometimes_permission_to_second_client(pre: System, step: Step):
    """A permission request goes to one of two attached clients, the other not the first."""
    return any(m[0] == "perm" and c > 0 for c, m in step.emitted)


@_sometimes()
def sometimes_two_commands(pre: System, step: Step):
    """Two locally handled commands are inserted in one run."""
    return step.action[0] == "AgentInsert" and sum(m.kind == "command" for m in step.state.agent.conv) >= 2


@_sometimes()
def sometimes_metadata_update(pre: System, step: Step):
    """A metadata-only user_message update follows a message's content."""
    return any(m[0] == "user_message" and m[2] is None for _, m in step.emitted)


@_sometimes()
def sometimes_cancel_finds_prompt_not_inserted(pre: System, step: Step):
    """A session/cancel reaches the agent while a prompt is not yet inserted."""
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel":
        return any(r.phase in ("received", "held", "reserved") for r in pre.agent.reqs)
    return False


@_sometimes()
def sometimes_acknowledged_live_only_not_replayed(pre: System, step: Step):
    """A replay leaves out an acknowledged live-only message."""
    if step.action[0] == "AgentResume" and step.action[2] != "none":
        acked = {r.mid for r in pre.agent.reqs if any(a[0] == "ok" for a in r.answers)}
        return any(not m.retained and m.mid in acked for m in pre.agent.conv)
    return False
