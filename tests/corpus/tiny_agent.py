"""A tiny ACP v2 agent on stdio (standard library only), for testing `record` anywhere.

It answers initialize, session/new, session/prompt (the echo, running, one
agent_message_chunk, idle end_turn), session/cancel (nothing to cancel) and
session/close; anything else gets -32601, a line that is not JSON gets -32700.

Environment: ACP_CORPUS_TAP=FILE appends what it reads and writes to FILE as
transcript lines (the bytes as they crossed); TINY_AGENT_EXIT=N makes it exit
with status N when its stdin ends. It says "tiny agent: ready" on stderr.
"""

from __future__ import annotations

import json
import os
import sys

TAP = os.environ.get("ACP_CORPUS_TAP")


def tap(sender: str, raw: str) -> None:
    if TAP:
        with open(TAP, "a", encoding="utf-8") as f:
            try:
                json.loads(raw)
                f.write(f'{{"conn":"stdio","from":"{sender}","msg":{raw}}}\n')
            except ValueError:
                f.write(json.dumps({"conn": "stdio", "from": sender, "raw": raw}, separators=(",", ":"), ensure_ascii=False) + "\n")


def send(msg: dict) -> None:
    raw = json.dumps(msg, separators=(",", ":"))
    tap("agent", raw)
    sys.stdout.write(raw + "\n")
    sys.stdout.flush()


def update(session: str, body: dict) -> None:
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": body}})


def main() -> int:
    sys.stderr.write("tiny agent: ready\n")
    sys.stderr.flush()
    sessions = 0
    messages: dict[str, int] = {}
    for line in sys.stdin:
        raw = line.rstrip("\r\n")
        if not raw.strip():
            continue
        tap("client", raw)
        try:
            msg = json.loads(raw)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method is None or "id" not in msg:
            continue  # a response or a notification (session/cancel: nothing runs between turns)
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": 2, "info": {"name": "tiny-agent", "version": "0.1.0"}, "capabilities": {"session": {}}}})
        elif method == "session/new":
            sessions += 1
            sid = f"tiny_{sessions}"
            messages[sid] = 0
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": sid}})
        elif method == "session/prompt":
            sid = params.get("sessionId")
            if sid not in messages:
                send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32002, "message": "Resource not found"}})
                continue
            messages[sid] += 1
            mid = f"m{messages[sid]}"
            update(sid, {"sessionUpdate": "state_update", "state": "running"})
            update(sid, {"sessionUpdate": "user_message", "messageId": mid, "content": params.get("prompt", [])})
            send({"jsonrpc": "2.0", "id": rid, "result": {"messageId": mid}})
            update(sid, {"sessionUpdate": "agent_message_chunk", "messageId": mid,
                         "content": {"type": "text", "text": "tiny answer"}})
            update(sid, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
        elif method == "session/close":
            messages.pop(params.get("sessionId"), None)
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
    return int(os.environ.get("TINY_AGENT_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main())
