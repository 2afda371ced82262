"""The monitor's core: reporting findings, feeding the judges, reading an entry, requests and views."""

from __future__ import annotations

import json

from ..composition import every_judge, wire_message
from ..config import Rules, rule_set
from ..judges import (
    Request,
    Response,
    Sent,
    SessionCancel,
)
from ..wire_rules import (
    DEFAULT_RULES,
    RULE_SETS,
    RULES,
    Finding,
)

# public in wire_state; the short local names stay until this module's rules are split out
from ..wire_state import Connection as _Conn
from ..wire_state import PendingRequest as _Request
from ..wire_state import SessionRecord as _Session
from ..wire_state import SessionView as _View
from ..wire_state import id_key, not_a_message
from ..wire_state import object_or_empty as _obj
from ..wire_state import session_key as _sid
from ..wire_state import shown_id as _show
from ..wire_state import with_article as _a


def _tables(judges) -> tuple[dict, dict]:
    """The judges with a state by (``per``, record type), in their order, and those of a whole session by record
    type: looked up once per record."""
    by: dict[tuple[str, type], tuple] = {}
    for j in judges.stateful:
        for t in j.types:
            by[(j.per, t)] = by.get((j.per, t), ()) + (j,)
    return by, {t: js for (per, t), js in by.items() if per == "session"}


_TABLES: dict = {}

__all__ = ["MonitorBase", "joined"]


class MonitorBase:
    """What every part of the monitor shares (``Monitor`` in ``__init__.py`` composes the parts)."""

    def __init__(self, rules: str | Rules = DEFAULT_RULES, partial: bool = False, validator=None, whole: bool = False):
        if isinstance(rules, Rules):
            model_rules = rules
        elif rules in RULE_SETS:
            model_rules = rule_set(rules)
        else:
            raise ValueError(f"unknown rule set {rules!r}; one of {', '.join(RULE_SETS)}")
        #: the text the rules follow ("rfd" or "rfd+2.4.0"), and the rules (a rule set or a variant's)
        self.rules = model_rules.spec
        self.model_rules = model_rules
        #: the judges: the core's and every proposal's (``composition.every_judge``)
        self.judges = every_judge(model_rules)
        tables = _TABLES.get(self.judges)
        if tables is None:
            tables = _TABLES[self.judges] = _tables(self.judges)
        self._judges_by, self._session_judges = tables
        self.partial = partial
        #: the log holds every connection of its sessions from their creation (a model run's export), even
        #: without their initialize or session/new: nothing outside it cancelled (``Judge.from_creation``)
        self.whole = whole
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
        cite = getattr(message, "clause", "")  # a judge's finding naming the clause of its case
        if severity is None:
            if rule.level.startswith("SHOULD"):
                severity = "warning"
            elif rule.since == "2.4.0" and self.rules == "rfd":
                severity = "warning"
                message += " (a 2.4.0 rule; the RFD does not state it)"
            elif rule.proposal and not self.model_rules.composes(rule.proposal):
                severity = "warning"
                message += f" (a rule of the {rule.proposal} proposal, which these rules do not compose)"
            else:
                severity = "violation"
        self.findings.append(Finding(line, rule_id, severity, str(message), cite))

    def _feed(self, line: int, states: dict, record, per: str = "view") -> None:
        """Apply the judges with a state (``model/judges/``) to a record of one connection (``per``
        "connection", ``conn.judged``) or one session on it ("view", ``view.judged``); ``states`` holds
        what they remember there."""
        step = old = done = None
        for j in self._judges_by.get((per, type(record)), ()):
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
        for j in self._session_judges.get(type(record), ()):
            jid, step = j.id, j.step
            for _, view in views:
                if jid not in view.judged:  # connections that join the session now start from what it is
                    state = joined(j, views)
                    for _, joining in views:
                        joining.judged.setdefault(jid, state)
                    break
            whole = not j.from_creation or self.whole or (self._session(sid).created and conn.started)
            for mine, view in views:
                judged = view.judged
                judged[jid], why = step(judged[jid], record, mine)
                if why and whole:
                    self._add(line, jid, why)

    def _judge(self, line: int, record) -> None:
        """Apply the judges (``model/judges/``, one definition for check and trace) to a record."""
        for rule_id, why in self.judges.judge(record):
            self._add(line, rule_id, why)

    def _proposal_record(self, n: int, conn: _Conn, sender: str, msg: dict, method: str | None = None,
                         req: _Request | None = None) -> None:
        """A message a proposal adds (``model/proposals``): the record it reads back as, fed to the judges that
        read it (the generic request or response record went to the connection's judges already)."""
        if req is None:
            m = wire_message(sender, method=method)
        else:
            m = wire_message(sender, answers=req.method, error="error" in msg)
        if m is None or m.read is None or m.record is None:
            return
        records = m.record(m.read(msg, req.params if req is not None else None))
        sid = req.session if req is not None else _obj(msg.get("params")).get("sessionId")
        for record in records if isinstance(records, list) else [records] if records is not None else []:
            self._judge(n, record)
            self._feed(n, conn.judged, record, "connection")
            if sid is None:
                continue
            view = conn.views.get(_sid(sid))
            if view is not None:
                self._feed(n, view.judged, record)
            self._feed_session(n, conn, sid, record)
            if type(record) is SessionCancel:  # a message that cancels as session/cancel does (a close)
                self._cut(n, sid)
        if m.leaves_session and "result" in msg and sid is not None:
            view = conn.views.get(_sid(sid))
            if view is not None:  # the connection left the session: its view is no member of it now
                view.closed_at, view.cancel, view.expect = n, 0, None

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
            wrote = (f"a line that is not JSON: {str(entry['raw'])[:80]!r}" if "raw" in entry and "msg" not in entry
                     else not_a_message(msg))
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
            self._proposal_record(n, conn, sender, msg, method=method)
            return
        if key is None:
            return  # neither a call nor a response: the schema says so when it is there
        if msg["id"] is None and "error" in msg and (other, key) not in conn.pending:
            return  # JSON-RPC: the error for a request whose id could not be read
        pending = (other, key) in conn.pending
        # a prompt's error is fed as PromptError (its code read), as a model run records it: responses.py
        prompt_error = pending and "error" in msg and sender == "agent" \
            and conn.pending[(other, key)].method == "session/prompt"
        if (pending or (other, key) in conn.answered) and not prompt_error:
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
        self._proposal_record(n, conn, sender, msg, req=req)

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
        """The view an agent message (a ``word`` update or request) for ``sid`` goes to; checks it is open. A judge
        that reads every message the agent sends there (``Sent``) reads it."""
        key = _sid(sid)
        view = conn.views.get(key)
        if view is not None:
            if self.judges.reads_sent:
                self._feed(n, view.judged, Sent(word))
            return view
        view = self._view(conn, key, _View())
        if self.judges.reads_sent:
            self._feed(n, view.judged, Sent(word))
        if conn.started:
            if conn.new_pending:
                view.provisional = n
            else:
                self._add(n, "updates_only_for_opened_sessions",
                          f"{_a(word)}{' request' * request} for session {_show(sid)}, which this connection never created or resumed")
        return view


def joined(j, views) -> object:
    """The state of judge ``j`` for a connection joining a session the ``views`` are in."""
    if j.join is not None:
        for _, view in views:
            if j.id in view.judged:
                return j.join(view.judged[j.id])
    return j.start
