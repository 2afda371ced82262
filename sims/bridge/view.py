"""Reading bridged transcripts: what each client ends up knowing, one line per entry."""

from __future__ import annotations

import json

from .core import CHUNK_OF, params_of


def message_of(entry: dict):
    m = entry.get("msg")
    return m if isinstance(m, dict) else None


def client_view(entries) -> dict:
    """What each connection's client ends up knowing, for comparing transcripts across bridges.

    Per connection: ``prompts`` (request id -> the response's result or
    ``{"error": ...}``), ``messages`` ((kind, messageId) -> content, the upsert
    rules applied: a whole update replaces, a chunk appends), ``idles`` (the
    ``(stopReason, error)`` of each idle that ends work) and ``tools`` (last status).
    """
    view: dict = {}
    for e in (x[1] if isinstance(x, tuple) else x for x in entries):
        m = message_of(e) if isinstance(e, dict) else None
        if m is None:
            continue
        v = view.setdefault(str(e.get("conn")), {"prompts": {}, "messages": {}, "idles": [], "tools": {}, "_fg": "idle"})
        if e.get("from") == "client" and m.get("method") == "session/prompt":
            v["prompts"][json.dumps(m.get("id"))] = None
        elif e.get("from") == "agent" and "method" not in m and json.dumps(m.get("id")) in v["prompts"]:
            v["prompts"][json.dumps(m.get("id"))] = m["result"] if "result" in m else {"error": m.get("error")}
        elif m.get("method") == "session/update":
            u = params_of(m).get("update", {})
            kind = u.get("sessionUpdate", "")
            base = kind[: -len("_chunk")] if kind.endswith("_chunk") else kind
            if base in CHUNK_OF:
                key = (base, u.get("messageId"))
                if kind == base:
                    if "content" in u:
                        v["messages"][key] = list(u["content"] or [])
                else:
                    v["messages"].setdefault(key, []).append(u.get("content"))
            elif kind == "state_update":
                if u.get("state") == "idle" and v["_fg"] != "idle":
                    v["idles"].append((u.get("stopReason"), u.get("error")))
                v["_fg"] = u.get("state")
            elif kind in ("tool_call", "tool_call_update"):
                v["tools"][u.get("toolCallId")] = u.get("status", v["tools"].get(u.get("toolCallId")))
    for v in view.values():
        del v["_fg"]
    return view


def compact(entries) -> list[str]:
    """One line per entry: ``conn from summary`` (``sims``' wire summary where it applies)."""
    from acp_lifecycle.model.wire import summary

    lines = []
    for e in entries:
        if not isinstance(e, dict):
            lines.append(repr(e))
            continue
        if e.get("event"):
            lines.append(f"{e.get('conn')} {e['event']}")
            continue
        m = e.get("msg")
        try:
            text = summary(m)
            if isinstance(m, dict) and m.get("method") == "session/update":
                u = m["params"]["update"]
                if u.get("sessionUpdate") in ("user_message", "user_message_chunk", "agent_message_chunk") and "messageId" not in u:
                    text = f"{u['sessionUpdate']} (no messageId)"
            if isinstance(m, dict) and "error" in m and "method" not in m:
                text += f" {m['error'].get('message', '')!r}" if isinstance(m["error"], dict) else ""
        except (AttributeError, KeyError, TypeError, IndexError):
            text = json.dumps(m, separators=(",", ":"))[:100]
        lines.append(f"{e.get('conn')} {e.get('from')}: {text}")
    return lines
