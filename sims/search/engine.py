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
import os
import sys
import traceback
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from acp_lifecycle.model import Config, Lifecycle, Property, SymmetryBroken, System, restate
from acp_lifecycle.sims.errors import TooLarge

from . import interrupt
from .graph import bottom_cycles_csr, edge_positions
from .por import PorBroken
from .shard import Found, Shard
from .storage import FINGERPRINTS, no_gc, portable_fingerprint

__all__ = ["Found", "Outcome", "Shard", "search", "default_workers", "portable_fingerprint", "TooLarge"]


class ReductionError(RuntimeError):
    """A counterexample found on a representative could not be replayed on a real run."""


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)



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
    #: how much the worker processes' peak resident sets grew past what they
    #: shared with this process at the fork (bytes, summed; 0 in one process)
    workers_grown: int = 0
    #: this process's peak resident set (bytes) before the workers handed
    #: their records over (0 in one process)
    peak_before_finish: int = 0
    #: why the symmetry reduction was turned off during the search ("" when it was not)
    symmetry_broken: str = ""
    #: whether the partial-order reduction was on (``por.py``), and why it was turned off
    por: bool = False
    por_broken: str = ""
    #: states expanded with an ample set, fully, and the steps put off (summed over shards)
    por_counts: tuple[int, int, int] = (0, 0, 0)


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

    def _recv(self, conn):
        ok, value = conn.recv()
        if not ok and isinstance(value, (SymmetryBroken, PorBroken)):
            raise value
        if not ok:
            raise RuntimeError(f"a search worker failed:\n{value}")
        return value

    def finish(self) -> list[dict]:
        """Every shard's records, moved into one array per record.

        A worker sends each array in pieces from its end and shrinks it as it
        goes, and the pieces land in place in the joined array: the records
        move from the workers to this process without being held twice."""
        for conn in self.conns:
            conn.send(("finish", ()))
        heads = [self._recv(conn) for conn in self.conns]
        arrays = {}
        for k, (tc, _) in heads[0]["arrays"]:
            sizes = [dict(h["arrays"])[k][1] for h in heads]
            a = np.empty(sum(sizes), dtype=np.dtype(tc))
            view = memoryview(a).cast("B")
            lo = 0
            for conn, size in zip(self.conns, sizes):
                end = (lo + size) * a.itemsize
                while end > lo * a.itemsize:
                    n = conn.recv_bytes_into(view[max(lo * a.itemsize, end - _PIECE) : end])
                    end -= n
                lo += size
            del view
            arrays[k] = a
        for h in heads:
            h["arrays"] = {}
        heads[0]["arrays"] = arrays
        return heads

    def call(self, items: list[tuple[str, object]]) -> list:
        for conn, item in zip(self.conns, items):
            conn.send(item)
        return [self._recv(conn) for conn in self.conns]

    def call_one(self, w: int, item: tuple[str, object]) -> list:
        self.conns[w].send(item)
        return [self._recv(self.conns[w])]

    def close(self, abort: bool = False) -> None:
        """Let the workers end; ``abort`` (Ctrl-C, a failure): end them now."""
        for conn in self.conns:
            conn.close()
        if abort:
            for p in self.procs:
                if p.is_alive():
                    p.kill()
        for p in self.procs:
            p.join(timeout=1 if abort else 5)
            if p.is_alive():
                p.kill()


def _rss() -> int:
    """This process's resident set now, in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        return 0


def _rss_file() -> int:
    """The pages of files (the interpreter, libraries) this process has resident, in bytes.

    A forked worker maps these again as it runs the code: they are shared
    with the coordinator, not memory the search takes."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssFile:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return 0


#: bytes per message when records move from a worker to the coordinator
_PIECE = 1 << 20


def _peak_rss() -> int:
    """This process's largest resident set so far, in bytes."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _serve(shard: Shard, w: int, n: int, conn) -> None:
    from .interrupt import in_worker

    in_worker()  # Ctrl-C is the coordinator's: it ends the workers; SIGTERM or its end ends this one
    gc.disable()
    start = _rss()  # what the worker shares with the coordinator at the fork
    file0 = _rss_file()
    try:
        shard.split(w, n)
        while True:
            try:
                cmd, arg = conn.recv()
            except EOFError:
                return
            try:
                value = getattr(shard, cmd)(*arg)
            except (SymmetryBroken, PorBroken) as e:
                conn.send((False, e))
                return
            except BaseException:  # noqa: BLE001 - reported to the coordinator
                conn.send((False, traceback.format_exc()))
                return
            if cmd == "finish":
                arrays = value.pop("arrays")
                del shard
                value["arrays"] = [(k, (a.typecode, len(a))) for k, a in arrays.items()]
                value["grown"] = _peak_rss() - start - max(0, _rss_file() - file0)
                conn.send((True, value))
                for k in list(arrays):
                    a = arrays.pop(k)
                    step = max(1, _PIECE // a.itemsize)
                    while len(a):
                        cut = max(0, len(a) - step)
                        conn.send_bytes(a, cut * a.itemsize)
                        del a[cut:]  # the array shrinks as its pieces leave
                return
            conn.send((True, value))
    finally:
        conn.close()


def search(
    model: Lifecycle,
    props: list[Property],
    *,
    symmetry: bool = True,
    workers: int = 1,
    max_states: int = 3_000_000,
    progress: Callable[[int, int, int], None] | None = None,
    cluster=None,
    por: bool = False,
) -> Outcome:
    """Explore every state of ``model`` reachable from its initial states (up to symmetry); check ``props``.

    ``cluster``: a ``dask.distributed.Client`` (``sims.search.dask``) to run
    the shards on instead of local processes. Where a step breaks what the
    symmetry reduction assumes (``model.symmetry.SymmetryBroken``), the search
    starts again without it and says why (``Outcome.symmetry_broken``).
    """
    try:
        return _search(model, props, symmetry=symmetry, workers=workers, max_states=max_states,
                       progress=progress, cluster=cluster, por=por)
    except PorBroken as e:
        out = search(model, props, symmetry=symmetry, workers=workers, max_states=max_states,
                     progress=progress, cluster=cluster, por=False)
        out.por_broken = e.reason
        return out
    except SymmetryBroken as e:
        out = search(model, props, symmetry=False, workers=workers, max_states=max_states,
                     progress=progress, cluster=cluster, por=por)
        out.symmetry_broken = e.reason
        return out


def _search(model: Lifecycle, props, *, symmetry, workers, max_states, progress, cluster, por) -> Outcome:
    cfg = model.cfg
    fingerprint = "portable" if cluster is not None else "local"
    if cluster is not None:
        from .dask import cluster_size

        workers = cluster_size(cluster)
    with no_gc():
        shard = Shard(model, props, symmetry=symmetry, fingerprint=fingerprint, por=por)
        shard.start()
        states = 1
        transitions = 0
        depth = 0
        parallel = workers > 1 or cluster is not None
        while shard.frontier and not (parallel and len(shard.frontier) >= SPLIT_AT * max(workers, 1)):
            interrupt.check()
            shard.expand()
            size, states, _, _, _ = shard.accept()
            if size:
                depth += 1
            _limit(cfg, states, max_states, depth)
            if progress:
                progress(states, shard.transitions, depth)
        results: list[dict]
        grown = 0
        if not shard.frontier:
            results = [shard.finish()]
            del shard
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
            except BaseException:
                pool.close(abort=True)
                raise
            pool.close()
            grown = sum(r.get("grown", 0) for r in results)
        before = results[0].get("peak_before_finish", 0)
        out = _conclude(model, props, symmetry, fingerprint, used, results, states, depth)
        out.workers_grown = grown
        out.peak_before_finish = before
        out.por = por
        counts = [r["por"] for r in results if r.get("por")]
        out.por_counts = tuple(sum(c[k] for c in counts) for k in range(3)) if counts else (0, 0, 0)
        return out


def _limit(cfg: Config, states: int, max_states: int, depth: int) -> None:
    if states > max_states:
        raise TooLarge(
            f"configuration {cfg.name!r} passed {max_states:,} states at depth {depth}; "
            "lower its bounds or raise the limit (--max-states)"
        )


def _run_levels(pool, n, states, transitions, depth, cfg, max_states, progress):
    settled: list[str] = []
    level = 0
    mine = [b""] * n
    while True:
        interrupt.check()
        claims = pool.call([("expand", (settled, b"".join(mine[o] for o in range(n) if o != w)))
                            for w in range(n)])
        decided = pool.call([("decide", ([claims[w][o] for w in range(n)], level)) for o in range(n)])
        level += 1
        accepted = pool.call([("accept", ([decided[o][w] for o in range(n)],)) for w in range(n)])
        sizes = [a[0] for a in accepted]
        states = sum(a[1] for a in accepted)
        transitions = sum(a[3] for a in accepted)
        settled = sorted({pid for a in accepted for pid in a[2]})
        mine = [a[4] for a in accepted]
        if not any(sizes):
            break
        depth += 1
        _limit(cfg, states, max_states, depth)
        _balance(pool, n, sizes)
        if progress:
            progress(states, transitions, depth)
    del mine
    before = _peak_rss()
    results = pool.finish() if hasattr(pool, "finish") else pool.call([("finish", ())] * n)
    results[0]["peak_before_finish"] = before
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


def _take(results: list[dict], key: str) -> np.ndarray:
    """One record array of every shard, concatenated; the shards' copies are let go."""
    parts = []
    for r in results:
        if key not in r["arrays"]:
            continue
        a = r["arrays"].pop(key)
        if not isinstance(a, np.ndarray):
            a = np.frombuffer(a, dtype=np.dtype(a.typecode)) if len(a) else np.zeros(0, dtype=np.dtype(a.typecode))
        parts.append(a)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _conclude(model: Lifecycle, props, symmetry, fingerprint, workers, results, states, depth) -> Outcome:
    own = _take(results, "own_fp")
    order = np.argsort(own, kind="stable")
    idx = np.int32 if len(order) < 2**31 else np.int64
    order = order.astype(idx)
    fps = own[order]
    parents = _take(results, "own_parent")[order]
    depths = _take(results, "own_depth")[order]
    n = len(fps)
    # the state graph is indexed by position in the order of expansion: in one
    # process that of the own records
    same = len(results) == 1 and results[0].get("exp_is_own")
    exp_fp = own if same else _take(results, "exp_fp")
    graph = len(results[0]["arrays"]["exp_deg"]) > 0 if same else len(exp_fp) > 0
    del own
    if n != states or (n > 1 and not (fps[1:] != fps[:-1]).all()):
        raise RuntimeError(f"internal error: {n} fingerprint records for {states} states")
    transitions = sum(r["transitions"] for r in results)
    found = _shortest_found(results)
    replay = _Replay(model, symmetry, fingerprint, fps, parents)
    verdicts: dict[str, tuple] = {}
    by_id = {p.id: p for p in props}
    for pid, fd in found.items():
        verdicts[pid] = replay.verdict(by_id[pid], fd)
    eventually = [p for p in props if p.kind == "eventually"]
    terminal_states = 0
    if graph:
        if len(exp_fp) != n:
            raise RuntimeError(f"internal error: {len(exp_fp)} expanded states of {n}")
        mask = _take(results, "exp_mask")
        deg = _take(results, "exp_deg")
        edges = _take(results, "edges")
        m = len(edges)
        eidx = np.int32 if m < 2**31 else np.int64
        start = np.zeros(n + 1, dtype=eidx)
        np.cumsum(deg, out=start[1:], dtype=eidx)
        terminal = deg == 0
        del deg
        terminal_states = int(terminal.sum())
        # exp_fp sorted is fps (both are every state): a fingerprint's position
        # in expansion order is pos[its index in fps]
        pos = order if same else np.argsort(exp_fp, kind="stable").astype(idx)
        del order
        out = edge_positions(edges, fps, pos)
        del edges, pos

        def shallowest(ids: np.ndarray) -> int:
            """The fingerprint of the shallowest of the states ``ids`` (ties: the smallest)."""
            f = exp_fp[ids]
            dep = depths[np.searchsorted(fps, f)]
            return int(f[np.lexsort((f, dep))[0]])

        for k, p in enumerate(eventually):
            if p.id in verdicts:
                continue
            open_ = (mask >> k) & 1 != 0
            hit = np.nonzero(terminal & open_)[0]
            if len(hit):
                verdicts[p.id] = replay.eventually(p, shallowest(hit), "terminal")
        pending = [(k, p) for k, p in enumerate(eventually) if p.id not in verdicts]
        if pending:
            comps = bottom_cycles_csr(n, start, out)
            comps.sort(key=lambda c: int(exp_fp[c].min()))  # in the order of their smallest fingerprint
            for comp in comps:
                for k, p in list(pending):
                    if ((mask[comp] >> k) & 1).all():
                        verdicts[p.id] = replay.eventually(p, shallowest(comp), "cycle")
                        pending.remove((k, p))
        del out, start, mask, terminal
    del exp_fp
    order = None
    return Outcome(n, transitions, depth, terminal_states, verdicts, symmetry, workers, fingerprint,
                   _collision(fps, transitions))


def _shortest_found(results) -> dict[str, Found]:
    """Each property's violation over the shards: the shortest (ties: the smallest fingerprint)."""
    found: dict[str, Found] = {}
    for r in results:
        for pid, fd in r["found"].items():
            have = found.get(pid)
            if have is None or (fd.length, fd.fp) < (have.length, have.fp):
                found[pid] = fd
    return found


def _collision(fps: np.ndarray, transitions: int) -> tuple[float, float]:
    """TLC's two estimates that two distinct states shared a fingerprint: optimistic
    (n distinct of m generated), and from the smallest gap between stored fingerprints."""
    n, m = len(fps), transitions + 1
    optimistic = n * (m - n) / 2.0**64
    if n > 1:
        gap = int(np.diff(np.sort(fps.view(np.uint64))).min())
        return optimistic, (1.0 / gap if gap else 1.0)
    return optimistic, 0.0


class _Replay:
    """Rebuild traces on real states: run the model again along the parent chain."""

    def __init__(self, model: Lifecycle, symmetry, fingerprint, fps, parents):
        self.model = model
        self.canon = model.canonicalizer() if symmetry else None
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
        (s,) = self.model.init_states()
        trace = []
        for g in chain[1:]:
            for step in self.model.next_steps(s):
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
        for step in self.model.next_steps(s):
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
        return ("violated", restate(msg, msg + suffix), trace, ending)


if sys.platform == "win32":  # pragma: no cover
    SPLIT_AT = 10**12  # no fork: the parallel search stays in one process
