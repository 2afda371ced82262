"""The scripted model provider: an HTTP server on 127.0.0.1 that answers model calls by script.

``Provider(script, port=0, log=FILE)`` serves in a background thread once
``start()`` is called (``port`` 0: a free port, read back from ``.port``);
``stop()`` stops it. It stops by itself after ``max_requests`` requests or when
no request came for ``idle_timeout`` seconds. Each request is logged as one
JSON line: ``{"n", "time", "method", "path", "api", "model", "stream", "turn",
"status", "tools", "tool"}`` (``turn`` is the scripted turn chosen, ``status``
the HTTP status sent, ``"aborted"`` when the client went away mid-stream,
``"cut"`` when the script broke the stream). A JSON answer is logged just
before it is sent, a stream when it ends.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from .apis import Call, api_for_path
from .script import Script, Turn, pick_tool, schema_value, tool_arguments

__all__ = ["Provider"]

_MAX_BODY = 64 * 1024 * 1024


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    provider: "Provider"


class Provider:
    def __init__(self, script: Script | None = None, port: int = 0, log=None, max_requests: int = 1000,
                 idle_timeout: float = 600.0, host: str = "127.0.0.1"):
        self.script = script or Script()
        self.log = log
        self.max_requests = max_requests
        self.idle_timeout = idle_timeout
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.last = time.monotonic()
        self.stopped = threading.Event()
        self.server = _Server((host, port), _Handler)
        self.server.provider = self
        self.port = self.server.server_address[1]
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Provider":
        serve = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
        watch = threading.Thread(target=self._watch, daemon=True)
        self._threads = [serve, watch]
        for t in self._threads:
            t.start()
        return self

    def wait(self) -> None:
        """Block until the provider stops (idle timeout, request budget, or ``stop``)."""
        while not self.stopped.wait(0.5):
            pass

    def stop(self) -> None:
        if not self.stopped.is_set():
            self.stopped.set()
            self.server.shutdown()
        self.server.server_close()

    def _watch(self) -> None:
        while not self.stopped.wait(0.5):
            with self.lock:
                idle = time.monotonic() - self.last
                spent = len(self.requests) >= self.max_requests
            if idle > self.idle_timeout or spent:
                self.stopped.set()
                self.server.shutdown()
                return

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def note(self, record: dict) -> dict:
        with self.lock:
            record = {"n": len(self.requests) + 1, "time": round(time.time(), 3), **record}
            self.requests.append(record)
            self.last = time.monotonic()
            if self.log is not None:
                self.log.write(json.dumps(record) + "\n")
                self.log.flush()
        return record

    def touch(self) -> None:
        with self.lock:
            self.last = time.monotonic()


def _pieces(turn: Turn, call: Call) -> list:
    """The answer of ``turn`` to ``call`` as pieces: text chunks, then a tool call."""
    if call.forced_tool:
        schema = dict(call.tools).get(call.forced_tool, {})
        return [("tool", call.forced_tool, schema_value(schema))]
    if call.json_schema is not None:
        return [("text", json.dumps(schema_value(call.json_schema)))]
    if len(call.tools) == 1 and call.tools[0][0] == "respond_in_schema":  # qwen-code's generateJson
        return [("tool", "respond_in_schema", schema_value(call.tools[0][1]))]
    pieces = [("text", c) for c in turn.chunks]
    if turn.tool:
        chosen = pick_tool(call.tools)
        if chosen is not None:
            pieces.append(("tool", chosen[0], tool_arguments(chosen[1])))
    return pieces


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format, *args):  # the provider logs JSON lines of its own
        pass

    def do_GET(self):
        self._reply_json(404, {"error": {"message": f"no such endpoint: GET {self.path}"}})
        self.server.provider.note({"method": "GET", "path": urlsplit(self.path).path, "status": 404})

    def do_POST(self):
        provider = self.server.provider
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= _MAX_BODY:
            self._reply_json(400, {"error": {"message": "bad Content-Length"}})
            return
        raw = self.rfile.read(length)
        api = api_for_path(path)
        record = {"method": "POST", "path": path}
        if len(provider.requests) >= provider.max_requests:
            provider.note({**record, "status": 503})
            self._reply_json(503, {"error": {"message": "the scripted provider's request budget is spent"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if api is None or not isinstance(body, dict):
            status = 404 if api is None else 400
            provider.note({**record, "status": status})
            self._reply_json(status, {"error": {"message": f"no such endpoint: POST {path}" if api is None else "not JSON"}})
            return
        call = api.read(path, query, body)
        record.update(api=call.api, model=call.model, stream=call.stream, tools=len(call.tools))
        if call.helper:
            provider.note({**record, "turn": call.helper, "status": 200})
            self._reply_json(200, api.helper(call))
            return
        turn = provider.script.choose(call.prompt, call.after_tool)
        record["turn"] = turn.name
        if turn.status is not None:
            provider.note({**record, "status": turn.status})
            self._reply_json(turn.status, api.error(turn.status))
            return
        pieces = _pieces(turn, call)
        tool = next((p[1] for p in pieces if p[0] == "tool"), None)
        if tool:
            record["tool"] = tool
        if call.json_schema is not None or call.forced_tool:
            record["turn"] = "json"
        if not call.stream:
            if turn.break_after is not None:
                provider.note({**record, "status": "cut"})
                self._cut_whole(api.whole(call, pieces))
                return
            provider.note({**record, "status": 200})
            self._reply_json(200, api.whole(call, pieces))
            return
        provider.note({**record, "status": self._stream(api.stream(call, pieces), turn, bool(record["turn"] == "json"))})

    # -- writing --------------------------------------------------------------

    def _reply_json(self, status: int, data: dict) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if status == 529 or status >= 500:
            self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _stream(self, events: list[str], turn: Turn, helper: bool):
        """Send ``events`` as SSE, chunked; a delay before each text event of a slow turn."""
        provider = self.server.provider
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent_text = 0
        try:
            for event in events:
                if turn.break_after is not None and sent_text >= turn.break_after and _is_text(event):
                    self._cut()
                    return "cut"
                if turn.delay and not helper and _is_text(event):
                    if provider.stopped.wait(turn.delay):
                        self._cut()
                        return "cut"
                    provider.touch()
                data = event.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                sent_text += _is_text(event)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True
            return "aborted"
        return 200

    def _cut(self) -> None:
        """Break the connection in the middle of the body (no final chunk)."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _cut_whole(self, data: dict) -> None:
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body[: len(body) // 2])
        except OSError:
            pass
        self._cut()


def _is_text(event: str) -> bool:
    """Does this SSE event carry model output (a text delta or a tool call), as opposed to framing?

    Read from the event's JSON, per API: Anthropic's ``content_block_delta``, a Chat Completions
    chunk whose delta has content or tool calls, the Responses API's
    ``response.output_text.delta`` and ``response.function_call_arguments.delta``, a Gemini
    response with parts."""
    data = _event_data(event)
    if not isinstance(data, dict):
        return False
    kind = data.get("type")
    if kind == "content_block_delta":
        return True
    if kind in ("response.output_text.delta", "response.function_call_arguments.delta"):
        return True
    if isinstance(data.get("choices"), list):
        delta = (data["choices"][0] or {}).get("delta") or {} if data["choices"] else {}
        return bool(delta.get("content") or delta.get("tool_calls"))
    if isinstance(data.get("candidates"), list):
        return any((c.get("content") or {}).get("parts") for c in data["candidates"] if isinstance(c, dict))
    return False


def _event_data(event: str):
    for line in event.splitlines():
        if line.startswith("data: {"):
            try:
                return json.loads(line[6:])
            except ValueError:
                return None
    return None
