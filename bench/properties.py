"""Benchmark: what the properties cost a state, by kind, with and without the dispatch.

Walks the first ``--states`` states of a member breadth first (no symmetry: the model's own
steps) and times, on them, every ``always`` and ``eventually`` property on each state and the
``step`` and ``sometimes`` properties on each step, twice: all of them on every step, and only
those the dispatch (``model/properties/dispatch.py``) runs on it, as the search does. The
findings must agree (it stops if not). Prints microseconds a state for each and the state
properties that cost the most.

    python bench/properties.py
    python bench/properties.py --member wide-lost-response --states 20000 --json
    python bench/properties.py --reads     # what an incremental check of the state properties could skip
"""

from __future__ import annotations

import argparse
import json
import os
import time


def walk(cfg, rules, limit: int):
    """The first ``limit`` states of a breadth-first walk, every step out of them, and each new
    state with the state it was first reached from."""
    from acp_lifecycle.model.system import initial_state, successors

    s0 = initial_state(cfg)
    seen, todo, states, steps, found = {s0}, [s0], [], [], []
    while todo and len(states) < limit:
        nxt = []
        for s in todo:
            states.append(s)
            for step in successors(s, cfg, rules):
                steps.append((s, step))
                if step.state not in seen:
                    seen.add(step.state)
                    nxt.append(step.state)
                    found.append((s, step.state))
            if len(states) >= limit:
                break
        todo = nxt
    return states, steps, found


def measure(member: str, limit: int) -> dict:
    import gc

    from acp_lifecycle.model.config import RFD_RULES
    from acp_lifecycle.model.properties import PROPERTIES, Dispatch
    from acp_lifecycle.sims.configs import get_suite

    states, steps, _ = walk(get_suite(member).members[0], RFD_RULES, limit)
    gc.collect()
    gc.freeze()  # the walk's objects stay: the timings are the properties', not the collector's
    n = len(states)
    per_kind, costly = {}, {}
    for kind in ("always", "eventually"):
        per_kind[kind] = 0.0
        for p in (p for p in PROPERTIES if p.kind == kind):
            t = time.perf_counter()
            for s in states:
                p.check(s)
            costly[p.id] = time.perf_counter() - t
            per_kind[kind] += costly[p.id]
    # a witness found is settled, as in the search: it is not run again
    stepwise = [p for p in PROPERTIES if p.kind in ("step", "sometimes")]
    t = time.perf_counter()
    every = []
    for pre, step in steps:
        every.append([p.id for p in stepwise if p.check(pre, step)])
        if every[-1]:
            stepwise = [p for p in stepwise if p.kind == "step" or p.id not in every[-1]]
    per_kind["step, sometimes: every step"] = time.perf_counter() - t
    d = Dispatch(PROPERTIES)
    t = time.perf_counter()
    some = []
    for pre, step in steps:
        some.append([p.id for p in d.for_step(step) if p.check(pre, step)])
        if some[-1]:
            d.settle(i for i in some[-1] if i.startswith("sometimes_"))
    per_kind["step, sometimes: dispatched"] = time.perf_counter() - t
    if every != some:
        raise SystemExit("the dispatch skips a step a property fires on")
    top = sorted(costly.items(), key=lambda kv: -kv[1])[:6]
    return {"member": member, "states": n, "steps": len(steps), "load": round(os.getloadavg()[0], 2),
            "us_per_state": {k: round(v / n * 1e6, 2) for k, v in per_kind.items()},
            "costliest_state_properties_us": {k: round(v / n * 1e6, 2) for k, v in top}}


class _Opaque(BaseException):
    pass


class _Reads:
    """A state that notes which of its parts (two levels: ``agent.reqs``, ``clients``) a property reads."""

    __slots__ = ("_o", "_path", "_reads")

    def __init__(self, o, path, reads):
        object.__setattr__(self, "_o", o)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_reads", reads)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        v, path = getattr(self._o, name), self._path + (name,)
        if len(path) < 2 and hasattr(v, "_fields"):
            return _Reads(v, path, self._reads)
        self._reads.add(path)
        return v

    def _opaque(self, *args):
        raise _Opaque

    __getitem__ = __iter__ = __eq__ = __hash__ = __len__ = _opaque


def _part(s, path):
    for name in path:
        s = getattr(s, name)
    return s


def unchanged_from_parent(member: str, limit: int) -> dict:
    """For each state property: the parts it reads, and the share of new states whose parent has
    those very parts (the same objects), where an incremental check could take the parent's verdict."""
    from acp_lifecycle.model.config import RFD_RULES
    from acp_lifecycle.model.properties import PROPERTIES
    from acp_lifecycle.sims.configs import get_suite

    _, _, pairs = walk(get_suite(member).members[0], RFD_RULES, limit)
    out = {}
    for p in (p for p in PROPERTIES if p.kind in ("always", "eventually")):
        reads: set = set()
        try:
            for _, t in pairs[:3000]:
                p.check(_Reads(t, (), reads))
        except _Opaque:
            out[p.id] = {"reads": "the whole state", "unchanged": 0.0}
            continue
        same = sum(1 for s, t in pairs if all(_part(s, r) is _part(t, r) for r in reads))
        out[p.id] = {"reads": sorted(".".join(r) for r in reads), "unchanged": round(same / len(pairs), 3)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--member", default="wide-failures")
    ap.add_argument("--states", type=int, default=10_000)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--reads", action="store_true",
                    help="instead: the parts each state property reads, and how often a new state's parent has them")
    args = ap.parse_args()
    if args.reads:
        r = unchanged_from_parent(args.member, args.states)
        if args.json:
            print(json.dumps(r))
            return
        for pid, v in r.items():
            print(f"  {v['unchanged']:6.1%}  {pid:42s} {', '.join(v['reads']) if isinstance(v['reads'], list) else v['reads']}")
        return
    r = measure(args.member, args.states)
    if args.json:
        print(json.dumps(r))
        return
    print(f"{r['member']}: {r['states']:,} states, {r['steps']:,} steps, load average {r['load']}")
    for k, v in r["us_per_state"].items():
        print(f"  {k:30s} {v:7.2f} us a state")
    print("  costliest state properties (us a state):")
    for k, v in r["costliest_state_properties_us"].items():
        print(f"    {v:7.2f}  {k}")


if __name__ == "__main__":
    main()
