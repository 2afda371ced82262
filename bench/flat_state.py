"""Benchmark: what a flat state would save, measured on the states of a real member.

Issue 25 asks whether a flat representation (every atom interned to a small integer, the whole
state one tuple of integers) pays against today's nested NamedTuples. The successor function is
written against the nested records (``s.agent.reqs[i].phase``), so a flat state would pay where
the search handles a state as a whole: hashing it (the local fingerprint), canonicalising it,
storing it in the frontier. This measures those costs per state on the first N states of a
breadth-first walk of a member, beside the cost of the successor function and the canonical
form as they are, so the ceiling of the gain is read from one run:

* ``successors``:   ``successors(s)`` per state (the model's step, judges included);
* ``canonical``:    the symmetry reduction's representative of a successor;
* ``hash nested``:  ``hash(s)`` of the nested state (tuples do not cache their hash);
* ``hash flat``:    ``hash(f)`` of the flat tuple of interned integers;
* ``flatten``:      turning a nested state into the flat one (the price at a boundary);
* bytes a state, nested (each object once) and flat (a tuple, and an ``array('H')``).

    python bench/flat_state.py                    # wide-failures, 20,000 states
    python bench/flat_state.py --member fifo --states 5000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from array import array


def walk(member: str, limit: int):
    """The first ``limit`` states of a breadth-first walk of ``member`` (no symmetry), with the
    member's config and rules."""
    from acp_lifecycle.model.config import RULE_SETS
    from acp_lifecycle.model.system import initial_state, successors
    from acp_lifecycle.sims.configs import get_suite

    cfg = get_suite(member).members[0]
    rules = RULE_SETS["rfd+2.4.0"]
    seen, frontier = {initial_state(cfg)}, [initial_state(cfg)]
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            for step in successors(s, cfg, rules):
                if step.state not in seen and len(seen) < limit:
                    seen.add(step.state)
                    nxt.append(step.state)
        frontier = nxt
    return cfg, rules, list(seen)


class Interner:
    """Atoms (ints, strings, booleans, None) to small integers; a tuple as its length then its items."""

    def __init__(self):
        self.table: dict = {}

    def atom(self, x) -> int:
        key = (type(x), x)
        code = self.table.get(key)
        if code is None:
            code = self.table[key] = len(self.table)
        return code

    def flatten(self, x, out: list) -> list:
        if isinstance(x, tuple):
            out.append(len(x))
            for v in x:
                self.flatten(v, out)
        elif isinstance(x, frozenset):
            self.flatten(tuple(sorted(x, key=repr)), out)
        else:
            out.append(self.atom(x))
        return out


def deep_size(x, seen: set) -> int:
    """Bytes of ``x`` and what it holds, each object counted once (shared atoms included)."""
    if id(x) in seen:
        return 0
    seen.add(id(x))
    size = sys.getsizeof(x)
    if isinstance(x, (tuple, frozenset)):
        size += sum(deep_size(v, seen) for v in x)
    return size


def per_state(fn, items, repeat: int = 3) -> float:
    """Microseconds per item, the best of ``repeat`` passes."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for x in items:
            fn(x)
        best = min(best, time.perf_counter() - t)
    return best / len(items) * 1e6


def measure(member: str, limit: int) -> dict:
    from acp_lifecycle.model.symmetry import canonicalizer
    from acp_lifecycle.model.system import successors

    cfg, rules, states = walk(member, limit)
    interner = Interner()
    flats = [tuple(interner.flatten(s, [])) for s in states]
    canon = canonicalizer(rules, cfg) or (lambda s: s)
    succ = [step.state for s in states[:2000] for step in successors(s, cfg, rules)][:limit]
    row = {
        "member": member,
        "states": len(states),
        "successors": per_state(lambda s: successors(s, cfg, rules), states[:2000], repeat=1),
        "canonical": per_state(canon, succ, repeat=1),
        "hash nested": per_state(hash, states),
        "hash flat": per_state(hash, flats),
        "flatten": per_state(lambda s: interner.flatten(s, []), states, repeat=1),
        "bytes nested": statistics.mean(deep_size(s, set()) for s in states[:2000]),
        "bytes flat tuple": statistics.mean(sys.getsizeof(f) for f in flats),
        "atoms": len(interner.table),
        "ints a state": statistics.mean(len(f) for f in flats),
    }
    typecode = "H" if len(interner.table) < 1 << 16 else "I"
    row["bytes flat array"] = statistics.mean(sys.getsizeof(array(typecode, f)) for f in flats[:2000])
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--member", default="wide-failures")
    ap.add_argument("--states", type=int, default=20_000)
    args = ap.parse_args(argv)
    import os

    print(f"load average {os.getloadavg()[0]:.2f}: compare the rows of one run")
    r = measure(args.member, args.states)
    print(f"{r['member']}: {r['states']:,} states, {r['ints a state']:.0f} integers a state flat, {r['atoms']:,} atoms")
    for key in ("successors", "canonical", "hash nested", "hash flat", "flatten"):
        print(f"  {key:<18} {r[key]:8.2f} us a state")
    for key in ("bytes nested", "bytes flat tuple", "bytes flat array"):
        print(f"  {key:<18} {r[key]:8.0f}")
    saved = r["hash nested"] - r["hash flat"]
    print(f"  a flat state saves at most {saved:.2f} us a state on hashing, "
          f"{saved / (r['successors'] + r['canonical'] + r['hash nested']):.0%} of successors + canonical + hash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
