"""The explorer's HTTP server: the page and its JSON API, on 127.0.0.1 only, writing nothing.

Routes (docs/explore.md):

* ``GET /``: the page (one HTML file with its script and style inline, from this package).
* ``GET /api/state?config=..&member=..&rules=..&bug=..&path=0,3,1``: the state a path reaches,
  the enabled actions with their JSON-RPC messages, the run so far, the verdicts, the chart.
* ``GET /api/check?config=..&member=..&rules=..&bug=..``: every counterexample and witness
  ``check`` finds on the member, each with the path that opens it.
* ``GET /api/names``: the configurations, rule sets and seeded bugs.

A query that names no run (an unknown configuration, an index past the enabled
actions, a path of more than ``MAX_STEPS`` steps) is answered 400 with one line of text
saying why; a fault of the server's own, 500 with one line.
"""

from __future__ import annotations

import json
import threading
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from urllib.parse import parse_qs, urlsplit

from .api import state_answer
from .model_access import BadRequest, Model, model_for, names, parse_path

__all__ = ["Explorer", "serve", "BadRequest"]

_KEYS = ("config", "member", "rules", "bug", "set", "path")


def _model(q: dict) -> Model:
    unknown = sorted(set(q) - set(_KEYS))
    if unknown:
        raise BadRequest(f"unknown parameter {unknown[0]!r}; the query takes {', '.join(_KEYS)}")
    one = {k: v[-1] for k, v in q.items()}
    return _cached_model(one.get("config", "tiny"), one.get("member", ""), one.get("rules", "rfd"), one.get("bug", ""),
                         one.get("set", ""))


@lru_cache(maxsize=64)
def _cached_model(config: str, member: str, rules: str, bug: str, sets: str = "") -> Model:
    return model_for(config, member, rules, bug, sets)


@lru_cache(maxsize=16)
def _check(model: Model) -> list[dict]:
    return model.check_traces()


_check_lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    server_version = "acp-lifecycle-explore"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        if self.server.verbose:
            super().log_message(format, *args)

    def do_GET(self):  # noqa: N802 - http.server's name
        url = urlsplit(self.path)
        q = parse_qs(url.query, keep_blank_values=True)
        try:
            if url.path in ("/", "/index.html"):
                return self._send(200, page(), "text/html; charset=utf-8")
            if url.path == "/api/names":
                return self._json(names())
            if url.path == "/api/state":
                model = _model(q)
                return self._json(state_answer(model, parse_path(q.get("path", [""])[-1])))
            if url.path == "/api/check":
                model = _model({k: v for k, v in q.items() if k != "path"})
                with _check_lock:  # one search at a time: the machine is shared
                    traces = _check(model)
                return self._json({"config": model.config, "member": model.member, "rules": model.rule_set,
                                   "bug": model.bug or None,
                                   "traces": [dict(t, query=model.query(t["path"])) for t in traces]})
            if url.path == "/favicon.ico":  # (the page names none: a browser asks all the same)
                return self._send(204, "", "image/x-icon")
            return self._send(404, f"no such page: {url.path}\n", "text/plain; charset=utf-8")
        except BadRequest as e:
            return self._send(400, f"{e}\n", "text/plain; charset=utf-8")
        except Exception as e:  # a fault of ours: one line, not a request that dies without an answer
            return self._send(500, f"internal error: {type(e).__name__}: {' '.join(str(e).split())}\n",
                              "text/plain; charset=utf-8")

    def _json(self, data) -> None:
        self._send(200, json.dumps(data, separators=(",", ":")), "application/json")

    def _send(self, code: int, body: str, ctype: str) -> None:
        data = body.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)


@lru_cache(maxsize=1)
def page() -> str:
    return files("acp_lifecycle.sims.explore").joinpath("page.html").read_text(encoding="utf-8")


class Explorer(ThreadingHTTPServer):
    """The explorer on 127.0.0.1 (port 0: a free one). ``url`` is where it listens."""

    daemon_threads = True

    def __init__(self, port: int = 0, verbose: bool = False):
        super().__init__(("127.0.0.1", port), _Handler)
        self.verbose = verbose

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> "Explorer":
        """Serve in a background thread (tests, screenshots); ``shutdown()`` stops it."""
        threading.Thread(target=self.serve_forever, name="explore", daemon=True).start()
        return self


def serve(port: int = 0, verbose: bool = False) -> Explorer:
    return Explorer(port, verbose)
