"""Benchmark: `acp-lifecycle diff` between every two variants of the matrix, on each member.

For each member of the configuration (default: ``default``) and each pair of
variants (every unordered pair of distinct variants, and each variant with
itself), times the whole diff of that member: both directions of the product
and the replay check of every witness. Prints, per member, the slowest pair
and its seconds (the target is under 30 s on 2 cores), the median, the largest
product (states of one direction) and the kinds of distinguishing message
found; then the example pairs of docs/spec-review.md in detail.

    python bench/diff.py                      # every pair on every default member (minutes)
    python bench/diff.py --member fifo        # one member
    python bench/diff.py --variant rfd --variant v1 --variant ack-at-receipt
    python bench/diff.py --json

The machine is shared: note the load (printed) when reading the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from itertools import combinations

EXAMPLES = (("rfd", "rfd"), ("rfd", "ack-at-receipt"), ("rfd", "rfd+2.4.0"), ("v1", "rfd"))


def _one(cfg, a: str, b: str) -> dict:
    from acp_lifecycle.model.variants import VARIANTS
    from acp_lifecycle.sims.diff import check_witness, diff_member

    ra, rb = VARIANTS[a].rules, VARIANTS[b].rules
    t0 = time.perf_counter()
    d = diff_member(cfg, ra, rb)
    for w in d.a_not_b.witnesses.values():
        check_witness(w, cfg, ra, rb)
    for w in d.b_not_a.witnesses.values():
        check_witness(w, cfg, rb, ra)
    return {
        "member": cfg.name,
        "a": a,
        "b": b,
        "seconds": round(time.perf_counter() - t0, 3),
        "product_states": [d.a_not_b.nodes, d.b_not_a.nodes],
        "only_a": {k: list(w.length) for k, w in d.a_not_b.witnesses.items()},
        "only_b": {k: list(w.length) for k, w in d.b_not_a.witnesses.items()},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default", help="named configuration (default: default)")
    ap.add_argument("--member", action="append", help="only this member (repeatable)")
    ap.add_argument("--variant", action="append", help="only pairs of these variants (repeatable)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from acp_lifecycle.model.variants import VARIANTS
    from acp_lifecycle.sims.configs import get_suite

    names = args.variant or list(VARIANTS)
    pairs = [(v, v) for v in names] + list(combinations(names, 2))
    members = [m for m in get_suite(args.config).members if not args.member or m.name in args.member]
    rows = []
    summary = []
    load0 = os.getloadavg()[0]
    for cfg in members:
        t0 = time.perf_counter()
        mine = [_one(cfg, a, b) for a, b in pairs]
        rows += mine
        worst = max(mine, key=lambda r: r["seconds"])
        summary.append({
            "member": cfg.name,
            "pairs": len(mine),
            "max_seconds": worst["seconds"],
            "slowest_pair": f"{worst['a']} / {worst['b']}",
            "median_seconds": round(statistics.median(r["seconds"] for r in mine), 3),
            "max_product_states": max(max(r["product_states"]) for r in mine),
            "total_seconds": round(time.perf_counter() - t0, 1),
        })
        if not args.json:
            s = summary[-1]
            print(f"{s['member']:<14} {s['pairs']:>3} pairs  max {s['max_seconds']:6.2f} s ({s['slowest_pair']})  "
                  f"median {s['median_seconds']:.2f} s  largest product {s['max_product_states']:,}  "
                  f"total {s['total_seconds']:.0f} s", flush=True)
    load1 = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"config": args.config, "members": summary, "pairs": rows,
                          "load_average": [load0, load1], "cpus": os.cpu_count()}, indent=2))
        return 0
    print(f"\nload average {load0:.1f} at the start, {load1:.1f} at the end, on {os.cpu_count()} cores "
          "(other helpers share them)")
    worst = max(summary, key=lambda s: s["max_seconds"])
    print(f"slowest diff: {worst['max_seconds']:.2f} s ({worst['slowest_pair']} on {worst['member']}); target < 30 s")
    inputs = sorted({k for r in rows for k in (*r["only_a"], *r["only_b"]) if k.startswith("client sends")})
    print(f"kinds that are client messages (inputs one side's clients never send): {inputs or 'none'}")
    same = [f"{r['a']} on {r['member']}" for r in rows if r["a"] == r["b"] and (r["only_a"] or r["only_b"])]
    print(f"variants that differ from themselves: {same or 'none'}")
    for a, b in EXAMPLES:
        if a not in names or b not in names:
            continue
        print(f"\ndiff {a} {b}:")
        for r in rows:
            if {r["a"], r["b"]} != {a, b}:
                continue
            flip = r["a"] != a
            only_a, only_b = (r["only_b"], r["only_a"]) if flip else (r["only_a"], r["only_b"])
            print(f"  {r['member']:<14} {r['seconds']:6.2f} s  product {r['product_states'][0]:,}/"
                  f"{r['product_states'][1]:,}  only {a}: {len(only_a)}  only {b}: {len(only_b)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
