"""The monitor on responses: to session/new, session/prompt, session/resume, tool_call/cancel and the client's
answers to permission requests (a proposal's responses: ``base.MonitorBase._proposal_record``)."""

from __future__ import annotations

from ..judges import (
    PromptError,
    ResumeResult,
    record_of_json,
)
from ..wire_rules import (
    FINAL_TOOL,
)
from ..wire_state import PendingRequest as _Request
from ..wire_state import SessionView as _View

# public in wire_state; the short local names stay until this module's rules are split out
from ..wire_state import id_key
from ..wire_state import object_or_empty as _obj
from ..wire_state import permission_tool_call as _permission_tool
from ..wire_state import session_key as _sid
from ..wire_state import shown_id as _show

__all__ = ["ResponsesMixin"]


class ResponsesMixin:
    """Responses (a part of ``Monitor``)."""

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
            else:
                rec = PromptError(id_key(msg.get("id")), error.get("code"))
                self._feed(n, conn.judged, rec, "connection")
                if sid is not None:
                    self._feed_session(n, conn, sid, rec)
        elif method == "session/resume" and sid is not None:
            self._resume_response(n, conn, req, sid, ok, error)
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
