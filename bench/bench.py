"""Benchmark: exhaustive exploration speed and memory for each named configuration.

Prints, for every member of the chosen suites, distinct states, transitions,
depth, seconds, distinct states per second, transitions per second and peak
memory (the maximum resident set of a fresh process per member). Also times the
successor function alone (no property checks) to separate model cost from
checking cost.

    python bench/bench.py                 # tiny and default
    python bench/bench.py --suite wide    # minutes
    python bench/bench.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _one(name: str) -> dict:
    from acp_lifecycle.model.config import RFD_RULES
    from acp_lifecycle.model.system import initial_state, successors
    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.search.explore import explore

    cfg = get_suite(name).members[0]
    # The model alone: BFS with a seen-set, no properties.
    t0 = time.perf_counter()
    s0 = initial_state(cfg)
    seen, frontier, n = {s0}, [s0], 0
    while frontier:
        nxt = []
        for s in frontier:
            for step in successors(s, cfg, RFD_RULES):
                n += 1
                if step.state not in seen:
                    seen.add(step.state)
                    nxt.append(step.state)
        frontier = nxt
    model_seconds = time.perf_counter() - t0
    del seen, frontier
    r = explore(cfg)
    return {
        "member": name,
        "states": r.states,
        "transitions": r.transitions,
        "depth": r.depth,
        "seconds": round(r.seconds, 3),
        "states_per_second": round(r.states / r.seconds),
        "transitions_per_second": round(r.transitions / r.seconds),
        "model_only_states_per_second": round(r.states / model_seconds),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", action="append", help="suite(s) to run (default: tiny and default)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(args.one)))
        return 0
    from acp_lifecycle.sims.configs import SUITES

    rows = []
    for suite in args.suite or ["tiny", "default"]:
        for m in SUITES[suite].members:
            out = subprocess.run(
                [sys.executable, __file__, "--one", m.name], capture_output=True, text=True, check=True
            ).stdout
            row = json.loads(out) | {"suite": suite}
            rows.append(row)
            if not args.json:
                print(
                    f"{suite:8} {row['member']:20} {row['states']:>9,} states {row['transitions']:>10,} transitions "
                    f"depth {row['depth']:>3} {row['seconds']:>7.2f} s {row['states_per_second']:>7,} states/s "
                    f"{row['transitions_per_second']:>7,} transitions/s (model alone {row['model_only_states_per_second']:>7,} states/s) "
                    f"{row['peak_rss_mib']:>6.1f} MiB",
                    flush=True,
                )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for suite in args.suite or ["tiny", "default"]:
            sel = [r for r in rows if r["suite"] == suite]
            st, sec = sum(r["states"] for r in sel), sum(r["seconds"] for r in sel)
            print(f"{suite:8} total {st:,} states in {sec:.2f} s ({st / sec:,.0f} states/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
