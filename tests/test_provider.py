"""The scripted provider alone: every API honours every keyword, and a tool call asks what the tool's schema wants.

Each keyword of the script (``[slow]``, ``[fail-midstream]``, ``[tool]``, the failures) is tried on
each of the four APIs, streaming. A slow turn is checked by a lower bound on the time its stream
takes (the provider sleeps before each chunk, so a loaded machine only makes it longer), a cut by
the connection breaking before the stream's end, after exactly the chunks the script allows.
"""

from __future__ import annotations

import http.client
import json
import time

import pytest

from acp_lifecycle.sims.provider import Provider, Script, Turn
from acp_lifecycle.sims.provider.script import JUSTIFICATION, PROBE_COMMAND, tool_arguments

SHELL = {"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}}


def _request(api: str, text: str, tools: bool = False) -> tuple[str, dict]:
    """(path, body) of a streaming request whose last user message is ``text``, in ``api``'s shape."""
    if api == "anthropic":
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": text}]}
        if tools:
            body["tools"] = [{"name": "Bash", "input_schema": SHELL}]
        return "/v1/messages", body
    if api == "openai-chat":
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": text}]}
        if tools:
            body["tools"] = [{"type": "function", "function": {"name": "shell", "parameters": SHELL}}]
        return "/v1/chat/completions", body
    if api == "openai-responses":
        body = {"model": "m", "stream": True, "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context/>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}]}
        if tools:
            body["tools"] = [{"type": "function", "name": "shell", "parameters": SHELL}]
        return "/v1/responses", body
    body = {"contents": [{"role": "user", "parts": [{"text": text}]}]}
    if tools:
        body["tools"] = [{"functionDeclarations": [{"name": "run_shell_command", "parameters": SHELL}]}]
    return "/v1beta/models/g:streamGenerateContent?alt=sse", body


def _texts(api: str, events: list[dict]) -> list[str]:
    """The text deltas of a stream, in order."""
    out = []
    for e in events:
        if api == "anthropic" and e.get("delta", {}).get("type") == "text_delta":
            out.append(e["delta"]["text"])
        elif api == "openai-chat" and e.get("choices") and e["choices"][0]["delta"].get("content"):
            out.append(e["choices"][0]["delta"]["content"])
        elif api == "openai-responses" and e.get("type") == "response.output_text.delta":
            out.append(e["delta"])
        elif api == "gemini":
            out += [p["text"] for c in e.get("candidates", []) for p in c["content"]["parts"] if p.get("text")]
    return out


def _events(raw: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: {")]


def _stream(p: Provider, api: str, text: str, tools: bool = False) -> tuple[int, list[dict], bool, float]:
    """(status, the events read, whether the connection was cut before the end, seconds taken)."""
    path, body = _request(api, text, tools)
    conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=30)
    start = time.monotonic()
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    cut = False
    try:
        raw = resp.read()
    except http.client.IncompleteRead as e:
        raw, cut = e.partial, True
    conn.close()
    return resp.status, _events(raw), cut, time.monotonic() - start


def _last(p: Provider, n: int = 1) -> dict:
    """The provider's last log record once it holds ``n``: a stream is logged after its last byte,
    which the client may read first."""
    deadline = time.monotonic() + 10
    while len(p.requests) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return p.requests[-1]


APIS = ["anthropic", "openai-chat", "openai-responses", "gemini"]
SLOW = Turn("slow", "[slow]", chunks=("a", "b", "c", "d"), delay=0.3)


@pytest.fixture
def provider():
    p = Provider(Script(turns=(SLOW, *Script().turns)), idle_timeout=60).start()
    yield p
    p.stop()


@pytest.mark.parametrize("api", APIS)
def test_a_slow_turn_takes_its_seconds_on_every_api(provider, api):
    status, events, cut, seconds = _stream(provider, api, "[slow] count")
    assert status == 200 and not cut and _texts(api, events) == ["a", "b", "c", "d"]
    assert seconds >= 4 * 0.3 - 0.05, f"{api}: the four chunks, 0.3 s apart, came in {seconds:.2f} s"


@pytest.mark.parametrize("api", APIS)
def test_fail_midstream_cuts_the_stream_after_two_chunks_on_every_api(provider, api):
    status, events, cut, _ = _stream(provider, api, "[fail-midstream] go")
    assert status == 200 and cut, f"{api}: the stream was not cut"
    assert _texts(api, events) == ["Partial", " answer"]
    if api == "openai-responses":
        assert not any(e.get("type") == "response.completed" for e in events)
    assert _last(provider)["status"] == "cut"


@pytest.mark.parametrize("api", APIS)
def test_the_tool_keyword_calls_the_shell_tool_on_every_api(provider, api):
    status, events, cut, _ = _stream(provider, api, "[tool] touch", tools=True)
    assert status == 200 and not cut
    record = _last(provider)
    assert record["turn"] == "tool" and record["tool"] in ("Bash", "shell", "run_shell_command")
    assert PROBE_COMMAND in json.dumps(events)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("keyword, status", [("[fail-401]", 401), ("[fail-500]", 500), ("[overloaded]", 529)])
def test_the_failures_on_every_api(provider, api, keyword, status):
    got, _, _, _ = _stream(provider, api, f"{keyword} hi")
    assert got == status


def test_the_responses_api_reads_a_forced_function_and_a_json_format(provider):
    schema = {"type": "object", "required": ["next_speaker"], "properties": {"next_speaker": {"enum": ["model", "user"]}}}
    path, body = _request("openai-responses", "who next?")
    conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=30)
    conn.request("POST", path, json.dumps(dict(body, stream=False, text={"format": {"type": "json_schema", "schema": schema}})),
                 {"Content-Type": "application/json"})
    answer = json.loads(conn.getresponse().read())
    assert json.loads(answer["output"][0]["content"][0]["text"]) == {"next_speaker": "user"}
    tools = [{"type": "function", "name": "respond", "parameters": schema}]
    conn.request("POST", path, json.dumps(dict(body, stream=False, tools=tools, tool_choice={"type": "function", "name": "respond"})),
                 {"Content-Type": "application/json"})
    call = json.loads(conn.getresponse().read())["output"][0]
    assert call["name"] == "respond" and json.loads(call["arguments"]) == {"next_speaker": "user"}
    conn.close()


def test_tool_arguments_fill_the_command_and_ask_for_the_sandbox_escalation():
    """codex's exec_command requires only ``cmd``; running a write outside its sandbox needs
    ``sandbox_permissions: "require_escalated"`` (with a justification): that is what makes it ask."""
    exec_command = {"type": "object", "required": ["cmd"], "properties": {
        "cmd": {"type": "string"}, "justification": {"type": "string"}, "login": {"type": "boolean"},
        "sandbox_permissions": {"type": "string", "enum": ["use_default", "require_escalated"]},
        "workdir": {"type": "string"}}}
    assert tool_arguments(exec_command) == {"cmd": PROBE_COMMAND, "sandbox_permissions": "require_escalated",
                                            "justification": JUSTIFICATION}
    shell = {"type": "object", "required": ["command"], "properties": {
        "command": {"type": "array", "items": {"type": "string"}}, "with_escalated_permissions": {"type": "boolean"},
        "justification": {"type": "string"}}}
    assert tool_arguments(shell) == {"command": ["bash", "-lc", PROBE_COMMAND], "with_escalated_permissions": True,
                                     "justification": JUSTIFICATION}
    # an optional command under its name is still filled; nothing else optional is
    assert tool_arguments({"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}}}) == {
        "command": PROBE_COMMAND}
