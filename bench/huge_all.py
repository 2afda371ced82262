"""Benchmark: how far the search of `huge-all` gets in a time limit, level by level.

`huge-all` (sims/configs.py) is the one member issue 25 asked for: three clients with two
prompts each (at most four in all), a failure, a cancel, a lost connection and a resume.
It is beyond an exhaustive search on 2 cores; this prints, for each level reached, the new
states, the states so far, the transitions, the wall time and the growth factor (new states
of a level over those of the level before), and stops after ``--seconds``.

    python bench/huge_all.py                   # 600 s, the cores available, symmetry on
    python bench/huge_all.py --seconds 120 --por
    python bench/huge_all.py --json
    python bench/huge_all.py --dask --seconds 420   # on a local Dask cluster, with its memory

Each row also gives the resident memory of this process and every process below it (the Dask
cluster's nanny and workers included) and that memory over the states so far: the figures
docs/performance.md projects N machines from.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time


def main(argv=None) -> int:
    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.search.engine import default_workers
    from acp_lifecycle.sims.search.explore import explore

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600.0)
    ap.add_argument("--workers", type=int, default=default_workers())
    ap.add_argument("--config", default="huge-all")
    ap.add_argument("--por", action="store_true", help="with the partial-order reduction")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dask", action="store_true", help="search on a local Dask cluster of --workers processes")
    a = ap.parse_args(argv)
    cfg = get_suite(a.config).members[0]
    t0 = time.monotonic()
    last = [0, 0]
    if not a.json:
        print(f"{cfg.name}: load average {os.getloadavg()[0]:.1f}, {a.workers} workers, por {a.por}, "
              f"limit {a.seconds:.0f} s")
        print(f"{'depth':>5} {'new':>10} {'states':>11} {'transitions':>12} {'wall s':>7} {'growth':>6} "
              f"{'RSS MB':>7} {'B/state':>7}")

    def progress(states, transitions, depth):
        new = states - last[0]
        growth = new / last[1] if last[1] else 0.0
        rss = _tree_rss()
        row = {"depth": depth, "new": new, "states": states, "transitions": transitions,
               "wall": round(time.monotonic() - t0, 1), "growth": round(growth, 2), "rss_mb": round(rss / 2**20, 1),
               "bytes_per_state": round(rss / states) if states else 0}
        print(json.dumps(row) if a.json else
              f"{depth:>5} {new:>10,} {states:>11,} {transitions:>12,} {row['wall']:>7.0f} {growth:>6.2f} "
              f"{row['rss_mb']:>7.0f} {row['bytes_per_state']:>7,}", flush=True)
        last[:] = [states, new]

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, a.seconds)
    try:
        if a.dask:
            from acp_lifecycle.sims.search.dask import cluster

            with cluster(None, a.workers) as client:
                r = explore(cfg, workers=a.workers, progress=progress, max_states=10**9, por=a.por, cluster=client)
        else:
            r = explore(cfg, workers=a.workers, progress=progress, max_states=10**9, por=a.por)
    except KeyboardInterrupt:
        print(json.dumps({"stopped_at_seconds": a.seconds}) if a.json else
              f"stopped at {a.seconds:.0f} s, the next level unfinished")
        return 0
    print(f"finished: {r.states:,} states, depth {r.depth}, {time.monotonic() - t0:.0f} s, ok {r.ok}")
    return 0


def _tree_rss() -> int:
    """The resident memory, in bytes, of this process and every process below it (from /proc)."""
    total, todo, seen = 0, [os.getpid()], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next((int(ln.split()[1]) * 1024 for ln in f if ln.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo += [int(x) for x in f.read().split()]
        except OSError:
            continue
    return total


if __name__ == "__main__":
    sys.exit(main())
