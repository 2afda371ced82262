"""A model run as text for people and as data for programs: numbered steps, their JSON-RPC
messages, and long lines wrapped with a hanging indent.

Below the searches and the CLI: the fuzzer, the scenarios and the sequence charts print runs
with it without importing the exhaustive checker (``render.py`` adds the checker's results on
top, and re-exports these names).
"""

from __future__ import annotations

import json
import re

from acp_lifecycle.model.wire import step_messages, summary

__all__ = ["action_text", "trace_lines", "trace_data", "wrap_line"]

#: A piece ends where a line may break: after a space, or after JSON's , : { [
_BREAK = re.compile(r"[^\s,:{\[]*(?:[,:{\[]|\s+|$)")


def wrap_line(line: str, width: int, hang: int = 4) -> list[str]:
    """``line`` as lines of at most ``width`` columns for a person: broken after a space or,
    inside a JSON-RPC message, after a comma (else a colon or an opening bracket); continuation lines indented ``hang`` more than the
    line. Joining the pieces gives the line back, up to the indent and the spaces at the breaks.

    >>> wrap_line('  x: {"a":1,"b":[2,3]}', 14)
    ['  x: {"a":1,', '      "b":[2,', '      3]}']
    """
    if len(line) <= width:
        return [line]
    indent = " " * min(len(line) - len(line.lstrip()) + hang, width // 2)
    out, current = [], ""
    for piece in (m.group(0) for m in _BREAK.finditer(line) if m.group(0)):
        while piece:
            room = width - len(current)
            if len(piece.rstrip()) <= room:
                current += piece
                piece = ""
            elif current.strip():
                out.append(current.rstrip())
                current, piece = indent, piece.lstrip()
            else:  # one piece wider than a line: cut it
                current += piece[:room]
                piece = piece[room:]
                out.append(current)
                current = indent
    if current.strip():
        out.append(current.rstrip())
    return out


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
