"""Benchmark: `acp-lifecycle trace` on the conformance corpus and on long logs.

1. The monitor on tests/corpus/conforming: messages per second of
   `check_transcript`, rules only and with the pinned schema (when it has been
   pulled), plus parse speed.
2. `acp-lifecycle trace` as a user runs it, on a long conforming log built
   from the corpus (every conforming transcript again and again, each copy
   under fresh connection labels, session IDs and message IDs, so the whole
   stays conforming: many short connections): wall time, CPU time, peak RSS of
   the process, exit status, with the schema and with ``--no-schema``.
3. The same on logs of **one connection and one session**, as an editor keeps
   them for hours (``--long``, default 10,000, 50,000 and 200,000 lines): turns of
   prompt, echo, response, running, chunks and idle, with a tool call every
   third turn, written here message by message (not from the corpus nor the
   project's generators), and the time per line of each row, which stays
   the same when trace is linear in the length of a connection (past the start-up, which
   a row of 10,000 lines still feels: the bench times it on one turn and subtracts it).

    python bench/trace.py                      # 200,000 lines; one connection: 10k, 50k, 200k
    python bench/trace.py --lines 50000 --rounds 5 --keep /tmp/long.jsonl
    python bench/trace.py --skip-corpus --long 10000 20000 40000

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


def _update(sid: str, update: dict) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}


def one_connection_turns():
    """The entries of one connection and one session, turn after turn, without end: prompt,
    echo, response, running, chunks, idle; every third turn the work runs a tool call."""
    conn, sid = "editor", "sess_editor"
    yield {"conn": conn, "from": "client", "msg": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": 2, "info": {"name": "bench-editor", "version": "1.0.0"}, "capabilities": {}}}}
    yield {"conn": conn, "from": "agent", "msg": {"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": 2, "info": {"name": "bench-agent", "version": "1.0.0"}, "capabilities": {"session": {}}}}}
    yield {"conn": conn, "from": "client", "msg": {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                                                   "params": {"cwd": "/home/user/project", "mcpServers": []}}}
    yield {"conn": conn, "from": "agent", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": sid}}}
    turn = 0
    while True:
        turn += 1
        rid, mid = turn + 1, f"m-{turn:08x}"
        text = f"Please look at item {turn}."
        agent = lambda msg: {"conn": conn, "from": "agent", "msg": msg}  # noqa: E731
        yield {"conn": conn, "from": "client", "msg": {"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": {
            "sessionId": sid, "prompt": [{"type": "text", "text": text}]}}}
        yield agent(_update(sid, {"sessionUpdate": "user_message", "messageId": mid,
                                  "content": [{"type": "text", "text": text}]}))
        yield agent({"jsonrpc": "2.0", "id": rid, "result": {"messageId": mid}})
        yield agent(_update(sid, {"sessionUpdate": "state_update", "state": "running"}))
        if turn % 3 == 0:
            tool = f"tool-{turn}"
            yield agent(_update(sid, {"sessionUpdate": "tool_call_update", "toolCallId": tool,
                                      "title": f"Read file {turn}", "kind": "read", "status": "in_progress"}))
            yield agent(_update(sid, {"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": "completed"}))
        for part in ("Looking", " at it", f" now ({turn})."):
            yield agent(_update(sid, {"sessionUpdate": "agent_message_chunk", "messageId": mid,
                                      "content": {"type": "text", "text": part}}))
        yield agent(_update(sid, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))


def one_connection_entries(lines: int):
    """The entries of a conforming log of one connection and one session, one at a time: whole
    turns, at least ``lines`` lines (it ends with the idle of the turn that reaches ``lines``)."""
    for n, e in enumerate(one_connection_turns(), 1):
        yield e
        if n >= lines and e["msg"].get("params", {}).get("update", {}).get("state") == "idle":
            return


def one_connection_log(lines: int) -> list[dict]:
    """``one_connection_entries(lines)`` as a list."""
    return list(one_connection_entries(lines))


def build_one_connection(path: Path, lines: int) -> int:
    """Write ``one_connection_entries(lines)`` to ``path`` (never held whole: the bench's own size
    would show in its children's peak RSS); its line count."""
    n = 0
    with path.open("w") as out:
        for e in one_connection_entries(lines):
            out.write(json.dumps(e, separators=(",", ":")) + "\n")
            n += 1
    return n


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
    ap.add_argument("--long", type=int, nargs="*", default=[10_000, 50_000, 200_000], metavar="LINES",
                    help="lengths of the one-connection logs (default 10,000 50,000 200,000; none: skip them)")
    ap.add_argument("--skip-corpus", action="store_true", help="only the one-connection logs")
    ap.add_argument("--no-schema-too", action="store_true", help="time the one-connection logs with --no-schema too")
    ap.add_argument("--json", action="store_true", help="print the long-log rows as JSON Lines")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_corpus:
            corpus_throughput(args.rounds)
            log = args.keep or Path(tmp) / "long.jsonl"
            n = build_log(log, args.lines)
            size = log.stat().st_size
            print(f"long log of many connections: {n:,} lines, {size / 1e6:.1f} MB ({log})")
            _show(args, "many connections", n, [run_trace_rss(log), run_trace_rss(log, "--no-schema")])
        if args.long:
            one_connection(args, Path(tmp))
    print(f"load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    return 0


def one_connection(args, tmp: Path) -> None:
    """The one-connection rows. First the start-up, what every row pays once: ``trace`` on one turn
    (the least CPU of three runs). Each row then shows its CPU per line as it is and past the
    start-up (a linear trace keeps the latter flat), and the last line the largest of the latter
    over the smallest."""
    options = [()] + ([("--no-schema",)] if args.no_schema_too else [])
    log = tmp / "one-turn.jsonl"
    build_one_connection(log, 1)
    start = {o: min(run_trace_rss(log, *o)["cpu_seconds"] for _ in range(3)) for o in options}
    print("start-up (trace on one turn): " + ", ".join(f"{' '.join(o) or 'with the schema'} {s:.2f} s CPU"
                                                       for o, s in start.items()))
    past: dict = {o: [] for o in options}
    for lines in args.long:
        log = tmp / f"one-{lines}.jsonl"
        n = build_one_connection(log, lines)
        print(f"one connection, one session: {n:,} lines, {log.stat().st_size / 1e6:.1f} MB")
        for o in options:
            r = run_trace_rss(log, *o)
            r["start_up_cpu_seconds"] = start[o]
            r["us_per_line_past_start_up"] = round((r["cpu_seconds"] - start[o]) / n * 1e6, 2)
            past[o].append(r["us_per_line_past_start_up"])
            _show(args, "one connection", n, [r])
        log.unlink()
    for o, per in past.items():
        if len(per) > 1 and min(per) > 0:
            print(f"one connection, {' '.join(o) or 'with the schema'}: CPU µs/line past the start-up, largest / "
                  f"smallest = {max(per) / min(per):.2f}")


def _show(args, shape: str, lines: int, rows: list) -> None:
    for r in rows:
        if args.json:
            print(json.dumps({"shape": shape, "lines": lines, **r}), flush=True)
            continue
        per = r["cpu_seconds"] / lines * 1e6
        past = (f", {r['us_per_line_past_start_up']:5.1f} past start-up" if "us_per_line_past_start_up" in r else "")
        print(f"trace {r['options']:18} {r['seconds']:6.2f} s ({r['cpu_seconds']:.2f} s CPU, {per:5.1f} µs/line{past})"
              f"  peak RSS {r['peak_rss_mb']:6.1f} MB  exit {r['exit']}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
