"""Records from a model step and from a transcript line: what the judges read.

The records are built from what is on the wire (or what the model agent put on it), never from
the model's own bookkeeping."""

from __future__ import annotations

from typing import Final

from ..observed import (
    CancelRequest,
    Closed,
    PromptError,
    PromptResult,
    Request,
    ResumeRequest,
    ResumeResult,
    Response,
    SessionCancel,
    Sent,
    StateUpdate,
    ToolUpdate,
    UserChunk,
    UserMessage,
)

__all__ = ['events_of_step', 'record_of_client', 'record_of_json', 'record_of_model']

def record_of_model(msg: tuple):
    """The record of a message the model agent sends (None for a kind no judge reads)."""
    k = msg[0]
    if k == "state":
        return StateUpdate(msg[1], msg[2] or None, msg[3] or None)
    if k == "ok":
        return PromptResult(msg[1], msg[2])
    if k == "err":
        return PromptError(msg[1], msg[2])
    if k == "user_message":
        return UserMessage(msg[1], msg[2], msg[3])
    if k == "chunk":
        return UserChunk(msg[1], msg[3])
    if k == "resumed":
        return ResumeResult(msg[1])
    if k == "tool":
        return ToolUpdate(msg[1], msg[2])
    if k == "v1_prompt_result":
        return Response("client", msg[1])
    if k == "perm":
        return Request("agent", msg[1], "session/request_permission")
    if k == "perm_cancel":
        return CancelRequest("agent", msg[1])
    return None


def record_of_client(msg: tuple):
    """The record of a message a model client sends, as the agent receives it."""
    k = msg[0]
    if k == "prompt":
        return Request("client", msg[1], "session/prompt")
    if k == "cancel_req":
        return CancelRequest("client", msg[1])
    if k == "resume":
        return ResumeRequest(msg[1], bool(msg[2]))
    if k == "perm_ans":
        return Response("agent", msg[1])
    if k == "cancel":
        return _CANCEL
    return None


_ABSENT: Final = object()
_CLOSED: Final = Closed()
_CANCEL: Final = SessionCancel()
#: ``record_of_model`` of the messages met so far (a record is a value: a search makes the same few
#: hundred messages again and again, and a record made by its class's interpreted ``__new__`` costs more
#: than looking it up)
_MODEL_RECORDS: Final[dict] = {}


def events_of_step(pre, step, records=None, sent: dict | None = None) -> list:
    """``(connection, record)`` for what the agent received and sent in a model step, in the
    order it did: the client message it took, then what it sent; a lost connection (or every
    connection, at a restart) is ``Closed``. ``records``: ``(sender, msg) -> [record, ...]`` for the
    messages of the proposals the rules compose (``Composition.records``), None for the core alone; ``sent``:
    ``SENT`` when a judge of the rules reads ``Sent`` (every update or request the agent sends)."""
    action: tuple = step.action  # read once (compiled: a step's fields are read by name here)
    name = action[0]
    out = []
    if name == "AgentReceive" or name == "AgentResume":
        c = action[1]
        msg = pre.up[c][0]
        rec = record_of_client(msg)
        if rec is not None:
            out.append((c, rec))
        elif records is not None:
            out.extend((c, r) for r in records("client", msg))
    elif name == "ConnectionLost":
        out.append((action[1], _CLOSED))
    elif name == "AgentRestart":
        out.extend((c, _CLOSED) for c, cl in enumerate(pre.clients) if cl.connected)
    for c, msg in step.emitted:
        if sent is not None:
            word = sent.get(msg[0])
            if word is not None:
                out.append((c, Sent(word)))
        rec = _MODEL_RECORDS.get(msg, _ABSENT)
        if rec is _ABSENT:
            if len(_MODEL_RECORDS) >= 100_000:
                _MODEL_RECORDS.clear()
            rec = _MODEL_RECORDS[msg] = record_of_model(msg)
        if rec is not None:
            out.append((c, rec))
        elif records is not None:
            out.extend((c, r) for r in records("agent", msg))
    return out


#: the model's messages that are a session update or a request of the agent, as the wire names them (``Sent``)
SENT = {"user_message": "user_message", "chunk": "user_message_chunk", "state": "state_update",
        "tool": "tool_call_update", "perm": "session/request_permission", "notice": "notice", "error_update": "error"}


def record_of_json(kind: str, body, rid=None):
    """The record of a transcript message: ``kind`` "state_update" with the update object,
    or "prompt_result" with the ``session/prompt`` result."""
    if kind == "state_update":
        error = body.get("error", _ABSENT)
        code = None if error is _ABSENT else (error.get("code", True) if isinstance(error, dict) else True)
        listed = body.get("background")
        tools = tuple(sorted({i["toolCallId"] for i in listed if isinstance(i, dict) and i.get("type") == "tool_call"
                              and isinstance(i.get("toolCallId"), str)})) if isinstance(listed, list) else ()
        return StateUpdate(body.get("state"), body.get("stopReason"), code, tools)
    if kind == "prompt_result":
        if not isinstance(body, dict):
            return PromptResult(rid, None, "the session/prompt result is not an object")
        if "stopReason" in body:
            return PromptResult(rid, None,
                                f"a v1 session/prompt result (stopReason {body['stopReason']!r}) on a v2 connection")
        mid = body.get("messageId")
        if not isinstance(mid, str):
            return PromptResult(rid, None, f"the session/prompt result has messageId {mid!r}, not a string")
        return PromptResult(rid, mid)
    raise ValueError(f"no record for {kind!r}")

