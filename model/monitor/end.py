"""The monitor at the end of the log: what must have happened by then."""

from __future__ import annotations

from ..judges import restate
from ..wire_rules import (
    Finding,
)

# public in wire_state; the short local names stay until this module's rules are split out
from ..wire_state import Connection as _Conn
from ..wire_state import shown_id as _show

__all__ = ["EndMixin"]


class EndMixin:
    """The end of the log (a part of ``Monitor``)."""

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
        for j in self.judges.stateful:  # the judges of what must have happened by the end (model/judges/)
            if j.owes is not None and j.per == "connection":
                for key, why in j.owes(conn.judged.get(j.id, j.start)):
                    req = conn.pending.get(key)
                    self._add(req.line if req else 0, j.id, restate(why, f"{why} on {label}"))
                    owed.add(key)
        for (sender, key), req in conn.pending.items():
            if (sender, key) not in owed:
                self._add(req.line, "every_request_answered", f"the {sender}'s {req.method} {key} on {label} is never answered")
        for sid, view in conn.views.items():
            if view.closed_at:
                continue
            session = self.sessions.get(sid)
            for j in self.judges.stateful:  # the judges of a whole session (model/judges/)
                if j.owes is not None and j.per == "session":
                    for mid, why in j.owes(view.judged.get(j.id, j.start)):
                        line = view.acked.get(mid) or (session.message_ids.get(mid, 0) if session else 0)
                        self._add(line, j.id, restate(why, f"{why} on {label} in session {_show(sid)}"))
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
