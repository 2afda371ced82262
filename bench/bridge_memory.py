"""Benchmark: `bridge serve --to v2` memory and throughput over a long session.

A fake v1 agent (this file, run with ``--agent``) streams ``--updates`` session
updates per turn (agent message and thought chunks without ``messageId``, tool calls
with their updates, a plan, a usage update; no echo of the prompt, like the published
agents), then answers ``end_turn``. A v2 client (this file, the default) starts
``acp-lifecycle bridge serve --to v2 -- python bench/bridge_memory.py --agent`` and runs
``--turns`` prompts on one session, each until its idle ``state_update``.

It prints the bridge process's peak resident set (``VmHWM``) after turn 1 and at the
end, their ratio (a flat bridge stays within 1.5x: ``--check`` makes a larger ratio exit
1), and the throughput: the agent's messages the bridge relayed per second of wall time.

    python bench/bridge_memory.py                          # 100 turns x 10,000 updates
    python bench/bridge_memory.py --turns 10 --json
    python bench/bridge_memory.py --check                  # exit 1 when memory grows past 1.5x

The schemas' output gate is on when the schemas are pulled (``acp-lifecycle schema pull``),
as in a real session; ``--no-gate`` hides them from the bridge (another cache folder).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

RATIO_LIMIT = 1.5


# ---------------------------------------------------------------------------
# The fake v1 agent
# ---------------------------------------------------------------------------


def _turn_lines(sid: str, turn: int, updates: int) -> list[bytes]:
    """The updates of one turn, as JSON lines (the last one the plan, then usage)."""
    def update(u: dict) -> bytes:
        return (json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": u}}) + "\n").encode()

    lines: list[bytes] = []
    i = 0
    while len(lines) < updates - 2:
        step = i % 100
        if step < 10:
            lines.append(update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": f"thinking {turn}.{i} "}}))
        elif step == 50:
            tid = f"call_{turn}_{i}"
            lines.append(update({"sessionUpdate": "tool_call", "toolCallId": tid, "title": f"Read file {i}", "kind": "read", "status": "pending"}))
            lines.append(update({"sessionUpdate": "tool_call_update", "toolCallId": tid, "status": "completed",
                                 "content": [{"type": "content", "content": {"type": "text", "text": "file contents " * 4}}]}))
        else:
            lines.append(update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"word{i} of turn {turn} "}}))
        i += 1
    lines = lines[: updates - 2]
    lines.append(update({"sessionUpdate": "plan", "entries": [{"content": f"step {k}", "priority": "medium", "status": "completed"} for k in range(3)]}))
    lines.append(update({"sessionUpdate": "usage_update", "used": 1000 * turn, "size": 200000}))
    return lines


def agent_main(updates: int) -> int:
    out = sys.stdout.buffer
    turn = 0
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            result = {"protocolVersion": 1, "agentInfo": {"name": "bench-v1-agent", "version": "1.0.0"},
                      "agentCapabilities": {"loadSession": False, "promptCapabilities": {}, "mcpCapabilities": {}}}
        elif method == "session/new":
            result = {"sessionId": "sess_bench"}
        elif method == "session/prompt":
            turn += 1
            out.writelines(_turn_lines(msg["params"]["sessionId"], turn, updates))
            result = {"stopReason": "end_turn"}
        elif rid is not None and method is not None:
            out.write((json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}) + "\n").encode())
            out.flush()
            continue
        else:
            continue
        out.write((json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n").encode())
        out.flush()
    return 0


# ---------------------------------------------------------------------------
# The v2 client that measures
# ---------------------------------------------------------------------------


def _hwm(pid: int) -> int:
    """The peak resident set (VmHWM) of a process, bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


class _Client:
    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.next_id = 0
        self.received = 0

    def send(self, method: str, params: dict) -> int:
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n"
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()
        return self.next_id

    def until(self, done) -> dict:
        """Read lines until ``done(raw)`` (a cheap test on the bytes first), return that message."""
        for raw in self.proc.stdout:
            self.received += 1
            if done(raw):
                return json.loads(raw)
        raise SystemExit(f"the bridge closed its output (exit status {self.proc.wait()})")


def _response_to(rid: int):
    tag = f'"id":{rid},'.encode()
    return lambda raw: tag in raw and b'"method"' not in raw


def _idle(raw: bytes) -> bool:
    return b'"state":"idle"' in raw and json.loads(raw)["params"]["update"].get("state") == "idle"


def run(turns: int, updates: int, gate: bool) -> dict:
    exe = shutil.which("acp-lifecycle") or os.path.join(os.path.dirname(sys.executable), "acp-lifecycle")
    agent = [sys.executable, os.path.abspath(__file__), "--agent", "--updates", str(updates)]
    env = dict(os.environ)
    tmp = None
    if not gate:
        tmp = tempfile.mkdtemp(prefix="bridge-bench-")
        env["XDG_CACHE_HOME"] = tmp  # no pulled schemas there: the bridge runs without its gate
    proc = subprocess.Popen([exe, "bridge", "serve", "--to", "v2", "--", *agent], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, bufsize=1 << 20)
    try:
        client = _Client(proc)
        client.until(_response_to(client.send("initialize", {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}})))
        sid = client.until(_response_to(client.send("session/new", {"cwd": "/tmp"})))["result"]["sessionId"]
        start = time.perf_counter()
        after_one = 0
        for turn in range(1, turns + 1):
            client.send("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": f"turn {turn}"}]})
            client.until(_idle)
            if turn == 1:
                after_one = _hwm(proc.pid)
        seconds = time.perf_counter() - start
        end = _hwm(proc.pid)
    finally:
        proc.stdin.close()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    relayed = turns * (updates + 1)  # the agent's updates and its response, each turn
    return {
        "turns": turns, "updates_per_turn": updates, "gate": gate,
        "peak_rss_after_turn_1_mb": round(after_one / 2**20, 1), "peak_rss_at_end_mb": round(end / 2**20, 1),
        "ratio": round(end / after_one, 2) if after_one else None,
        "seconds": round(seconds, 1), "messages_per_second": round(relayed / seconds),
        "client_received": client.received,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agent", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--turns", type=int, default=100)
    p.add_argument("--updates", type=int, default=10_000, help="session updates the agent streams per turn")
    p.add_argument("--no-gate", action="store_true", help="run the bridge without its schema gate")
    p.add_argument("--check", action="store_true", help=f"exit 1 when the end's peak exceeds {RATIO_LIMIT}x turn 1's")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.updates < 3 or args.turns < 1:
        p.error("--updates must be at least 3 and --turns at least 1")
    if args.agent:
        return agent_main(args.updates)
    r = run(args.turns, args.updates, not args.no_gate)
    if args.json:
        print(json.dumps(r))
    else:
        print(f"bridge serve --to v2, {r['turns']} turns x {r['updates_per_turn']:,} updates "
              f"(schema gate {'on' if r['gate'] else 'off'})")
        print(f"  peak RSS after turn 1: {r['peak_rss_after_turn_1_mb']:.1f} MB")
        print(f"  peak RSS at the end:   {r['peak_rss_at_end_mb']:.1f} MB ({r['ratio']}x)")
        print(f"  throughput: {r['messages_per_second']:,} messages/s ({r['seconds']} s)")
    return 1 if args.check and (r["ratio"] or 0) > RATIO_LIMIT else 0


if __name__ == "__main__":
    sys.exit(main())
