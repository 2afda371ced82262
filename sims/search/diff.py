"""Observable differences between two rule sets: what one lets agents do on the wire that the other does not.

A model checker compares a spec with its properties; ``diff`` compares two
versions of the spec with each other. For two rule sets A and B on the same
configuration it finds the **distinguishing runs**: a run of A whose observable
behaviour is a prefix that B also allows, followed by one event B does not
allow. Each is reported for A-not-B and for B-not-A, grouped by the kind of
that event, shortest first.

What is observed (docs/spec-review.md explains the choices):

* every JSON-RPC message on each connection, *when its sender sends it*: a
  client's message when the client sends it, the agent's when the agent sends
  it. Everything else is internal: when the agent reads its input, holding,
  reserving, inserting, delivery to a client;
* a connection closing (connection loss, agent restart);
* the end of a run: a state where the model has no step left;
* all of it as one sequence, in the order it happens: the interleaving across
  connections is observed, because the agent is one process;
* message IDs, tool call ids, correlation tokens and JSON-RPC ids up to
  consistent renaming: each is numbered in order of first appearance (JSON-RPC
  ids per connection and sender, since that is their scope), so two runs are
  equivalent exactly when their canonical sequences are equal.

Client messages are *inputs*: the clients of both rule sets must be able to
send them. A variant that changes only the agent never refuses an input the
other accepts; if one does (its clients differ), that input is reported as
its own kind, ``client sends ...``.

How it is computed, without enumerating runs: an on-the-fly subset
construction. The search explores A's states together with the set of B's
states consistent with the same observations (B's internal steps closed under
epsilon; a B step that emits several messages is matched one message at a
time). A branch stops at the first event the set cannot match: that event is
distinguishing. Dijkstra's order on (observed events, steps) makes the first
witness of each kind a shortest one: fewest observed events, then fewest
steps.

>>> from acp_lifecycle.model.config import Config
>>> from acp_lifecycle.model.variants import VARIANTS
>>> d = diff_member(Config(name="doc"), VARIANTS["rfd"].rules, VARIANTS["rfd"].rules)
>>> d.a_not_b.witnesses, d.b_not_a.witnesses
({}, {})
"""

from __future__ import annotations

import heapq
import json
import time
from dataclasses import dataclass, field
from typing import Callable

from acp_lifecycle.model.config import Config, Rules
from acp_lifecycle.model.system import Step, System, initial_state, successors
from acp_lifecycle.model.wire import agent_message, client_message

from acp_lifecycle.sims.search.explore import TooLarge

__all__ = [
    "DiffError",
    "Witness",
    "Direction",
    "MemberDiff",
    "observe",
    "canonical",
    "names0",
    "kind",
    "diff_member",
    "allows",
    "replay",
    "check_witness",
    "observed_lines",
    "rule_set",
    "SuiteDiff",
    "diff_suite",
]


class DiffError(RuntimeError):
    """A witness does not replay or does not distinguish: a bug in the diff; one line."""


# ---------------------------------------------------------------------------
# Observations
# ---------------------------------------------------------------------------
#
# A raw event is what one step shows on the wire, before renaming:
#   ("msg", c, "client" | "agent", model message tuple)
#   ("closed", c)
# A canonical event is what is compared:
#   ("msg", c, sender, template, numbers)   template: the JSON text with every
#                                            id replaced by "#", numbers: the
#                                            canonical number of each id
#   ("closed", c)
#   ("end",)                                 the run ends: no step is left
END = ("end",)


def observe(pre: System, step: Step) -> tuple:
    """The raw events of one step, in order: what clients sent, closures, what the agent sent.

    Read off the state, not the action's name: a client message is one appended
    to the client's ``up`` channel; a closure is a client going from connected
    to not connected.
    """
    out = []
    post = step.state
    for c, old in enumerate(pre.up):
        new = post.up[c]
        n = len(old)
        if len(new) > n and new[:n] == old:
            for m in new[n:]:
                out.append(("msg", c, "client", m))
    for c, cl in enumerate(pre.clients):
        if cl.connected and not post.clients[c].connected:
            out.append(("closed", c))
    for c, m in step.emitted:
        out.append(("msg", c, "agent", m))
    return tuple(out)


_SHAPES: dict = {}
_RENDERED: dict = {}


def _render(sender: str, msg: tuple) -> dict:
    key = (sender, msg)
    js = _RENDERED.get(key)
    if js is None:
        js = _RENDERED[key] = client_message(msg) if sender == "client" else agent_message(msg)
    return js


def _shape(sender: str, msg: tuple) -> tuple[str, tuple]:
    """(template, slots) of a message: its JSON with ids replaced, and the ids in order.

    A slot is (namespace, value, role, method): namespace ``mid`` (messageId),
    ``tool`` (toolCallId), ``tok`` (correlation token), ``rid`` (a JSON-RPC id
    of a request the client sent, or a ``requestId`` naming one), ``aid`` (a
    JSON-RPC id of a request the agent sent); role ``req`` (a new request),
    ``resp`` (a response to it) or ``ref`` (a reference to it).
    """
    key = (sender, msg)
    hit = _SHAPES.get(key)
    if hit is not None:
        return hit
    js = _render(sender, msg)
    method = js.get("method")
    is_request = method is not None and "id" in js
    slots: list = []

    def walk(v, top: bool):
        if isinstance(v, dict):
            out = {}
            for k in sorted(v):
                x = v[k]
                if top and k == "id":
                    ns = "rid" if (sender == "client") == is_request else "aid"
                    slots.append((ns, x, "req" if is_request else "resp", method))
                elif k == "requestId":
                    slots.append(("rid", x, "ref", None))
                elif k == "messageId":
                    slots.append(("mid", x, "", None))
                elif k == "toolCallId":
                    slots.append(("tool", x, "", None))
                elif k == "correlationToken":
                    slots.append(("tok", x, "", None))
                else:
                    out[k] = walk(x, False)
                    continue
                out[k] = "#"
            return out
        if isinstance(v, list):
            return [walk(x, False) for x in v]
        return v

    template = json.dumps(walk(js, True), sort_keys=True, separators=(",", ":"))
    hit = _SHAPES[key] = (template, tuple(slots))
    return hit


# Renaming state ("names"): a tuple of namespaces. 0: messageIds, 1: tool call
# ids, 2: correlation tokens (each a tuple of raw values, canonical number =
# index); then per client c, 3+2c: its request ids and 4+2c: the agent's
# request ids on its connection, each a tuple of (raw id, method, responses
# seen). A connection closing empties its two JSON-RPC namespaces.
_GLOBAL = {"mid": 0, "tool": 1, "tok": 2}


def names0(clients: int) -> tuple:
    """The renaming state before anything is observed."""
    return ((),) * (3 + 2 * clients)


def _latest(seq: tuple, value) -> int:
    for n in range(len(seq) - 1, -1, -1):
        if seq[n][0] == value:
            return n
    return -1


def canonical(names: tuple, raw: tuple) -> tuple[tuple, tuple]:
    """(canonical event, names after it) of a raw event."""
    if raw[0] == "closed":
        c = raw[1]
        i = 3 + 2 * c
        if names[i] or names[i + 1]:
            names = names[:i] + ((), ()) + names[i + 2 :]
        return raw, names
    _, c, sender, msg = raw
    template, slots = _shape(sender, msg)
    if not slots:
        return ("msg", c, sender, template, ()), names
    nl = list(names)
    nums = []
    for ns, value, role, method in slots:
        g = _GLOBAL.get(ns)
        if g is not None:
            seq = nl[g]
            try:
                n = seq.index(value)
            except ValueError:
                n = len(seq)
                nl[g] = seq + (value,)
        else:
            i = 3 + 2 * c + (ns == "aid")
            seq = nl[i]
            if role == "req":
                n = len(seq)
                nl[i] = seq + ((value, method, 0),)
            else:
                n = _latest(seq, value)
                if n < 0:
                    n = len(seq)
                    seq = nl[i] = seq + ((value, None, 0),)
                if role == "resp":
                    e = seq[n]
                    nl[i] = seq[:n] + ((e[0], e[1], e[2] + 1),) + seq[n + 1 :]
        nums.append(n)
    return ("msg", c, sender, template, tuple(nums)), tuple(nl)


def kind(raw: tuple, names: tuple) -> str:
    """The kind of a distinguishing event, for grouping: the message with its ids abstracted.

    ``names`` is the renaming state *before* the event: it tells whether a
    messageId is new and which request a response answers.
    """
    if raw == END:
        return "the run ends (no step left)"
    if raw[0] == "closed":
        return "a connection closes"
    _, c, sender, msg = raw
    js = _render(sender, msg)
    _, slots = _shape(sender, msg)
    notes = []
    for ns, value, role, method in slots:
        if ns == "mid":
            notes.append("a new messageId" if value not in names[0] else "a messageId seen before")
    who = "client sends " if sender == "client" else ""
    if "method" in js:
        method = js["method"]
        if method == "session/update":
            u = js["params"]["update"]
            k = u.get("sessionUpdate")
            text = k
            if k == "state_update":
                text += f" {u.get('state')}"
                if u.get("stopReason"):
                    text += f" stopReason={u['stopReason']}"
                if u.get("error"):
                    text += f" error={u['error'].get('code')}"
            elif k == "user_message":
                text += " with content []" if u.get("content") == [] else " with content"
            elif k == "tool_call_update":
                text += f" {u.get('status')}"
        else:
            text = method
            if method == "session/resume":
                text += " with replayFrom" if "replayFrom" in js.get("params", {}) else " without replayFrom"
        return who + text + (f" ({', '.join(notes)})" if notes else "")
    # A response: to which request, and the how-many-th.
    ns = "rid" if sender == "agent" else "aid"
    seq = names[3 + 2 * c + (ns == "aid")]
    n = _latest(seq, js.get("id"))
    request = seq[n][1] if n >= 0 and seq[n][1] else "an unknown request"
    nth = "a second response" if n >= 0 and seq[n][2] else "response"
    if "error" in js:
        text = f"{nth} to {request}: error {js['error'].get('code')}"
    else:
        result = js.get("result")
        fields = ", ".join(sorted(result)) if isinstance(result, dict) else type(result).__name__
        text = f"{nth} to {request}: result {{{fields}}}"
        if isinstance(result, dict) and "stopReason" in result:
            text += f" stopReason={result['stopReason']}"
    return who + text + (f" ({', '.join(notes)})" if notes else "")


# ---------------------------------------------------------------------------
# One side of the product: a rule set's states, moves and epsilon closures
# ---------------------------------------------------------------------------


class _Side:
    """States of one rule set, interned to ints, with their moves cached."""

    def __init__(self, cfg: Config, rules: Rules):
        self.cfg, self.rules = cfg, rules
        self.ids: dict[System, int] = {}
        self.states: list[System] = []
        self.moves: list = []  # id -> None | (eps ids, {raw0: [(rest, id)]}, [(step, raws, id)])
        self.closures: dict[int, tuple] = {}

    def id(self, s: System) -> int:
        i = self.ids.get(s)
        if i is None:
            i = self.ids[s] = len(self.states)
            self.states.append(s)
            self.moves.append(None)
        return i

    def expand(self, i: int) -> tuple:
        m = self.moves[i]
        if m is None:
            pre = self.states[i]
            eps: list[int] = []
            obs: dict = {}
            steps = []
            for step in successors(pre, self.cfg, self.rules):
                raws = observe(pre, step)
                j = self.id(step.state)
                steps.append((step, raws, j))
                if raws:
                    obs.setdefault(raws[0], []).append((raws[1:], j))
                else:
                    eps.append(j)
            m = self.moves[i] = (tuple(eps), obs, steps)
        return m

    def closure(self, i: int) -> tuple:
        """Every state reachable from i by steps that show nothing (i included)."""
        c = self.closures.get(i)
        if c is None:
            seen = {i}
            stack = [i]
            while stack:
                for j in self.expand(stack.pop())[0]:
                    if j not in seen:
                        seen.add(j)
                        stack.append(j)
            c = self.closures[i] = tuple(seen)
        return c

    def terminal(self, i: int) -> bool:
        return not self.expand(i)[2]


class _Subsets:
    """B's side of the product: sets of (state id, names id, pending raw events), interned."""

    def __init__(self, side: _Side, names: "_Interner"):
        self.side = side
        self.names = names
        self.sets: list[frozenset] = [frozenset()]  # id 0: the empty set (nothing matches)
        self.ids: dict[frozenset, int] = {frozenset(): 0}
        self.memo: dict = {}
        self.canon_memo: dict = {}
        self.ends: dict[int, bool] = {}

    def intern(self, s: frozenset) -> int:
        i = self.ids.get(s)
        if i is None:
            i = self.ids[s] = len(self.sets)
            self.sets.append(s)
        return i

    def initial(self, state: System, nid: int) -> int:
        return self.intern(self._close([(self.side.id(state), nid, ())]))

    def _canon(self, nid: int, raw: tuple) -> tuple:
        key = (nid, raw)
        hit = self.canon_memo.get(key)
        if hit is None:
            ev, names = canonical(self.names.values[nid], raw)
            hit = self.canon_memo[key] = (ev, self.names.id(names))
        return hit

    def _close(self, elems) -> frozenset:
        out = set()
        closure = self.side.closure
        for j, nid, rest in elems:
            if rest:
                out.add((j, nid, rest))
            else:
                for k in closure(j):
                    out.add((k, nid, ()))
        return frozenset(out)

    def advance(self, sid: int, ev: tuple) -> int:
        """The set after observing canonical event ``ev`` (closed under epsilon); 0 if none matches."""
        key = (sid, ev)
        r = self.memo.get(key)
        if r is not None:
            return r
        matched = []
        expand = self.side.expand
        canon = self._canon
        for j, nid, pend in self.sets[sid]:
            if pend:
                e2, nid2 = canon(nid, pend[0])
                if e2 == ev:
                    matched.append((j, nid2, pend[1:]))
                continue
            for raw0, nexts in expand(j)[1].items():
                e2, nid2 = canon(nid, raw0)
                if e2 == ev:
                    for rest, k in nexts:
                        matched.append((k, nid2, rest))
        r = self.memo[key] = self.intern(self._close(matched)) if matched else 0
        return r

    def allows_end(self, sid: int) -> bool:
        r = self.ends.get(sid)
        if r is None:
            terminal = self.side.terminal
            r = self.ends[sid] = any(not pend and terminal(j) for j, _, pend in self.sets[sid])
        return r


class _Interner:
    def __init__(self):
        self.values: list = []
        self.ids: dict = {}

    def id(self, v) -> int:
        i = self.ids.get(v)
        if i is None:
            i = self.ids[v] = len(self.values)
            self.values.append(v)
        return i


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass
class Witness:
    """A distinguishing run: a real run of ``allowed`` whose observations, up to the
    last one, ``refused`` also allows, and whose last observation it does not."""

    allowed: str
    refused: str
    member: str
    kind: str
    #: the run of ``allowed``: (pre-state, step) pairs from the initial state
    run: list[tuple[System, Step]]
    #: the canonical events observed, the distinguishing one last
    events: list[tuple]
    #: the raw events, aligned with ``events`` (for display)
    raws: list[tuple]
    #: the number (1-based) of the step of ``run`` that shows each event
    at: list[int] = field(default_factory=list)

    @property
    def length(self) -> tuple[int, int]:
        """(observed events, steps): what "shortest" orders by."""
        return (len(self.events), len(self.run))


@dataclass
class Direction:
    """One direction of a diff on one member: the runs A allows and B does not."""

    allowed: str
    refused: str
    #: product states explored: (A state, renaming, set of B states)
    nodes: int = 0
    transitions: int = 0
    #: distinct A states and distinct sets of B states met
    states: int = 0
    subsets: int = 0
    seconds: float = 0.0
    witnesses: dict[str, Witness] = field(default_factory=dict)


@dataclass
class MemberDiff:
    config: Config
    a_not_b: Direction
    b_not_a: Direction

    @property
    def seconds(self) -> float:
        return self.a_not_b.seconds + self.b_not_a.seconds

    @property
    def nodes(self) -> int:
        return self.a_not_b.nodes + self.b_not_a.nodes


# ---------------------------------------------------------------------------
# The product
# ---------------------------------------------------------------------------


def _direction(A: _Side, Bside: _Side, max_nodes: int, progress: Callable | None) -> Direction:
    t0 = time.perf_counter()
    cfg, ra, rb = A.cfg, A.rules, Bside.rules
    names = _Interner()
    B = _Subsets(Bside, names)
    s0 = initial_state(cfg)
    n0 = names.id(names0(cfg.clients))
    root = (A.id(s0), n0, B.initial(s0, n0))
    node_ids = {root: 0}
    nodes = [root]
    cost = [(0, 0)]
    parent: list = [None]  # node -> (parent node, index of the step in A's moves)
    heap = [(0, 0, 0)]
    #: kind -> (events, steps, node, step index or -1 for the end, index of the event in the step, raw)
    best: dict[str, tuple] = {}
    transitions = 0
    done = 0

    def found(k: str, key: tuple) -> None:
        old = best.get(k)
        if old is None or key[:2] < old[:2]:
            best[k] = key

    while heap:
        e, s, n = heapq.heappop(heap)
        if cost[n] != (e, s):
            continue
        done += 1
        if progress and done % 4096 == 0:
            progress(len(nodes))
        ai, nid, bid = nodes[n]
        steps = A.expand(ai)[2]
        if not steps:
            if not B.allows_end(bid):
                found(kind(END, names.values[nid]), (e + 1, s, n, -1, 0, END))
            continue
        for si, (step, raws, aj) in enumerate(steps):
            transitions += 1
            cur, nid2 = bid, nid
            for k, raw in enumerate(raws):
                ev, nv = canonical(names.values[nid2], raw)
                nxt = B.advance(cur, ev)
                if not nxt:
                    found(kind(raw, names.values[nid2]), (e + k + 1, s + 1, n, si, k, raw))
                    break
                cur, nid2 = nxt, names.id(nv)
            else:
                child = (aj, nid2, cur)
                c = (e + len(raws), s + 1)
                m = node_ids.get(child)
                if m is None:
                    m = node_ids[child] = len(nodes)
                    if m >= max_nodes:
                        raise TooLarge(
                            f"configuration {cfg.name!r}: the product of {ra.name} and {rb.name} passed "
                            f"{max_nodes:,} states; lower the bounds or pass a larger limit"
                        )
                    nodes.append(child)
                    cost.append(c)
                    parent.append((n, si))
                elif c < cost[m]:
                    cost[m] = c
                    parent[m] = (n, si)
                else:
                    continue
                heapq.heappush(heap, (c[0], c[1], m))

    d = Direction(ra.name, rb.name, len(nodes), transitions, len(A.states), len(B.sets) - 1)
    for k, (ne, ns, n, si, ki, raw) in sorted(best.items(), key=lambda kv: (kv[1][:2], kv[0])):
        d.witnesses[k] = _witness(A, nodes, parent, n, si, ki, k, cfg, ra, rb)
    d.seconds = time.perf_counter() - t0
    return d


def _witness(A: _Side, nodes, parent, n: int, si: int, ki: int, k: str, cfg, ra, rb) -> Witness:
    """The run from the initial state to node n, plus its step si (-1: the run ends at n)."""
    chain = []
    m = n
    while parent[m] is not None:
        p, i = parent[m]
        chain.append((nodes[p][0], i))
        m = p
    chain.reverse()
    run = [(A.states[ai], A.expand(ai)[2][i][0]) for ai, i in chain]
    if si >= 0:
        ai = nodes[n][0]
        run.append((A.states[ai], A.expand(ai)[2][si][0]))
    raws, events, at = [], [], []
    nm = names0(cfg.clients)
    for n, (pre, step) in enumerate(run, 1):
        for r in observe(pre, step):
            ev, nm = canonical(nm, r)
            raws.append(r)
            events.append(ev)
            at.append(n)
    if si >= 0:
        # The distinguishing event is the ki-th of the last step: drop what the step sent after it.
        extra = len(observe(*run[-1])) - ki - 1
        if extra:
            raws, events, at = raws[:-extra], events[:-extra], at[:-extra]
    else:
        raws.append(END)
        events.append(END)
        at.append(len(run))
    return Witness(ra.name, rb.name, cfg.name, k, run, events, raws, at)


def diff_member(
    cfg: Config,
    ra: Rules,
    rb: Rules,
    *,
    max_nodes: int = 3_000_000,
    progress: Callable[[str, int], None] | None = None,
) -> MemberDiff:
    """Both directions of the diff of ``ra`` and ``rb`` on one configuration."""
    # Each rule set's states and moves are computed once and serve both directions.
    sa = _Side(cfg, ra)
    sb = sa if rb == ra else _Side(cfg, rb)
    dirs = []
    for x, y, label in ((sa, sb, "a"), (sb, sa, "b")):
        cb = (lambda n, label=label: progress(label, n)) if progress else None
        dirs.append(_direction(x, y, max_nodes, cb))
    return MemberDiff(cfg, dirs[0], dirs[1])


# ---------------------------------------------------------------------------
# A named configuration (a suite of members)
# ---------------------------------------------------------------------------


def rule_set(name: str) -> Rules:
    """The rules of a spec variant (``variants --list``) or a seeded bug (``bug:NAME``, ``bugs --list``)."""
    from acp_lifecycle.model.bugs import BUGS
    from acp_lifecycle.model.variants import VARIANTS

    if name in VARIANTS:
        return VARIANTS[name].rules
    if name.startswith("bug:") and name[4:] in BUGS:
        return BUGS[name[4:]].rules
    raise KeyError(
        f"unknown rule set {name!r}: give a variant (`acp-lifecycle variants --list`) "
        "or bug:NAME for a seeded bug (`acp-lifecycle bugs`)"
    )


@dataclass
class SuiteDiff:
    """The diff of two rule sets on every member of a named configuration."""

    a: Rules
    b: Rules
    suite: object  # sims.configs.Suite
    members: list[MemberDiff]

    def _merged(self, which: str) -> dict[str, Witness]:
        best: dict[str, Witness] = {}
        for m in self.members:
            for k, w in getattr(m, which).witnesses.items():
                if k not in best or w.length < best[k].length:
                    best[k] = w
        return dict(sorted(best.items(), key=lambda kv: (kv[1].length, kv[0])))

    @property
    def only_a(self) -> dict[str, Witness]:
        """Kind -> the shortest witness over all members of what A allows and B does not."""
        return self._merged("a_not_b")

    @property
    def only_b(self) -> dict[str, Witness]:
        return self._merged("b_not_a")

    @property
    def different(self) -> bool:
        return bool(self.only_a or self.only_b)

    @property
    def seconds(self) -> float:
        return sum(m.seconds for m in self.members)


def diff_suite(suite, a: Rules, b: Rules, *, max_nodes: int = 3_000_000, check: bool = True,
               on_member: Callable[[str], None] | None = None) -> SuiteDiff:
    """Diff ``a`` and ``b`` on each member of ``suite``; with ``check`` every reported
    witness is replayed and checked (``check_witness``) before it is returned."""
    members = []
    for cfg in suite.members:
        if on_member:
            on_member(cfg.name)
        members.append(diff_member(cfg, a, b, max_nodes=max_nodes))
    out = SuiteDiff(a, b, suite, members)
    if check:
        cfgs = {m.config.name: m.config for m in members}
        for w in out.only_a.values():
            check_witness(w, cfgs[w.member], a, b)
        for w in out.only_b.values():
            check_witness(w, cfgs[w.member], b, a)
    return out


# ---------------------------------------------------------------------------
# Checking a witness independently of the product
# ---------------------------------------------------------------------------


def allows(cfg: Config, rules: Rules, events: list[tuple]) -> int:
    """How many of ``events`` (canonical, from the start) some run of ``rules`` shows.

    A plain subset simulation, no caches shared with the product: the set of
    (state, renaming, pending events) consistent with the events so far, closed
    under steps that show nothing.
    """

    def close(elems):
        out = set()
        stack = list(elems)
        while stack:
            e = stack.pop()
            if e in out:
                continue
            out.add(e)
            s, nm, pend = e
            if pend:
                continue
            for step in successors(s, cfg, rules):
                if not observe(s, step):
                    stack.append((step.state, nm, ()))
        return out

    s0 = initial_state(cfg)
    current = close([(s0, names0(cfg.clients), ())])
    for n, ev in enumerate(events):
        if ev == END:
            if not any(not pend and not successors(s, cfg, rules) for s, _, pend in current):
                return n
            continue
        nxt = []
        for s, nm, pend in current:
            if pend:
                e2, nm2 = canonical(nm, pend[0])
                if e2 == ev:
                    nxt.append((s, nm2, pend[1:]))
                continue
            for step in successors(s, cfg, rules):
                raws = observe(s, step)
                if raws:
                    e2, nm2 = canonical(nm, raws[0])
                    if e2 == ev:
                        nxt.append((step.state, nm2, raws[1:]))
        if not nxt:
            return n
        current = close(nxt)
    return len(events)


def replay(cfg: Config, rules: Rules, run: list[tuple[System, Step]]) -> list[tuple[System, Step]]:
    """Replay a run's actions from the initial state; DiffError if a step is not one the model offers."""
    s = initial_state(cfg)
    out = []
    for n, (_, step) in enumerate(run, 1):
        match = [st for st in successors(s, cfg, rules) if st.action == step.action and st.state == step.state]
        if len(match) != 1 or match[0].emitted != step.emitted:
            raise DiffError(f"step {n} ({step.action}) is not a step of {rules.name} here")
        out.append((s, match[0]))
        s = match[0].state
    return out


def check_witness(w: Witness, cfg: Config, allowed: Rules, refused: Rules) -> None:
    """Replay a witness and check what it claims; DiffError (one line) if it does not hold.

    1. its run is a run of ``allowed`` (every step replays from the initial state);
    2. the run shows exactly the witness's events (up to the distinguishing one);
    3. ``refused`` allows every event before the last, and not the last.
    """
    run = replay(cfg, allowed, w.run)
    nm = names0(cfg.clients)
    shown = []
    for pre, step in run:
        for r in observe(pre, step):
            ev, nm = canonical(nm, r)
            shown.append(ev)
    if w.events[-1] == END:
        if run and successors(run[-1][1].state, cfg, allowed):
            raise DiffError(f"{w.kind}: the run of {allowed.name} does not end where the witness says")
        shown.append(END)
    if shown[: len(w.events)] != w.events:
        raise DiffError(f"{w.kind}: the run of {allowed.name} does not show the witness's events")
    n = allows(cfg, refused, w.events)
    if n != len(w.events) - 1:
        where = "the distinguishing event too" if n == len(w.events) else f"only {n} of the {len(w.events) - 1} before it"
        raise DiffError(f"{w.kind}: {refused.name} allows {where}")


# ---------------------------------------------------------------------------
# For people
# ---------------------------------------------------------------------------


def observed_lines(w: Witness) -> list[dict]:
    """The witness's observations as transcript-like entries (``conn``, ``from``, ``msg``).

    Connections are labelled as in ``acp-lifecycle trace`` transcripts: ``c0``,
    then ``c0.1`` after client 0's connection closed and it resumed, ...
    """
    out = []
    epoch: dict[int, int] = {}
    for raw, n in zip(w.raws, w.at):
        if raw == END:
            out.append({"event": "end", "step": n})
            continue
        c = raw[1]
        label = f"c{c}" + (f".{epoch[c]}" if epoch.get(c) else "")
        if raw[0] == "closed":
            out.append({"conn": label, "event": "closed", "step": n})
            epoch[c] = epoch.get(c, 0) + 1
            continue
        out.append({"conn": label, "from": raw[2], "msg": _render(raw[2], raw[3]), "step": n})
    return out
