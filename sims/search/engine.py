"""The search engine behind ``explore``: breadth-first search over 64-bit fingerprints.

Compact storage, as TLC does it. A distinct state is remembered by its
fingerprint (a 64-bit hash of its canonical representative, ``model/symmetry``),
its parent's fingerprint and its depth; for the liveness check also the
eventually-obligations open in it (a bit mask) and its successors'
fingerprints. Whole states (representatives) live only in the frontier (the BFS level being
expanded and the next one). A counterexample is rebuilt at the end by running
the model again from the initial state, at each step taking a successor whose
fingerprint is the next one on the parent chain: every step of it is a real
step of ``successors``, whatever representative the search stored.

Two distinct states with one fingerprint would be taken for one (the second
never explored). The run reports TLC's two estimates of the probability that
this happened: the optimistic ``n * (m - n) / 2**64`` for n distinct states
and m generated ones, and ``1 / (smallest gap between two fingerprints)``.

Parallel search (``workers > 1``, Linux and macOS: ``fork``): the first levels
run here until the frontier is wide enough, then ``workers`` processes
forked from this one each take every ``workers``-th frontier state. Each
fingerprint has an owner (``fp % workers``) that keeps its record; a worker
that generates a state owned elsewhere sends the owner the fingerprint and the
parent's (16 bytes), never the state, and keeps the state itself if the owner
accepts it as new. The frontier is exchanged level by level through this
process, so the levels, and the shortest counterexamples, are the sequential
search's. ``dask.py`` runs the same shards on a Dask cluster.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import pickle
import sys
import traceback
from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from acp_lifecycle.model.config import Config, Rules
from acp_lifecycle.model.properties import Property
from acp_lifecycle.model.symmetry import canonicalizer
from acp_lifecycle.model.system import System, initial_state, successors

__all__ = ["Found", "Outcome", "Shard", "search", "default_workers", "portable_fingerprint", "TooLarge"]


class TooLarge(RuntimeError):
    """The exploration passed its state limit."""


class ReductionError(RuntimeError):
    """A counterexample found on a representative could not be replayed on a real run."""


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# --- fingerprints ----------------------------------------------------------------


def _plain(x):
    """Nested NamedTuples as plain tuples, frozensets as sorted tuples (what marshal takes)."""
    return tuple(
        [
            _plain(v) if isinstance(v, tuple) else tuple(sorted(v)) if isinstance(v, frozenset) else v
            for v in x
        ]
    )


def portable_fingerprint(key) -> int:
    """A 64-bit fingerprint that is the same in every process and on every machine.

    Python's ``hash`` (the local fingerprint) is seeded per process: forked
    workers share the seed, the workers of a Dask cluster do not.
    """
    d = hashlib.blake2b(marshal.dumps(_plain(key), 2), digest_size=8).digest()
    return int.from_bytes(d, "little", signed=True)


FINGERPRINTS: dict[str, Callable] = {"local": hash, "portable": portable_fingerprint}


@contextmanager
def no_gc():
    """No garbage collection while exploring: the states hold no cycles, and the
    collector would walk the whole heap again and again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# --- property dispatch -------------------------------------------------------------


class _Checks:
    """Which properties to check on a state or a step, with the per-action lists cached."""

    def __init__(self, props: list[Property]):
        self.always = [p for p in props if p.kind == "always"]
        self.eventually = [p for p in props if p.kind == "eventually"]
        self.stepwise = [p for p in props if p.kind in ("step", "sometimes")]
        self.settled: set[str] = set()
        self._by_key: dict = {}

    def settle(self, pids) -> None:
        new = set(pids) - self.settled
        if new:
            self.settled |= new
            self.always = [p for p in self.always if p.id not in self.settled]
            self._by_key.clear()

    def for_step(self, step) -> tuple:
        em = step.emitted
        key = step.action[0] if not em else (step.action[0], *[m[0] for _, m in em])
        ps = self._by_key.get(key)
        if ps is None:
            tags = {step.action[0], *(m[0] for _, m in em)}
            ps = tuple(
                p for p in self.stepwise if p.id not in self.settled and (p.on is None or not p.on.isdisjoint(tags))
            )
            self._by_key[key] = ps
        return ps


def _share(s: System, parts: dict) -> System:
    """``s`` built from parts equal to ones already stored this level (the
    frontier is most of the memory; new states share most of their parts)."""
    a = s.agent
    a = a._replace(reqs=parts.setdefault(a.reqs, a.reqs), conv=parts.setdefault(a.conv, a.conv))
    return tuple.__new__(System, (
        parts.setdefault(a, a),
        tuple([parts.setdefault(c, c) for c in s.clients]),
        parts.setdefault(s.up, s.up),
        parts.setdefault(s.down, s.down),
        parts.setdefault(s.used, s.used),
    ))


@dataclass
class Found:
    """A violation (or a sometimes witness) as the search saw it, before its trace is rebuilt."""

    pid: str
    #: the trace's length: the depth of the state, or of the step's target
    length: int
    #: the state (always) or the step's source (step, sometimes)
    fp: int
    action: tuple | None = None


# --- one shard of the search -----------------------------------------------------------


class Shard:
    """One partition of the search: the frontier states it holds, the fingerprints it owns."""

    def __init__(self, cfg: Config, rules: Rules, props: list[Property], *, symmetry: bool,
                 fingerprint: str = "local", graph: bool | None = None):
        self.cfg, self.rules = cfg, rules
        self.checks = _Checks(props)
        self.symmetry = symmetry
        self.canon = canonicalizer(rules, cfg) if symmetry else None
        self.fpname = fingerprint
        self.graph = bool(self.checks.eventually) if graph is None else graph
        self.index, self.count = 0, 1
        self.seen: set[int] = set()
        # own records: every fingerprint this shard owns, its parent's, its depth
        self.own_fp, self.own_parent, self.own_depth = array("q"), array("q"), array("H")
        # expansion records: every state this shard expanded, its open
        # obligations, how many distinct successors and which
        self.exp_fp, self.exp_mask, self.exp_deg, self.edges = array("q"), array("Q"), array("I"), array("q")
        self.frontier: list[tuple[System, int]] = []
        self.depth = 0
        self.transitions = 0
        self.found: dict[str, Found] = {}
        self._cands: dict[int, System] = {}
        self._next: list[tuple[System, int]] = []

    def fingerprint(self, s: System) -> int:
        return FINGERPRINTS[self.fpname](self.canon(s) if self.canon else s)

    # Pickled for a Dask worker: properties by id (their functions are the
    # model's), the canonicaliser made again.
    def __getstate__(self):
        state = dict(self.__dict__)
        state["checks"] = ([p.id for p in self.checks.always + self.checks.eventually + self.checks.stepwise],
                           sorted(self.checks.settled))
        state["canon"] = None
        return state

    def __setstate__(self, state):
        from acp_lifecycle.model.properties import BY_ID

        ids, settled = state["checks"]
        self.__dict__.update(state)
        self.checks = _Checks([BY_ID[i] for i in ids])
        self.checks.settle(settled)
        self.canon = canonicalizer(self.rules, self.cfg) if self.symmetry else None

    # -- levels --

    def start(self) -> None:
        s0 = initial_state(self.cfg)
        f = self.fingerprint(s0)
        self.seen.add(f)
        self._own(f, f, 0)
        self.frontier = [(s0, f)]

    def _own(self, f: int, parent: int, depth: int) -> None:
        self.own_fp.append(f)
        self.own_parent.append(parent)
        self.own_depth.append(depth)

    def expand(self, settled=()) -> list[bytes]:
        """Expand the frontier; return, per other shard, the (fingerprint, parent) pairs it owns."""
        checks = self.checks
        checks.settle(settled)
        cfg, rules = self.cfg, self.rules
        canon, fpf = self.canon, FINGERPRINTS[self.fpname]
        seen, found = self.seen, self.found
        graph, eventually = self.graph, checks.eventually
        index, count = self.index, self.count
        claims = [array("q") for _ in range(count)]
        cands, nxt = self._cands, self._next
        d = self.depth
        own_fp, own_parent, own_depth = self.own_fp, self.own_parent, self.own_depth
        exp_fp, exp_mask, exp_deg, edges = self.exp_fp, self.exp_mask, self.exp_deg, self.edges
        frontier, self.frontier = self.frontier, []
        transitions = 0
        parts: dict = {}  # equal parts of this level's new states, stored once
        for s, f in frontier:
            if checks.always:
                hit = False
                for p in checks.always:
                    if p.check(s):
                        found[p.id] = Found(p.id, d, f)
                        hit = True
                if hit:
                    checks.settle(found)
            if graph:
                mask = 0
                for k, p in enumerate(eventually):
                    if p.check(s):
                        mask |= 1 << k
                exp_fp.append(f)
                exp_mask.append(mask)
                dsts = set()
            succ = successors(s, cfg, rules)
            transitions += len(succ)
            for step in succ:
                ps = checks.for_step(step)
                if ps:
                    hit = False
                    for p in ps:
                        if p.check(s, step):
                            found[p.id] = Found(p.id, d + 1, f, step.action)
                            hit = True
                    if hit:
                        checks.settle(found)
                # the representative goes on: its successors mostly stay
                # representatives, which canon then returns as they are
                post = step.state if canon is None else canon(step.state)
                g = fpf(post)
                if graph:
                    dsts.add(g)
                if count == 1 or g % count == index:
                    if g not in seen:
                        seen.add(g)
                        own_fp.append(g)
                        own_parent.append(f)
                        own_depth.append(d + 1)
                        nxt.append((_share(post, parts), g))
                elif g not in cands:
                    cands[g] = _share(post, parts)
                    c = claims[g % count]
                    c.append(g)
                    c.append(f)
            if graph:
                exp_deg.append(len(dsts))
                edges.extend(dsts)
        self.transitions += transitions
        return [c.tobytes() for c in claims]

    def decide(self, claims: list[bytes], first: int = 0) -> list[bytes]:
        """As owner: accept each claimed fingerprint not seen yet (one claimant each)."""
        seen = self.seen
        d = self.depth + 1
        out = [array("q") for _ in claims]
        n = len(claims)
        for k in range(n):
            w = (first + k) % n  # claimants take turns at winning ties, level by level
            arr = array("q")
            arr.frombytes(claims[w])
            acc = out[w]
            for i in range(0, len(arr), 2):
                g = arr[i]
                if g not in seen:
                    seen.add(g)
                    self._own(g, arr[i + 1], d)
                    acc.append(g)
        return [a.tobytes() for a in out]

    def accept(self, accepted: list[bytes] = ()) -> tuple[int, int, list[str], int]:
        """Take the accepted candidates into the next frontier; move to the next level."""
        nxt = self._next
        cands = self._cands
        for data in accepted:
            arr = array("q")
            arr.frombytes(data)
            for g in arr:
                nxt.append((cands[g], g))
        cands.clear()
        self.frontier, self._next = nxt, []
        self.depth += 1
        return len(self.frontier), len(self.own_fp), sorted(self.found), self.transitions

    # -- moving work --

    def split(self, index: int, count: int) -> None:
        """Keep this shard's part of a search run so far by one shard (after a fork)."""
        keep = [f % count == index for f in self.own_fp]
        for name in ("own_fp", "own_parent", "own_depth"):
            old = getattr(self, name)
            setattr(self, name, array(old.typecode, (x for x, k in zip(old, keep) if k)))
        self.seen = {f for f in self.seen if f % count == index}
        if self.graph:
            fp, mask, deg, edges = array("q"), array("Q"), array("I"), array("q")
            pos = 0
            for f, m, n in zip(self.exp_fp, self.exp_mask, self.exp_deg):
                if f % count == index:
                    fp.append(f)
                    mask.append(m)
                    deg.append(n)
                    edges.extend(self.edges[pos : pos + n])
                pos += n
            self.exp_fp, self.exp_mask, self.exp_deg, self.edges = fp, mask, deg, edges
        self.frontier = self.frontier[index::count]
        if index:
            self.found = {}  # shard 0 keeps what the run found so far
            self.transitions = 0
        self.index, self.count = index, count

    def give(self, k: int) -> bytes:
        """Hand k frontier states to another shard (load balancing; rare)."""
        k = min(k, len(self.frontier))
        part, self.frontier = self.frontier[len(self.frontier) - k :], self.frontier[: len(self.frontier) - k]
        return pickle.dumps(part, pickle.HIGHEST_PROTOCOL)

    def take(self, data: bytes) -> int:
        self.frontier.extend(pickle.loads(data))
        return len(self.frontier)

    def finish(self) -> dict:
        return {
            "own_fp": self.own_fp.tobytes(),
            "own_parent": self.own_parent.tobytes(),
            "own_depth": self.own_depth.tobytes(),
            "exp_fp": self.exp_fp.tobytes(),
            "exp_mask": self.exp_mask.tobytes(),
            "exp_deg": self.exp_deg.tobytes(),
            "edges": self.edges.tobytes(),
            "found": self.found,
            "transitions": self.transitions,
        }


# --- the coordinator -------------------------------------------------------------------


@dataclass
class Outcome:
    """What a search found, with every trace rebuilt on real states."""

    states: int
    transitions: int
    depth: int
    terminal_states: int
    #: property id -> (status, message, trace, ending)
    verdicts: dict[str, tuple[str, str, list, str]] = field(default_factory=dict)
    symmetry: bool = True
    workers: int = 1
    fingerprint: str = "local"
    #: TLC's estimates: (optimistic, based on the actual fingerprints)
    collision: tuple[float, float] = (0.0, 0.0)


#: below this many frontier states per worker a parallel search keeps going in
#: one process (forking and synchronising levels costs more than it saves)
SPLIT_AT = 2000


class _Local:
    """Shards in forked processes, one pipe each."""

    def __init__(self, shard: Shard, n: int):
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        self.conns, self.procs = [], []
        gc.freeze()  # the inherited heap stays shared: no collector writes to its pages
        try:
            for w in range(n):
                parent, child = ctx.Pipe()
                p = ctx.Process(target=_serve, args=(shard, w, n, child), daemon=True)
                p.start()
                child.close()
                self.conns.append(parent)
                self.procs.append(p)
        finally:
            gc.unfreeze()

    def call(self, items: list[tuple[str, object]]) -> list:
        for conn, item in zip(self.conns, items):
            conn.send(item)
        out = []
        for conn in self.conns:
            ok, value = conn.recv()
            if not ok:
                raise RuntimeError(f"a search worker failed:\n{value}")
            out.append(value)
        return out

    def call_one(self, w: int, item: tuple[str, object]) -> list:
        self.conns[w].send(item)
        ok, value = self.conns[w].recv()
        if not ok:
            raise RuntimeError(f"a search worker failed:\n{value}")
        return [value]

    def close(self) -> None:
        for conn in self.conns:
            conn.close()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


def _serve(shard: Shard, w: int, n: int, conn) -> None:
    gc.disable()
    try:
        shard.split(w, n)
        while True:
            try:
                cmd, arg = conn.recv()
            except EOFError:
                return
            try:
                value = getattr(shard, cmd)(*arg)
            except BaseException:  # noqa: BLE001 - reported to the coordinator
                conn.send((False, traceback.format_exc()))
                return
            conn.send((True, value))
            if cmd == "finish":
                return
    finally:
        conn.close()


def search(
    cfg: Config,
    rules: Rules,
    props: list[Property],
    *,
    symmetry: bool = True,
    workers: int = 1,
    max_states: int = 3_000_000,
    progress: Callable[[int, int, int], None] | None = None,
    cluster=None,
) -> Outcome:
    """Explore every state reachable under ``cfg`` and ``rules`` (up to symmetry); check ``props``.

    ``cluster``: a ``dask.distributed.Client`` (``sims.search.dask``) to run
    the shards on instead of local processes.
    """
    fingerprint = "portable" if cluster is not None else "local"
    if cluster is not None:
        from .dask import cluster_size

        workers = cluster_size(cluster)
    with no_gc():
        shard = Shard(cfg, rules, props, symmetry=symmetry, fingerprint=fingerprint)
        shard.start()
        states = 1
        transitions = 0
        depth = 0
        parallel = workers > 1 or cluster is not None
        while shard.frontier and not (parallel and len(shard.frontier) >= SPLIT_AT * max(workers, 1)):
            shard.expand()
            size, states, _, _ = shard.accept()
            if size:
                depth += 1
            _limit(cfg, states, max_states, depth)
            if progress:
                progress(states, shard.transitions, depth)
        results: list[dict]
        if not shard.frontier:
            results = [shard.finish()]
            used = 1
        else:
            if cluster is not None:
                from .dask import DaskShards

                pool = DaskShards(cluster, shard, workers)
            else:
                pool = _Local(shard, workers)
            used = workers
            transitions = shard.transitions
            del shard
            try:
                results, states, transitions, depth = _run_levels(pool, workers, states, transitions, depth,
                                                                  cfg, max_states, progress)
            finally:
                pool.close()
        return _conclude(cfg, rules, props, symmetry, fingerprint, used, results, states, depth)


def _limit(cfg: Config, states: int, max_states: int, depth: int) -> None:
    if states > max_states:
        raise TooLarge(
            f"configuration {cfg.name!r} passed {max_states:,} states at depth {depth}; "
            "lower its bounds or pass a larger limit"
        )


def _run_levels(pool, n, states, transitions, depth, cfg, max_states, progress):
    settled: list[str] = []
    level = 0
    while True:
        claims = pool.call([("expand", (settled,))] * n)
        decided = pool.call([("decide", ([claims[w][o] for w in range(n)], level)) for o in range(n)])
        level += 1
        accepted = pool.call([("accept", ([decided[o][w] for o in range(n)],)) for w in range(n)])
        sizes = [a[0] for a in accepted]
        states = sum(a[1] for a in accepted)
        transitions = sum(a[3] for a in accepted)
        settled = sorted({pid for a in accepted for pid in a[2]})
        if not any(sizes):
            break
        depth += 1
        _limit(cfg, states, max_states, depth)
        _balance(pool, n, sizes)
        if progress:
            progress(states, transitions, depth)
    results = pool.call([("finish", ())] * n)
    return results, states, transitions, depth


def _balance(pool, n: int, sizes: list[int]) -> None:
    """Move frontier states from the fullest shard to the emptiest when they drift apart."""
    mean = sum(sizes) / n
    hi = max(range(n), key=sizes.__getitem__)
    lo = min(range(n), key=sizes.__getitem__)
    k = int(min(sizes[hi] - mean, mean - sizes[lo]))
    if k > 64 and sizes[hi] > 1.25 * mean:
        (data,) = pool.call_one(hi, ("give", (k,)))
        pool.call_one(lo, ("take", (data,)))


def _array(data: bytes, typecode: str, dtype) -> np.ndarray:
    a = array(typecode)
    a.frombytes(data)
    return np.frombuffer(a, dtype=dtype) if len(a) else np.zeros(0, dtype=dtype)


def _conclude(cfg, rules, props, symmetry, fingerprint, workers, results, states, depth) -> Outcome:
    cat = lambda key, tc, dt: np.concatenate([_array(r[key], tc, dt) for r in results])  # noqa: E731
    fps = cat("own_fp", "q", np.int64)
    parents = cat("own_parent", "q", np.int64)
    depths = cat("own_depth", "H", np.uint16).astype(np.int64)
    order = np.argsort(fps, kind="stable")
    fps = fps[order]
    parents = parents[order]
    depths = depths[order]
    n = len(fps)
    if n != states or (n > 1 and not (fps[1:] != fps[:-1]).all()):
        raise RuntimeError(f"internal error: {n} fingerprint records for {states} states")
    transitions = sum(r["transitions"] for r in results)
    found: dict[str, Found] = {}
    for r in results:
        for pid, fd in r["found"].items():
            have = found.get(pid)
            if have is None or (fd.length, fd.fp) < (have.length, have.fp):
                found[pid] = fd
    exp_fp = cat("exp_fp", "q", np.int64)
    exp_deg = cat("exp_deg", "I", np.uint32)
    graph = len(exp_fp) > 0
    terminal_states = 0
    if graph:
        if len(exp_fp) != n:
            raise RuntimeError(f"internal error: {len(exp_fp)} expanded states of {n}")
        exp_ids = np.searchsorted(fps, exp_fp)
        mask = np.zeros(n, dtype=np.uint64)
        mask[exp_ids] = cat("exp_mask", "Q", np.uint64)
        deg = np.zeros(n, dtype=np.int64)
        deg[exp_ids] = exp_deg
        src = np.repeat(exp_ids, exp_deg.astype(np.int64))
        dst = np.searchsorted(fps, cat("edges", "q", np.int64))
        terminal = deg == 0
        terminal_states = int(terminal.sum())
    replay = _Replay(cfg, rules, symmetry, fingerprint, fps, parents)
    verdicts: dict[str, tuple] = {}
    by_id = {p.id: p for p in props}
    for pid, fd in found.items():
        verdicts[pid] = replay.verdict(by_id[pid], fd)
    eventually = [p for p in props if p.kind == "eventually"]
    if graph and eventually:
        for k, p in enumerate(eventually):
            if p.id in verdicts:
                continue
            bit = np.uint64(1 << k)
            open_ = (mask & bit) != 0
            hit = np.nonzero(terminal & open_)[0]
            if len(hit):
                i = hit[np.lexsort((fps[hit], depths[hit]))[0]]
                verdicts[p.id] = replay.eventually(p, int(fps[i]), "terminal")
        pending = [(k, p) for k, p in enumerate(eventually) if p.id not in verdicts]
        if pending:
            for comp in _bottom_cycles(n, src, dst):
                first = comp[np.lexsort((fps[comp], depths[comp]))[0]]
                for k, p in list(pending):
                    if ((mask[comp] >> np.uint64(k)) & np.uint64(1)).all():
                        verdicts[p.id] = replay.eventually(p, int(fps[first]), "cycle")
                        pending.remove((k, p))
    m = transitions + 1
    optimistic = n * (m - n) / 2.0**64
    if n > 1:
        u = np.sort(fps.view(np.uint64))
        gap = int(np.diff(u).min())
        actual = 1.0 / gap if gap else 1.0
    else:
        actual = 0.0
    return Outcome(n, transitions, depth, terminal_states, verdicts, symmetry, workers, fingerprint,
                   (optimistic, actual))


def _bottom_cycles(n: int, src: np.ndarray, dst: np.ndarray):
    """The bottom strongly connected components that are not single terminal states."""
    core = cyclic_core(n, src, dst)
    if not len(core):
        return []
    import networkx as nx

    inside = np.zeros(n, dtype=bool)
    inside[core] = True
    sel = inside[src]
    g = nx.DiGraph()
    g.add_nodes_from(core.tolist())
    g.add_edges_from(zip(src[sel].tolist(), dst[sel].tolist()))
    comps = []
    for comp in nx.attracting_components(g):
        if len(comp) == 1:
            (v,) = comp
            if not g.has_edge(v, v):
                continue  # a terminal state
        comps.append(np.array(sorted(comp), dtype=np.int64))
    comps.sort(key=lambda c: int(c[0]))
    return comps


def cyclic_core(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The states Kahn's algorithm cannot remove: those on or after a cycle (sorted ids).

    The set is closed under successors, so the bottom SCCs of the whole graph
    that are not terminal states are exactly its attracting components.
    Vectorised: one numpy pass per layer of the acyclic part.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    indeg = np.bincount(dst, minlength=n)
    order = np.argsort(src, kind="stable")
    out = dst[order]
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=start[1:])
    layer = np.nonzero(indeg == 0)[0]
    removed = np.zeros(n, dtype=bool)
    while len(layer):
        removed[layer] = True
        lo, hi = start[layer], start[layer + 1]
        cnt = hi - lo
        total = int(cnt.sum())
        if not total:
            break
        idx = np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(total)
        targets, k = np.unique(out[idx], return_counts=True)
        indeg[targets] -= k
        layer = targets[indeg[targets] == 0]
    return np.nonzero(~removed)[0]


class _Replay:
    """Rebuild traces on real states: run the model again along the parent chain."""

    def __init__(self, cfg, rules, symmetry, fingerprint, fps, parents):
        self.cfg, self.rules = cfg, rules
        self.canon = canonicalizer(rules, cfg) if symmetry else None
        self.fpf = FINGERPRINTS[fingerprint]
        self.fps, self.parents = fps, parents

    def fp(self, s: System) -> int:
        return self.fpf(self.canon(s) if self.canon else s)

    def path(self, target: int) -> tuple[list, System]:
        chain = [target]
        fps, parents = self.fps, self.parents
        while True:
            i = int(np.searchsorted(fps, chain[-1]))
            p = int(parents[i])
            if p == chain[-1]:
                break
            chain.append(p)
        chain.reverse()
        s = initial_state(self.cfg)
        trace = []
        for g in chain[1:]:
            for step in successors(s, self.cfg, self.rules):
                if self.fp(step.state) == g:
                    trace.append((s, step))
                    s = step.state
                    break
            else:
                raise ReductionError(f"no step leads to state {g:#x} of the trace")
        return trace, s

    def verdict(self, p: Property, fd: Found) -> tuple:
        trace, s = self.path(fd.fp)
        if p.kind == "always":
            msg = p.check(s)
            if not msg:
                raise ReductionError(f"{p.id}: the rebuilt state does not violate it")
            return ("violated", msg, trace, "")
        hits = []
        for step in successors(s, self.cfg, self.rules):
            r = p.check(s, step)
            if r:
                hits.append((step.action != fd.action, step, r))
        if not hits:
            raise ReductionError(f"{p.id}: no step of the rebuilt state shows it; try --no-symmetry and report this")
        hits.sort(key=lambda h: h[0])
        _, step, r = hits[0]
        trace.append((s, step))
        if p.kind == "sometimes":
            return ("reached", "", trace, "")
        return ("violated", r, trace, "")

    def eventually(self, p: Property, target: int, ending: str) -> tuple:
        trace, s = self.path(target)
        msg = p.check(s)
        if not msg:
            raise ReductionError(f"{p.id}: the rebuilt state has no open obligation")
        suffix = " (no step is left)" if ending == "terminal" else " (the run can cycle forever)"
        return ("violated", msg + suffix, trace, ending)


if sys.platform == "win32":  # pragma: no cover
    SPLIT_AT = 10**12  # no fork: the parallel search stays in one process
