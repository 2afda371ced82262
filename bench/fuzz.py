"""Benchmark: Hypothesis stateful exploration of the fuzz configuration.

Prints runs, distinct states, action kinds, seconds and runs per second for
`acp-lifecycle fuzz` on fuzz-3-clients (3 clients x 3 prompts, every fault
twice), seed 0.

    python bench/fuzz.py [EXAMPLES]
"""

from __future__ import annotations

import sys

from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.search.fuzz import fuzz


def main() -> int:
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    cfg = get_suite("fuzz").members[0]
    r = fuzz(cfg, examples=examples, seed=0)
    print(
        f"{cfg.name}: {'clean' if r.ok else r.property} after {r.examples} runs ({r.runs} drawn), "
        f"{len(r.states):,} distinct states, {len(r.actions)} action kinds, {len(r.sometimes)} sometimes reached, "
        f"{r.seconds:.1f} s, {r.examples / r.seconds:.1f} runs/s"
    )
    return 0 if r.ok else 1


if __name__ == "__main__":
    sys.exit(main())
