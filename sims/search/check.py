"""Check a named configuration (a suite of members) and combine the verdicts.

Combination rule (see ``sims.configs``): a property's combined verdict is the
shortest counterexample (or witness) any member found; if no member found one,
it holds (or, for ``sometimes``, is unreached).

>>> from acp_lifecycle.sims.configs import get_suite
>>> r = check_suite(get_suite("tiny"))
>>> r.members[0].states
216
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from acp_lifecycle.model import RFD_RULES, Lifecycle, Rules

from acp_lifecycle.sims.configs import Suite
from acp_lifecycle.sims.search import interrupt
from acp_lifecycle.sims.search.explore import Result, TooLarge, Verdict, explore

__all__ = ["SuiteResult", "check_suite", "check_suites", "pool_map"]


@dataclass
class SuiteResult:
    suite: Suite
    rules: Rules
    members: list[Result]
    verdicts: dict[str, Verdict]
    #: the member whose trace each verdict shows ("" when none)
    found_in: dict[str, str]
    #: wall-clock seconds of the whole check (members side by side overlap:
    #: ``seconds`` is the members' own times added up)
    wall: float = 0.0

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts.values())

    @property
    def seconds(self) -> float:
        return sum(m.seconds for m in self.members)

    @property
    def states(self) -> int:
        return sum(m.states for m in self.members)

    @property
    def transitions(self) -> int:
        return sum(m.transitions for m in self.members)

    @property
    def symmetry(self) -> bool:
        return all(m.symmetry for m in self.members)

    @property
    def collision(self) -> tuple[float, float]:
        """TLC's estimates for the whole suite (a union bound: the members' sum)."""
        return (sum(m.collision[0] for m in self.members), sum(m.collision[1] for m in self.members))


def check_suite(
    suite: Suite,
    rules: Rules = RFD_RULES,
    *,
    max_states: int | None = None,
    on_member: Callable[[int, object], Callable | None] | None = None,
    symmetry: bool = True,
    workers: int = 1,
    cluster=None,
    por: bool = False,
) -> SuiteResult:
    """Explore every member of ``suite`` and combine the verdicts.

    ``max_states``: the limit per member (None: the suite's, ``Suite.max_states``).
    ``on_member(i, config)`` may return a progress callback for that member.
    ``symmetry``, ``workers``, ``cluster``, ``por``: as ``explore`` takes them.

    With several workers and several members, the small members run side by
    side in ``workers`` forked processes, one process each (the suites are
    many small members and a few large ones: on 2 cores `default` takes
    about half the time); a member that passes ``SMALL`` states there is
    explored afterwards in this process, with the workers for its own search.
    """
    with interrupt.watch():
        return _check_suite(suite, rules, max_states, on_member, symmetry, workers, cluster, por)


def _check_suite(suite, rules, max_states, on_member, symmetry, workers, cluster, por) -> SuiteResult:
    members = suite.members
    max_states = suite.max_states if max_states is None else max_states
    start = time.perf_counter()
    progress = [on_member(i, cfg) if on_member else None for i, cfg in enumerate(members)]
    results: list[Result | None] = [None] * len(members)
    if workers > 1 and cluster is None and len(members) > 1 and _can_fork():
        results = _side_by_side([(cfg, rules, max_states) for cfg in members], progress, symmetry, workers, por)
    for i, cfg in enumerate(members):
        if results[i] is None:
            results[i] = explore(cfg, rules, max_states=max_states, progress=progress[i], symmetry=symmetry,
                                 workers=workers, cluster=cluster, por=por)
    return _combine(suite, rules, results, time.perf_counter() - start)


def check_suites(jobs: list[tuple[Suite, Rules]], *, workers: int = 1, symmetry: bool = True,
                 on_done: Callable[[int], None] | None = None) -> list[SuiteResult]:
    """``check_suite`` of several (suite, rules) pairs at once: every member of every suite side by side
    in ``workers`` forked processes (one pool for them all: a variant's last member overlaps the next
    variant's first), then each suite's verdicts combined as ``check_suite`` does. A member that
    passes ``SMALL`` states is explored afterwards in this process with the workers. ``on_done(k)``:
    the ``k``-th pair is checked. Ctrl-C as ``check``: the pool's processes are ended at once."""
    with interrupt.watch():
        start = time.perf_counter()
        flat = [(k, cfg, rules, suite.max_states) for k, (suite, rules) in enumerate(jobs) for cfg in suite.members]
        left = [len(suite.members) for suite, _ in jobs]
        got: list[Result | None] = [None] * len(flat)

        def member_done(i: int) -> None:
            k = flat[i][0]
            left[k] -= 1
            if not left[k] and on_done:
                on_done(k)

        if workers > 1 and len(flat) > 1 and _can_fork():
            reports = [(lambda *_, i=i: member_done(i)) for i in range(len(flat))]
            got = _side_by_side([(cfg, rules, most) for _, cfg, rules, most in flat], reports, symmetry, workers)
        for i, (k, cfg, rules, most) in enumerate(flat):
            if got[i] is None:
                got[i] = explore(cfg, rules, max_states=most, symmetry=symmetry, workers=workers)
                member_done(i)
        out, i = [], 0
        for suite, rules in jobs:
            n = len(suite.members)
            out.append(_combine(suite, rules, got[i : i + n], time.perf_counter() - start))
            i += n
        return out


def _combine(suite: Suite, rules: Rules, results: list, wall: float) -> SuiteResult:
    """A suite's verdicts from its members': each property's shortest counterexample or witness."""
    members = suite.members
    verdicts: dict[str, Verdict] = {}
    found_in: dict[str, str] = {}
    for p in Lifecycle(members[0], rules).every_property():
        best: Verdict | None = None
        where = ""
        for r in results:
            v = r.verdicts[p.id]
            if v.status in ("violated", "reached") and (best is None or len(v.trace) < len(best.trace)):
                best, where = v, r.config.name
        if best is None:
            best = results[0].verdicts[p.id]
            best.applicable = any(p.applies(r.config) for r in results)
        verdicts[p.id] = best
        found_in[p.id] = where
    return SuiteResult(suite, rules, results, verdicts, found_in, wall)


def _can_fork() -> bool:
    import multiprocessing as mp
    import sys

    return sys.platform != "win32" and "fork" in mp.get_all_start_methods()


#: members are first tried side by side up to this many states
SMALL = 16_384


def _explore_plain(cfg, rules, max_states: int, symmetry: bool, por: bool = False) -> tuple | None:
    """``explore`` in a worker process, its result picklable (properties by
    id); None when the member passes ``SMALL`` states (and the limit is higher)."""
    from . import storage

    # this process is a fork that holds at most SMALL states: no need to
    # compress the frontier (it saves memory on large searches, costs time)
    storage.COMPRESS_AT = max(storage.COMPRESS_AT, SMALL)
    try:
        r = explore(cfg, rules, max_states=min(max_states, SMALL), symmetry=symmetry, workers=1, por=por)
    except TooLarge:
        if max_states <= SMALL:
            raise
        return None
    verdicts = {k: (v.status, v.message, v.trace, v.ending, v.applicable, v.expect) for k, v in r.verdicts.items()}
    r.verdicts = {}
    return r, verdicts


def _quiet_child() -> None:
    """In a forked worker: Ctrl-C is the coordinator's to handle (it ends the workers at once)."""
    interrupt.in_worker()


def _side_by_side(jobs: list[tuple], progress: list, symmetry: bool, workers: int,
                  por: bool = False) -> list[Result | None]:
    """Explore each (config, rules, max_states) in a forked process of a pool; None for a member that
    passed ``SMALL`` states (explored afterwards). ``progress[i]`` is told member i's counts when done."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, wait

    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=mp.get_context("fork"),
                               initializer=_quiet_child)
    try:
        futures = [pool.submit(_explore_plain, cfg, rules, most, symmetry, por) for cfg, rules, most in jobs]
        results: list[Result | None] = []
        for fut, report, (_, rules, _) in zip(futures, progress, jobs):
            while not fut.done():
                interrupt.check()
                wait([fut], timeout=0.2)
            got = fut.result()
            if got is None:
                results.append(None)
                continue
            r, verdicts = got
            by_id = Lifecycle(r.config, rules).property_by_id
            r.verdicts = {k: Verdict(by_id(k), st, msg, trace, ending, applicable, expect)
                          for k, (st, msg, trace, ending, applicable, expect) in verdicts.items()}
            if report:
                report(r.states, r.transitions, r.depth)
            results.append(r)
    except BaseException:
        # Ctrl-C or a failure: the members still queued or running are not
        # waited for (shutdown would run every queued one to its end)
        _kill(pool)
        raise
    pool.shutdown()
    return results


def pool_map(fn: Callable, items: list, workers: int, on_done: Callable[[int], None] | None = None) -> list:
    """``[fn(x) for x in items]``, side by side in ``workers`` forked processes when there are several of
    both (``fn`` and the results picklable), with ``check``'s Ctrl-C: the processes are ended at once.
    ``on_done(i)``: item ``i`` is done (in order)."""
    if workers <= 1 or len(items) <= 1 or not _can_fork() or not _picklable((fn, items)):
        out = []
        for i, x in enumerate(items):
            out.append(fn(x))
            if on_done:
                on_done(i)
        return out
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, wait

    with interrupt.watch():
        pool = ProcessPoolExecutor(max_workers=min(workers, len(items)), mp_context=mp.get_context("fork"),
                                   initializer=_quiet_child)
        try:
            futures = [pool.submit(fn, x) for x in items]
            out = []
            for i, fut in enumerate(futures):
                while not fut.done():
                    interrupt.check()
                    wait([fut], timeout=0.2)
                out.append(fut.result())
                if on_done:
                    on_done(i)
        except BaseException:
            _kill(pool)
            raise
        pool.shutdown()
        return out


def _picklable(x) -> bool:
    """Whether ``x`` can go to a worker process (a mutant's part made by a closure cannot): if not, the
    calls run here one after another."""
    import pickle

    try:
        pickle.dumps(x)
    except Exception:
        return False
    return True


def _kill(pool) -> None:
    """End the pool's processes now (they are ours: forked for this check)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.kill()
    for p in procs:
        p.join(timeout=1)
