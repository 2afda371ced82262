"""Model-based trace validation: does some run of the model explain a transcript?

The rule-based checker (``sims.wire.transcript.check_transcript``) applies each
observable rule to a log on its own. This module asks the stronger question
that TLA+ trace validation and P's PObserve ask: is there a run of the model
whose observable lines (as ``sims.wire.transcript.export`` writes them) are exactly
the transcript's lines, in order? If not, it reports the first line no run can
explain, the longest explained prefix and what the model would have allowed
there.

How:

1. ``abstract`` (``sims.wire.abstraction``) turns each transcript message back
   into the model's message tuples (``model/state.py``, "Messages"), keeping the
   transcript's own raw ids (JSON-RPC ids, ``messageId`` strings, ``toolCallId``
   strings). Content is abstracted to the model's symbols: text starting with
   ``/`` is the command ``"/c"``, any other text is ``"a"``. Content equality
   beyond that symbol class is not checked (the model's "a", "b" and an
   imported message's "i" all compare as "a").
2. ``config_for`` (``sims.wire.bounds``) derives the bounds from the transcript
   itself (not from a named configuration), clamped to ``config.LIMITS``.
3. ``explain`` searches breadth-first over nodes (model state, position in the
   transcript, connection epochs, id mapping), on the model object (``Lifecycle``:
   its initial state, next steps, message rendering and ID renumbering; nothing of
   the model's own modules). Every successor step is tried;
   its observable lines must unify with the next transcript lines in order
   (same kind, same connection, consistent raw <-> model id mapping, extended as
   new ids appear). Steps without observable lines (submissions, holds,
   reservations, insertions, client deliveries, a client opening a new
   connection) keep the position.

Lines the model has no vocabulary for (``initialize``, ``session/new``,
``agent_message_chunk`` and other session updates, responses to such
requests) are skipped and counted in ``Explanation.skipped``.

Search reductions (each sound for the question asked): ``hold`` is off (a
held prompt behaves as a received one everywhere); without a replay in the
transcript every message is kept as retained (retained vs live-only shows only
in a replay); bounds are tried first with ``agent_work`` = working episodes
minus prompts, then in full if that does not explain the transcript.

A transcript is a prefix of a run (a log may be cut anywhere, even inside
one step's lines); ``complete=True`` also asks that the log can end there.

Request ids are mapped per connection label (a client may start again at 1 on
a new connection); ``messageId``, ``toolCallId`` and permission request ids
are mapped globally, one-to-one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from acp_lifecycle.model import RFD_RULES, VOCAB, Config, Lifecycle, Rules

from .abstraction import Line, Prepared, abstract, prepare, split_sessions, symbol
from .bounds import config_and_clamps, config_for
from .settled import RawIds, compacts, explain_rules, forget_dead, forget_seen, forget_settled, settled

#: the model's vocabulary read here: error codes, the phases of a prompt before insertion
ERR_CANCELLED, ERR_FAILURE, ERR_INVALID = VOCAB.ERR_CANCELLED, VOCAB.ERR_FAILURE, VOCAB.ERR_INVALID
NOT_INSERTED = VOCAB.NOT_INSERTED

__all__ = ["Explanation", "abstract", "config_for", "explain", "prepare", "split_sessions"]


# ---------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------


@dataclass
class Explanation:
    explained: bool
    first_unexplained_line: int | None  # file line number; None when explained
    prefix_lines: int  # file line number of the last explained line (0: none)
    allowed: list[str] = field(default_factory=list)  # what the model could have produced there
    nodes: int = 0
    clamped: list[str] = field(default_factory=list)
    skipped: int = 0  # lines set aside: outside the model's vocabulary, or abstracted away
    exhausted: bool = False  # max_nodes was reached before the search finished
    config: Config | None = None
    at_end: bool = False  # complete=True: every line is explained, but the log cannot end there
    matched: int = 0  # lines a model step produced
    sessions: int = 1  # sessions in the transcript, each explained by a model run of its own
    session: object = None  # the sessionId of the unexplained session
    note: str = ""  # why, when no model step could be tried at that line

    def data(self) -> dict:
        return {
            "explained": self.explained,
            "first_unexplained_line": self.first_unexplained_line,
            "prefix_lines": self.prefix_lines,
            "allowed": self.allowed,
            "nodes": self.nodes,
            "clamped": self.clamped,
            "skipped": self.skipped,
            "matched": self.matched,
            "sessions": self.sessions,
            "session": self.session,
            "exhausted": self.exhausted,
            "at_end": self.at_end,
        }

    def text(self) -> str:
        if self.explained:
            runs = f"{self.sessions} sessions, each by a run of its own" if self.sessions > 1 else "1 session"
            return (
                f"explained ({runs}; {self.matched} line(s) matched by model steps, "
                f"{self.skipped} set aside as outside the model's vocabulary)"
            )
        where = f" (session {json.dumps(self.session)})" if self.sessions > 1 and self.session is not None else ""
        if self.note and self.at_end:
            return f"end of transcript (after line {self.prefix_lines}){where}: no run of the model ends here: {self.note}"
        if self.note:
            return f"line {self.first_unexplained_line}: no run of the model explains this{where}: {self.note}"
        allowed = "; ".join(self.allowed) if self.allowed else "nothing"
        if self.at_end:
            return (
                f"end of transcript (after line {self.prefix_lines}){where}: no run of the model ends here; "
                f"the model would still send: {allowed}"
            )
        s = (
            f"line {self.first_unexplained_line}: no run of the model explains this{where}; "
            f"explained up to line {self.prefix_lines}; the model allows here: {allowed}"
        )
        if self.exhausted:
            s += " (search stopped at the node limit: inconclusive)"
        return s


def _observable(pre, step) -> list[tuple]:
    """The step's lines as export writes them: [(client, sender, model msg), ...]."""
    name = step.action[0]
    out = []
    if name in ("AgentReceive", "AgentResume"):
        c = step.action[1]
        out.append((c, "client", pre.up[c][0]))
    elif name == "ConnectionLost":
        out.append((step.action[1], "event", ("closed",)))
    elif name == "AgentRestart":
        for c, cl in enumerate(pre.clients):
            if cl.connected:
                out.append((c, "event", ("closed",)))
    for c, msg in step.emitted:
        out.append((c, "agent", msg))
    return out


def _bind(mp: dict, ns: str, raw, model, bound=None) -> bool:
    """Extend the bijection raw <-> model in namespace ns; False on conflict.

    ``bound(ns, raw)``: was ``raw`` bound before, to a model id the node no longer
    keeps (``settled.forget_settled``: a dead id, which no later step sends)?"""
    f, b = ("f", ns, raw), ("b", ns, model)
    have = mp.get(f)
    if have is not None:
        return have == model
    if b in mp or (bound is not None and bound(ns, raw)):
        return False
    mp[f] = model
    mp[b] = raw
    return True


def _same_error(model: int | None, wire: int | None) -> bool:
    """Does the model's error code stand for the transcript's? The spec fixes one code only:
    -32800, a request cancelled before insertion. A rejection (-32602 in the model) and a
    failure (-32000) may carry any other code: agents send -32603, and some an HTTP status
    (401, 500, 529) passed through from their provider."""
    if model == wire:
        return True
    generic = (ERR_INVALID, ERR_FAILURE)
    return model in generic and wire not in (None, 0, ERR_CANCELLED)


def _unify(c: int, sender: str, mm: tuple, line: Line, mp: dict, bound=None) -> bool:
    """Does model message mm (to/from client c) match the transcript line? Extends mp."""
    if sender != line.sender or c != line.client:
        return False
    t = line.msg
    k = mm[0]
    if k != t[0]:
        return False
    rns = "rid:" + line.label
    if k == "closed" or k == "cancel" or k == "notice":
        return True
    if k == "prompt":
        return symbol(mm[2]) == t[2] and _bind(mp, rns, t[1], (c, mm[1]), bound)
    if k == "cancel_req":
        return _bind(mp, rns, t[1], (c, mm[1]), bound)
    if k == "resume":
        return mm[2] == t[2] and _bind(mp, rns, t[1], (c, mm[1]), bound)
    if k in ("perm", "perm_cancel"):
        return _bind(mp, "perm", t[1], mm[1], bound)
    if k == "perm_ans":
        return mm[2] == t[2] and _bind(mp, "perm", t[1], mm[1], bound)
    if k == "ok":
        return _bind(mp, rns, t[1], (c, mm[1]), bound) and _bind(mp, "mid", t[2], mm[2], bound)
    if k == "err":
        return _same_error(mm[2], t[2]) and _bind(mp, rns, t[1], (c, mm[1]), bound)
    if k == "v1_prompt_result":
        return mm[2] == t[2] and _bind(mp, rns, t[1], (c, mm[1]), bound)
    if k == "resumed":
        return _bind(mp, rns, t[1], (c, mm[1]), bound)
    if k == "user_message":
        same = mm[2] is None if t[2] is None else mm[2] is not None and tuple(symbol(x) for x in mm[2]) == t[2]
        return same and _bind(mp, "mid", t[1], mm[1], bound)
    if k == "chunk":
        return symbol(mm[2]) == t[2] and _bind(mp, "mid", t[1], mm[1], bound)
    if k == "state":
        return (mm[1], mm[2] or "") == t[1:3] and _same_error(mm[3] or 0, t[3])
    if k == "tool":
        # a first update without a status announces the call pending
        same = mm[2] == t[2] or (t[2] is None and mm[2] == "pending" and len(mm) > 3 and mm[3])
        return same and _bind(mp, "tool", t[1], mm[1], bound)
    if k == "error_update":
        return _same_error(mm[1], t[1])
    return False


def _render(c: int, sender: str, mm: tuple, epochs: tuple, mp: dict | None = None, names: dict | None = None) -> str:
    """``LABEL FROM: summary`` of a model message, with the transcript's raw ids
    where the mapping knows them and ``<new>`` where the model would use an id
    the transcript has not shown yet."""
    mp = mp or {}
    e = epochs[c]
    label = (names or {}).get((c, e)) or (f"c{c}" if e <= 0 else f"c{c}.{e}")
    if sender == "event":
        return f"{label} closed"

    def raw(ns, model):
        key = mp.get(("b", ns, model))
        return "<new>" if key is None else json.loads(key)

    k = mm[0]
    if sender == "client":
        msg = Lifecycle.render("client", mm)
        if k in ("prompt", "resume"):
            msg["id"] = raw("rid:" + label, (c, mm[1]))
        elif k == "cancel_req":
            msg["params"]["requestId"] = raw("rid:" + label, (c, mm[1]))
        elif k == "perm_ans":
            msg["id"] = raw("perm", mm[1])
    else:
        msg = Lifecycle.render("agent", mm)
        if k in ("ok", "err", "v1_prompt_result", "resumed"):
            msg["id"] = raw("rid:" + label, (c, mm[1]))
        if k == "ok":
            msg["result"]["messageId"] = raw("mid", mm[2])
        elif k in ("user_message", "chunk"):
            msg["params"]["update"]["messageId"] = raw("mid", mm[1])
        elif k == "tool":
            msg["params"]["update"]["toolCallId"] = raw("tool", mm[1])
        elif k == "perm":
            msg["id"] = raw("perm", mm[1])
        elif k == "perm_cancel":
            msg["params"]["requestId"] = raw("perm", mm[1])
    return f"{label} {sender}: {Lifecycle.summary(msg)}"


def explain(
    entries: list[tuple[int, dict]],
    rules: Rules = RFD_RULES,
    max_nodes: int = 2_000_000,
    cfg: Config | None = None,
    clamp: bool = False,
    complete: bool = False,
) -> Explanation:
    """Does some run of the model (under ``rules``, lenient) explain the transcript?

    The agent of the model may skip a SHOULD here (``Rules.lenient``): the
    question is whether the transcript is allowed; the rule-based monitor
    reports the SHOULDs. It replays each message whole or by chunks
    independently (what ``Rules.replay_mixed`` explores, matched lazily:
    ``_search``), and under
    ``cancel_rejects_held="must"`` it rejects the prompts a cancel covers at
    any point after the cancel ("later").

    Each session of the transcript (``split_sessions``) is explained by a model
    run of its own; the transcript is explained when every session is. The
    first unexplained line reported is the earliest over the sessions.

    ``entries`` as ``sims.wire.transcript.parse_text`` returns them. ``cfg``
    overrides the bounds ``config_for`` derives; ``clamp`` clamps them to
    LIMITS (by default bounds beyond LIMITS are kept and listed in
    ``clamped``). A transcript is a prefix of a run: a log cut before an
    owed echo or idle is explained. With ``complete`` the log is taken as
    the whole run so far: its end must also be a point where the agent owes
    no connected client an echo (the rule-based checker's end-of-log rule);
    otherwise the "line" after the last is unexplained (``at_end``) and
    ``allowed`` lists what the model would still have had to send.
    """
    # lenient, and the 2.4.0 reading to the letter ("must") searched as "later": the prompts
    # a cancel covers are never inserted and are answered -32800, but not necessarily before
    # the cancelled work's last updates (``Rules.cancel_rejects_held``)
    rules = explain_rules(rules)
    sessions = split_sessions(entries)
    results: list[Explanation] = []
    budget = max_nodes
    for part in sessions.parts:
        prep = prepare(part.entries, sessions.initialized, part.creator, rules.spec)
        r = _explain_session(prep, rules, budget, cfg, clamp, complete)
        r.session = part.session
        results.append(r)
        budget = max(1, budget - r.nodes)
    if sessions.raw:
        n = sessions.raw[0]
        results.append(Explanation(False, n, n - 1, note="it is not a JSON-RPC message, and every message of the model is one"))
    if complete and sessions.unanswered:
        n = sessions.unanswered[0]
        last_line = max((m for m, _ in entries), default=0)
        results.append(Explanation(False, last_line + 1, last_line, at_end=True, note=(
            f"the request on line {n} is never answered, and every participant of the model answers "
            "each request it received while its connection lasts")))
    if sessions.stray:
        n = sessions.stray[0]
        results.append(Explanation(False, n, n - 1, note=(
            "it answers no pending request of the other side on its connection, and every participant "
            "of the model answers each request it received, once")))
    last = max((n for n, _ in entries), default=0)
    out = Explanation(True, None, last)
    failed = [r for r in results if not r.explained]
    if failed:
        out = replace(min(failed, key=lambda r: r.first_unexplained_line))
    elif results:
        out.config = results[-1].config
    out.nodes = sum(r.nodes for r in results)
    out.skipped = sessions.skipped + sum(r.skipped for r in results)
    out.matched = sum(r.matched for r in results)
    out.clamped = list(dict.fromkeys(c for r in results for c in r.clamped))
    out.exhausted = any(r.exhausted for r in results)
    out.sessions = len(sessions.parts)
    return out


def _explain_session(prep: Prepared, rules: Rules, max_nodes: int, cfg: Config | None, clamp: bool,
                     complete: bool) -> Explanation:
    """One session's lines: the search, with the quick bounds first."""
    derived, clamped, quick = config_and_clamps(prep, clamp)
    if cfg is not None:
        return _search(prep, cfg, rules, max_nodes, complete, clamped, False)
    resumes = [ln.msg for ln in prep.lines if ln.msg[0] == "resume"]
    if not any(m[2] or rules.replay_without_replay_from for m in resumes):
        # Whether a message is retained or live-only shows only in a replay:
        # without one, exploring both only doubles the states per prompt.
        derived, quick = replace(derived, live_only=False), replace(quick, live_only=False)
        retain = True
    else:
        retain = False
    nodes = 0
    if quick != derived:
        # Cheap first: most working episodes are the prompts' own work.
        r = _search(prep, quick, rules, max_nodes, complete, clamped, retain)
        if r.explained:
            return r
        nodes = r.nodes
    r = _search(prep, derived, rules, max_nodes, complete, clamped, retain)
    r.nodes += nodes
    return r


def _retain_all(s):
    """The state with every message retained (only when no replay can follow)."""
    a = s.agent
    if all(m.retained for m in a.conv):
        return s
    return s._replace(agent=a._replace(conv=tuple(m._replace(retained=True) for m in a.conv)))


def _settle_retention(s, mp, hints: dict):
    """The state with each bound message's retention as the replays show it
    (``Prepared.retained``), or None when the run contradicts them.

    Retention shows only in a replay. Once a message's raw id is bound, a run
    that retained a message the replays show live-only (or the converse) can
    explain nothing further; one whose message no replay follows is
    normalised to retained (the two runs differ nowhere a later line reads).
    The runs that keep both possibilities open then meet, and the search does
    not carry every combination of retained and live-only messages until the
    first replay."""
    get = mp.get
    a = s.agent
    conv = None
    for i, m in enumerate(a.conv):
        raw = get(("b", "mid", m.mid))
        if raw is None:
            continue
        want = hints.get(raw, True)
        if m.retained != want:
            if raw in hints:
                return None
            if conv is None:
                conv = list(a.conv)
            conv[i] = m._replace(retained=True)
    if conv is None:
        return s
    return s._replace(agent=a._replace(conv=tuple(conv)))


def _forget(s, keep_cut: bool = False):
    """Forget what no later step reads, so that runs differing only there meet:
    ``had_work_before_insertion`` of a request past insertion (it bounds the hook loop of requests
    not yet inserted; phases never go back), the ID a rejected request had
    reserved (never sent, never inserted: only the ghost ``issued`` keeps it),
    and the ghosts only properties read (``Msg.audience``,
    ``Req.session_cancel_before_insertion``, ``Client.missed_messages``,
    ``Work.before_insertion_of``, ``Agent.ended_tools``, which no step reads at all):
    trace validation checks no property. With ``keep_cut``
    (``cancel_rejects_held="later"``) ``Req.session_cancel_before_insertion``
    of a prompt not yet inserted is behaviour, not a ghost, and is kept."""
    s = _forget_ghosts(s, keep_cut)
    a = s.agent
    if not any((r.had_work_before_insertion and r.phase not in NOT_INSERTED) or (r.mid and r.phase == "rejected") for r in a.reqs):
        return s
    dead = {r.mid for r in a.reqs if r.mid and r.phase == "rejected"}
    reqs = tuple(
        r._replace(had_work_before_insertion=False if r.phase not in NOT_INSERTED else r.had_work_before_insertion,
                   mid=0 if r.phase == "rejected" else r.mid)
        for r in a.reqs
    )
    issued = tuple(e for e in a.issued if e[0] not in dead) if dead else a.issued
    return s._replace(agent=a._replace(reqs=reqs, issued=issued))


def _forget_ghosts(s, keep_cut: bool = False):
    a = s.agent
    if any(m.audience for m in a.conv):
        a = a._replace(conv=tuple(m._replace(audience=0) if m.audience else m for m in a.conv))
    if any(r.session_cancel_before_insertion and not (keep_cut and r.phase in NOT_INSERTED) for r in a.reqs):
        a = a._replace(reqs=tuple(r._replace(session_cancel_before_insertion=False)
                                  if r.session_cancel_before_insertion and not (keep_cut and r.phase in NOT_INSERTED) else r
                                  for r in a.reqs))
    if a.work is not None and a.work.before_insertion_of:
        a = a._replace(work=a.work._replace(before_insertion_of=0))
    if a.ended_tools:
        a = a._replace(ended_tools=frozenset())
    clients = s.clients
    if any(cl.missed_messages for cl in clients):
        clients = tuple(cl._replace(missed_messages=False) if cl.missed_messages else cl for cl in clients)
    if a is s.agent and clients is s.clients:
        return s
    return s._replace(agent=a, clients=clients)


def _rename_mids(s, fmap: frozenset, model: Lifecycle):
    """The state with its message IDs renumbered (``Lifecycle.renumber_ids``), and the
    raw <-> model ID bindings renamed to match: states that differ only in the
    order the agent numbered concurrent prompts are one node."""
    s2, mp = model.renumber_ids(s)
    if not mp:
        return s2, fmap
    out = []
    for key, value in fmap:
        if key[1] == "mid":
            if key[0] == "f":
                value = mp.get(value, value)
            else:
                key = ("b", "mid", mp.get(key[2], key[2]))
        out.append((key, value))
    return s2, frozenset(out)


def _due(action: tuple, s, pos: int, lines, epochs) -> bool:
    """Is this submission the next line? A correct client's submission changes
    nothing any other step reads until the agent receives it, so the search
    makes it just before that line (the same runs, without every way of
    submitting ahead of time)."""
    _, c, content = action
    if pos >= len(lines) or s.up[c]:
        return False
    ln = lines[pos]
    return (ln.client == c and ln.sender == "client" and ln.msg[0] == "prompt" and ln.epoch == epochs[c]
            and symbol(content) == ln.msg[2])


def _may_end(s, rules: Rules) -> bool:
    """May the log end here (``complete``)? The agent owes no connected client
    an echo, has answered every prompt of a connected client, and has reported
    the idle of work a session/cancel reached: the rule-based checker's
    end-of-log rules (every_inserted_message_echoed, every_prompt_answered,
    cancelled_work_reported_idle)."""
    a = s.agent
    if any(m.owed for m in a.conv):
        return False
    if a.work is not None and a.work.cancelling:
        return False
    return not rules.prompt_response or not any(not r.answers and not r.orphan and r.phase != "dropped" for r in a.reqs)


def _place(lines: list, p: int, taken: frozenset, c: int, sender: str) -> int:
    """The line a model message to or from client c is matched against: the
    first line not yet matched (p) or, for a message the agent sends, the
    first line of c's connection in the run of agent lines that starts at p.

    The model's agent sends an update to every attached client in one step
    (docs/model.md, section 4, abstraction 2); a real agent writes each
    connection in turn, and what it writes to another connection meanwhile
    (a response, the next update) falls in between. Between two lines the
    agent reads, the order of its writes to *different* connections is
    therefore not the order of model steps; the order on each connection is,
    and so is every line the agent reads (a barrier)."""
    if sender != "agent":
        return p
    q, total = p, len(lines)
    while q < total and (q in taken or (lines[q].sender == "agent" and lines[q].client != c)):
        q += 1
    return q


def _resume_due(action: tuple, s, pos: int, lines, epochs) -> bool:
    """A disconnected client's resume is made just before the agent receives
    it (the next line): until then the client does nothing else (it is
    resuming) and no step reads its new connection, so the search does not
    carry every moment it could have been sent. A resume on a connection the
    client still has is made at any time, as before."""
    _, c, mode = action
    if s.clients[c].connected:
        return True
    if pos >= len(lines):
        return False
    ln = lines[pos]
    return (ln.client == c and ln.sender == "client" and ln.msg[0] == "resume" and ln.epoch == epochs[c] + 1
            and ln.msg[2] == (mode == "replay"))


#: ``_Search.match``'s answer when the log ends in the middle of a step's lines (a partial log)
_CUT = object()


class _Search:
    """Breadth-first over transcript positions: the nodes (model state, connection
    epochs, id bindings) consistent with the first p lines, one set per p.

    Nodes at position p come only from nodes at positions <= p, so the
    positions are settled in increasing order and a settled position's set is
    dropped. Nodes are normalised before they are compared (``_forget``,
    ``_rename_mids``, ``_retain_all``): the set for a position holds what a
    later line can still tell apart, so its size stays bounded as the log
    grows, and the search time grows with the log's length.

    A client that joins the session by resume (``prep.late``) starts with its
    connection lost: the run begins with a ``ConnectionLost`` step for it,
    before the transcript (its first connection is then the one its resume
    opens)."""

    def __init__(self, prep: Prepared, cfg, rules, max_nodes, complete, clamped, retain) -> None:
        self.prep, self.cfg, self.rules = prep, cfg, rules
        self.model = Lifecycle(cfg, rules)
        self.max_nodes, self.complete, self.clamped, self.retain = max_nodes, complete, clamped, retain
        self.lines = prep.lines
        self.total = len(self.lines)
        self.names = {(ln.client, ln.epoch): ln.label for ln in self.lines}
        self.rename = self.model.ids_renamed
        self.lazy = rules.client_associates_by == "response" and not rules.client_idle_completes
        self.keep_cut = rules.cancel_rejects_held == "later"
        self.hints = prep.retained if cfg.live_only else None
        # settled history is forgotten (``sims.wire.settled``); the raw ids it bound are read off the log
        self.compact = compacts(self.model, retain)
        self.raw_ids = RawIds(self.lines) if self.compact else None
        self.own_parts = rules.parts is None
        self.nodes = 1
        self.best = 0  # the furthest position some run explains the lines before
        self.allowed: set[str] = set()  # what runs at ``best`` would send there

    def reach(self, p: int, text: str | None) -> None:
        # A run explains the lines before p; text is what it would send at p.
        if p > self.best:
            self.best, self.allowed = p, set()
        if p == self.best and text is not None:
            self.allowed.add(text)

    def explained(self) -> Explanation:
        lines = self.lines
        return Explanation(True, None, lines[-1].n if lines else 0, [], self.nodes, self.clamped, self.prep.skipped,
                           False, self.cfg, matched=self.total)

    def run(self) -> Explanation:
        cfg, rules, prep, model = self.cfg, self.rules, self.prep, self.model
        (s0,) = model.init_states()
        for c in sorted(prep.late):
            s0 = next(st.state for st in model.next_steps(s0) if st.action == ("ConnectionLost", c))
        epochs0 = tuple(-1 if c in prep.late else 0 for c in range(cfg.clients))
        start = (s0, 0, epochs0, frozenset(), frozenset())
        buckets: dict[int, list] = {0: [start]}
        seen: dict[int, set] = {0: {start}}
        exhausted = False
        while buckets and not exhausted:
            pos = min(buckets)
            work = buckets.pop(pos)
            here = seen[pos]
            for node in work:  # grows while it runs: silent steps stay at pos
                s, _, _, _, ahead = node
                if pos == self.total and not ahead and (not self.complete or _may_end(s, rules)):
                    return self.explained()
                self.reach(pos, None)
                for nxt in self.successors(node, pos):
                    if nxt is _CUT:
                        return self.explained()
                    p = nxt[1]
                    if p == pos:
                        bucket, todo = here, work
                    else:
                        bucket = seen.get(p)
                        if bucket is None:
                            seen[p] = bucket = set()
                            buckets[p] = []
                        todo = buckets[p]
                    if nxt not in bucket:
                        bucket.add(nxt)
                        todo.append(nxt)
                        self.nodes += 1
                if self.nodes >= self.max_nodes:
                    exhausted = True
                    break
            del seen[pos]
        return self.unexplained(exhausted)

    def unexplained(self, exhausted: bool) -> Explanation:
        lines, best = self.lines, self.best
        at_end = best == self.total
        first = lines[best].n if not at_end else (lines[-1].n + 1 if lines else 1)
        prefix = lines[best - 1].n if best > 0 else 0
        return Explanation(False, first, prefix, sorted(self.allowed), self.nodes, self.clamped, self.prep.skipped,
                           exhausted, self.cfg, at_end, matched=best, note="" if at_end else _note(lines[best]))

    def successors(self, node, pos: int):
        """The nodes one model step leads to from ``node`` whose messages match the log (``_CUT``:
        the log ends inside a step's lines)."""
        s, _, epochs, fmap, ahead = node
        for step in self.model.next_steps(s):
            eps = epochs
            if self.lazy and step.action[0] == "ClientSubmitPrompt" and not _due(step.action, s, pos, self.lines, epochs):
                continue
            if step.action[0] == "ClientResume":
                if not _resume_due(step.action, s, pos, self.lines, epochs):
                    continue
                if not s.clients[step.action[1]].connected:
                    c = step.action[1]
                    eps = epochs[:c] + (epochs[c] + 1,) + epochs[c + 1 :]
            matched = self.match(_observable(s, step), pos, ahead, eps, fmap)
            if matched is _CUT:
                yield _CUT
                return
            if matched is None:
                continue
            nxt = self.settle(s, step, pos, ahead, eps, fmap, *matched)
            if nxt is not None:
                yield nxt

    def match(self, obs: list, pos: int, ahead: frozenset, eps: tuple, fmap: frozenset):
        """Place each message the step sends on a line of the log: (next position, lines taken
        ahead of it, the id bindings), or None when one does not fit (or ``_CUT``)."""
        lines, total = self.lines, self.total
        p, taken, mp = pos, ahead, None
        raw_ids = self.raw_ids
        bound = None if raw_ids is None else (lambda ns, raw: raw_ids.bound(ns, raw, pos, ahead))
        k = 0
        while k < len(obs):
            c, sender, mm = obs[k]
            k += 1
            q = _place(lines, p, taken, c, sender)
            if q >= total:
                if not self.complete and p == total:
                    # The log was cut in the middle of this step's lines (every line before
                    # the cut is explained: one that is not must be explained by a step of
                    # its own, in some other order).
                    return _CUT
                self.reach(p, _render(c, sender, mm, eps, mp or dict(fmap), self.names))
                return None
            line = lines[q]
            if mp is None:
                mp = dict(fmap)
            if mm[0] == "user_message" and mm[3] and mm[2] and line.msg[0] == "user_message" and line.msg[2] == ():
                # A message replayed whole in the model, by chunks in the log:
                # the same replay with this message's mode changed
                # (``Rules.replay_mixed``), without enumerating every mix.
                obs = obs[:k] + [(c, sender, ("chunk", mm[1], mm[2][0], True))] + obs[k:]
                mm = ("user_message", mm[1], (), True, mm[4])
            if line.epoch != eps[c] or not _unify(c, sender, mm, line, mp, bound):
                if p >= self.best:
                    self.reach(p, _render(c, sender, mm, eps, mp, self.names))
                return None
            if q == p:
                p += 1
                while p in taken:
                    taken = taken - {p}
                    p += 1
            else:
                taken = taken | {q}
        return p, taken, mp

    def settle(self, s, step, pos, ahead, eps, fmap, p, taken, mp):
        """The normalised node after ``step`` (None: its retention contradicts the log)."""
        nf = fmap if mp is None or len(mp) == len(fmap) else frozenset(mp.items())
        post = step.state
        if self.retain:
            post = _retain_all(post)
        elif self.hints is not None and nf is not fmap:
            post = _settle_retention(post, mp, self.hints)
            if post is None:
                return None
        post = _forget(post, self.keep_cut)
        if self.own_parts:
            post = forget_seen(post, self.model)
        if self.compact:
            post, nf = (forget_settled(post, self.model), frozenset()) if settled(post) else forget_dead(post, nf)
        if step.action[0] == "AgentInitiateWork" and (p > pos or taken != ahead):
            # Agent-initiated work that reports running to a client spends a
            # line of the log: the log bounds those, and runs that differ only
            # in how many they started so far meet. Work started while no
            # client is attached is silent and spends the budget.
            post = post._replace(used=post.used._replace(agent_work=s.used.agent_work))
        if self.rename:
            post, nf = _rename_mids(post, nf, self.model)
        return (post, p, eps, nf, taken)


def _search(prep: Prepared, cfg, rules, max_nodes, complete, clamped, retain) -> Explanation:
    """Explain ``prep``'s lines with runs of the model (``_Search``)."""
    return _Search(prep, cfg, rules, max_nodes, complete, clamped, retain).run()


def _note(line: Line) -> str:
    """Why no model step sends a line the abstraction marked (empty for other lines)."""
    if line.msg[0] == "invalid":
        return f"{line.msg[2]}, which no participant of the model sends"
    return _NOTES.get(line.msg[0], "")


#: Why a line the abstraction marked is one no model step sends.
_NOTES = {
    "unopened": "the agent sends it for a session its connection neither created nor resumed",
    "after_close": "the agent sends it for the session after the session/close response on that connection",
}
