"""Benchmark: the full mutation run, every mutant against every member of a configuration.

Prints the kill matrix, the mutation score and the survivors (as
`acp-lifecycle mutate` does), then the seconds of the whole run and of the
slowest kill. With --markdown it writes the report that docs/mutants.md holds.

    python bench/mutate.py                  # default, 2 processes
    python bench/mutate.py --config wide    # minutes
    python bench/mutate.py --markdown > docs/mutants.md
"""

from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    from acp_lifecycle.sims.cli.mutate import _print, markdown
    from acp_lifecycle.sims.mutate.core import run_all

    t0 = time.perf_counter()
    report = run_all(config=args.config, jobs=args.jobs)
    wall = time.perf_counter() - t0
    if args.markdown:
        print(markdown(report), end="")
        return 0
    _print(report)
    kills = [r.seconds for r in report.runs if r.killed]
    print(f"{len(report.runs)} mutants in {wall:.1f} s with {args.jobs} process(es); "
          f"kill seconds: median {sorted(kills)[len(kills) // 2]:.2f}, max {max(kills):.2f}")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
