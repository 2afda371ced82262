"""Benchmark: the exhaustive search, sequential / symmetry / parallel side by side.

For every member of the chosen suites, three runs, each in a fresh process:

* ``sequential``: one process, every state stored (``--no-symmetry``);
* ``symmetry``:   one process, one representative per class of states that
  differ only in client names and message IDs (the default);
* ``parallel``:   symmetry and ``--workers N`` processes (default: the cores);
* ``por``:        symmetry and the partial-order reduction, one process (only when asked:
  ``--mode symmetry --mode por`` shows it with and without, side by side).

Each prints distinct states, transitions, seconds (wall), states per second
per core (states / seconds / processes), CPU seconds and peak memory (the
largest resident set of one process: the search process, or the largest
worker). The totals give a change's effect as ratios measured in one run:
the machine is shared by other work, so compare rows of one run, and read the
load average printed at the top.

    python bench/bench.py                      # tiny and default
    python bench/bench.py --suite wide         # minutes
    python bench/bench.py --suite huge --mode symmetry --mode parallel
    python bench/bench.py --suite default --suite wide --mode symmetry --mode por   # with/without the reduction
    python bench/bench.py --json
    python bench/bench.py --suite wide --mode symmetry --baseline a3f1825   # beside an older commit

``--baseline REV`` runs the same members and modes on the code of an older commit too (its
files from ``git archive``, imported ahead of the installed package), in the same run, so a
change's effect on states and seconds is read from rows measured side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

MODES = ("sequential", "symmetry", "parallel", "por")
#: the modes run when none is named (``por`` is asked for: ``--mode symmetry --mode por``)
DEFAULT_MODES = MODES[:3]


def _status(pid="self") -> dict[str, int]:
    """VmRSS, VmHWM, RssFile... of a process, in bytes."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if v.strip().endswith("kB"):
                out[k] = int(v.split()[0]) * 1024
    return out


def _pss(pid) -> int:
    """Proportional set size (shared pages split between their processes), bytes."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def _children() -> list[int]:
    try:
        with open(f"/proc/self/task/{os.getpid()}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class _Sampler:
    """The largest total proportional set size of this process and its children,
    sampled every few milliseconds: the memory of a search spread over worker
    processes (their shared pages counted once)."""

    def __init__(self, every: float = 0.004):
        import threading

        self.every, self.peak = every, 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def total(self) -> int:
        n = 0
        for pid in [os.getpid(), *_children()]:
            try:
                n += _pss(pid)
            except OSError:
                pass  # a worker that just ended
        return n

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.total())
            self._stop.wait(self.every)

    def __enter__(self):
        self.base = self.total()
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def _one(name: str, mode: str, workers: int, pss: bool = False) -> dict:
    import networkx  # noqa: F401 - loaded before the baseline, as a search loads it
    import numpy  # noqa: F401

    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.search.explore import explore

    cfg = get_suite(name).members[0]
    cpu0 = time.process_time()
    before = _status()["VmRSS"]
    sampler = _Sampler() if pss else None
    if sampler:
        sampler.__enter__()
    r = explore(cfg, symmetry=mode != "sequential", workers=workers if mode == "parallel" else 1,
                max_states=100_000_000, por=mode == "por")
    if sampler:
        sampler.__exit__()
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = r.workers
    # What the search added to the memory in use (docs/performance.md,
    # "Memory"): the kernel's high-water mark of this process minus its
    # resident set before the search; with workers, the largest of (this
    # process before the workers hand their records over + every worker's
    # growth past the fork) and (this process at its peak, the records
    # concluded after the workers ended).
    grown = _status()["VmHWM"] - before
    if used == 1:
        total = bound = grown
    else:
        total = max(r.peak_before_finish - before + r.workers_grown, grown)
        bound = grown + r.workers_grown  # every peak added, as if all were at once
    row = {
        "member": name,
        "mode": mode,
        "workers": used,
        "states": r.states,
        "transitions": r.transitions,
        "depth": r.depth,
        "seconds": round(r.seconds, 3),
        "cpu_seconds": round(time.process_time() - cpu0 + kids.ru_utime + kids.ru_stime, 2),
        "states_per_second_per_core": round(r.states / r.seconds / used),
        "peak_rss_mib": round(max(own.ru_maxrss, kids.ru_maxrss) / 1024, 1),
        "search_mib": round(total / 2**20, 1),
        "bytes_per_state": round(total / r.states),
        "bytes_per_state_all_peaks": round(bound / r.states),
        "collision_optimistic": r.collision[0],
        # what the modes must agree on: each verdict and the length of its trace
        "verdicts": {k: [v.status, len(v.trace)] for k, v in r.verdicts.items()},
        # the reduction: states expanded with an ample set, fully, steps put off; why it was turned off
        "por_counts": list(r.por_counts),
        "por_broken": r.por_broken,
    }
    if sampler:
        # proportional set sizes, sampled: counts the pages workers copy on write
        row["bytes_per_state_pss"] = round((sampler.peak - sampler.base) / r.states)
    return row


def main() -> int:
    from acp_lifecycle.sims.search.engine import default_workers

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", action="append", help="suite(s) or member(s) to run (default: tiny and default)")
    ap.add_argument("--mode", action="append", choices=MODES, help="only these modes (default: all three)")
    ap.add_argument("--workers", type=int, default=default_workers(), help="processes of the parallel mode")
    ap.add_argument("--pss", action="store_true",
                    help="also sample the processes' proportional set sizes (counts copy-on-write; slows the run)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--baseline", metavar="REV", help="also run the code of this commit, side by side")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(args.one[0], args.one[1], args.workers, args.pss)))
        return 0
    from acp_lifecycle.sims.configs import get_suite

    modes = args.mode or list(DEFAULT_MODES)
    suites = args.suite or ["tiny", "default"]
    if not args.json:
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; parallel = {args.workers} workers",
              flush=True)
        print(f"{'suite':8} {'member':20} {'mode':10} {'states':>10} {'transitions':>12} {'seconds':>8} "
              f"{'states/s/core':>13} {'cpu s':>7} {'peak MiB':>8} {'B/state':>7}", flush=True)
    rows = []
    runners = [("", sys.executable, __file__, None)]
    if args.baseline:
        runners.append(_baseline(args.baseline))
    for suite in suites:
        for m in get_suite(suite).members:
            for (tag, python, script, env), mode in ((r, mode) for mode in modes for r in runners):
                out = subprocess.run([python, script, "--one", m.name, mode, "--workers", str(args.workers)]
                                     + ["--pss"] * args.pss, capture_output=True, text=True, env=env,
                                     check=False).stdout
                if not out.strip():
                    continue  # the member does not exist at the baseline
                row = json.loads(out) | {"suite": suite}
                row["mode"] = tag + row["mode"]
                rows.append(row)
                first = next(r for r in rows if r["member"] == m.name)
                if not args.json:
                    same = set(row["verdicts"]) & set(first["verdicts"])  # a baseline may name fewer properties
                    # the reduction may lengthen a trace (a step put off): its verdicts alone must agree
                    k = 1 if "por" in (row["mode"], first["mode"]) else 2
                    differ = any(row["verdicts"][p][:k] != first["verdicts"][p][:k] for p in same)
                    mark = f"  VERDICTS DIFFER FROM {first['mode']}" if differ else ""
                    print(f"{suite:8} {row['member']:20} {row['mode']:10} {row['states']:>10,} {row['transitions']:>12,} "
                          f"{row['seconds']:>8.2f} {row['states_per_second_per_core']:>13,} {row['cpu_seconds']:>7.1f} "
                          f"{row['peak_rss_mib']:>8.1f} {row['bytes_per_state']:>7}{mark}", flush=True)
    walls = {suite: _wall(suite, args.workers) for suite in suites}
    if args.json:
        print(json.dumps({"members": rows, "check_wall_seconds": walls}, indent=2))
        return 0
    print()
    for suite in suites:
        tot = {}
        for mode in modes + ([runners[-1][0] + m for m in modes] if args.baseline else []):
            sel = [r for r in rows if r["suite"] == suite and r["mode"] == mode]
            tot[mode] = (sum(r["states"] for r in sel), sum(r["seconds"] for r in sel),
                         max(r["peak_rss_mib"] for r in sel), sum(r["cpu_seconds"] for r in sel))
            st, sec, mib, cpu = tot[mode]
            # members run one after another: the largest sets the suite's peak
            big = max(sel, key=lambda r: r["states"])
            print(f"{suite:8} total {mode:10} {st:>10,} states {sec:8.2f} s {cpu:8.1f} cpu s  peak {mib:7.1f} MiB  "
                  f"{big['bytes_per_state']} B/state ({big['member']}, {big['states']:,} states, "
                  f"{big['search_mib']} MiB; every peak added: {big['bytes_per_state_all_peaks']})"
                  + (f"; sampled PSS {big['bytes_per_state_pss']}" if "bytes_per_state_pss" in big else ""))
        if "sequential" in tot and "symmetry" in tot:
            a, b = tot["sequential"], tot["symmetry"]
            print(f"{suite:8} symmetry: {a[0] / b[0]:.1f}x fewer states, {a[1] / b[1]:.1f}x faster, "
                  f"{a[2] / b[2]:.1f}x less peak memory")
        if "symmetry" in tot and "por" in tot:
            a, b = tot["symmetry"], tot["por"]
            sel = [r for r in rows if r["suite"] == suite and r["mode"] == "por"]
            broken = [r["member"] for r in sel if r["por_broken"]]
            print(f"{suite:8} partial-order reduction: {a[0] / b[0]:.3f}x fewer states, {a[3] / b[3]:.2f}x less CPU"
                  + (f" (turned off by its check on {', '.join(broken)})" if broken else ""))
        if "symmetry" in tot and "parallel" in tot:
            a, b = tot["symmetry"], tot["parallel"]
            print(f"{suite:8} parallel ({args.workers} workers): {a[1] / b[1]:.2f}x faster (wall)")
        if args.baseline:
            for mode in modes:
                a, b = tot[mode], tot[runners[-1][0] + mode]
                if a[3] and b[3] and b[0]:
                    # states per CPU-second: the two may count states differently (a rule added since)
                    print(f"{suite:8} {mode}: {a[0] / a[3]:,.0f} states a CPU-second, {b[0] / b[3]:,.0f} at "
                          f"{runners[-1][0].rstrip(':')}: {a[0] / a[3] / (b[0] / b[3]):.2f}x")
        print(f"{suite:8} `acp-lifecycle check --config {suite}`: {walls[suite]:.2f} s wall, start-up included "
              "(best of 3)")
    return 0


def _baseline(rev: str) -> tuple:
    """(tag, python, its bench.py, environment) running the code of commit ``rev``: its files from
    ``git archive`` in the temp directory, the package laid out as the install maps it, first on
    the path."""
    import tempfile

    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sha = subprocess.run(["git", "-C", top, "rev-parse", "--short", rev], capture_output=True, text=True,
                         check=True).stdout.strip()
    root = os.path.join(tempfile.gettempdir(), f"acp-lifecycle-bench-{sha}")
    src, pkg = os.path.join(root, "src"), os.path.join(root, "pkg", "acp_lifecycle")
    if not os.path.isdir(pkg):
        os.makedirs(src, exist_ok=True)
        archive = subprocess.run(["git", "-C", top, "archive", sha], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
        os.makedirs(pkg)
        for name in os.listdir(os.path.join(src, "acp_lifecycle")):
            os.symlink(os.path.join(src, "acp_lifecycle", name), os.path.join(pkg, name))
        for name in ("model", "sims"):
            os.symlink(os.path.join(src, name), os.path.join(pkg, name))
    env = dict(os.environ, PYTHONPATH=os.path.dirname(pkg))
    return (f"{sha}:", sys.executable, os.path.join(src, "bench", "bench.py"), env)


def _wall(suite: str, workers: int) -> float:
    """Wall seconds of the command a user runs, in a fresh process, best of three."""
    exe = os.path.join(os.path.dirname(sys.executable), "acp-lifecycle")
    cmd = [exe] if os.path.exists(exe) else [sys.executable, "-c", "from acp_lifecycle.sims.cli import main; main()"]
    best = float("inf")
    for _ in range(3 if suite in ("tiny", "default") else 1):
        t = time.perf_counter()
        subprocess.run(cmd + ["check", "--config", suite, "--workers", str(workers)], capture_output=True, check=False)
        best = min(best, time.perf_counter() - t)
    return best


if __name__ == "__main__":
    sys.exit(main())
