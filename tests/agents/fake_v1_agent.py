"""A small ACP v1 agent over stdio that calls the scripted provider's Anthropic API.

It stands in for a published agent in the offline tests of `acp-lifecycle probe`:
``initialize``, ``session/new``, ``session/prompt`` (a streaming call to
``$ANTHROPIC_BASE_URL/v1/messages``; text deltas become ``agent_message_chunk``s,
a ``tool_use`` becomes a ``tool_call`` plus a permission request, then a second
call), ``session/cancel`` (the turn ends ``cancelled``). An HTTP error becomes a
-32603 error response. Like a real agent it echoes nothing.

``--auth``: ``initialize`` lists two auth methods (a login, and an API key in
``ANTHROPIC_API_KEY``) and ``session/new`` answers -32000 until ``authenticate``
with the key's. ``--withdraw``: on ``session/cancel`` a pending permission
request is withdrawn with ``$/cancel_request`` (without it the turn ends with
the request still pending, as gemini-cli and qwen-code do).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import urllib.error
import urllib.request

OUT = threading.Lock()
cancelled = threading.Event()
answers: dict = {}
waiting: dict = {}
next_id = [0]
AUTH = "--auth" in sys.argv
WITHDRAW = "--withdraw" in sys.argv
BOGUS_CANCEL = "--bogus-cancel" in sys.argv  # a known fault: a turn nobody cancelled answered "cancelled"
authenticated = [not AUTH]
METHODS = [{"id": "login", "name": "Log in with a browser"},
           {"type": "env_var", "id": "anthropic-key", "name": "Use ANTHROPIC_API_KEY", "vars": [{"name": "ANTHROPIC_API_KEY"}]}]


def send(msg: dict) -> None:
    with OUT:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def update(sid: str, upd: dict) -> None:
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": upd}})


def ask_permission(sid: str, call_id: str) -> str:
    next_id[0] += 1
    rid = next_id[0]
    event = waiting[rid] = threading.Event()
    send({"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": {
        "sessionId": sid, "toolCall": {"toolCallId": call_id},
        "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}})
    while not event.wait(0.1):
        if cancelled.is_set():
            if WITHDRAW:
                send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}})
            return "cancelled"
    outcome = (answers.pop(rid).get("result") or {}).get("outcome") or {}
    return outcome.get("optionId", "cancelled")


def call_model(messages: list) -> list[dict]:
    body = json.dumps({"model": "fake", "stream": True, "messages": messages,
                       "tools": [{"name": "Bash", "input_schema": {"type": "object", "required": ["command"],
                                                                   "properties": {"command": {"type": "string"}}}}]})
    req = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", body.encode(),
                                 {"Content-Type": "application/json"})
    events = []
    with urllib.request.urlopen(req, timeout=30) as resp:
        for raw in resp:
            if cancelled.is_set():
                break
            line = raw.decode().strip()
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                yield events[-1]


def turn(rid, sid: str, text: str) -> None:
    messages = [{"role": "user", "content": text}]
    try:
        for _ in range(3):
            tool = None
            for ev in call_model(messages):
                delta = ev.get("delta") or {}
                if delta.get("type") == "text_delta":
                    update(sid, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": delta["text"]}})
                if (ev.get("content_block") or {}).get("type") == "tool_use":
                    tool = ev["content_block"]
            if cancelled.is_set() or tool is None:
                break
            update(sid, {"sessionUpdate": "tool_call", "toolCallId": tool["id"], "title": tool["name"], "status": "pending"})
            choice = ask_permission(sid, tool["id"])
            status = "completed" if choice == "yes" else "failed"
            update(sid, {"sessionUpdate": "tool_call_update", "toolCallId": tool["id"], "status": status})
            messages += [{"role": "assistant", "content": [{"type": "tool_use", "id": tool["id"], "name": "Bash",
                                                            "input": {}}]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool["id"], "content": status}]}]
    except (urllib.error.URLError, OSError, ValueError) as e:
        if not cancelled.is_set():
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": f"Internal error: {e}"}})
            return
    stop = "cancelled" if cancelled.is_set() or BOGUS_CANCEL else "end_turn"
    send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": stop}})


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if method is None:
            answers[msg["id"]] = msg
            waiting.pop(msg["id"], threading.Event()).set()
        elif method == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": 1, "agentCapabilities": {}, "agentInfo": {"name": "fake-v1-agent", "version": "1.2.3"},
                "authMethods": METHODS if AUTH else []}})
        elif method == "authenticate":
            ok = msg["params"].get("methodId") == "anthropic-key" and "ANTHROPIC_API_KEY" in os.environ
            authenticated[0] = authenticated[0] or ok
            send({"jsonrpc": "2.0", "id": msg["id"], **({"result": {}} if ok else {"error": {"code": -32602, "message": "no"}})})
        elif method == "session/new" and not authenticated[0]:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32000, "message": "Authentication required"}})
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"sessionId": "fake_1"}})
        elif method == "session/prompt":
            cancelled.clear()
            text = "".join(b.get("text", "") for b in msg["params"]["prompt"])
            threading.Thread(target=turn, args=(msg["id"], msg["params"]["sessionId"], text), daemon=True).start()
        elif method == "session/cancel":
            cancelled.set()


if __name__ == "__main__":
    main()
