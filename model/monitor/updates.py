"""The monitor on state updates: background lists, the resume snapshot, how work ends."""

from __future__ import annotations

from ..judges import (
    record_of_json,
)
from ..wire_rules import (
    WORKING,
)

# public in wire_state; the short local names stay until this module's rules are split out
from ..wire_state import SessionRecord as _Session
from ..wire_state import SessionView as _View
from ..wire_state import background_items as _items
from ..wire_state import is_announced as _announced
from ..wire_state import is_final as _final
from ..wire_state import shown_id as _show
from ..wire_state import with_article as _a

__all__ = ["UpdatesMixin"]


class UpdatesMixin:
    """``state_update`` notifications (a part of ``Monitor``)."""

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

    def _work_goes_on(self, n, conn, view: _View, tid) -> None:
        """A tool call of this connection's foreground work goes on after another connection's resume snapshot
        said the session was idle: that snapshot was not current (the work's updates all come before its idle,
        and the agent wrote the snapshot before this update)."""
        line, expected, other = view.expect
        if expected == "idle" and view.state in WORKING and not (view.background and ("tool_call", tid) in view.background):
            view.expect = None
            self._add(line, "resume_snapshot_is_current",
                      f"the resume snapshot on {other} says idle, but the work {conn.label} was told is {view.state} "
                      f"goes on: tool call {_show(tid)} is updated there at line {n}")

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
        if working:
            if view.cancel:
                for key, line in view.cancel_perms.items():
                    req = conn.pending.get(("agent", key))
                    if req is not None and not req.cancel_request:
                        self._add(n, "pending_permissions_cancelled",
                                  f"the cancelled work ended while its permission request {key} (line {line}) was pending "
                                  "and not cancelled with $/cancel_request")
                view.cancel, view.cancel_perms = 0, {}
        view.state = "idle"
        if stop is not None:
            view.stop = stop
