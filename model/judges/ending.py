"""Judges of how foreground work ends: one stop reason per ending, the tool calls of ended work, work a
session/cancel reached."""

from __future__ import annotations

from typing import NamedTuple

from ..observed import CancelRequest, Closed, ResumeRequest, ResumeResult, SessionCancel, StateUpdate, ToolUpdate
from ..records import compile_replace
from ._judge import Memory, Judge, pair_value, put_pair, union_items, with_item, without_item, without_pair

__all__ = ['JUDGES']

def _no_second_stop_reason(state, rec):
    """state: the stop reason of the idle last reported on the view while it is still the last
    state reported (None: the last state is not an idle with a stop reason)."""
    t = type(rec)
    if t is Closed:
        return None, ""
    if t is not StateUpdate:
        return state, ""
    if rec.state != "idle":
        return None, ""
    new = rec.stop_reason
    if new is None:
        return state, ""
    if state is not None and new != state:
        return new, f"work already reported idle with {state!r} is reported idle again with {new!r}"
    return new, ""


# --- tool calls of foreground work (two judges read the same history) ---------------------

_WORKING = ("running", "requires_action")
_FINAL = ("completed", "failed", "cancelled")


class _Tools(NamedTuple):
    """What one view (a session on a connection) was told of tool calls and foreground work."""

    active: bool = False  # the state last reported is running or requires_action
    working: Memory = ()  # ((tool id, status), ...) of the work in progress (``put_pair``)
    ended: Memory = ()  # tool ids of work an idle has ended (``with_item``: grows with the view)
    status: Memory = ()  # ((tool id, status), ...) every tool call the view was told of (``put_pair``)
    background: Memory = ()  # tool ids the last state update listed as background
    history: bool = False  # inside a resume with replay, before its snapshot: updates are history
    #: the tool ids whose status in ``status`` is final (read off ``status``: it adds nothing to the state), the
    #: ones the next idle of foreground work forgets without walking every tool call the view was told of
    finals: Memory = ()


compile_replace(_Tools)






#: ``_tools``'s last question and answer, one tuple replaced whole (so safe across threads): its
#: two judges read the same history of the same record, so the second asks what the first just did
_tools_last: tuple = (None, None, None)


def _tools(t: _Tools, rec):
    """The history after ``rec``, and what ``rec`` broke: ("after-idle", tool id) for an update of a
    tool call whose work an idle ended, ("unfinished", ids) for an error idle that leaves tool calls
    of the work unfinished, or None."""
    global _tools_last
    last = _tools_last
    if last[1] is rec and (last[0] is t or last[0] == t):
        return last[2]
    out = _tools_after(t, rec)
    _tools_last = (t, rec, out)
    return out


def _tools_after(t: _Tools, rec):
    """``_tools``, computed."""
    k = type(rec)
    if k is Closed:
        return _Tools(), None
    if k is ResumeRequest:
        return t._replace(history=rec.replay), None
    if k is ResumeResult:
        return t._replace(history=False), None
    if k is ToolUpdate:
        return _tool_update(t, rec)
    if k is not StateUpdate:
        return t, None
    t = t._replace(history=False, background=rec.background)
    if rec.state in _WORKING:
        return t._replace(active=True, working=t.working if t.active else ()), None
    if rec.state != "idle" or not t.active:
        return t._replace(active=False), None
    bg = rec.background
    broke = None
    if rec.stop_reason == "error":
        open_ = tuple(tid for tid, st in t.working if st not in _FINAL and tid not in bg)
        broke = ("unfinished", open_) if open_ else None
    ended = union_items(t.ended, [tid for tid, _ in t.working if tid not in bg])
    # a final status stays final: only the others can still matter (an update without a status)
    status = t.status
    for tid in t.finals:
        status = without_pair(status, tid)
    return t._replace(active=False, working=(), ended=ended, status=status, finals=()), broke


def _tool_update(t: _Tools, rec: ToolUpdate):
    tid, status = rec.tool_id, rec.status
    known = pair_value(t.status, tid)  # a status put is never None
    broke = None
    if not t.history:
        if tid in t.ended:
            broke = ("after-idle", tid)
            t = t._replace(ended=without_item(t.ended, tid))
        if t.active and tid not in t.background:
            t = t._replace(working=put_pair(t.working, tid, status or pair_value(t.working, tid) or known or "pending"))
    if status is not None or known is None:
        new = status or known or "pending"
        t = t._replace(status=put_pair(t.status, tid, new),
                       finals=with_item(t.finals, tid) if new in _FINAL else without_item(t.finals, tid))
    return t, broke


def _no_update_after_idle_of_its_work(t: _Tools, rec):
    t, broke = _tools(t, rec)
    if broke and broke[0] == "after-idle":
        return t, f"an update of tool call {broke[1]} after the idle that ended its work"
    return t, ""


def _tools_terminal_before_error_idle(t: _Tools, rec):
    t, broke = _tools(t, rec)
    if broke and broke[0] == "unfinished":
        return t, f"the error idle leaves tool call(s) {list(broke[1])} unfinished"
    return t, ""


def _work_and_cancel(state: Memory, rec, mine: bool, requests: bool, anytime: bool):
    """What the two cancellation judges remember: state (the connection was last told of work in progress,
    a cancellation came since), and whether ``rec`` is an idle on this connection that ends work it was
    told of. A cancellation is a ``session/cancel`` on any connection (a proposal's message that cancels,
    such as a close, is read as one too), with ``requests`` also a client's ``$/cancel_request`` of its prompt
    (the only client request a session's judges are told of being cancelled); it counts while work is in
    progress, or with ``anytime`` since the last idle."""
    k = type(rec)
    working, cancelled = state
    if k is SessionCancel or (requests and k is CancelRequest and rec.asker == "client"):
        return ((working, True) if (anytime or working) and not cancelled else state), False
    if not mine or (k is not StateUpdate and k is not Closed):
        return state, False
    if k is Closed:
        return (False, False), False
    if rec.state in _WORKING:
        return ((True, cancelled) if not working else state), False
    if rec.state != "idle":
        return state, False
    return (False, False), working


def _cancelled_work_ends_cancelled(state: Memory, rec, mine: bool):
    """state: (the connection was last told of work in progress, a session/cancel came while it was)."""
    new, ends = _work_and_cancel(state, rec, mine, requests=False, anytime=False)
    why = ""
    if ends and state[1] and rec.stop_reason != "cancelled":  # the value its clauses name, not an omitted one
        why = (f"work cancelled by session/cancel ended with stopReason {rec.stop_reason!r}" if rec.stop_reason
               else "work cancelled by session/cancel ended with no stopReason")
    return new, why


def _cancelled_only_when_cancelled(state: Memory, rec, mine: bool):
    """state: (the connection was last told of work in progress, a cancellation reached the agent since the
    last idle the connection was told of)."""
    new, ends = _work_and_cancel(state, rec, mine, requests=True, anytime=True)
    why = ""
    if ends and not state[1] and rec.stop_reason == "cancelled":  # an idle repeated or at resume ends no work
        why = ("work ends with stopReason cancelled, but no session/cancel, $/cancel_request of a prompt or other "
               "cancellation came since the last idle")
    return new, why


def _join_cancelled(state: Memory) -> Memory:
    """A connection joining the session: told of no work yet, but a cancellation already received counts."""
    return (False, state[1])


_RESUME = (ResumeRequest, ResumeResult, Closed)


JUDGES = (
    Judge("no_second_stop_reason", "MUST NOT", "rfd",
          "work already reported idle is never reported idle again with another stop reason",
          ("S240-STOP-REPEATED-NOT-COUNTED", "RFD-ERROR-ONLY-ENDING-FAILURES", "RFD-BACKGROUND-FAILURE-NO-STOP"),
          (StateUpdate, Closed), None,
          ("sometimes_repeated_idle",), per="view", step=_no_second_stop_reason),
    Judge("no_update_after_idle_of_its_work", "MUST", "rfd",
          "no tool call update of ended foreground work after its idle (background work and a resume's replay excepted)",
          ("RFD-IDLE-AFTER-ALL-UPDATES", "S240-CANCEL-UPDATES-BEFORE-IDLE"), (StateUpdate, ToolUpdate) + _RESUME, None,
          ("sometimes_idle_ends_work_with_tools",), per="view", start=_Tools(),
          step=_no_update_after_idle_of_its_work),
    Judge("tools_terminal_before_error_idle", "SHOULD", "rfd",
          "before an error idle every tool call of the work has a terminal status", ("RFD-FAIL-TOOLS-TERMINAL",), (StateUpdate, ToolUpdate) + _RESUME, None,
          ("sometimes_unfinished_tool_at_failure",), per="view", start=_Tools(),
          step=_tools_terminal_before_error_idle),
    Judge("cancelled_work_ends_cancelled", "MUST", "rfd",
          "work in progress when session/cancel arrives (on any connection) ends idle with stopReason cancelled, "
          "even when aborting raises",
          ("RFD-CANCEL-EVEN-IF-ABORT-FAILS", "RFD-ERROR-MEANING", "S240-CANCEL-IDLE-CANCELLED",
           "S240-STOP-CANCELLED-CATCH", "S240-STOP-CANCELLED-REPORT", "S240-CANCEL-ABORT-ERRORS",
           "S240-CANCEL-SCOPE"),
          (StateUpdate, SessionCancel, Closed), None,
          ("sometimes_cancel_ends_work", "sometimes_abort_raises"), per="session", start=(False, False),
          step=_cancelled_work_ends_cancelled),
    Judge("cancelled_only_when_cancelled", "MUST", "2.4.0",
          "stopReason cancelled ends only work that a session/cancel, a $/cancel_request of a prompt or another "
          "cancellation could have ended",
          ("S240-STOP-CANCELLED-ONLY-WHEN-CANCELLED",), (StateUpdate, SessionCancel, CancelRequest, Closed), None,
          ("sometimes_cancel_ends_work", "sometimes_work_ends"), per="session", start=(False, False),
          step=_cancelled_only_when_cancelled, join=_join_cancelled, from_creation=True),
)
