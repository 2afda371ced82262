"""The four model APIs the provider speaks: reading a request, writing an answer.

Each API is a class with ``read(path, query, body) -> Call`` (what the request
asks: model, stream or not, the prompt text, whether the last message is a
tool result, the tools offered, a JSON schema the answer must fit) and, for
one answer, ``stream(call, pieces)`` (the SSE events, one string each) and
``whole(call, pieces)`` (a non-streaming JSON body). ``pieces`` is a list of
``("text", str)`` and ``("tool", name, arguments)``. ``error(status)`` is the
error body that API's clients expect.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

__all__ = ["Call", "API_FOR", "api_for_path"]


@dataclass
class Call:
    api: str
    model: str = ""
    stream: bool = False
    prompt: str = ""
    after_tool: bool = False
    tools: list = field(default_factory=list)  # [(name, input schema)]
    json_schema: dict | None = None  # the answer must be JSON of this schema (a helper call)
    forced_tool: str | None = None  # tool_choice names one function: answer by calling it
    helper: str | None = None  # count_tokens, countTokens: answered without a turn


def _sse(data: dict, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n"


def _texts(content) -> list[str]:
    """The text pieces of a message content (a string or a list of blocks/parts)."""
    if isinstance(content, str):
        return [content]
    out = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                out.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                out.append(block["text"])
    return out


def _counter():
    n = 0
    while True:
        n += 1
        yield n


_IDS = _counter()


# ---------------------------------------------------------------------------
# Anthropic Messages
# ---------------------------------------------------------------------------


class Anthropic:
    name = "anthropic"

    @staticmethod
    def read(path: str, query: dict, body: dict) -> Call:
        call = Call("anthropic", str(body.get("model", "")), bool(body.get("stream")))
        if path.endswith("/count_tokens"):
            call.helper = "count_tokens"
            return call
        messages = body.get("messages") or []
        if messages and isinstance(messages[-1], dict):
            last = messages[-1].get("content")
            call.after_tool = isinstance(last, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in last)
        for m in reversed(messages):
            if isinstance(m, dict) and m.get("role") == "user" and "".join(_texts(m.get("content"))).strip():
                call.prompt = "\n".join(_texts(m.get("content")))
                break
        call.tools = [(t["name"], t.get("input_schema") or {}) for t in body.get("tools") or []
                      if isinstance(t, dict) and isinstance(t.get("name"), str)]
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") == "tool":
            call.forced_tool = choice.get("name")
        return call

    @staticmethod
    def helper(call: Call) -> dict:
        return {"input_tokens": 12}

    @staticmethod
    def stream(call: Call, pieces: list) -> list[str]:
        mid = f"msg_probe_{next(_IDS)}"
        events = [_sse({"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": call.model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 1}}},
            "message_start")]
        index, open_text, stop = 0, False, "end_turn"
        for piece in pieces:
            if piece[0] == "text":
                if not open_text:
                    events.append(_sse({"type": "content_block_start", "index": index,
                                        "content_block": {"type": "text", "text": ""}}, "content_block_start"))
                    open_text = True
                events.append(_sse({"type": "content_block_delta", "index": index,
                                    "delta": {"type": "text_delta", "text": piece[1]}}, "content_block_delta"))
                continue
            if open_text:
                events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
                index, open_text = index + 1, False
            _, name, args = piece
            events.append(_sse({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": f"toolu_probe_{next(_IDS)}", "name": name, "input": {}}},
                "content_block_start"))
            events.append(_sse({"type": "content_block_delta", "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": json.dumps(args)}},
                               "content_block_delta"))
            events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
            index, stop = index + 1, "tool_use"
        if open_text:
            events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        events.append(_sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 8}}, "message_delta"))
        events.append(_sse({"type": "message_stop"}, "message_stop"))
        return events

    @staticmethod
    def whole(call: Call, pieces: list) -> dict:
        content, stop = [], "end_turn"
        text = "".join(p[1] for p in pieces if p[0] == "text")
        if text:
            content.append({"type": "text", "text": text})
        for p in pieces:
            if p[0] == "tool":
                content.append({"type": "tool_use", "id": f"toolu_probe_{next(_IDS)}", "name": p[1], "input": p[2]})
                stop = "tool_use"
        return {"id": f"msg_probe_{next(_IDS)}", "type": "message", "role": "assistant", "model": call.model,
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 8}}

    @staticmethod
    def error(status: int) -> dict:
        kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": _MESSAGE.get(status, "scripted failure")}}


_MESSAGE = {401: "invalid x-api-key (scripted)", 500: "internal server error (scripted)", 529: "Overloaded (scripted)"}


# ---------------------------------------------------------------------------
# OpenAI Chat Completions and Responses
# ---------------------------------------------------------------------------


def _openai_tools(tools) -> list:
    out = []
    for t in tools or []:
        if not isinstance(t, dict):
            continue
        fn = t.get("function") if isinstance(t.get("function"), dict) else t  # chat nests it, responses does not
        if isinstance(fn.get("name"), str):
            out.append((fn["name"], fn.get("parameters") or {}))
    return out


class OpenAIChat:
    name = "openai"

    @staticmethod
    def read(path: str, query: dict, body: dict) -> Call:
        call = Call("openai-chat", str(body.get("model", "")), bool(body.get("stream")))
        messages = body.get("messages") or []
        call.after_tool = bool(messages) and isinstance(messages[-1], dict) and messages[-1].get("role") == "tool"
        for m in reversed(messages):
            if isinstance(m, dict) and m.get("role") == "user" and "".join(_texts(m.get("content"))).strip():
                call.prompt = "\n".join(_texts(m.get("content")))
                break
        call.tools = _openai_tools(body.get("tools"))
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
            call.forced_tool = choice["function"].get("name")
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            call.json_schema = (fmt.get("json_schema") or {}).get("schema") or {}
        return call

    @staticmethod
    def stream(call: Call, pieces: list) -> list[str]:
        cid, created = f"chatcmpl-probe-{next(_IDS)}", int(time.time())

        def chunk(delta, finish=None, usage=None):
            data = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": call.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage:
                data["usage"] = usage
            return _sse(data)

        events, finish, tool_index = [chunk({"role": "assistant", "content": ""})], "stop", 0
        for p in pieces:
            if p[0] == "text":
                events.append(chunk({"content": p[1]}))
            else:
                events.append(chunk({"tool_calls": [{"index": tool_index, "id": f"call_probe_{next(_IDS)}",
                                                     "type": "function",
                                                     "function": {"name": p[1], "arguments": json.dumps(p[2])}}]}))
                tool_index, finish = tool_index + 1, "tool_calls"
        events.append(chunk({}, finish, {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}))
        events.append("data: [DONE]\n\n")
        return events

    @staticmethod
    def whole(call: Call, pieces: list) -> dict:
        text = "".join(p[1] for p in pieces if p[0] == "text")
        tools = [{"id": f"call_probe_{next(_IDS)}", "type": "function",
                  "function": {"name": p[1], "arguments": json.dumps(p[2])}} for p in pieces if p[0] == "tool"]
        message = {"role": "assistant", "content": text or None}
        if tools:
            message["tool_calls"] = tools
        return {"id": f"chatcmpl-probe-{next(_IDS)}", "object": "chat.completion", "created": int(time.time()),
                "model": call.model, "choices": [{"index": 0, "message": message,
                                                  "finish_reason": "tool_calls" if tools else "stop"}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}}

    @staticmethod
    def error(status: int) -> dict:
        kind = {401: "invalid_api_key", 529: "overloaded"}.get(status, "server_error")
        return {"error": {"message": _MESSAGE.get(status, "scripted failure"), "type": kind, "param": None, "code": kind}}


class OpenAIResponses:
    name = "openai"

    @staticmethod
    def read(path: str, query: dict, body: dict) -> Call:
        call = Call("openai-responses", str(body.get("model", "")), bool(body.get("stream")))
        items = body.get("input")
        if isinstance(items, str):
            call.prompt = items
        elif isinstance(items, list) and items:
            last = items[-1] if isinstance(items[-1], dict) else {}
            call.after_tool = last.get("type") in ("function_call_output", "custom_tool_call_output")
            for item in reversed(items):
                if isinstance(item, dict) and item.get("role") == "user" and "".join(_texts(item.get("content"))).strip():
                    call.prompt = "\n".join(_texts(item.get("content")))
                    break
        call.tools = _openai_tools(body.get("tools"))
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("name"), str):
            call.forced_tool = choice["name"]
        fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            call.json_schema = fmt.get("schema") or {}
        return call

    @staticmethod
    def _output(pieces: list) -> list[dict]:
        out = []
        text = "".join(p[1] for p in pieces if p[0] == "text")
        if text:
            out.append({"type": "message", "id": f"msg_probe_{next(_IDS)}", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]})
        for p in pieces:
            if p[0] == "tool":
                out.append({"type": "function_call", "id": f"fc_probe_{next(_IDS)}", "call_id": f"call_probe_{next(_IDS)}",
                            "name": p[1], "arguments": json.dumps(p[2]), "status": "completed"})
        return out

    @classmethod
    def whole(cls, call: Call, pieces: list) -> dict:
        return {"id": f"resp_probe_{next(_IDS)}", "object": "response", "created_at": int(time.time()),
                "status": "completed", "model": call.model, "output": cls._output(pieces),
                "usage": {"input_tokens": 12, "output_tokens": 8, "total_tokens": 20}}

    @classmethod
    def stream(cls, call: Call, pieces: list) -> list[str]:
        seq = _counter()
        final = cls.whole(call, pieces)
        start = dict(final, status="in_progress", output=[])
        events = [_sse({"type": "response.created", "sequence_number": next(seq), "response": start}, "response.created")]

        def ev(kind, **data):
            events.append(_sse({"type": kind, "sequence_number": next(seq), **data}, kind))

        for index, item in enumerate(final["output"]):
            ev("response.output_item.added", output_index=index, item=dict(item, status="in_progress",
                                                                           **({"content": []} if "content" in item else {})))
            if item["type"] == "message":
                part = {"type": "output_text", "text": "", "annotations": []}
                ev("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part)
                for p in pieces:
                    if p[0] == "text":
                        ev("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0, delta=p[1])
                ev("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                   text=item["content"][0]["text"])
                ev("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                   part=item["content"][0])
            else:
                ev("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=item["arguments"])
                ev("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                   arguments=item["arguments"])
            ev("response.output_item.done", output_index=index, item=item)
        ev("response.completed", response=final)
        return events

    error = OpenAIChat.error


# ---------------------------------------------------------------------------
# Gemini generateContent
# ---------------------------------------------------------------------------


class Gemini:
    name = "gemini"

    @staticmethod
    def read(path: str, query: dict, body: dict) -> Call:
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        call = Call("gemini", model, ":streamGenerateContent" in path)
        if path.endswith(":countTokens"):
            call.helper = "countTokens"
            return call
        contents = body.get("contents") or []
        if contents and isinstance(contents[-1], dict):
            parts = contents[-1].get("parts") or []
            call.after_tool = any(isinstance(p, dict) and "functionResponse" in p for p in parts)
        for c in reversed(contents):
            if isinstance(c, dict) and c.get("role", "user") == "user":
                text = "\n".join(p["text"] for p in c.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str))
                if text.strip():
                    call.prompt = text
                    break
        for t in body.get("tools") or []:
            for fn in (t or {}).get("functionDeclarations") or []:
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    call.tools.append((fn["name"], fn.get("parametersJsonSchema") or fn.get("parameters") or {}))
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            call.json_schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        return call

    @staticmethod
    def helper(call: Call) -> dict:
        return {"totalTokens": 12}

    @staticmethod
    def _response(call: Call, parts: list, finish: bool) -> dict:
        cand = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            cand["finishReason"] = "STOP"
        return {"candidates": [cand], "modelVersion": call.model,
                "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 8, "totalTokenCount": 20}}

    @classmethod
    def stream(cls, call: Call, pieces: list) -> list[str]:
        events = []
        for i, p in enumerate(pieces):
            part = {"text": p[1]} if p[0] == "text" else {"functionCall": {"name": p[1], "args": p[2]}}
            events.append(_sse(cls._response(call, [part], i == len(pieces) - 1)))
        return events or [_sse(cls._response(call, [{"text": ""}], True))]

    @classmethod
    def whole(cls, call: Call, pieces: list) -> dict:
        parts = []
        text = "".join(p[1] for p in pieces if p[0] == "text")
        if text:
            parts.append({"text": text})
        parts += [{"functionCall": {"name": p[1], "args": p[2]}} for p in pieces if p[0] == "tool"]
        return cls._response(call, parts, True)

    @staticmethod
    def error(status: int) -> dict:
        kind = {401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED", 529: "UNAVAILABLE"}.get(status, "INTERNAL")
        return {"error": {"code": status, "message": _MESSAGE.get(status, "scripted failure"), "status": kind}}


API_FOR = {"anthropic": Anthropic, "openai-chat": OpenAIChat, "openai-responses": OpenAIResponses, "gemini": Gemini}


def api_for_path(path: str):
    """The API a request path belongs to, or None (404)."""
    if path.endswith("/messages") or path.endswith("/messages/count_tokens"):
        return Anthropic
    if path.endswith("/chat/completions"):
        return OpenAIChat
    if path.endswith("/responses"):
        return OpenAIResponses
    if "/models/" in path and (path.endswith(":streamGenerateContent") or path.endswith(":generateContent")
                               or path.endswith(":countTokens")):
        return Gemini
    return None
