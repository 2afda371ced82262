"""Rules written once: judges of the messages a participant observed.

A *judge* is one rule about messages, defined over typed records (``PromptResult``,
``StateUpdate``) that say what a participant sent or received, with named fields. The
same definition judges:

* a model run: ``successors`` gives each judge the records of what the model agent received
  and sent in a step (``events_of_step``, ``observe``); what they find travels with the step
  (``Step.found``) to the property of the same id (``model/properties``, built from ``JUDGES``);
* a transcript: ``trace`` (``model/monitor.py``) gives each judge the record of every
  message of the log (``record_of_json``), as the wire rule of the same id
  (``model/wire_rules.py``, built from ``JUDGES``).

So a rule id has one level, one rule set, one list of clauses and one meaning, whichever
command reports it. The records are built from what is on the wire (or what the model
agent put on it), never from the model's own bookkeeping: a fault that writes the agent's
bookkeeping wrong does not write the verdict.

A judge reads one message at a time (``per="message"``), or keeps a state of its own over
what one connection carried (``per="connection"``: JSON-RPC ids are per connection), or one
session on one connection (``per="view"``), in the order the agent sent and received it: a
history variable, like TLA+'s, kept in the explored state (``System.seen``) and renamed with
it by the symmetry reduction. A judge of a whole session (``per="session"``) keeps its state per
connection too, but reads what every connection of the session carried: a ``session/cancel`` on
one connection ends the work every connection sees, a message inserted while a connection is in
the session is owed to it. No rule id is defined both here and elsewhere
(``tests/test_judges.py``).

>>> JUDGES["error_only_with_error_stop_reason"].judge(StateUpdate("idle", "end_turn", -32603))
"an idle with stopReason 'end_turn' carries an error object"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

from ..config import STOP_REASONS
from ..observed import (
    CancelRequest,
    Closed,
    PromptError,
    PromptResult,
    Request,
    ResumeRequest,
    ResumeResult,
    Response,
    SessionCancel,
    StateUpdate,
    ToolUpdate,
    UserChunk,
    UserMessage,
)
from ..records import compile_replace

__all__ = [
    "JUDGES",
    "STATEFUL",
    "CancelRequest",
    "Closed",
    "Judge",
    "PromptError",
    "PromptResult",
    "Request",
    "Response",
    "ResumeRequest",
    "ResumeResult",
    "SessionCancel",
    "StateUpdate",
    "ToolUpdate",
    "UserChunk",
    "UserMessage",
    "events_of_step",
    "judge",
    "record_of_json",
    "record_of_model",
    "observe",
    "observer",
]


# ---------------------------------------------------------------------------
# Judges


@dataclass(frozen=True, slots=True)
class Judge:
    """One rule about messages, with its single definition."""

    id: str
    #: MUST, MUST NOT, SHOULD or SHOULD NOT
    level: str
    #: "rfd" (the RFD, or JSON-RPC) or "2.4.0" (only the 2.4.0 text says it)
    since: str
    summary: str
    #: clause ids of ``model/clauses/``, the first one quoted in findings
    clauses: tuple[str, ...]
    #: the record type it reads
    reads: type
    #: record -> what is wrong ("" or None when nothing)
    judge: Callable[[tuple], str | None]
    #: the witnesses of the property built from it
    witnesses: tuple[str, ...] = ()
    #: "message" (reads one message), "connection" or "view" (keeps a state over what one
    #: connection, or one session on one connection, carried), or "session" (keeps a state per
    #: session on one connection, like "view", but reads what every connection of the session
    #: carried: ``step(state, record, mine)``, ``mine`` telling whether the record was carried on
    #: the state's own connection; it finds something wrong only in a record that is ``mine``)
    per: str = "message"
    #: the state at the start of a connection
    start: object = None
    #: ``(state, record) -> (state, what is wrong)``, for a judge with a state (``per="session"``:
    #: ``(state, record, mine)``)
    step: Callable | None = None
    #: ``(state, f) -> state`` with every message ID renamed by ``f`` (symmetry)
    rename: Callable | None = None
    #: for a rule about what must happen in the end: ``state -> [((asker, rid), what is owed), ...]``,
    #: the obligations still open (``check``: an ``eventually`` property; ``trace``: at the end of the log)
    owes: Callable | None = None
    #: for a judge of a whole session: ``state -> state``, the state of a connection that joins the
    #: session later, from the state of one already in it (the start when None)
    join: Callable | None = None

    @property
    def types(self) -> tuple:
        return self.reads if isinstance(self.reads, tuple) else (self.reads,)


def _success_carries_message_id(r: PromptResult) -> str:
    if r.problem:
        return r.problem
    if r.message_id is None or r.message_id == 0:
        return f"the session/prompt result for request {r.rid} carries no messageId"
    return ""


def _error_only_with_error_stop_reason(r: StateUpdate) -> str:
    if r.state == "idle" and r.error is not None and r.stop_reason != "error":
        return f"an idle with stopReason {r.stop_reason!r} carries an error object"
    return ""


_KNOWN = frozenset(STOP_REASONS)


def _custom_stop_reason_prefixed(r: StateUpdate) -> str:
    stop = r.stop_reason
    if r.state == "idle" and stop is not None and stop not in _KNOWN and not (isinstance(stop, str) and stop.startswith("_")):
        return f"stopReason {stop!r} is neither a defined value nor a custom value starting with _"
    return ""


# --- judges with a state ----------------------------------------------------------------


def _answered(rec):
    """The request a response record answers, as (asker, rid); None for a record that answers none."""
    t = type(rec)
    if t is PromptResult or t is PromptError or t is ResumeResult:
        return ("client", rec.rid)
    if t is Response:
        return (rec.asker, rec.rid)
    return None


def _one_response_per_request(state: tuple, rec):
    """state: the requests answered on the connection, (asker, rid) sorted."""
    t = type(rec)
    if t is Closed:
        return (), ""
    if t is Request:
        key = (rec.asker, rec.rid)
        # answered: its id may be used again
        return (tuple(k for k in state if k != key) if key in state else state), ""
    key = _answered(rec)
    if key is None:
        return state, ""
    if key in state:
        return state, f"a second response to the {key[0]}'s request {key[1]}"
    return _with(state, key), ""


def _with(state: tuple, item) -> tuple:
    """A sorted tuple with one more item (sorted tuples compare in one total order, unlike sets)."""
    if item in state:
        return state
    try:
        return tuple(sorted(state + (item,)))
    except TypeError:  # ids of different JSON types in one transcript
        return tuple(sorted(state + (item,), key=repr))


def _pending_requests(state: tuple, rec):
    """state: the requests of the connection not answered yet, ((asker, rid, method, cancelled), ...) sorted."""
    t = type(rec)
    if t is Closed:
        return (), ""
    if t is Request:
        return _with(tuple(p for p in state if p[:2] != (rec.asker, rec.rid)), (rec.asker, rec.rid, rec.method, False)), ""
    if t is CancelRequest:
        return tuple((a, r, m, True) if (a, r) == (rec.asker, rec.rid) else (a, r, m, c) for a, r, m, c in state), ""
    key = _answered(rec)
    if key is not None and state:
        return tuple(p for p in state if p[:2] != key), ""
    return state, ""


def _owes_prompts(state: tuple) -> list:
    return [((a, r), f"session/prompt {r} is never answered") for a, r, m, c in state
            if a == "client" and m == "session/prompt" and not c]


def _owes_cancelled(state: tuple) -> list:
    return [((a, r), f"the {a}'s {m} {r}, cancelled with $/cancel_request, is never answered") for a, r, m, c in state
            if c]


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


def _chunked_replay_resets_first(state, rec):
    """state: None outside a resume window, else (replay asked for, IDs cleared by content [])."""
    t = type(rec)
    if t is ResumeRequest:
        return (rec.replay, ()), ""
    if t is ResumeResult or t is Closed:
        return None, ""
    if state is None:
        return state, ""
    replay, cleared = state
    if t is UserMessage and rec.content == () and rec.message_id not in cleared:
        return (replay, _with(cleared, rec.message_id)), ""
    if t is UserChunk and replay and rec.message_id not in cleared:
        return ((replay, _with(cleared, rec.message_id)),
                f"a replayed user_message_chunk of {rec.message_id} without a user_message with content [] first")
    return state, ""


def _rename_cleared(state, f):
    return state if state is None else (state[0], tuple(sorted(f(m) for m in state[1])))


def _no_replay_without_replay_from(state, rec):
    """state: None outside a resume window, else whether the resume asked for replay."""
    t = type(rec)
    if t is ResumeRequest:
        return rec.replay, ""
    if t is ResumeResult or t is Closed:
        return None, ""
    if state is False and (t is UserMessage or t is UserChunk):
        what = "user_message" if t is UserMessage else "user_message_chunk"
        return state, f"a {what} for {rec.message_id} while resuming without replayFrom"
    return state, ""


# --- tool calls of foreground work (two judges read the same history) ---------------------

_WORKING = ("running", "requires_action")
_FINAL = ("completed", "failed", "cancelled")


class _Tools(NamedTuple):
    """What one view (a session on a connection) was told of tool calls and foreground work."""

    active: bool = False  # the state last reported is running or requires_action
    working: tuple = ()  # ((tool id, status), ...) of the work in progress, sorted
    ended: tuple = ()  # tool ids of work an idle has ended, sorted
    status: tuple = ()  # ((tool id, status), ...) every tool call the view was told of, sorted
    background: tuple = ()  # tool ids the last state update listed as background
    history: bool = False  # inside a resume with replay, before its snapshot: updates are history


compile_replace(_Tools)


def _put(pairs: tuple, key, value) -> tuple:
    return _sorted(tuple(p for p in pairs if p[0] != key) + ((key, value),))


def _sorted(items: tuple) -> tuple:
    try:
        return tuple(sorted(items))
    except TypeError:
        return tuple(sorted(items, key=repr))


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
    ended = _sorted(tuple(set(t.ended) | {tid for tid, _ in t.working if tid not in bg}))
    # a final status stays final: only the others can still matter (an update without a status)
    status = tuple(p for p in t.status if p[1] not in _FINAL)
    return t._replace(active=False, working=(), ended=ended, status=status), broke


def _tool_update(t: _Tools, rec: ToolUpdate):
    tid, status = rec.tool_id, rec.status
    known = dict(t.status)
    broke = None
    if not t.history:
        if tid in t.ended:
            broke = ("after-idle", tid)
            t = t._replace(ended=tuple(x for x in t.ended if x != tid))
        if t.active and tid not in t.background:
            t = t._replace(working=_put(t.working, tid, status or dict(t.working).get(tid) or known.get(tid) or "pending"))
    if status is not None or tid not in known:
        t = t._replace(status=_put(t.status, tid, status or known.get(tid) or "pending"))
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


def _resume_snapshot_before_response(state, rec):
    """state: None outside a resume window, else whether a state_update came since the request."""
    t = type(rec)
    if t is ResumeRequest:
        return False, ""
    if t is StateUpdate:
        return (True if state is False else state), ""
    if t is ResumeResult:
        why = "the session/resume response is not preceded by a state_update after the request" if (
            state is False and rec.ok) else ""
        return None, why
    if t is Closed:
        return None, ""
    return state, ""


# --- judges of a whole session (per="session") ---------------------------------------------


class _Ids(NamedTuple):
    """What one connection knows of a session's message IDs."""

    returned: tuple = ()  # every messageId a session/prompt success carried, on any connection
    replayed: tuple = ()  # IDs a resume replayed on this connection (messages inserted before it)
    here: tuple = ()  # ((request id, messageId), ...) of the successes on this connection
    pending: int = 0  # this connection's session/prompt requests not answered yet


def _distinct_message_ids(t: _Ids, rec, mine: bool):
    """A messageId names one message: no success carries one that another success carried, or
    one a replay on this connection showed while none of its prompts was pending (a replay
    shows messages inserted before it; the connection's later prompts are inserted after)."""
    k = type(rec)
    if k is PromptResult:
        mid, why = rec.message_id, ""
        if mine:
            t = t._replace(pending=max(t.pending - 1, 0))
        if mid is None or mid == 0:
            return t, ""
        if mine and (rec.rid, mid) in t.here:
            return t, ""  # the same answer again: one_response_per_request says so
        if mine:
            t = t._replace(here=_with(t.here, (rec.rid, mid)))
        if mine and mid in t.returned:
            why = f"messageId {mid} was already returned for another submission"
        elif mine and mid in t.replayed:
            why = f"messageId {mid} was already replayed on this connection for another message"
        return (t if mid in t.returned else t._replace(returned=_with(t.returned, mid))), why
    if not mine:
        return t, ""
    if k is Request:
        return (t._replace(pending=t.pending + 1) if rec.method == "session/prompt" else t), ""
    if k is PromptError:
        return t._replace(pending=max(t.pending - 1, 0)), ""
    if k is Closed:
        return t._replace(pending=0), ""
    if (k is UserMessage or k is UserChunk) and rec.replay and not t.pending:
        mid = rec.message_id
        if mid not in t.replayed and mid not in t.returned:
            return t._replace(replayed=_with(t.replayed, mid)), ""
    return t, ""


def _rename_ids(t: _Ids, f) -> _Ids:
    return t._replace(returned=tuple(sorted(f(m) for m in t.returned)), replayed=tuple(sorted(f(m) for m in t.replayed)),
                      here=tuple(sorted((r, f(m)) for r, m in t.here)))


class _Echo(NamedTuple):
    """What one connection is owed of a session's user messages."""

    attached: bool = True  # the connection is in the session (a new session's clients are)
    owed: tuple = ()  # IDs of messages inserted while attached and not reported here yet
    known: tuple = ()  # IDs reported here or owed here already
    pending: int = 0  # prompts of the other connections not answered yet
    #: at most this many of them were sent before this connection attached (-1: unknown, for a
    #: connection that joined the session later and did not see what the others sent before)
    before: int = 0


def _every_inserted_message_echoed(t: _Echo, rec, mine: bool):
    """A message inserted while the connection is in the session is reported on it by
    user_message(_chunk), unless the connection goes. Insertion shows as the success that
    carries its ID: on this connection, or on another for a prompt that reached the agent
    while this connection was in the session (insertion follows receipt). A prompt sent
    before this connection attached may have been inserted before it too: its message is
    not owed here, and nor is one whose live report merely arrives later."""
    k = type(rec)
    if k is UserMessage or k is UserChunk:
        mid = rec.message_id
        if mine and not (mid in t.known and mid not in t.owed):
            return t._replace(owed=tuple(m for m in t.owed if m != mid), known=_with(t.known, mid)), ""
        return t, ""
    if not mine and k is Request:
        if rec.asker == "client" and rec.method == "session/prompt":
            return t._replace(pending=t.pending + 1), ""
        return t, ""
    if not mine and (k is PromptResult or k is PromptError):
        pending = max(0, t.pending - 1)
        # the answered prompt may be one sent before this connection attached, unless none was
        sure = t.before == 0
        t = t._replace(pending=pending, before=min(t.before, pending))
        if k is PromptError or not sure:
            return t, ""
    if k is PromptResult:
        mid = rec.message_id
        if mid is None or mid == 0 or not t.attached or mid in t.known:
            return t, ""
        return t._replace(owed=_with(t.owed, mid), known=_with(t.known, mid)), ""
    if mine and (k is Closed or k is ResumeRequest):  # in the session again only once a resume succeeds
        return t._replace(attached=False, owed=()), ""
    if mine and k is ResumeResult and rec.ok:
        return t._replace(attached=True, before=t.pending if t.before >= 0 else -1), ""
    return t, ""


def _owes_echoes(t: _Echo) -> list:
    return [(mid, f"message {mid} was inserted and never reported by user_message(_chunk)") for mid in t.owed]


def _rename_echo(t: _Echo, f) -> _Echo:
    return t._replace(owed=tuple(sorted(f(m) for m in t.owed)), known=tuple(sorted(f(m) for m in t.known)))


def _cancelled_work_ends_cancelled(state: tuple, rec, mine: bool):
    """state: (the connection was last told of work in progress, a session/cancel came since)."""
    k = type(rec)
    working, cancelled = state
    if k is SessionCancel:
        return ((working, True) if working and not cancelled else state), ""
    if not mine:
        return state, ""
    if k is Closed:
        return (False, False), ""
    if k is not StateUpdate:
        return state, ""
    if rec.state in _WORKING:
        return (True, cancelled), ""
    if rec.state != "idle":
        return state, ""
    why = ""
    if working and cancelled and rec.stop_reason not in (None, "cancelled"):
        why = f"work cancelled by session/cancel ended with stopReason {rec.stop_reason!r}"
    return (False, False), why


_RESUME = (ResumeRequest, ResumeResult, Closed)
_REQUESTS = (Request, CancelRequest, PromptResult, PromptError, ResumeResult, Response, Closed)

JUDGES: dict[str, Judge] = {
    j.id: j
    for j in (
        Judge("success_carries_message_id", "MUST", "rfd",
              "a session/prompt success carries the inserted message's messageId as a string",
              ("RFD-INSERT-RESPONSE-ID", "S240-PROMPT-RETURN-ID", "RFD-INSERT-LOCAL-COMMAND"),
              PromptResult, _success_carries_message_id, ("sometimes_success_response",)),
        Judge("error_only_with_error_stop_reason", "MUST", "rfd", "an error object only beside stopReason error",
              ("RFD-ERROR-FIELD-ONLY",), StateUpdate, _error_only_with_error_stop_reason,
              ("sometimes_error_idle",)),
        Judge("custom_stop_reason_prefixed", "MUST NOT", "2.4.0",
              "a stop reason the schema does not list starts with _",
              ("S240-STOP-UNKNOWN-RESERVED", "S240-STOP-CUSTOM-UNDERSCORE"), StateUpdate,
              _custom_stop_reason_prefixed, ("sometimes_work_ends",)),
        Judge("one_response_per_request", "MUST NOT", "rfd", "a request gets one response, never a second",
              ("S240-CANCELREQ-NO-SECOND-RESPONSE",),
              (PromptResult, PromptError, ResumeResult, Response, Request, Closed), None,
              ("sometimes_cancel_request_after_answer",),
              per="connection", start=(), step=_one_response_per_request),
        Judge("every_prompt_answered", "MUST", "rfd", "every session/prompt is answered by the end of the log",
              ("RFD-INSERT-RESPOND", "S240-PROMPT-RETURN-ID"), _REQUESTS, None,
              ("sometimes_prompt_answered",), per="connection", start=(), step=_pending_requests,
              owes=_owes_prompts),
        Judge("cancelled_request_still_answered", "MUST", "2.4.0",
              "a request cancelled with $/cancel_request is still answered", ("S240-CANCELREQ-STILL-RESPOND",),
              _REQUESTS, None, ("sometimes_cancel_request_after_insertion", "sometimes_permission_cancelled"),
              per="connection", start=(),
              step=_pending_requests, owes=_owes_cancelled),
        Judge("no_second_stop_reason", "MUST NOT", "rfd",
              "work already reported idle is never reported idle again with another stop reason",
              ("S240-STOP-REPEATED-NOT-COUNTED", "RFD-ERROR-ONLY-ENDING-FAILURES", "RFD-BACKGROUND-FAILURE-NO-STOP"),
              (StateUpdate, Closed), None,
              ("sometimes_repeated_idle",), per="view", step=_no_second_stop_reason),
        Judge("chunked_replay_resets_first", "MUST", "rfd",
              "a replayed user_message_chunk comes after user_message content [] for its messageId",
              ("RFD-REPLAY-CHUNK-RESET", "RFD-METADATA-NOT-RESET"), (UserMessage, UserChunk) + _RESUME, None,
              ("sometimes_chunked_replay",), per="view", step=_chunked_replay_resets_first,
              rename=_rename_cleared),
        Judge("no_update_after_idle_of_its_work", "MUST", "rfd",
              "no tool call update of ended foreground work after its idle (background work and a resume's replay excepted)",
              ("RFD-IDLE-AFTER-ALL-UPDATES", "S240-CANCEL-UPDATES-BEFORE-IDLE"), (StateUpdate, ToolUpdate) + _RESUME, None,
              ("sometimes_idle_ends_work_with_tools",), per="view", start=_Tools(),
              step=_no_update_after_idle_of_its_work),
        Judge("tools_terminal_before_error_idle", "SHOULD", "rfd",
              "before an error idle every tool call of the work has a terminal status", ("RFD-FAIL-TOOLS-TERMINAL",), (StateUpdate, ToolUpdate) + _RESUME, None,
              ("sometimes_unfinished_tool_at_failure",), per="view", start=_Tools(),
              step=_tools_terminal_before_error_idle),
        Judge("resume_snapshot_before_response", "MUST", "2.4.0",
              "a state_update comes after the resume request (and any replay) and before its response",
              ("S240-RESUME-STATE-BEFORE-RESPONSE", "S240-STATE-RESUME-SNAPSHOT", "RFD-OPEN-RESUME-STATE"),
              (StateUpdate,) + _RESUME, None, ("sometimes_client_resumed",), per="view",
              step=_resume_snapshot_before_response),
        Judge("distinct_message_ids", "MUST", "rfd",
              "each accepted submission gets a messageId unique in its session, never reused (also across restart)",
              ("RFD-ID-DISTINCT", "RFD-ID-NO-REUSE"),
              (PromptResult, PromptError, Request, UserMessage, UserChunk, Closed), None,
              ("sometimes_identical_prompts_inserted", "sometimes_insert_after_restart"), per="session",
              start=_Ids(), step=_distinct_message_ids, rename=_rename_ids, join=lambda t: _Ids(t.returned)),
        Judge("every_inserted_message_echoed", "MUST", "rfd",
              "every inserted message is reported by user_message(_chunk) to every connection in the session "
              "when it was inserted, unless that connection goes",
              ("RFD-ECHO-EVERY", "RFD-ID-ECHO-SAME", "RFD-ID-SAME-EVERYWHERE", "S240-RESPONSE-ECHO-LIVE",
               "RFD-INSERT-LOCAL-COMMAND", "RFD-FAIL-NO-UNDO"),
              (PromptResult, PromptError, Request, UserMessage, UserChunk, ResumeRequest, ResumeResult, Closed),
              None, ("sometimes_echo_to_two_clients",), per="session", start=_Echo(),
              step=_every_inserted_message_echoed, rename=_rename_echo, owes=_owes_echoes,
              join=lambda t: _Echo(before=-1)),
        Judge("cancelled_work_ends_cancelled", "MUST", "rfd",
              "work in progress when session/cancel arrives (on any connection) ends idle with stopReason cancelled, "
              "even when aborting raises",
              ("RFD-CANCEL-EVEN-IF-ABORT-FAILS", "RFD-ERROR-MEANING", "S240-CANCEL-IDLE-CANCELLED",
               "S240-STOP-CANCELLED-CATCH", "S240-STOP-CANCELLED-REPORT", "S240-CANCEL-ABORT-ERRORS",
               "S240-CANCEL-SCOPE"),
              (StateUpdate, SessionCancel, Closed), None,
              ("sometimes_cancel_ends_work", "sometimes_abort_raises"), per="session", start=(False, False),
              step=_cancelled_work_ends_cancelled),
        Judge("no_replay_without_replay_from", "MUST NOT", "rfd", "a resume without replayFrom replays no user message",
              ("RFD-REPLAY-ONLY-WITH-REPLAY-FROM",), (UserMessage, UserChunk) + _RESUME, None,
              ("sometimes_resume_without_replay",), per="view", step=_no_replay_without_replay_from),
    )
}

#: the judges with a state, in the order of ``System.seen``
STATEFUL: tuple[Judge, ...] = tuple(j for j in JUDGES.values() if j.step is not None)

_BY_STATEFUL_TYPE: dict[type, list] = {}
for _k, _sj in enumerate(STATEFUL):
    for _t in _sj.types:
        _BY_STATEFUL_TYPE.setdefault(_t, []).append((_k, _sj))


# ---------------------------------------------------------------------------
# Records from a model step and from a transcript line


def record_of_model(msg: tuple):
    """The record of a message the model agent sends (None for a kind no judge reads)."""
    k = msg[0]
    if k == "state":
        return StateUpdate(msg[1], msg[2] or None, msg[3] or None)
    if k == "ok":
        return PromptResult(msg[1], msg[2])
    if k == "err":
        return PromptError(msg[1], msg[2])
    if k == "user_message":
        return UserMessage(msg[1], msg[2], msg[3])
    if k == "chunk":
        return UserChunk(msg[1], msg[3])
    if k == "resumed":
        return ResumeResult(msg[1])
    if k == "tool":
        return ToolUpdate(msg[1], msg[2])
    if k == "v1_prompt_result":
        return Response("client", msg[1])
    if k == "perm":
        return Request("agent", msg[1], "session/request_permission")
    if k == "perm_cancel":
        return CancelRequest("agent", msg[1])
    return None


def _record_of_client(msg: tuple):
    """The record of a message a model client sends, as the agent receives it."""
    k = msg[0]
    if k == "prompt":
        return Request("client", msg[1], "session/prompt")
    if k == "cancel_req":
        return CancelRequest("client", msg[1])
    if k == "resume":
        return ResumeRequest(msg[1], bool(msg[2]))
    if k == "perm_ans":
        return Response("agent", msg[1])
    if k == "cancel":
        return _CANCEL
    return None


_CLOSED = Closed()
_CANCEL = SessionCancel()


def events_of_step(pre, step) -> list:
    """``(connection, record)`` for what the agent received and sent in a model step, in the
    order it did: the client message it took, then what it sent; a lost connection (or every
    connection, at a restart) is ``Closed``."""
    name = step.action[0]
    out = []
    if name == "AgentReceive" or name == "AgentResume":
        c = step.action[1]
        rec = _record_of_client(pre.up[c][0])
        if rec is not None:
            out.append((c, rec))
    elif name == "ConnectionLost":
        out.append((step.action[1], _CLOSED))
    elif name == "AgentRestart":
        out.extend((c, _CLOSED) for c, cl in enumerate(pre.clients) if cl.connected)
    for c, msg in step.emitted:
        rec = record_of_model(msg)
        if rec is not None:
            out.append((c, rec))
    return out


def observe(seen: tuple, events: list) -> tuple[tuple, tuple]:
    """``System.seen`` after ``events``, each stateful judge's state per connection, and what the
    judges found wrong: ((judge id, message), ...).

    Pure in what the judges remember and read; a search meets the same pair again and again
    (wide-failures: 79,091 calls, 1,121 distinct pairs), so the answers are remembered."""
    return observer(seen)(events)


def observer(seen: tuple):
    """``observe`` for the memory ``seen``, which the steps of one state share: hashed once for
    them all (answers remembered per memory, up to ``_MEMO_SIZE`` memories, then all forgotten)."""
    answers = _MEMO.get(seen)
    if answers is None:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        answers = _MEMO[seen] = {}

    def judged(events: list) -> tuple[tuple, tuple]:
        if not events:
            return seen, ()
        # NamedTuple records are equal across types (``Closed() == SessionCancel()``): the key names each type
        key = tuple([(c, type(r), r) for c, r in events])
        got = answers.get(key)
        if got is None:
            got = answers[key] = _observe(seen, events)
        return got

    return judged


_MEMO: dict = {}
_MEMO_SIZE = 50_000


def _observe(seen: tuple, events: list) -> tuple[tuple, tuple]:
    out = list(seen)
    found = []
    for c, rec in events:
        for j in _BY_TYPE.get(type(rec), ()):
            why = j.judge(rec)
            if why:
                found.append((j.id, why))
        for k, j in _BY_STATEFUL_TYPE.get(type(rec), ()):
            per = out[k]
            if j.per == "session":  # every connection's state reads the record; its own says what is wrong
                states = []
                for d, old in enumerate(per):
                    state, why = j.step(old, rec, d == c)
                    states.append(state)
                    if why:
                        found.append((j.id, f"on client {c}'s connection: {why}"))
                out[k] = tuple(states)
                continue
            state, why = j.step(per[c], rec)
            if state != per[c]:
                out[k] = per[:c] + (state,) + per[c + 1 :]
            if why:
                found.append((j.id, f"on client {c}'s connection: {why}"))
    return tuple(out), tuple(found)


def start(clients: int) -> tuple:
    """``System.seen`` of a new session: each stateful judge's start, per connection."""
    return tuple((j.start,) * clients for j in STATEFUL)




def record_of_json(kind: str, body, rid=None):
    """The record of a transcript message: ``kind`` "state_update" with the update object,
    or "prompt_result" with the ``session/prompt`` result."""
    if kind == "state_update":
        error = body.get("error", _ABSENT)
        code = None if error is _ABSENT else (error.get("code", True) if isinstance(error, dict) else True)
        listed = body.get("background")
        tools = tuple(sorted({i["toolCallId"] for i in listed if isinstance(i, dict) and i.get("type") == "tool_call"
                              and isinstance(i.get("toolCallId"), str)})) if isinstance(listed, list) else ()
        return StateUpdate(body.get("state"), body.get("stopReason"), code, tools)
    if kind == "prompt_result":
        if not isinstance(body, dict):
            return PromptResult(rid, None, "the session/prompt result is not an object")
        if "stopReason" in body:
            return PromptResult(rid, None,
                                f"a v1 session/prompt result (stopReason {body['stopReason']!r}) on a v2 connection")
        mid = body.get("messageId")
        if not isinstance(mid, str):
            return PromptResult(rid, None, f"the session/prompt result has messageId {mid!r}, not a string")
        return PromptResult(rid, mid)
    raise ValueError(f"no record for {kind!r}")


_ABSENT = object()


def judge(record) -> list[tuple[str, str]]:
    """(judge id, what is wrong) for every judge without a state that reads ``record`` and finds it wrong."""
    out = []
    for j in _BY_TYPE.get(type(record), ()):
        why = j.judge(record)
        if why:
            out.append((j.id, why))
    return out


_BY_TYPE: dict[type, list[Judge]] = {}
for _j in JUDGES.values():
    if _j.step is None:
        for _t in _j.types:
            _BY_TYPE.setdefault(_t, []).append(_j)
