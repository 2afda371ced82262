"""What the diff observes: the raw events of a step, their canonical form up to renaming, their kind.

A raw event is what one step shows on the wire, before renaming; a canonical
event is what is compared (docs/spec-review.md, "What `diff` observes").
"""

from __future__ import annotations

import json

from acp_lifecycle.model.system import Step, System
from acp_lifecycle.model.wire import agent_message, client_message

__all__ = ["END", "observe", "names0", "canonical", "kind", "observed_lines"]

#
# A raw event is what one step shows on the wire, before renaming:
#   ("msg", c, "client" | "agent", model message tuple)
#   ("closed", c)
# A canonical event is what is compared:
#   ("msg", c, sender, template, numbers)   template: the JSON text with every
#                                            id replaced by "#", numbers: the
#                                            canonical number of each id
#   ("closed", c)
#   ("end",)                                 the run ends: no step is left
END = ("end",)


def observe(pre: System, step: Step) -> tuple:
    """The raw events of one step, in order: what clients sent, closures, what the agent sent.

    Read off the state, not the action's name: a client message is one appended
    to the client's ``up`` channel; a closure is a client going from connected
    to not connected.
    """
    out = []
    post = step.state
    for c, old in enumerate(pre.up):
        new = post.up[c]
        n = len(old)
        if len(new) > n and new[:n] == old:
            for m in new[n:]:
                out.append(("msg", c, "client", m))
    for c, cl in enumerate(pre.clients):
        if cl.connected and not post.clients[c].connected:
            out.append(("closed", c))
    for c, m in step.emitted:
        out.append(("msg", c, "agent", m))
    return tuple(out)


_SHAPES: dict = {}
_RENDERED: dict = {}


def render_message(sender: str, msg: tuple) -> dict:
    key = (sender, msg)
    js = _RENDERED.get(key)
    if js is None:
        js = _RENDERED[key] = client_message(msg) if sender == "client" else agent_message(msg)
    return js


def _shape(sender: str, msg: tuple) -> tuple[str, tuple]:
    """(template, slots) of a message: its JSON with ids replaced, and the ids in order.

    A slot is (namespace, value, role, method): namespace ``mid`` (messageId),
    ``tool`` (toolCallId), ``tok`` (correlation token), ``rid`` (a JSON-RPC id
    of a request the client sent, or a ``requestId`` naming one), ``aid`` (a
    JSON-RPC id of a request the agent sent); role ``req`` (a new request),
    ``resp`` (a response to it) or ``ref`` (a reference to it).
    """
    key = (sender, msg)
    hit = _SHAPES.get(key)
    if hit is not None:
        return hit
    js = render_message(sender, msg)
    method = js.get("method")
    is_request = method is not None and "id" in js
    slots: list = []

    def walk(v, top: bool):
        if isinstance(v, dict):
            out = {}
            for k in sorted(v):
                x = v[k]
                if top and k == "id":
                    ns = "rid" if (sender == "client") == is_request else "aid"
                    slots.append((ns, x, "req" if is_request else "resp", method))
                elif k == "requestId":
                    slots.append(("rid", x, "ref", None))
                elif k == "messageId":
                    slots.append(("mid", x, "", None))
                elif k == "toolCallId":
                    slots.append(("tool", x, "", None))
                elif k == "correlationToken":
                    slots.append(("tok", x, "", None))
                else:
                    out[k] = walk(x, False)
                    continue
                out[k] = "#"
            return out
        if isinstance(v, list):
            return [walk(x, False) for x in v]
        return v

    template = json.dumps(walk(js, True), sort_keys=True, separators=(",", ":"))
    hit = _SHAPES[key] = (template, tuple(slots))
    return hit


# Renaming state ("names"): a tuple of namespaces. 0: messageIds, 1: tool call
# ids, 2: correlation tokens (each a tuple of raw values, canonical number =
# index); then per client c, 3+2c: its request ids and 4+2c: the agent's
# request ids on its connection, each a tuple of (raw id, method, responses
# seen). A connection closing empties its two JSON-RPC namespaces.
_GLOBAL = {"mid": 0, "tool": 1, "tok": 2}


def names0(clients: int) -> tuple:
    """The renaming state before anything is observed."""
    return ((),) * (3 + 2 * clients)


def _latest(seq: tuple, value) -> int:
    for n in range(len(seq) - 1, -1, -1):
        if seq[n][0] == value:
            return n
    return -1


def canonical(names: tuple, raw: tuple) -> tuple[tuple, tuple]:
    """(canonical event, names after it) of a raw event."""
    if raw[0] == "closed":
        c = raw[1]
        i = 3 + 2 * c
        if names[i] or names[i + 1]:
            names = names[:i] + ((), ()) + names[i + 2 :]
        return raw, names
    _, c, sender, msg = raw
    template, slots = _shape(sender, msg)
    if not slots:
        return ("msg", c, sender, template, ()), names
    nl = list(names)
    nums = []
    for ns, value, role, method in slots:
        g = _GLOBAL.get(ns)
        if g is not None:
            seq = nl[g]
            try:
                n = seq.index(value)
            except ValueError:
                n = len(seq)
                nl[g] = seq + (value,)
        else:
            i = 3 + 2 * c + (ns == "aid")
            seq = nl[i]
            if role == "req":
                n = len(seq)
                nl[i] = seq + ((value, method, 0),)
            else:
                n = _latest(seq, value)
                if n < 0:
                    n = len(seq)
                    seq = nl[i] = seq + ((value, None, 0),)
                if role == "resp":
                    e = seq[n]
                    nl[i] = seq[:n] + ((e[0], e[1], e[2] + 1),) + seq[n + 1 :]
        nums.append(n)
    return ("msg", c, sender, template, tuple(nums)), tuple(nl)


def kind(raw: tuple, names: tuple) -> str:
    """The kind of a distinguishing event, for grouping: the message with its ids abstracted.

    ``names`` is the renaming state *before* the event: it tells whether a
    messageId is new and which request a response answers.
    """
    if raw == END:
        return "the run ends (no step left)"
    if raw[0] == "closed":
        return "a connection closes"
    _, c, sender, msg = raw
    js = render_message(sender, msg)
    _, slots = _shape(sender, msg)
    notes = []
    for ns, value, role, method in slots:
        if ns == "mid":
            notes.append("a new messageId" if value not in names[0] else "a messageId seen before")
    who = "client sends " if sender == "client" else ""
    if "method" in js:
        method = js["method"]
        if method == "session/update":
            u = js["params"]["update"]
            k = u.get("sessionUpdate")
            text = k
            if k == "state_update":
                text += f" {u.get('state')}"
                if u.get("stopReason"):
                    text += f" stopReason={u['stopReason']}"
                if u.get("error"):
                    text += f" error={u['error'].get('code')}"
            elif k == "user_message":
                text += " with content []" if u.get("content") == [] else " with content"
            elif k == "tool_call_update":
                text += f" {u.get('status')}"
        else:
            text = method
            if method == "session/resume":
                text += " with replayFrom" if "replayFrom" in js.get("params", {}) else " without replayFrom"
        return who + text + (f" ({', '.join(notes)})" if notes else "")
    # A response: to which request, and the how-many-th.
    ns = "rid" if sender == "agent" else "aid"
    seq = names[3 + 2 * c + (ns == "aid")]
    n = _latest(seq, js.get("id"))
    request = seq[n][1] if n >= 0 and seq[n][1] else "an unknown request"
    nth = "a second response" if n >= 0 and seq[n][2] else "response"
    if "error" in js:
        text = f"{nth} to {request}: error {js['error'].get('code')}"
    else:
        result = js.get("result")
        fields = ", ".join(sorted(result)) if isinstance(result, dict) else type(result).__name__
        text = f"{nth} to {request}: result {{{fields}}}"
        if isinstance(result, dict) and "stopReason" in result:
            text += f" stopReason={result['stopReason']}"
    return who + text + (f" ({', '.join(notes)})" if notes else "")





def observed_lines(w) -> list[dict]:
    """The witness's observations as transcript-like entries (``conn``, ``from``, ``msg``).

    Connections are labelled as in ``acp-lifecycle trace`` transcripts: ``c0``,
    then ``c0.1`` after client 0's connection closed and it resumed, ...
    """
    out = []
    epoch: dict[int, int] = {}
    for raw, n in zip(w.raws, w.at):
        if raw == END:
            out.append({"event": "end", "step": n})
            continue
        c = raw[1]
        label = f"c{c}" + (f".{epoch[c]}" if epoch.get(c) else "")
        if raw[0] == "closed":
            out.append({"conn": label, "event": "closed", "step": n})
            epoch[c] = epoch.get(c, 0) + 1
            continue
        out.append({"conn": label, "from": raw[2], "msg": render_message(raw[2], raw[3]), "step": n})
    return out
