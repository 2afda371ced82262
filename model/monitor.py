"""A runtime monitor of the v2 prompt lifecycle over JSON-RPC messages.

Pure and deterministic: no I/O. It reads a sequence of transcript entries
(``{"conn", "from", "msg"}``, ``{"conn", "event": "closed"}`` or
``{"conn", "from", "raw"}`` for a wire line that was not JSON) in the order
the agent read and wrote them, and reports each rule of the RFD and of the
2.4.0 schema text that the messages break. The same definitions judge a real
agent's transcript (``acp-lifecycle trace``) and the transcripts exported from
model runs (``sims.wire.transcript.export``).

What it tracks, and how (each choice is what the protocol says, not what is
convenient):

* **Connections** by their label. A connection whose ``initialize`` is in the
  log is *started*: its sessions are exactly those it created (the result of
  its ``session/new``, which may come after the first updates: "Updates may
  arrive before or after this response") or resumed (``session/resume``), until
  it closes them (``session/close``). A log may start anywhere; a connection
  whose start is not in it gets the benefit of the doubt.
* **Requests per direction.** Each side numbers its own requests: a client
  request 3 and an agent request 3 can both be pending. A response pairs with a
  pending request *of the other side* with the same id, compared exactly as
  sent: ``1``, ``1.0`` and ``"1"`` are three ids, and an integer beyond 2^53 is
  compared digit for digit.
* **Sessions per connection** (a *view*: what one connection was told about
  one session: its last state and stop reason, the tool calls of its current
  work, its background list, acknowledged and echoed messages) and **sessions
  per agent** (message IDs returned by prompt responses are unique per session
  and, as 2.4.0 says, per message type: only user messages have IDs the wire
  ties to submissions).
* **A resume's replay is history.** Between a ``session/resume`` with
  ``replayFrom`` and its state snapshot, the agent "should replay retained
  conversation history before responding": tool calls of work that ended long
  ago may come back. The replay rules judge those updates (IDs, chunk resets,
  the snapshot after them); the live-work rules (the idle follows all updates
  of its work, a tool that was not approved does not run) judge live updates.

Rules (``RULES``, in ``model/wire_rules.py``) name their clause ids (``model/clauses/``) and the rule set
that makes them binding: ``rfd`` (the RFD, or JSON-RPC itself) or ``2.4.0``
(the normative text of the 2.4.0 schema). Under ``--rules rfd`` a 2.4.0-only
rule is reported as a warning; under the default ``rfd+2.4.0`` it is a
violation. A SHOULD is always a warning.

>>> m = Monitor()
>>> for n, msg in enumerate([
...     {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}},
...     {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "m1"}},
... ], 1):
...     _ = m.feed(n, {"conn": "c", "from": "client" if n == 1 else "agent", "msg": msg})
>>> [f.property for f in m.finish()]
['prompt_not_empty', 'every_inserted_message_echoed']
"""

from __future__ import annotations

import json

from .judges import (
    STATEFUL,
    CancelRequest,
    PromptError,
    Request,
    Response,
    ResumeRequest,
    ResumeResult,
    SessionCancel,
    ToolUpdate,
    UserChunk,
    UserMessage,
    judge,
    record_of_json,
)
from .wire_rules import (
    DEFAULT_RULES,
    FINAL_TOOL,
    KNOWN_STOP_REASONS,
    REPLAYED,
    RULE_SETS,
    RULES,
    USER,
    V1_STOP_REASONS,
    WORKING,
    Finding,
    Rule,
)
# public in wire_state; the short local names stay until this module's rules are split out
from .wire_state import Connection as _Conn
from .wire_state import PendingRequest as _Request
from .wire_state import RawFloat, id_key, not_a_message
from .wire_state import ResumeWindow as _Resume
from .wire_state import SessionRecord as _Session
from .wire_state import SessionView as _View
from .wire_state import background_items as _items
from .wire_state import is_announced as _announced
from .wire_state import is_final as _final
from .wire_state import object_or_empty as _obj
from .wire_state import permission_tool_call as _permission_tool
from .wire_state import session_key as _sid
from .wire_state import shown_id as _show
from .wire_state import with_article as _a

#: The judges with a state by (``per``, record type), in the order of ``STATEFUL``: looked up once per record
_JUDGES_BY: dict[tuple[str, type], tuple] = {}
for _j in STATEFUL:
    for _t in _j.types:
        _JUDGES_BY[(_j.per, _t)] = _JUDGES_BY.get((_j.per, _t), ()) + (_j,)
_SESSION_JUDGES: dict[type, tuple] = {t: js for (per, t), js in _JUDGES_BY.items() if per == "session"}

__all__ = [
    "DEFAULT_RULES",
    "Finding",
    "KNOWN_STOP_REASONS",
    "Monitor",
    "RULES",
    "RULE_SETS",
    "Rule",
    "RawFloat",
    "V1_STOP_REASONS",
    "check",
    "id_key",
]


# ---------------------------------------------------------------------------
# The monitor


class Monitor:
    """Feed transcript entries in order; ``finish()`` at the end of the log.

    ``rules``: ``"rfd"`` or ``"rfd+2.4.0"``. ``partial``: the log is cut, so
    rules about what must happen by the end are not applied. ``validator``:
    anything with ``check(msg, sender, request_method) -> [problem, ...]``
    (``sims.wire.schema.Validator``), or None.
    """

    def __init__(self, rules: str = DEFAULT_RULES, partial: bool = False, validator=None):
        if rules not in RULE_SETS:
            raise ValueError(f"unknown rule set {rules!r}; one of {', '.join(RULE_SETS)}")
        self.rules = rules
        self.partial = partial
        self.validator = validator
        self.findings: list[Finding] = []
        self.conns: dict[str, _Conn] = {}
        self._by_session: dict = {}  # session key -> {connection label: connection} (``_view``)
        self.sessions: dict[object, _Session] = {}
        self.messages = 0
        self._done = False

    # -- reporting -------------------------------------------------------------

    def _add(self, line: int, rule_id: str, message: str, severity: str | None = None) -> None:
        rule = RULES[rule_id]
        if severity is None:
            if rule.level.startswith("SHOULD"):
                severity = "warning"
            elif rule.since == "2.4.0" and self.rules == "rfd":
                severity = "warning"
                message += " (a 2.4.0 rule; the RFD does not state it)"
            else:
                severity = "violation"
        self.findings.append(Finding(line, rule_id, severity, message))

    def _feed(self, line: int, states: dict, record, per: str = "view") -> None:
        """Apply the judges with a state (``model/judges.py``) to a record of one connection (``per``
        "connection", ``conn.judged``) or one session on it ("view", ``view.judged``); ``states`` holds
        what they remember there."""
        step = old = done = None
        for j in _JUDGES_BY.get((per, type(record)), ()):
            state = states.get(j.id, j.start)
            if j.step is not step or state is not old:
                step, old = j.step, state
                done = step(state, record)
            states[j.id], why = done  # two judges with one step hold one state: the second takes the first's answer
            if why:
                self._add(line, j.id, why)

    def _view(self, conn: _Conn, key, view: _View) -> _View:
        """Give ``conn`` a view of session ``key``, indexed so that a record of the session
        reaches the session's connections without a walk over every connection of the log."""
        conn.views[key] = view
        self._by_session.setdefault(key, {})[conn.label] = conn
        return view

    def _members(self, key):
        """The connections that have had a view of session ``key``, in the order they got it."""
        return list(self._by_session.get(key, {}).values())

    def _feed_session(self, line: int, conn: _Conn, sid, record) -> None:
        """Apply the judges of a whole session (``per="session"``) to a record ``conn`` carried for
        session ``sid``: every connection's view of the session reads it, and says what is wrong
        only on its own connection."""
        key = _sid(sid)
        if key not in conn.views:
            self._view(conn, key, _View())
        views = [(other is conn, view) for other in self._by_session[key].values()
                 if (view := other.views.get(key)) is not None and (other is conn or not view.closed_at)]
        for j in _SESSION_JUDGES.get(type(record), ()):
            jid, step = j.id, j.step
            for _, view in views:
                if jid not in view.judged:  # connections that join the session now start from what it is
                    state = _joined(j, views)
                    for _, joining in views:
                        joining.judged.setdefault(jid, state)
                    break
            for mine, view in views:
                judged = view.judged
                judged[jid], why = step(judged[jid], record, mine)
                if why:
                    self._add(line, jid, why)

    def _judge(self, line: int, record) -> None:
        """Apply the judges (``model/judges.py``, one definition for check and trace) to a record."""
        for rule_id, why in judge(record):
            self._add(line, rule_id, why)

    # -- input -------------------------------------------------------------------

    def feed(self, line: int, entry: dict) -> list[Finding]:
        """Apply the rules to one transcript entry; the findings it raised."""
        before = len(self.findings)
        label = entry.get("conn") if type(entry.get("conn")) is str else str(entry.get("conn"))
        conn = self.conns.get(label)
        if conn is None:
            conn = self.conns[label] = _Conn(label)
        if entry.get("event") == "closed":
            conn.closed = True
            return []
        msg = entry.get("msg")
        sender = entry.get("from")
        if type(msg) is not dict:  # not JSON ("raw"), or JSON but not one message: a batch, an array, a string
            wrote = f"a line that is not JSON: {str(entry['raw'])[:80]!r}" if "raw" in entry and "msg" not in entry else not_a_message(msg)
            self._add(line, "wire_message_is_json", f"the {sender} wrote {wrote}")
            return self.findings[before:]
        self.messages += 1
        try:
            self._message(line, conn, sender, msg)
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as e:
            # A message too malformed for a rule to read: that is the finding.
            self._add(line, "schema_valid", f"malformed message ({type(e).__name__}: {e})")
        return self.findings[before:]

    def _message(self, n: int, conn: _Conn, sender: str, msg: dict) -> None:
        other = "agent" if sender == "client" else "client"
        method = msg.get("method")
        if method == "initialize" and sender == "client":
            conn.started = True
            conn.extensions = '"_' in json.dumps(msg.get("params"), default=str)
        key = id_key(msg["id"]) if method is None and "id" in msg else None  # a response's request
        if self.validator is not None:
            request_method = None
            if key is not None:
                req = conn.pending.get((other, key))
                request_method = req.method if req else None
            for problem in self.validator.check(msg, sender, request_method):
                self._add(n, "schema_valid", problem)
        if method is not None:
            params = _obj(msg.get("params"))
            req = None
            if "id" in msg:
                req = self._request(n, conn, sender, method, msg["id"], params)
            if sender == "client":
                self._client_call(n, conn, method, params, req)
            else:
                self._agent_call(n, conn, method, params, req)
            return
        if key is None:
            return  # neither a call nor a response: the schema says so when it is there
        if msg["id"] is None and "error" in msg and (other, key) not in conn.pending:
            return  # JSON-RPC: the error for a request whose id could not be read
        pending = (other, key) in conn.pending
        if pending or (other, key) in conn.answered:
            self._feed(n, conn.judged, Response(other, key), "connection")
            if not pending:
                return  # a second response: the judge said so
        req = conn.pending.pop((other, key), None)
        if req is None:
            known = conn.started
            self._add(
                n, "response_matches_a_request",
                f"a response to request {_show(msg['id'])}, which the {other} has no pending request with"
                + ("" if known else " (the log may start after that request was sent)"),
                None if known else "warning",
            )
            return
        conn.answered[(other, key)] = n
        if sender == "agent":
            self._agent_response(n, conn, req, msg)
        else:
            self._client_response(n, conn, req, msg)

    def _request(self, n, conn, sender, method, rid, params) -> _Request:
        if rid is None:
            self._add(n, "request_id_not_null", f"the {sender}'s {method} request has id null")
        key = id_key(rid)
        old = conn.pending.get((sender, key))
        if old is not None:
            self._add(n, "request_id_not_reused",
                      f"the {sender} reuses id {_show(rid)} for {method} while its {old.method} of line {old.line} is still pending")
        req = _Request(sender, method, n, params, params.get("sessionId"))
        self._feed(n, conn.judged, Request(sender, key, method), "connection")
        conn.pending[(sender, key)] = req
        conn.answered.pop((sender, key), None)
        return req

    # -- views ---------------------------------------------------------------------

    def _session(self, sid) -> _Session:
        key = _sid(sid)
        s = self.sessions.get(key)
        if s is None:
            s = self.sessions[key] = _Session()
        return s

    def _view_for_agent(self, n, conn, sid, word, request: bool = False) -> _View | None:
        """The view an agent message (a ``word`` update or request) for ``sid`` goes to; checks it is open."""
        key = _sid(sid)
        view = conn.views.get(key)
        if view is not None:
            if view.closed_at:
                if "after-close" not in view.flagged:
                    view.flagged.add("after-close")
                    self._add(n, "nothing_after_close",
                              f"{_a(word)}{' request' * request} for session {_show(sid)} after the session/close response of line {view.closed_at}")
                return view
            return view
        view = self._view(conn, key, _View())
        if conn.started:
            if conn.new_pending:
                view.provisional = n
            else:
                self._add(n, "updates_only_for_opened_sessions",
                          f"{_a(word)}{' request' * request} for session {_show(sid)}, which this connection never created or resumed")
        return view

    # -- client -> agent -----------------------------------------------------------------

    def _client_call(self, n, conn, method, params, req) -> None:
        sid = params.get("sessionId")
        if method == "session/new":
            conn.new_pending += 1 if req is not None else 0
        elif method == "session/prompt":
            if params.get("prompt") == []:
                self._add(n, "prompt_not_empty", "a session/prompt with an empty prompt array")
            if req is not None and sid is not None:
                self._feed_session(n, conn, sid, Request("client", None, method))
        elif method == "session/cancel" and sid is not None:
            self._session(sid).last_cancel = n
            self._feed_session(n, conn, sid, SessionCancel())
            self._cut(n, sid, close=False)
        elif method == "session/close" and sid is not None:
            self._session(sid).last_cancel = n
            view = conn.views.get(_sid(sid))
            if view is not None and view.state in WORKING and not view.closed_at:
                view.close_needs_idle = n
            self._cut(n, sid, close=True)
        elif method == "session/resume" and sid is not None and req is not None:
            key = _sid(sid)
            cursor = params.get("replayFrom")
            replay = cursor is not None
            ok = cursor is None or (
                isinstance(cursor, dict) and isinstance(cursor.get("type"), str)
                and (cursor["type"] == "start" or cursor["type"].startswith("_"))
            )
            view = conn.views.get(key)
            created = view is None or bool(view.closed_at)
            if created:
                view = self._view(conn, key, _View(opened=n, how="resume"))
            view.resume = _Resume(n, replay, ok, created_view=created, watch=not created and view.how == "new")
            self._feed(n, view.judged, ResumeRequest(None, replay))
            self._feed_session(n, conn, sid, ResumeRequest(None, replay))
        elif method == "$/cancel_request":
            target = conn.pending.get(("client", id_key(params.get("requestId"))))
            if target is not None and not target.cancel_request:
                target.cancel_request = n
                self._feed(n, conn.judged, CancelRequest("client", id_key(params.get("requestId"))), "connection")
                if target.method == "session/prompt" and target.session is not None:
                    self._session(target.session).last_cancel = n
        elif method == "tool_call/cancel" and sid is not None:
            view = conn.views.get(_sid(sid))
            tid = params.get("toolCallId")
            if view is not None and view.state is not None and not view.tool_cancel.get(tid, False):
                self._add(n, "tool_cancel_only_if_advertised",
                          f"tool_call/cancel for {_show(tid)}, which does not advertise capabilities.cancel on this connection")

    def _cut(self, n, sid, close: bool) -> None:
        """session/cancel or session/close: the session's foreground work and prompts not yet inserted."""
        key = _sid(sid)
        for conn in self._members(key):
            view = conn.views.get(key)
            if view is not None and view.state in WORKING and not view.cancel and not view.closed_at:
                view.cancel = n
                view.cancel_perms = {
                    k: r.line for (who, k), r in conn.pending.items()
                    if who == "agent" and r.method == "session/request_permission" and _sid(r.session) == key
                }
            for (who, _), r in conn.pending.items():
                if _sid(r.session) != key:
                    continue
                if who == "client" and r.method == "session/prompt":
                    if close and not r.cut_by_close:
                        r.cut_by_close = n
                if who == "agent" and r.method == "session/request_permission" and not r.cut_by:
                    if view is not None and view.state in WORKING and not self._background_subject(view, r):
                        r.cut_by = n

    @staticmethod
    def _background_subject(view: _View, req: _Request) -> bool:
        tid = _permission_tool(req.params)
        return tid is not None and view.background is not None and ("tool_call", tid) in view.background

    # -- agent -> client -----------------------------------------------------------------

    def _agent_call(self, n, conn, method, params, req) -> None:
        sid = params.get("sessionId")
        if method == "session/update":
            update = _obj(params.get("update"))
            kind = update.get("sessionUpdate")
            view = self._view_for_agent(n, conn, sid, kind)
            self._update(n, conn, view, self._session(sid), sid, kind, update)
        elif method in ("session/request_permission", "elicitation/create") and sid is not None:
            self._view_for_agent(n, conn, sid, method, request=True)
        elif method == "$/cancel_request":
            target = conn.pending.get(("agent", id_key(params.get("requestId"))))
            if target is not None and not target.cancel_request:
                target.cancel_request = n
                self._feed(n, conn.judged, CancelRequest("agent", id_key(params.get("requestId"))), "connection")

    def _update(self, n, conn, view: _View, session: _Session, sid, kind, update) -> None:
        resume = view.resume
        if kind == "state_update":
            self._state(n, conn, view, session, sid, update)
            return
        if resume is not None and kind in REPLAYED and resume.snapshot:
            self._add(n, "snapshot_after_replay",
                      f"a replayed {kind} after the resume snapshot of line {resume.snapshot} (resume request on line {resume.line})")
        if kind in USER:
            mid = update.get("messageId")
            record = _user_record(kind, update, resume)
            self._feed(n, view.judged, record)
            self._feed_session(n, conn, sid, record)
            if isinstance(mid, str):
                view.echoed.add(mid)
                if resume is not None and resume.replay and not resume.snapshot:
                    if resume.watch and mid not in session.live_user_ids and mid not in session.message_ids:
                        view.replayed_unknown.setdefault(mid, n)
                else:
                    session.live_user_ids.add(mid)
        elif kind == "tool_call_update" or kind == "tool_call":
            tid = update.get("toolCallId")
            if not isinstance(tid, (str, int)):
                return
            status = update.get("status")
            # Between a session/resume with replayFrom and its snapshot, updates are history:
            # "replay all retained conversation history before responding", tool calls of ended
            # work included. They tell the client what a tool call was (its status counts as
            # announced), but they are not live work: no idle ordering, no running-tool
            # bookkeeping, no "ran without approval" (the live rules judge the live updates).
            history = resume is not None and resume.replay and not resume.snapshot
            if (not history and view.state == "requires_action" and not view.reqaction_flagged
                    and (status == "in_progress" or (status == "completed" and view.tool_status.get(tid) in (None, "pending")))
                    and view.tool_status.get(tid) in (None, "pending")
                    and not (view.background and ("tool_call", tid) in view.background)):
                view.reqaction_flagged = True
                self._add(n, "requires_action_then_running",
                          f"tool call {_show(tid)} goes {status} while the session is requires_action: progress resumed "
                          "without running")
            self._feed(n, view.judged, ToolUpdate(tid, status))
            if status is not None or tid not in view.tool_status:
                view.tool_status[tid] = status or view.tool_status.get(tid) or "pending"
            if "capabilities" in update:
                caps = update["capabilities"]
                view.tool_cancel[tid] = isinstance(caps, dict) and caps.get("cancel") is not None
            if status in ("in_progress", "completed") and tid in session.not_approved and not history:
                self._add(n, "not_approved_not_proceeded",
                          f"tool call {_show(tid)} goes {status} although its permission was not approved (line {session.not_approved[tid]})")
                del session.not_approved[tid]
            if status in FINAL_TOOL:
                view.tool_cancels.pop(tid, None)
        elif kind == "terminal_update":
            tid = update.get("terminalId")
            if isinstance(tid, str):
                view.terminals[tid] = view.terminals.get(tid, False) or update.get("exitStatus") is not None

    def _state(self, n, conn, view: _View, session: _Session, sid, update) -> None:
        state = update.get("state")
        if not isinstance(state, str):
            return
        record = record_of_json("state_update", update)
        self._judge(n, record)
        self._feed(n, view.judged, record)
        self._feed_session(n, conn, sid, record)
        if view.resume is not None:
            view.resume.snapshot = n
            view.resume.snapshot_state = state
        self._background_list(n, view, session, state, update)
        self._resume_expectation(n, conn, view, state)
        if state != view.state:
            view.reqaction_flagged = False
        if state in WORKING:
            view.state, view.stop = state, None
            view.custom_work = 0
            session.ran = True
            return
        if state != "idle":
            if view.state == "idle" and conn.started and not conn.extensions and view.resume is None:
                view.custom_work = view.custom_work or n
            view.state, view.stop = state, None
            return
        self._idle(n, conn, view, session, sid, update)

    def _background_list(self, n, view: _View, session: _Session, state: str, update: dict) -> None:
        """Background lists (2.4.0): every state update once reported; items announced; final before dropped."""
        listed = update.get("background")
        items = _items(listed)
        if session.background_since and items is None:
            self._add(n, "background_on_every_state_update",
                      f"{_a(state)} state_update without a background list, reported since line {session.background_since}")
        if items is not None:
            if not session.background_since:
                session.background_since = n
            before = view.background or frozenset()
            for item in sorted(items - before):
                if not _announced(view, item):
                    self._add(n, "background_items_announced",
                              f"background {item[0]} {_show(item[1])} is listed before it was announced on this connection")
            if view.background is not None:
                for item in sorted(view.background - items):
                    if not _final(view, item):
                        self._add(n, "background_final_before_removal",
                                  f"background {item[0]} {_show(item[1])} is dropped from the list before its final status")
            view.background = items
        elif listed is None or "background" not in update:
            view.background = None

    def _resume_expectation(self, n, conn, view: _View, state: str) -> None:
        """Another connection's resume snapshot said what this one should be told."""
        if view.expect is not None:
            line, expected, other = view.expect
            view.expect = None
            if state != expected:
                self._add(line, "resume_snapshot_is_current",
                          f"the resume snapshot on {other} says {expected}, but this session is {view.state} on {conn.label} "
                          f"and the next state_update there (line {n}) says {state}")

    def _idle(self, n, conn, view: _View, session: _Session, sid, update: dict) -> None:
        """An idle state_update: the rules about how work ends (stop reason, error details, cancellation)."""
        if view.custom_work:
            self._add(view.custom_work, "standard_states_reported",
                      f"work reported as {view.state!r}, a custom state, between two idles (line {n}) without running "
                      "or requires_action, to a client that advertised no extension")
            view.custom_work = 0
        stop = update.get("stopReason")
        if (view.state == "idle" and view.stop is None and stop is not None and view.how == "new"
                and session.created and not session.ran):
            self._add(n, "stop_reason_only_after_work",
                      f"an idle with stopReason {stop!r} in a session never reported running")
        working = view.state in WORKING
        if working and view.resume is None:
            if not isinstance(stop, str):
                self._add(n, "stop_reason_when_work_ends",
                          f"the idle that ends {view.state} work has no stop reason" + ("" if stop is None else f" ({stop!r})"))
            elif stop == "error" and update.get("error") is None:
                self._add(n, "error_idle_has_details", "an idle with stopReason error and no error object")
            elif (stop == "cancelled" and session.created and conn.started and not view.cancel
                  and session.last_cancel <= view.idle_line):
                since = f"since the idle of line {view.idle_line}" if view.idle_line else "in the log"
                self._add(n, "cancelled_only_when_cancelled",
                          f"work ends with stopReason cancelled, but no session/cancel, session/close or $/cancel_request "
                          f"of a prompt for session {_show(sid)} came {since}")
        if working:
            if view.cancel:
                for key, line in view.cancel_perms.items():
                    req = conn.pending.get(("agent", key))
                    if req is not None and not req.cancel_request:
                        self._add(n, "pending_permissions_cancelled",
                                  f"the cancelled work ended while its permission request {key} (line {line}) was pending "
                                  "and not cancelled with $/cancel_request")
                view.cancel, view.cancel_perms = 0, {}
            if view.close_needs_idle and stop in (None, "cancelled"):
                view.close_needs_idle = 0
        view.state = "idle"
        view.idle_line = n
        if stop is not None:
            view.stop = stop

    # -- responses --------------------------------------------------------------------------

    def _agent_response(self, n, conn, req: _Request, msg) -> None:
        method = req.method
        ok = "result" in msg
        error = _obj(msg.get("error"))
        sid = req.session
        if method == "session/new":
            conn.new_pending = max(0, conn.new_pending - 1)
            new = _obj(msg.get("result")).get("sessionId") if ok else None
            if new is not None:
                key = _sid(new)
                view = conn.views.get(key)
                if view is None or view.closed_at:
                    view = self._view(conn, key, _View())
                view.provisional = 0
                view.opened, view.how = n, "new"
                if view.state is None:
                    view.state = "idle"  # "A new session defaults to idle"
                self._session(new).created = True
            if not conn.new_pending:
                for key, view in list(conn.views.items()):
                    if view.provisional:
                        self._add(view.provisional, "updates_only_for_opened_sessions",
                                  f"an update for session {_show(key)} before a session/new response that named "
                                  f"{_show(new) if new is not None else 'no session'} (line {n})")
                        view.provisional = 0
        elif method == "session/prompt":
            if ok:
                self._prompt_result(n, conn, req, msg["result"])
            elif sid is not None:
                self._feed_session(n, conn, sid, PromptError(None, error.get("code")))
            if not ok and req.cut_by_close and error.get("code") != -32800:
                self._add(n, "close_answers_prompts_cancelled",
                          f"a prompt pending at the session/close of line {req.cut_by_close} is answered with error "
                          f"{error.get('code')!r}, not -32800")
        elif method == "session/resume" and sid is not None:
            self._resume_response(n, conn, req, sid, ok, error)
        elif method == "session/close" and sid is not None and ok:
            view = conn.views.get(_sid(sid))
            if view is not None:
                if view.close_needs_idle:
                    self._add(n, "close_ends_work_first",
                              f"session/close (line {view.close_needs_idle}) of active work answered before its idle cancelled")
                view.close_needs_idle = 0
                view.closed_at = n
                view.cancel = 0
                view.expect = None
        elif method == "tool_call/cancel" and sid is not None:
            view = conn.views.get(_sid(sid))
            tid = req.params.get("toolCallId")
            if view is not None and ok:
                if view.state is not None and (tid not in view.tool_status or view.tool_status[tid] in FINAL_TOOL):
                    what = "unknown" if tid not in view.tool_status else f"already {view.tool_status[tid]}"
                    self._add(n, "tool_cancel_rejects_final",
                              f"tool_call/cancel of {_show(tid)} ({what} on this connection) answered with success, not -32602")
                else:
                    view.tool_cancels[tid] = n

    def _prompt_result(self, n, conn, req: _Request, result) -> None:
        record = record_of_json("prompt_result", result, req.line)  # the request's line names it in the log
        self._judge(n, record)
        if req.session is not None:
            self._feed_session(n, conn, req.session, record)
        mid = record.message_id
        if not isinstance(mid, str):
            return
        self._session(req.session).message_ids.setdefault(mid, n)
        view = conn.views.get(_sid(req.session))
        if view is None:
            view = self._view(conn, _sid(req.session), _View())
        view.acked.setdefault(mid, n)

    def _resume_response(self, n, conn, req, sid, ok, error) -> None:
        key = _sid(sid)
        view = conn.views.get(key)
        resume = view.resume if view is not None else None
        if view is not None:
            view.resume = None
            self._feed(n, view.judged, ResumeResult(None, ok))
            self._feed_session(n, conn, sid, ResumeResult(None, ok))
        if resume is None:
            return
        if not resume.cursor_ok:
            if ok or error.get("code") != -32602:
                got = "success" if ok else f"error {error.get('code')!r}"
                self._add(n, "unsupported_replay_cursor_rejected",
                          f"the resume of line {resume.line} with an unsupported replayFrom was answered with {got}, not -32602")
        if not ok:
            if resume.created_view:
                del conn.views[key]
            return
        if not resume.snapshot:
            return  # the judge resume_snapshot_before_response said so
        if resume.created_view:
            # Connections already attached have been told the session's state: the snapshot must agree.
            for other in self._members(key):
                if other is conn or other.closed:
                    continue
                v = other.views.get(key)
                if (v is None or v.closed_at or v.resume is not None or v.state is None or v.provisional
                        or v.state == resume.snapshot_state):
                    continue
                v.expect = (resume.snapshot, resume.snapshot_state, conn.label)

    def _client_response(self, n, conn, req: _Request, msg) -> None:
        if req.method != "session/request_permission":
            return
        tid = _permission_tool(req.params)
        if tid is None or req.session is None:
            return
        session = self._session(req.session)
        outcome = _obj(_obj(msg.get("result")).get("outcome"))
        offered = {o.get("optionId") for o in req.params.get("options") or () if isinstance(o, dict)}
        if req.cut_by:
            session.not_approved[tid] = req.cut_by
        elif outcome.get("outcome") == "cancelled" or "error" in msg:
            session.not_approved[tid] = n
        elif outcome.get("outcome") == "selected" and outcome.get("optionId") not in offered:
            session.not_approved[tid] = n

    # -- the end of the log -------------------------------------------------------------------

    def finish(self) -> list[Finding]:
        """Rules about what must have happened by the end (skipped for a cut log); every finding, by line."""
        if not self._done:
            self._done = True
            if not self.partial:
                for conn in self.conns.values():
                    if not conn.closed:
                        self._end_of(conn)
                    self._replays_of(conn)
        self.findings.sort(key=lambda f: (f.line, f.property))
        return list(self.findings)

    def _replays_of(self, conn: _Conn) -> None:
        for key, view in conn.views.items():
            session = self.sessions.get(key)
            for mid, line in view.replayed_unknown.items():
                if session is None or (mid not in session.live_user_ids and mid not in session.message_ids):
                    self._add(line, "replayed_ids_are_known",
                              f"replayed user messageId {mid!r} on {conn.label}, attached since session/new, was never "
                              "reported live nor returned by a prompt: a message replayed under a new ID, or never echoed")

    def _end_of(self, conn: _Conn) -> None:
        label = conn.label
        owed = set()
        for j in STATEFUL:  # the judges of what must have happened by the end (model/judges.py)
            if j.owes is not None and j.per == "connection":
                for key, why in j.owes(conn.judged.get(j.id, j.start)):
                    req = conn.pending.get(key)
                    self._add(req.line if req else 0, j.id, f"{why} on {label}")
                    owed.add(key)
        for (sender, key), req in conn.pending.items():
            if (sender, key) not in owed:
                self._add(req.line, "every_request_answered", f"the {sender}'s {req.method} {key} on {label} is never answered")
        for sid, view in conn.views.items():
            if view.closed_at:
                continue
            session = self.sessions.get(sid)
            for j in STATEFUL:  # the judges of a whole session (model/judges.py)
                if j.owes is not None and j.per == "session":
                    for mid, why in j.owes(view.judged.get(j.id, j.start)):
                        line = view.acked.get(mid) or (session.message_ids.get(mid, 0) if session else 0)
                        self._add(line, j.id, f"{why} on {label} in session {_show(sid)}")
            if view.cancel:
                waiting = [k for k in view.cancel_perms if ("agent", k) in conn.pending]
                if waiting:
                    self._add(view.cancel, "cancel_stops_waiting_for_permissions",
                              f"the work cancelled here never ends: still waiting for permission request(s) {waiting}")
                else:
                    self._add(view.cancel, "cancelled_work_reported_idle",
                              f"the work cancelled here is never reported idle on {label}")
            if view.expect is not None:
                line, expected, other = view.expect
                self._add(line, "resume_snapshot_is_current",
                          f"the resume snapshot on {other} says {expected}; {label} was told {view.state} and nothing since")
            for tid, line in view.tool_cancels.items():
                self._add(line, "tool_cancel_confirmed",
                          f"tool_call/cancel of {_show(tid)} was accepted and never confirmed by a final tool_call_update")


def _joined(j, views) -> object:
    """The state of judge ``j`` for a connection joining a session the ``views`` are in."""
    if j.join is not None:
        for _, view in views:
            if j.id in view.judged:
                return j.join(view.judged[j.id])
    return j.start


def _user_record(kind: str, update: dict, resume):
    """The record of a user_message(_chunk) update (``replay``: sent inside a resume window that replays)."""
    mid = update.get("messageId")
    mid = mid if isinstance(mid, str) else id_key(mid)
    replay = resume is not None and resume.replay
    if kind == "user_message_chunk":
        return UserChunk(mid, replay)
    content = update.get("content", _ABSENT)
    content = None if content is _ABSENT else () if content == [] else (content,) if not isinstance(content, list) else tuple(
        id_key(b) for b in content)
    return UserMessage(mid, content, replay)


_ABSENT = object()


def check(entries, rules: str = DEFAULT_RULES, partial: bool = False, validator=None) -> list[Finding]:
    """Every finding of a whole transcript: ``entries`` is ``[(line, entry), ...]``."""
    m = Monitor(rules, partial, validator)
    for n, entry in entries:
        m.feed(n, entry)
    return m.finish()
