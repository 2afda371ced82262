"""Counterexamples and results for people (text) and for programs (JSON data)."""

from __future__ import annotations

import json

from acp_lifecycle.model.wire import step_messages, summary

from acp_lifecycle.sims.search.check import SuiteResult
from acp_lifecycle.sims.search.explore import Verdict

__all__ = ["action_text", "trace_lines", "trace_data", "result_data"]


def action_text(action: tuple) -> str:
    """``("ClientSubmitPrompt", 0, "a")`` -> ``ClientSubmitPrompt(0, 'a')``."""
    name, *args = action
    return f"{name}({', '.join(repr(a) for a in args)})"


def _arrow(direction: str, client: int) -> str:
    return f"client {client} -> agent" if direction == "client->agent" else f"agent -> client {client}"


def trace_data(trace) -> list[dict]:
    """A trace as data: one entry per step, with its JSON-RPC messages."""
    out = []
    for n, (pre, step) in enumerate(trace, 1):
        out.append(
            {
                "step": n,
                "action": action_text(step.action),
                "messages": [
                    {"direction": d, "client": c, "message": m} for d, c, m in step_messages(pre, step)
                ],
            }
        )
    return out


def trace_lines(trace, note: str = "", compact: bool = False) -> list[str]:
    """A trace as numbered steps, each followed by its JSON-RPC messages.

    ``compact`` prints a one-line summary of each message instead of its JSON.
    """
    lines = []
    for entry in trace_data(trace):
        lines.append(f"{entry['step']:>3}. {entry['action']}")
        for m in entry["messages"]:
            if m["direction"].startswith("delivered"):
                lines.append(f"       delivered: {summary(m['message'])}")
                continue
            if compact:
                lines.append(f"       {_arrow(m['direction'], m['client'])}: {summary(m['message'])}")
                continue
            text = json.dumps(m["message"], separators=(",", ":"))
            lines.append(f"       {_arrow(m['direction'], m['client'])}: {text}")
    if note:
        lines.append(f"     => {note}")
    return lines


def _verdict_data(v: Verdict, where: str) -> dict:
    p = v.prop
    return {
        "id": p.id,
        "kind": p.kind,
        "expect": v.expectation,
        "level": p.level,
        "summary": p.summary,
        "clauses": list(p.clauses),
        "quote": p.quote,
        "status": v.status,
        "outcome": v.outcome,
        "ok": v.ok,
        "message": v.message,
        "member": where,
        "trace": trace_data(v.trace) if v.trace else None,
    }


def result_data(r: SuiteResult) -> dict:
    return {
        "config": r.suite.name,
        "rules": r.rules.name,
        "ok": r.ok,
        "states": r.states,
        "transitions": r.transitions,
        "seconds": round(r.seconds, 3),
        "wall_seconds": round(r.wall, 3),
        "members": [
            {
                "name": m.config.name,
                "states": m.states,
                "transitions": m.transitions,
                "depth": m.depth,
                "terminal_states": m.terminal_states,
                "seconds": round(m.seconds, 3),
            }
            for m in r.members
        ],
        "properties": [_verdict_data(v, r.found_in[k]) for k, v in r.verdicts.items()],
    }
