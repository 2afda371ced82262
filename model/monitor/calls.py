"""The monitor on calls: what a client asks of the agent, what the agent sends (updates, requests)."""

from __future__ import annotations

from ..judges import (
    CancelRequest,
    Request,
    ResumeRequest,
    SessionCancel,
    ToolUpdate,
    UserChunk,
    UserMessage,
)
from ..wire_rules import (
    FINAL_TOOL,
    REPLAYED,
    USER,
    WORKING,
)

# public in wire_state; the short local names stay until this module's rules are split out
from ..wire_state import PendingRequest as _Request
from ..wire_state import ResumeWindow as _Resume
from ..wire_state import SessionRecord as _Session
from ..wire_state import SessionView as _View
from ..wire_state import id_key
from ..wire_state import object_or_empty as _obj
from ..wire_state import permission_tool_call as _permission_tool
from ..wire_state import session_key as _sid
from ..wire_state import shown_id as _show

__all__ = ["CallsMixin"]


class CallsMixin:
    """Client -> agent calls and agent -> client calls (a part of ``Monitor``)."""

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
            self._feed_session(n, conn, sid, SessionCancel())
            self._cut(n, sid)
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
                    # the session's judges read a client's $/cancel_request of its prompt (cancelled_only_when_cancelled)
                    self._feed_session(n, conn, target.session, CancelRequest("client", id_key(params.get("requestId"))))
        elif method == "tool_call/cancel" and sid is not None:
            view = conn.views.get(_sid(sid))
            tid = params.get("toolCallId")
            if view is not None and view.state is not None and not view.tool_cancel.get(tid, False):
                self._add(n, "tool_cancel_only_if_advertised",
                          f"tool_call/cancel for {_show(tid)}, which does not advertise capabilities.cancel on this connection")

    def _cut(self, n, sid) -> None:
        """session/cancel (or a proposal's message that cancels as it does): the session's foreground work and
        its permission requests."""
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
            if not history and view.expect is not None:
                self._work_goes_on(n, conn, view, tid)
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
