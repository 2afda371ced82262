"""Benchmark: how soon each command says that a variant changes nothing, or refuses a malformed one.

A variant whose rules equal its base's (issue 33: one was reviewed for ten minutes to end "No
difference") must be said so at once: check, fuzz, scenario, diagrams, explore, find and trace
--model print one line on stderr before any work; diff and review answer and exit. A variant
file with a value outside its field's allowed set is one line and exit 2 for every command.

Each command runs as a user runs it, in a fresh process (the import of the CLI included), with
the variant registered before ``main`` runs (a variant is package data: no file is written into
the checkout). The figures are the wall time from the start of the process to the first line on
stderr (or to its end, for diff and review) and the CPU time the process spent by then, which a
loaded machine does not change; the medians of ``--rounds``.

    python bench/unchanged_variant.py
    python bench/unchanged_variant.py --rounds 5

The machine may be shared: compare rows of one run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

SESSION = str(Path(__file__).resolve().parent.parent / "examples" / "session.jsonl")

#: a variant of rfd+2.4.0 whose one change is the value rfd+2.4.0 has already
SAME = 'name = "same"\nbase = "rfd+2.4.0"\nsummary = "s"\nsource = "t"\n[changes]\nresume_snapshot = "must"\n'
#: a value outside the field's allowed set
NEVER = 'name = "never"\nbase = "rfd"\nsummary = "s"\nsource = "t"\n[changes]\ncancel_rejects_held = "never"\n'

_RUN = """
import sys
import acp_lifecycle.model.variants as package
text, bad = sys.argv[1], sys.argv[2] == "bad"
if bad:
    package.load_variants = lambda folder=None: {"never": package.load_variant(text, "never.toml", "never", known={})}
else:
    package.variants()["same"] = package.load_variant(text, "same.toml", "same")
from acp_lifecycle.sims.cli import main
sys.exit(main(sys.argv[3:]))
"""

COMMANDS = {
    "check": ["check", "--variant", "same"],
    "fuzz": ["fuzz", "--variant", "same"],
    "scenario": ["scenario", "cancel-request-wins", "--variant", "same"],
    "diagrams": ["diagrams", "--variant", "same", "--out", "/nonexistent/never-written"],
    "find": ["find", "AgentInsert", "--variant", "same"],
    "trace --model": ["trace", SESSION, "--no-schema", "--model", "--variant", "same"],
    "diff": ["diff", "rfd+2.4.0", "same"],
    "review": ["review", "rfd+2.4.0", "same"],
}


def first_line(argv: list[str], text: str, bad: bool) -> tuple[float, float, str]:
    """(wall seconds from the start to the first stderr line, or to the end; the CPU seconds the process
    spent by then (user and system: what a loaded machine does not change); that line, or stdout's first)."""
    t0 = time.perf_counter()
    # its own process group: check's worker processes are stopped with it
    p = subprocess.Popen([sys.executable, "-c", _RUN, text, "bad" if bad else "same", *argv],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    line = p.stderr.readline()
    seconds = time.perf_counter() - t0
    if not line:  # diff and review: nothing on stderr, the answer on stdout
        out = p.stdout.read()
        seconds = time.perf_counter() - t0
        line = next((x for x in out.splitlines() if x.startswith(("No difference", "**Summary"))), out[:80])
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGKILL)
    _, _, usage = os.wait4(p.pid, 0)
    p.returncode = -1
    p.stdout.close()
    p.stderr.close()
    return seconds, usage.ru_utime + usage.ru_stime, line.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; medians of {args.rounds} runs")
    print(f"{'':<14} {'unchanged':>15} {'malformed':>15}")
    print(f"{'command':<14} {'wall s':>7} {'cpu s':>7} {'wall s':>7} {'cpu s':>7}  first line (unchanged)")
    for name, argv in COMMANDS.items():
        same = [first_line(argv, SAME, False) for _ in range(args.rounds)]
        bad = [first_line(argv, NEVER, True) for _ in range(args.rounds)]
        cells = [statistics.median(x[i] for x in runs) for runs in (same, bad) for i in (0, 1)]
        print(f"{name:<14} " + " ".join(f"{c:>7.2f}" for c in cells) + f"  {same[0][2][:50]}")


if __name__ == "__main__":
    main()
