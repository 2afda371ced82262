"""Benchmark: how fast the exhaustive checker catches each seeded bug.

For every bug in model/bugs.py: the property it breaks, the member it is
checked on, the length of the shortest counterexample, and the seconds to find
it (the whole exploration of the member).

    python bench/bugs.py
"""

from __future__ import annotations

import sys
import time

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.search.explore import explore


def main() -> int:
    print(f"{'bug':34} {'property':40} {'member':14} {'steps':>5} {'seconds':>8}")
    total = 0.0
    for b in BUGS.values():
        t0 = time.perf_counter()
        r = explore(get_suite(b.member).members[0], b.rules)
        dt = time.perf_counter() - t0
        total += dt
        v = r.verdicts[b.breaks]
        caught = len(v.trace) if v.status == "violated" else "MISSED"
        print(f"{b.name:34} {b.breaks:40} {b.member:14} {caught:>5} {dt:8.2f}")
    print(f"{len(BUGS)} bugs in {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
