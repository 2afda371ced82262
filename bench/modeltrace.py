"""Benchmark: `trace --model` (model-based trace validation) against the length of the log.

Builds long conforming transcripts from runs of the model (one or two
clients taking turns, tool calls, an occasional rejected prompt or failure),
cuts each at a quiet point (every prompt answered, the session idle) near
500, 5,000 and 10,000 lines, and times ``explain(..., complete=True)`` on each:
lines, search nodes, seconds (wall and CPU), and each per line. Linear growth shows
as roughly constant nodes per line, and a linear search as roughly constant
ms per line: the last lines print, per number of clients, the ratio of the
largest ms/line to the smallest, of wall time and of CPU time (issue 25: within 1.5).
On a shared machine the CPU time is the steadier of the two: the wall time of a row
also counts the time other processes had the core. Also times the long transcripts of the
official-SDK corpus (tests/corpus/conforming/long-*.jsonl).

    python bench/modeltrace.py
    python bench/modeltrace.py --lines 200 500 1000 --json

The default run takes a few minutes (building the 10,000-line runs is part of
it). The machine is shared: read the ratios between rows of one run.

Then the same on logs of **one connection and one session** (``--one-connection``, default 1,000,
5,000 and 10,000 lines), as an editor keeps them: bench/trace.py writes them turn by turn (prompt, echo,
response, running, chunks, idle, a tool call every third turn), not from the model's runs (issue 35:
per line within 1.5x from 1,000 to 10,000 lines).

Each row is timed in a fresh process (``_timed``), as ``acp-lifecycle trace --model``
runs: building the model runs fills the model's memos (``system._received``, the
judges' memo), and the first search after a build paid for freeing them (about 0.25 s
of CPU, half the 500-line rows' time), and a row after another row started with the
previous row's memos.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "conforming"


def conforming_run(turns: int, clients: int, seed: int):
    """A run of the correct model: clients take turns (a new prompt mostly when the session is quiet)."""
    from acp_lifecycle.model.config import RFD_RULES, Config
    from acp_lifecycle.model.system import initial_state, successors

    # bounds beyond config.LIMITS: a walk is no exhaustive search
    cfg = Config(name="long", clients=clients, prompts=turns, tool_calls=turns, failures=turns // 10,
                 down_latency=False, hook=False)
    rng = random.Random(seed)
    s, trace = initial_state(cfg), []
    while succ := successors(s, cfg, RFD_RULES):
        busy = s.agent.work is not None or any(s.up) or any(
            r.phase not in ("answered", "rejected", "dropped") for r in s.agent.reqs)
        weights = []
        for step in succ:
            a = step.action[0]
            weights.append(0.02 if a == "ClientSubmitPrompt" and busy else
                           0.05 if a in ("AgentRejectPrompt", "AgentFailWork", "AgentFailAndRetry",
                                         "AgentFailInBackground") else
                           # a new tool call is announced with any of four statuses: one start between them
                           0.25 if a == "AgentToolCall" and step.action[2].startswith("start") else 1.0)
        step = rng.choices(succ, weights=weights)[0]
        trace.append((s, step))
        s = step.state
    return trace


def quiet_prefix(lines: list[dict], n: int) -> list[dict]:
    """The longest prefix of at most ``n`` lines that ends quiet: the session idle,
    every prompt answered, every inserted message echoed."""
    prompts = answered = 0
    acked, echoed = set(), set()
    best = 0
    for i, e in enumerate(lines[:n], 1):
        m = e.get("msg") or {}
        upd = (m.get("params") or {}).get("update") or {}
        if e.get("from") == "client" and m.get("method") == "session/prompt":
            prompts += 1
        elif e.get("from") == "agent" and "id" in m and ("result" in m or "error" in m):
            answered += 1
            acked.add(json.dumps((m.get("result") or {}).get("messageId")))
        if upd.get("sessionUpdate") in ("user_message", "user_message_chunk"):
            echoed.add(json.dumps(upd.get("messageId")))
        quiet = prompts == answered and acked - {"null"} <= echoed
        if upd.get("sessionUpdate") == "state_update" and upd.get("state") == "idle" and quiet:
            best = i
    return lines[:best]


def _bench_trace():
    """bench/trace.py as a module (its one-connection logs)."""
    spec = importlib.util.spec_from_file_location("bench_trace", Path(__file__).resolve().parent / "trace.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _time(entries) -> tuple[bool, int, float, float]:
    from acp_lifecycle.sims.wire.modeltrace import explain

    t0, c0 = time.perf_counter(), time.process_time()
    r = explain(entries, complete=True)
    return r.explained, r.nodes, time.perf_counter() - t0, time.process_time() - c0


def _timed(entries) -> tuple[bool, int, float, float]:
    """``_time`` in a fresh process (the package imported, the log in memory, nothing else)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_time, entries).result()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, nargs="+", default=[500, 5000, 10000])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--one-connection", type=int, nargs="*", default=[1000, 5000, 10000], metavar="LINES",
                    help="lengths of the one-connection logs of bench/trace.py (none: skip them)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from acp_lifecycle.sims.wire.transcript import export, parse

    rows = []
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores shared: compare rows of one run)", file=sys.stderr)
    for clients in (1, 2):
        lines = export(conforming_run(max(args.lines) // 5, clients, args.seed))
        for n in args.lines:
            cut = quiet_prefix(lines, n)
            ok, nodes, sec, cpu = _timed(list(enumerate(cut, 1)))
            rows.append({"transcript": f"model run, {clients} client(s)", "lines": len(cut), "explained": ok,
                         "nodes": nodes, "seconds": round(sec, 3), "cpu_seconds": round(cpu, 3)})
    one = _bench_trace()
    for n in args.one_connection:
        entries = list(enumerate(one.one_connection_log(n), 1))
        ok, nodes, sec, cpu = _timed(entries)
        rows.append({"transcript": "one connection (bench/trace.py)", "lines": len(entries), "explained": ok,
                     "nodes": nodes, "seconds": round(sec, 3), "cpu_seconds": round(cpu, 3)})
    for f in sorted(CORPUS.glob("long-*.jsonl")):
        entries = parse(f)
        ok, nodes, sec, cpu = _timed(entries)
        rows.append({"transcript": f"corpus {f.name}", "lines": len(entries), "explained": ok, "nodes": nodes,
                     "seconds": round(sec, 3), "cpu_seconds": round(cpu, 3)})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'transcript':40} {'lines':>6} {'explained':>9} {'nodes':>8} {'seconds':>8} {'nodes/line':>10} {'ms/line':>8} "
          f"{'CPU ms/line':>11}")
    for r in rows:
        n = max(r["lines"], 1)
        print(f"{r['transcript']:40} {r['lines']:>6} {str(r['explained']):>9} {r['nodes']:>8,} {r['seconds']:>8.2f} "
              f"{r['nodes'] / n:>10.1f} {1000 * r['seconds'] / n:>8.2f} {1000 * r['cpu_seconds'] / n:>11.2f}")
    for kind in ("model run, 1 client(s)", "model run, 2 client(s)", "one connection (bench/trace.py)"):
        mine = [r for r in rows if r["transcript"] == kind and r["lines"]]
        if len(mine) > 1:
            wall = [r["seconds"] / r["lines"] for r in mine]
            cpu = [r["cpu_seconds"] / r["lines"] for r in mine]
            print(f"{kind}: largest ms/line / smallest = {max(wall) / min(wall):.2f} (wall), "
                  f"{max(cpu) / min(cpu):.2f} (CPU)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
