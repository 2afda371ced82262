"""Benchmark: what checking each distinguishing run under larger bounds adds to `diff` (sims/diff/robust.py).

For each pair (default: the doc's examples), on one configuration (default: ``default``), in one
run side by side: the diff itself (both directions, every witness replayed and checked), then
``report.annotate`` (each witness under each bound one higher, each switch on, each reading, and
the other rule set's answers). CPU seconds of this process, and wall seconds; the load is printed
because the machine is shared.

    python bench/diff_robust.py
    python bench/diff_robust.py --pair rfd+2.4.0 inject-survives-cancel --config cancel-race
"""

from __future__ import annotations

import argparse
import os
import time

PAIRS = (("rfd", "rfd+2.4.0"), ("rfd+2.4.0", "inject-survives-cancel"), ("rfd", "empty-prompt-response"))


def main() -> None:
    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.diff import diff_suite, rule_set
    from acp_lifecycle.sims.diff.report import annotate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default")
    ap.add_argument("--pair", nargs=2, action="append", metavar=("A", "B"))
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; configuration {args.config}")
    print(f"{'pair':<40} {'diff cpu':>9} {'robust cpu':>11} {'diff wall':>10} {'robust wall':>12} {'runs':>5} {'robust':>7}")
    for a, b in args.pair or PAIRS:
        c0, w0 = time.process_time(), time.perf_counter()
        d = diff_suite(get_suite(args.config), rule_set(a), rule_set(b))
        c1, w1 = time.process_time(), time.perf_counter()
        annotate(d)
        c2, w2 = time.process_time(), time.perf_counter()
        ws = list(d.only_a.values()) + list(d.only_b.values())
        robust = sum(1 for w in ws if w.robustness.robust)
        print(f"{a + ' ' + b:<40} {c1 - c0:>9.1f} {c2 - c1:>11.1f} {w1 - w0:>10.1f} {w2 - w1:>12.1f} "
              f"{len(ws):>5} {robust:>7}")


if __name__ == "__main__":
    main()
