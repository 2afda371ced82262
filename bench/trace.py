"""Benchmark: `acp-lifecycle trace` on the conformance corpus and on a long log.

1. The monitor on tests/corpus/conforming: messages per second of
   `check_transcript`, rules only and with the pinned schema (when it has been
   pulled), plus parse speed.
2. `acp-lifecycle trace` as a user runs it, on a long conforming log built
   from the corpus (every conforming transcript again and again, each copy
   under fresh connection labels, session IDs and message IDs, so the whole
   stays conforming): wall time, peak RSS of the process, exit status, with
   the schema and with ``--no-schema``.

    python bench/trace.py                      # 200,000 lines
    python bench/trace.py --lines 50000 --rounds 5 --keep /tmp/long.jsonl

The machine may be shared: compare rows of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from acp_lifecycle.sims.wire.schema import SchemaError, Validator, locate
from acp_lifecycle.sims.wire.transcript import check_transcript, parse

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "conforming"
#: Members whose values name a session or a message: renamed in each copy.
_RENAMED = ("sessionId", "messageId")


def _rename(node, suffix: str):
    if isinstance(node, dict):
        return {k: (v + suffix if k in _RENAMED and isinstance(v, str) else _rename(v, suffix)) for k, v in node.items()}
    if isinstance(node, list):
        return [_rename(v, suffix) for v in node]
    return node


def build_log(path: Path, lines: int) -> int:
    """Write a conforming log of at least ``lines`` lines (whole corpus transcripts); its line count."""
    files = [[json.loads(raw) for raw in f.read_text().splitlines() if raw.strip()] for f in sorted(CORPUS.glob("*.jsonl"))]
    written, copy = 0, 0
    with path.open("w") as out:
        while written < lines:
            for entries in files:
                suffix = f"-r{copy}"
                copy += 1
                for e in entries:
                    e = {**e, "conn": f"{e['conn']}{suffix}"}
                    if "msg" in e:
                        e["msg"] = _rename(e["msg"], suffix)
                    out.write(json.dumps(e, separators=(",", ":")) + "\n")
                written += len(entries)
                if written >= lines:
                    break
    return written


def run_trace_rss(log: Path, *options: str) -> dict:
    """``acp-lifecycle trace`` on ``log`` in a fresh process: wall and CPU seconds, peak RSS
    (MB; the process's own figures, from ``os.wait4``), exit status, the last line it printed."""
    cmd = [sys.executable, "-c", "import sys; from acp_lifecycle.sims.cli import main; sys.exit(main())",
           "trace", *options, str(log)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace").strip().splitlines() or err.read().decode(errors="replace").strip().splitlines()
    return {"options": " ".join(options) or "(with the schema)", "seconds": round(seconds, 2),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "exit": proc.returncode, "last": text[-1] if text else ""}


def corpus_throughput(rounds: int) -> None:
    files = sorted(CORPUS.glob("*.jsonl"))
    t0 = time.perf_counter()
    parsed = [parse(f) for f in files]
    parse_s = time.perf_counter() - t0
    messages = sum(1 for entries in parsed for _, e in entries if "msg" in e)
    print(f"corpus: {len(files)} transcripts, {messages:,} messages; parse {messages / parse_s:,.0f} messages/s")
    try:
        validator = Validator(locate(), cache_size=0)  # as trace has it: no memo
    except SchemaError:
        validator = None
    for label, v in (("rules only", None), ("with the schema", validator)):
        if label != "rules only" and v is None:
            print("corpus, with the schema: skipped (run `acp-lifecycle schema pull`)")
            continue
        for entries in parsed:  # warm up: the compiled validators are built on first use
            check_transcript(entries, validator=v)
        t0 = time.perf_counter()
        for _ in range(rounds):
            for entries in parsed:
                check_transcript(entries, validator=v)
        s = time.perf_counter() - t0
        print(f"corpus, {label}: {rounds * messages / s:,.0f} messages/s ({s / rounds * 1000:.1f} ms per pass)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000, help="length of the long log (default 200,000)")
    ap.add_argument("--rounds", type=int, default=20, help="passes over the corpus (default 20)")
    ap.add_argument("--keep", type=Path, help="write the long log here and keep it (default: a temporary file)")
    ap.add_argument("--json", action="store_true", help="print the long-log rows as JSON")
    args = ap.parse_args()
    corpus_throughput(args.rounds)
    print(f"load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        log = args.keep or Path(tmp) / "long.jsonl"
        n = build_log(log, args.lines)
        size = log.stat().st_size
        print(f"long log: {n:,} lines, {size / 1e6:.1f} MB ({log})")
        rows = [run_trace_rss(log), run_trace_rss(log, "--no-schema")]
    if args.json:
        print(json.dumps({"lines": n, "bytes": size, "runs": rows}, indent=2))
        return 0
    for r in rows:
        print(f"trace {r['options']:18} {r['seconds']:6.2f} s ({r['cpu_seconds']:.2f} s CPU)  peak RSS {r['peak_rss_mb']:7.1f} MB  exit {r['exit']}  | {r['last']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
