"""The on-the-fly subset construction: A's states with the set of B's states consistent with the same observations.

>>> from acp_lifecycle.model.config import Config
>>> from acp_lifecycle.model.variants import VARIANTS
>>> d = diff_member(Config(name="doc"), VARIANTS["rfd"].rules, VARIANTS["rfd"].rules)
>>> d.a_not_b.witnesses, d.b_not_a.witnesses
({}, {})
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from acp_lifecycle.model.config import Config, Rules
from acp_lifecycle.model.spec import Lifecycle
from acp_lifecycle.model.system import Step, System, initial_state

from acp_lifecycle.sims.search.explore import TooLarge

from .check import check_witness
from .observe import END, canonical, kind, names0, observe

__all__ = ["Witness", "Direction", "MemberDiff", "diff_member", "rule_set", "SuiteDiff", "diff_suite"]




class _Side:
    """States of one rule set, interned to ints, with their moves cached."""

    def __init__(self, cfg: Config, rules: Rules):
        self.cfg, self.rules = cfg, rules
        self.model = Lifecycle(cfg, rules)
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
            for step in self.model.next_steps(pre):
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
    #: ``robust.Robustness`` once ``robust.check_robust`` has run (None: not checked)
    robustness: object = None
    #: the other rule set's possible next messages after the same observations (``check.answers``)
    other_answers: list | None = None

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
    n0 = names.id(names0(cfg.clients))
    # each rule set's own start: what its judges remember and its proposals keep may differ
    root = (A.id(initial_state(cfg, ra)), n0, B.initial(initial_state(cfg, rb), n0))
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
                            f"{max_nodes:,} states; lower the bounds or raise the limit (--max-states)"
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


def _diff_one(cfg: Config, a: Rules, b: Rules, max_nodes: int) -> MemberDiff:
    return diff_member(cfg, a, b, max_nodes=max_nodes)


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
               on_member: Callable[[str], None] | None = None, workers: int = 1) -> SuiteDiff:
    """Diff ``a`` and ``b`` on each member of ``suite``, the members side by side in ``workers``
    processes; with ``check`` every reported witness is replayed and checked (``check_witness``)
    before it is returned. ``on_member(name)``: the members before ``name`` are done."""
    from acp_lifecycle.sims.search.check import pool_map

    cfgs = list(suite.members)
    if on_member and cfgs:
        on_member(cfgs[0].name)

    def done(i: int) -> None:
        if on_member and i + 1 < len(cfgs):
            on_member(cfgs[i + 1].name)

    members = pool_map(partial(_diff_one, a=a, b=b, max_nodes=max_nodes), cfgs, workers, done)
    out = SuiteDiff(a, b, suite, members)
    if check:
        cfgs = {m.config.name: m.config for m in members}
        for w in out.only_a.values():
            check_witness(w, cfgs[w.member], a, b)
        for w in out.only_b.values():
            check_witness(w, cfgs[w.member], b, a)
    return out
