"""Benchmark: the instructions one search executes, counted by valgrind (the same count on a busy machine).

On a shared machine a CPU-time figure moves by 10 to 25 % with the other work on it, and a change worth
2 % cannot be told from that noise. valgrind's cachegrind counts the instructions a process executes
(``I refs``), which do not depend on the load: this runs each member's search (symmetry, one process)
under it, and the same process without the search, and prints the difference, the search's own
instructions, per checkout given (each with its own installed package: ``DIR/.venv/bin/python``, or
this interpreter for the current checkout). A search takes about 50 times its usual time under valgrind.

    python bench/instructions.py wide-failures                    # this checkout
    python bench/instructions.py wide-failures --dir ../other     # this checkout, then another one
    python bench/instructions.py fifo wide-failures --json

Instructions are not time (a cache miss costs more than an addition), but a change that executes 5 %
fewer of them in the model's code has, in every case measured in docs/performance.md, run faster too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

RUN = """
import sys
from acp_lifecycle.sims.configs import get_suite, SUITES
from acp_lifecycle.sims.search.explore import explore
name = sys.argv[1]
cfg = next(m for s in SUITES for m in get_suite(s).members if m.name == name)
if sys.argv[2] == "search":
    explore(cfg, symmetry=True, workers=1)
"""


def _irefs(python: str, cwd: str, member: str, what: str) -> int:
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
           python, "-c", RUN, member, what]
    # one hash seed: the string hashes decide the dicts' collisions, which moved a count by 0.3 %
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=3600, env=env)
    got = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or got is None:
        said = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("==")]
        last = (said or ["no output"])[-1]
        raise SystemExit(f"instructions: the run in {cwd} failed: {last}")
    return int(got.group(1).replace(",", ""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("members", nargs="+", help="members of the configuration suites (wide-failures, fifo, ...)")
    ap.add_argument("--dir", action="append", default=[], help="another checkout to count too (its .venv)")
    ap.add_argument("--json", action="store_true", help="one JSON line per member and checkout")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed (Debian: apt install valgrind)", file=sys.stderr)
        return 2
    from acp_lifecycle.sims.configs import SUITES, get_suite

    known = {m.name for s in SUITES for m in get_suite(s).members}
    unknown = [m for m in args.members if m not in known]
    if unknown:
        print(f"instructions: no member named {unknown[0]!r} (the suites' members: {', '.join(sorted(known))})",
              file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [(here, sys.executable)] + [(os.path.abspath(d), os.path.join(os.path.abspath(d), ".venv", "bin", "python"))
                                       for d in args.dir]
    for member in args.members:
        for cwd, python in dirs:
            if not os.path.exists(python):
                print(f"instructions: {python} does not exist", file=sys.stderr)
                return 2
            search, start = _irefs(python, cwd, member, "search"), _irefs(python, cwd, member, "start")
            row = {"member": member, "dir": cwd, "search_instructions": search - start, "start_instructions": start}
            print(json.dumps(row) if args.json else
                  f"{member:22} {search - start:>16,} instructions in the search ({start:,} to start)  {cwd}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
