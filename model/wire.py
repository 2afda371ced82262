"""The JSON-RPC 2.0 messages a model step stands for.

Pure rendering: the model's compact message tuples (see ``system.py``) become
the RFD's and the 2.4.0 schema's shapes. IDs render as strings (``msg_3``,
``call_1``); one session, ``sess_1``.
"""

from __future__ import annotations

from .composition import message_of
from .system import Step, System

__all__ = ["SESSION", "client_message", "agent_message", "step_messages", "summary"]

SESSION = "sess_1"

_ERROR_TEXT = {
    -32800: "Request cancelled",
    -32602: "Invalid params",
    -32603: "Internal error",
    -32000: "Authentication required",
}


def _mid(mid: int) -> str:
    return f"msg_{mid}"


def _update(update: dict) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION, "update": update}}


def client_message(msg: tuple) -> dict:
    """A client -> agent message as JSON-RPC.

    >>> client_message(("cancel_req", 3))["params"]
    {'requestId': 3}
    """
    kind = msg[0]
    if kind == "prompt":
        return {
            "jsonrpc": "2.0",
            "id": msg[1],
            "method": "session/prompt",
            "params": {"sessionId": SESSION, "prompt": [{"type": "text", "text": msg[2]}]},
        }
    if kind == "cancel_req":
        return {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": msg[1]}}
    if kind == "cancel":
        return {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SESSION}}
    if kind == "perm_ans":
        outcome = {"outcome": "cancelled"} if msg[2] == "cancelled" else {"outcome": "selected", "optionId": "allow"}
        return {"jsonrpc": "2.0", "id": f"perm_{msg[1]}", "result": {"outcome": outcome}}
    if kind == "resume":
        params = {"sessionId": SESSION, "cwd": "/work"}
        if msg[2]:
            params["replayFrom"] = {"type": "start"}
        return {"jsonrpc": "2.0", "id": msg[1], "method": "session/resume", "params": params}
    return _proposal_message(msg, "client")


def agent_message(msg: tuple) -> dict:
    """An agent -> client message as JSON-RPC.

    >>> agent_message(("ok", 1, 2))
    {'jsonrpc': '2.0', 'id': 1, 'result': {'messageId': 'msg_2'}}
    """
    kind = msg[0]
    if kind == "ok":
        # message 0 is "no ID": a result without messageId (the draft's `{}`), not an ID made up here
        return {"jsonrpc": "2.0", "id": msg[1], "result": {"messageId": _mid(msg[2])} if msg[2] else {}}
    if kind == "v1_prompt_result":
        return {"jsonrpc": "2.0", "id": msg[1], "result": {"stopReason": msg[2]}}
    if kind == "err":
        return {"jsonrpc": "2.0", "id": msg[1], "error": {"code": msg[2], "message": _ERROR_TEXT.get(msg[2], "Error")}}
    if kind == "user_message":
        update = {"sessionUpdate": "user_message", "messageId": _mid(msg[1])}
        if msg[2] is not None:  # None: a metadata-only update, content omitted
            update["content"] = [{"type": "text", "text": t} for t in msg[2]]
        if msg[4] is not None:
            update["_meta"] = {"correlationToken": f"tok_{msg[4][0]}_{msg[4][1]}"}
        return _update(update)
    if kind == "chunk":
        return _update(
            {"sessionUpdate": "user_message_chunk", "messageId": _mid(msg[1]), "content": {"type": "text", "text": msg[2]}}
        )
    if kind == "state":
        update = {"sessionUpdate": "state_update", "state": msg[1]}
        if msg[2]:
            update["stopReason"] = msg[2]
        if msg[3]:
            update["error"] = {"code": msg[3], "message": _ERROR_TEXT.get(msg[3], "Error")}
        return _update(update)
    if kind == "tool":
        # v2 has no tool_call update: the first tool_call_update with a new
        # toolCallId announces the call (msg[3]), with any status.
        if len(msg) > 3 and msg[3]:
            return _update({"sessionUpdate": "tool_call_update", "toolCallId": f"call_{msg[1]}", "title": "Run tool", "status": msg[2]})
        if msg[2] is None:  # a refinement: title, input or content only, the status unchanged
            return _update({"sessionUpdate": "tool_call_update", "toolCallId": f"call_{msg[1]}", "title": "Run tool"})
        return _update({"sessionUpdate": "tool_call_update", "toolCallId": f"call_{msg[1]}", "status": msg[2]})
    if kind == "perm":
        return {
            "jsonrpc": "2.0",
            "id": f"perm_{msg[1]}",
            "method": "session/request_permission",
            "params": {
                "sessionId": SESSION,
                "title": "Run tool?",
                "subject": {"type": "tool_call", "toolCall": {"toolCallId": f"call_perm_{msg[1]}"}},
                "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
            },
        }
    if kind == "perm_cancel":
        return {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": f"perm_{msg[1]}"}}
    if kind == "error_update":
        return _update({"sessionUpdate": "error", "error": {"code": msg[1], "message": _ERROR_TEXT.get(msg[1], "Error")}})
    if kind == "notice":
        return _update({"sessionUpdate": "notice", "severity": "warning", "title": "Provider request failed; retrying"})
    if kind == "resumed":
        return {"jsonrpc": "2.0", "id": msg[1], "result": {}}
    return _proposal_message(msg, "agent")


def _proposal_message(msg: tuple, sender: str) -> dict:
    """A message a proposal adds (``model/proposals``), rendered as the proposal says."""
    m = message_of(msg[0])
    if m is None or m.sender != sender:
        raise ValueError(f"unknown {sender} message {msg!r}")
    return m.encode(msg)


def step_messages(pre: System, step: Step) -> list[tuple[str, int, dict]]:
    """The wire messages of one step: ``[(direction, client, message), ...]``.

    Direction is ``"client->agent"`` for what a client sends,
    ``"agent->client"`` for what the agent sends, and ``"delivered->agent"`` /
    ``"delivered->client"`` for the message a delivery step hands over.
    """
    action = step.action
    out: list[tuple[str, int, dict]] = []
    name = action[0]
    if name.startswith("Client") and name != "ClientReceive":
        c = action[1]
        for msg in step.state.up[c][len(pre.up[c]) :] if len(step.state.up[c]) > len(pre.up[c]) else step.state.up[c][-1:]:
            out.append(("client->agent", c, client_message(msg)))
    elif name in ("AgentReceive", "AgentResume"):
        c = action[1]
        out.append(("delivered->agent", c, client_message(pre.up[c][0])))
    elif name == "ClientReceive":
        c = action[1]
        out.append(("delivered->client", c, agent_message(pre.down[c][0])))
    for c, msg in step.emitted:
        out.append(("agent->client", c, agent_message(msg)))
    return out


#: the methods the core's messages call (a proposal's show their parameters in a summary)
_CORE_METHODS = frozenset({"session/prompt", "$/cancel_request", "session/cancel", "session/resume",
                           "session/request_permission"})


def summary(msg: dict) -> str:
    """A one-line summary of a JSON-RPC message, for people.

    >>> summary(agent_message(("state", "idle", "error", -32000)))
    'state_update idle stopReason=error error=-32000'
    """
    if "method" in msg:
        params = msg.get("params", {})
        if msg["method"] == "session/update":
            u = params["update"]
            kind = u["sessionUpdate"]
            if kind == "state_update":
                text = f"state_update {u['state']}"
                if "stopReason" in u:
                    text += f" stopReason={u['stopReason']}"
                if "error" in u:
                    text += f" error={u['error']['code']}"
                return text
            if kind == "user_message" and "content" not in u:
                return f"{kind} {u['messageId']} (metadata only)"
            if kind in ("user_message", "user_message_chunk"):
                content = u["content"]
                texts = [c["text"] for c in content] if isinstance(content, list) else [content["text"]]
                return f"{kind} {u['messageId']} {texts}"
            if kind in ("tool_call", "tool_call_update"):
                return f"{kind} {u['toolCallId']} {u.get('status', '')}".strip()
            return kind
        text = msg["method"]
        if "id" in msg:
            text += f" id={msg['id']}"
        if msg["method"] == "session/prompt":
            text += " " + repr(params["prompt"][0]["text"])
        if msg["method"] == "$/cancel_request":
            text += f" requestId={params['requestId']}"
        if "replayFrom" in params:
            text += " replayFrom=start"
        if text.split(" ")[0] not in _CORE_METHODS:  # a proposal's method: its scalar parameters
            text += "".join(f" {k}={v}" for k, v in params.items() if k != "sessionId" and isinstance(v, (str, int)))
        return text
    if "error" in msg:
        data = msg["error"].get("data")
        reason = f" reason={data['reason']}" if isinstance(data, dict) and "reason" in data else ""
        return f"error id={msg['id']} code={msg['error']['code']}{reason}"
    result = msg.get("result", {})
    if "stopReason" in result:
        return f"result id={msg['id']} stopReason={result['stopReason']}"
    if "messageId" in result:
        return f"result id={msg['id']} messageId={result['messageId']}"
    return f"result id={msg['id']}"
