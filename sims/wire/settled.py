"""What a search node of ``trace --model`` may forget: settled history.

A node of the search (``sims.wire.modeltrace``) is a model state, a position in
the log and the raw <-> model id bindings. Left alone, all three grow with the
log: the agent keeps every request and message (``Agent.reqs``, ``Agent.conv``,
``Agent.issued``), each client every submission and its view of the
conversation, the judges every message ID they saw (``System.seen``), and the
bindings every id the log named. Hashing, comparing and copying a node then
costs time in proportion to the log, and the search is quadratic.

At a *settled* point (``settled``) nothing of that history can be read again:
no request is open, no message is owed an echo, no work runs, nothing is in
flight, no client has a submission it could still retry, associate or cancel.
``forget_settled`` then keeps only the counters and flags a later step reads,
and the node keeps no binding: every model id it bound is dead (a later step
makes fresh ones). ``RawIds`` keeps the one fact the dropped bindings still
carried, that a raw id was bound, without storing it in the node: which raw ids
a node bound depends only on the lines it matched, so it is read off the log.
The argument, field by field, is in docs/transcripts.md ("Search nodes keep
what the future can read").

Between settled points (two clients seldom settle together) ``forget_dead`` does the
same request by request: a request final and answered, its message echoed and taken by
work, its submission final, goes with its message, its view entries and the bindings of
its ids; so do the bindings of tool calls whose work has ended.

Only under the rule sets ``RULE_SETS`` names (as ``explain`` adjusts them), the
model's own parts (no mutant), opaque message IDs and without replay in the log
(``compacts``): a bug or a variant may read history the correct agent does not.

What this module asks of the model it asks of the model object the search runs (a
``Lifecycle``): whether it renames message IDs (``ids_renamed``) and what its judges
remember at the start of a session (``seen_at_start``).
"""

from __future__ import annotations

from acp_lifecycle.model import RULE_SETS, Lifecycle, Rules

__all__ = ["RawIds", "compacts", "explain_rules", "forget_dead", "forget_seen", "forget_settled", "line_ids", "settled"]

#: the phases of a request no step moves on from
_FINAL = ("answered", "rejected", "dropped")


def explain_rules(rules: Rules) -> Rules:
    """``rules`` as ``explain`` searches with them (lenient; "must" read as "later")."""
    rules = rules.with_(lenient=True)
    if rules.cancel_rejects_held == "must":
        rules = rules.with_(cancel_rejects_held="later")
    return rules


_STANDARD = {explain_rules(r).with_(name="") for r in RULE_SETS.values()}


def compacts(model: Lifecycle, retain: bool) -> bool:
    """May settled history be forgotten in a search of ``model``? Only for a named rule set
    (as ``explain_rules`` adjusts it) with the model's own parts and opaque message IDs, and
    when every message is kept retained (``retain``: no replay in the log, so no message is
    ever sent again)."""
    rules = model.rules
    return retain and rules.parts is None and model.ids_renamed and rules.with_(name="") in _STANDARD


def forget_seen(s, model: Lifecycle):
    """The state with the judges' memory (``System.seen``) back at its start in ``model``: a
    history variable no participant reads, and ``trace --model`` reads no judge's finding."""
    fresh = model.seen_at_start(len(s.clients))
    return s if s.seen == fresh else s._replace(seen=fresh)


def settled(s) -> bool:
    """Is the history of ``s`` settled: nothing in flight, no work, every request final and
    answered (or dropped), every message echoed, every submission final with its message ID
    known, no permission request, resume or buggy leftover open?"""
    if any(s.up) or any(s.down):
        return False
    a = s.agent
    if a.work is not None or a.pending or a.stragglers:
        return False
    if any(m.owed for m in a.conv):
        return False
    if any(r.phase not in _FINAL or not (r.answers or r.orphan or r.phase == "dropped") for r in a.reqs):
        return False
    for cl in s.clients:
        if cl.perms or cl.resuming or cl.done:
            return False
        if any(not (sub.status == "rejected" or (sub.status == "acknowledged" and sub.mid)) for sub in cl.subs):
            return False
    return True


def forget_settled(s, model: Lifecycle):
    """A settled state without its history: no requests, messages, issued IDs, ended tool
    calls, submissions or views, the message counter back at 1 (every ID is dead, so any
    is fresh), the judges' memory at its start. Counters, budgets, flags and the last
    reported state stay."""
    a = s.agent
    if not (a.reqs or a.conv or a.issued or a.ended_tools or a.next_id != 1
            or any(cl.subs or cl.view for cl in s.clients)):
        return forget_seen(s, model)
    agent = a._replace(reqs=(), conv=(), issued=(), ended_tools=frozenset(), next_id=1)
    clients = tuple(cl._replace(subs=(), view=()) for cl in s.clients)
    return forget_seen(s._replace(agent=agent, clients=clients), model)


def line_ids(line) -> tuple:
    """The raw ids a transcript line binds when a model message matches it, as
    ((namespace, raw), ...): the same namespaces as ``modeltrace._unify``."""
    t = line.msg
    k = t[0]
    if k in ("prompt", "cancel_req", "resume", "err", "v1_prompt_result", "resumed"):
        return (("rid:" + line.label, t[1]),)
    if k == "ok":
        return (("rid:" + line.label, t[1]), ("mid", t[2]))
    if k in ("perm", "perm_cancel", "perm_ans"):
        return (("perm", t[1]),)
    if k in ("user_message", "chunk"):
        return (("mid", t[1]),)
    if k == "tool":
        return (("tool", t[1]),)
    return ()


class RawIds:
    """Which raw ids a node has bound, read off the log: a node at position ``pos``
    with the lines ``ahead`` matched out of order bound exactly the ids of those
    lines (a binding, once made, was never undone before ``forget_settled``)."""

    def __init__(self, lines: list) -> None:
        self.lines = lines
        self.first: dict = {}
        for q, line in enumerate(lines):
            for key in line_ids(line):
                self.first.setdefault(key, q)

    def bound(self, ns: str, raw, pos: int, ahead: frozenset) -> bool:
        q = self.first.get((ns, raw))
        if q is None:
            return False
        if q < pos:
            return True
        return any((ns, raw) in line_ids(self.lines[x]) for x in ahead)


def _held_mids(s) -> dict:
    """The message IDs something other than the agent's history holds: a submission (mid ->
    (client, request id); None when more than one) or a message on its way to a client (None)."""
    held: dict = {}
    for c, cl in enumerate(s.clients):
        for sub in cl.subs:
            if sub.mid:
                held[sub.mid] = (c, sub.rid) if sub.mid not in held else None
    for chan in s.down:
        for m in chan:
            if m[0] == "ok":
                held[m[2]] = None
            elif m[0] in ("user_message", "chunk"):
                held[m[1]] = None
    return held


def _dead_reqs(s) -> set:
    """The indices of the requests whose history no later step reads (``forget_dead``)."""
    a, w = s.agent, s.agent.work
    busy = set(a.pending) | set(w.inputs if w is not None else ())
    owed = {m.mid for m in a.conv if m.owed}
    live = {m.origin for m in a.conv if m.owed or m.mid in busy}
    held = _held_mids(s)
    dead = set()
    for i, r in enumerate(a.reqs):
        if r.phase not in _FINAL or not (r.answers or r.orphan or r.phase == "dropped"):
            continue
        if i in live or (r.mid and (r.mid in busy or r.mid in owed or held.get(r.mid, (r.cid, r.rid)) != (r.cid, r.rid))):
            continue
        if w is not None and w.before_insertion_of == i + 1:
            continue
        cl = s.clients[r.cid]
        if r.rid in cl.done or any(m[0] != "prompt" and len(m) > 1 and m[1] == r.rid for m in s.up[r.cid]):
            continue
        sub = next((x for x in cl.subs if x.rid == r.rid), None)
        if sub is not None and not (sub.status == "rejected" or (sub.status == "acknowledged" and sub.mid)):
            continue
        dead.add(i)
    return dead


def _without_dead_tools(s, fmap: frozenset) -> frozenset:
    """``fmap`` without the bindings of tool calls no step updates again: tool call ids come
    from a counter that is kept (``Used.tools``), and only the running work's calls (and a
    buggy agent's stragglers) are sent again."""
    a = s.agent
    live = set(a.stragglers) | {t for t, _ in a.work.tools} if a.work is not None else set(a.stragglers)
    drop = {("f", "tool", raw) for (k, raw) in fmap if k[0] == "b" and k[1] == "tool" and k[2] not in live}
    if not drop:
        return fmap
    return frozenset(kv for kv in fmap if kv[0] not in drop and not (kv[0][:2] == ("b", "tool") and kv[0][2] not in live))


def forget_dead(s, fmap: frozenset):
    """The state without the history of its dead requests, and ``fmap`` without their bindings.

    ``forget_settled`` drops the whole history at a settled point; between two such points
    runs that passed through one and runs that did not still differ in the history the first
    forgot. A request is dead when it is final and answered, its message (if any) is owed no
    echo and waits for no work, no work runs before its insertion, nothing in flight names it,
    and its submission (if any) is final with its message ID known: the same conditions as
    ``settled``, for one request. Its message, its submission, the view entries of its
    message and the bindings of its message ID and request id go with it; the message
    counter restarts past the IDs still in use (message IDs are opaque). Imported messages
    owed no echo and waiting for no work go too. Under ``compacts`` only."""
    a = s.agent
    fmap = _without_dead_tools(s, fmap)
    dead = _dead_reqs(s)
    busy = set(a.pending) | set(a.work.inputs if a.work is not None else ())
    gone_mids = {a.reqs[i].mid for i in dead if a.reqs[i].mid}
    held = _held_mids(s)
    gone_mids |= {m.mid for m in a.conv if m.origin < 0 and not m.owed and m.mid not in busy and m.mid not in held}
    if not dead and not gone_mids:
        return s, fmap
    index, reqs = {-1: -1}, []
    for i, r in enumerate(a.reqs):
        if i not in dead:
            index[i] = len(reqs)
            reqs.append(r)
    conv = tuple(m._replace(origin=index[m.origin]) if index[m.origin] != m.origin else m
                 for m in a.conv if m.mid not in gone_mids and m.origin in index)
    issued = tuple((m, index[o]) for m, o in a.issued if m not in gone_mids and o in index)
    gone_rids = {(a.reqs[i].cid, a.reqs[i].rid) for i in dead}
    clients = []
    for c, cl in enumerate(s.clients):
        rids = {rid for cid, rid in gone_rids if cid == c}
        if rids or any(k in gone_mids for k, _, _ in cl.view):
            keep = {x.rid for x in cl.subs if x.rid not in rids}
            subs = tuple(x for x in cl.subs if x.rid not in rids or x.retry_of in keep)
            view = tuple(e for e in cl.view if e[0] not in gone_mids and -e[0] not in rids)
            cl = cl._replace(subs=subs, view=view)
        clients.append(cl)
    work = a.work
    if work is not None and work.before_insertion_of:
        work = work._replace(before_insertion_of=index[work.before_insertion_of - 1] + 1)
    drop = set()
    for key, value in fmap:
        if key[0] == "b" and ((key[1] == "mid" and key[2] in gone_mids)
                              or (key[1].startswith("rid:") and key[2] in gone_rids)):
            drop.add(key)
            drop.add(("f", key[1], value))
    nf = frozenset(kv for kv in fmap if kv[0] not in drop) if drop else fmap
    # every ID still held anywhere (a submission kept for its retry may hold a dropped one)
    used = {m.mid for m in conv} | {r.mid for r in reqs} | {m for m, _ in issued} | {
        k[2] for k, _ in nf if k[0] == "b" and k[1] == "mid"} | {
        x.mid for cl in clients for x in cl.subs}
    agent = a._replace(reqs=tuple(reqs), conv=conv, issued=issued, work=work, next_id=max(used - {0}, default=0) + 1)
    return s._replace(agent=agent, clients=tuple(clients)), nf
