"""From a transcript to the model's vocabulary: ``abstract`` and ``prepare``.

``abstract`` turns each transcript message back into the model's message
tuples (``model/state.py``, "Messages"), keeping the transcript's own raw ids
(JSON-RPC ids, ``messageId`` strings, ``toolCallId`` strings). Content is
abstracted to the model's symbols: text starting with ``/`` is the command
``"/c"``, any other text is ``"a"``. ``prepare`` numbers the connections as
the model's clients and drops the lines the model has no vocabulary for
(counting them). ``sims.wire.modeltrace`` searches the model with the result.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["Line", "abstract", "prepare", "symbol"]

# ---------------------------------------------------------------------------
# Abstraction: JSON-RPC -> the model's message tuples (raw ids kept)
# ---------------------------------------------------------------------------


def symbol(text) -> str:
    """The model's content symbol for a text: "/c" for a command, "a" otherwise."""
    return "/c" if isinstance(text, str) and text.startswith("/") else "a"


def _key(raw) -> str:
    return json.dumps(raw, sort_keys=True)


def _first_text(blocks) -> str:
    if isinstance(blocks, dict):
        blocks = [blocks]
    if isinstance(blocks, list):
        for b in blocks:
            if isinstance(b, dict) and isinstance(b.get("text"), str):
                return b["text"]
    return ""


def abstract(entry: dict, request_method: str | None = None) -> tuple | None:
    """A transcript line as a model message tuple with the transcript's raw ids.

    ``("closed",)`` for a closed event; None for a message the model has no
    vocabulary for. ``request_method`` is the method of the request a response
    answers, when known (a response to ``initialize`` is then None, not
    ``("resumed", id)``).
    """
    if entry.get("event") == "closed":
        return ("closed",)
    msg = entry.get("msg")
    if not isinstance(msg, dict):
        return None
    sender = entry.get("from")
    method = msg.get("method")
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    if sender == "client":
        if method == "session/prompt":
            return ("prompt", _key(msg.get("id")), symbol(_first_text(params.get("prompt"))))
        if method == "$/cancel_request":
            return ("cancel_req", _key(params.get("requestId")))
        if method == "session/cancel":
            return ("cancel",)
        if method == "session/resume":
            return ("resume", _key(msg.get("id")), bool(params.get("replayFrom")))
        if method is None and "id" in msg and request_method in (None, "session/request_permission"):
            if request_method is None and "outcome" not in (msg.get("result") or {}):
                return None
            outcome = ((msg.get("result") or {}).get("outcome") or {}).get("outcome")
            return ("perm_ans", _key(msg.get("id")), "cancelled" if outcome == "cancelled" else "selected")
        return None
    if sender != "agent":
        return None
    if method is None:
        if "id" not in msg:
            return None
        rid = _key(msg.get("id"))
        if request_method not in (None, "session/prompt", "session/resume"):
            return None
        if isinstance(msg.get("error"), dict):
            return ("err", rid, msg["error"].get("code"))
        result = msg.get("result")
        if not isinstance(result, dict):
            return None
        if "messageId" in result:
            return ("ok", rid, _key(result["messageId"]))
        if "stopReason" in result:
            return ("v1ok", rid, result["stopReason"])
        if request_method in (None, "session/resume"):
            return ("resumed", rid)
        return None
    if method == "session/request_permission":
        return ("perm", _key(msg.get("id")))
    if method == "$/cancel_request":
        return ("perm_cancel", _key(params.get("requestId")))
    if method != "session/update":
        return None
    u = params.get("update")
    if not isinstance(u, dict):
        return None
    kind = u.get("sessionUpdate")
    if kind == "user_message":
        if "content" not in u:
            return ("um", _key(u.get("messageId")), None)  # metadata only
        content = u.get("content")
        syms = tuple(symbol(b.get("text")) for b in content if isinstance(b, dict)) if isinstance(content, list) else ()
        return ("um", _key(u.get("messageId")), syms)
    if kind == "user_message_chunk":
        return ("chunk", _key(u.get("messageId")), symbol(_first_text(u.get("content"))))
    if kind == "state_update":
        err = u.get("error")
        code = err.get("code", 0) if isinstance(err, dict) else (0 if err is None else err)
        stop = u.get("stopReason") or ""
        if isinstance(stop, str) and stop.startswith("_"):
            stop = "_custom"  # the model's one custom stop reason stands for every `_` value
        return ("state", u.get("state"), stop, code or 0)
    if kind in ("tool_call", "tool_call_update"):
        return ("tool", _key(u.get("toolCallId")), u.get("status", "pending"))
    if kind == "notice":
        return ("notice",)
    if kind == "error":
        err = u.get("error")
        return ("error_update", err.get("code") if isinstance(err, dict) else None)
    return None


# ---------------------------------------------------------------------------
# Preparing a transcript
# ---------------------------------------------------------------------------

_LABEL = re.compile(r"^c(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True)
class Line:
    n: int  # line number in the file
    label: str
    client: int  # model client index
    epoch: int  # ordinal of this connection among its client's connections
    sender: str  # "client" | "agent" | "event"
    msg: tuple  # abstract message


def prepare(entries: list[tuple[int, dict]]) -> tuple[list[Line], int, int]:
    """(lines the model can speak about, number of clients, lines skipped)."""
    labels = []
    for _, e in entries:
        lab = str(e["conn"])
        if lab not in labels:
            labels.append(lab)
    keys = []  # client keys: ("n", N) for cN/cN.k, ("l", label) otherwise
    for lab in labels:
        m = _LABEL.match(lab)
        k = ("n", int(m.group(1))) if m else ("l", lab)
        if k not in keys:
            keys.append(k)
    numbered = sorted(k for k in keys if k[0] == "n")
    others = [k for k in keys if k[0] == "l"]
    index = {k: i for i, k in enumerate(numbered + others)}
    conn_of: dict[str, tuple[int, int]] = {}
    per_client: dict[int, int] = {}
    for lab in labels:
        m = _LABEL.match(lab)
        c = index[("n", int(m.group(1))) if m else ("l", lab)]
        conn_of[lab] = (c, per_client.get(c, 0))
        per_client[c] = per_client.get(c, 0) + 1
    pending: dict[tuple, str] = {}  # (label, sender, id key) -> method
    out: list[Line] = []
    skipped = 0
    for n, e in entries:
        lab = str(e["conn"])
        c, ep = conn_of[lab]
        if e.get("event") == "closed":
            out.append(Line(n, lab, c, ep, "event", ("closed",)))
            continue
        msg, sender = e.get("msg"), e.get("from")
        request_method = None
        if isinstance(msg, dict):
            if isinstance(msg.get("method"), str) and "id" in msg:
                try:
                    pending[(lab, sender, _key(msg["id"]))] = msg["method"]
                except TypeError:
                    pass
            elif msg.get("method") is None and "id" in msg:
                other = "agent" if sender == "client" else "client"
                request_method = pending.get((lab, other, _key(msg.get("id"))))
        try:
            a = abstract(e, request_method)
        except (AttributeError, TypeError, ValueError):
            a = ("malformed",)
        if a is None:
            skipped += 1
            continue
        out.append(Line(n, lab, c, ep, sender, a))
    return out, len(index) or 1, skipped
