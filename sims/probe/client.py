"""An ACP v1 client over stdio that records everything it exchanges with the agent.

``AgentSession(command, env, cwd, transcript, stderr)`` starts the agent in a
process group of its own, writes every line that crosses as a transcript line
(``sims.wire.record.Recorder``: the agent's bytes verbatim, each client line
recorded just before it is written), and gives the scenarios what they need:
``request``/``notify``, ``wait_response``, ``until`` (pump messages until a
condition holds or a deadline passes). Requests from the agent are answered
as they arrive: ``session/request_permission`` by the ``permission`` policy
(``"allow"``, ``"reject"``, or ``"hold"``: keep it pending for the scenario),
anything else with -32601; the agent's ``$/cancel_request`` notifications are
kept (``cancel_requests``). ``stop()`` ends the agent by process group.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time

from acp_lifecycle.sims.wire.record import Recorder

__all__ = ["AgentSession", "AgentGone", "PROTOCOL_VERSION", "pick_auth"]

PROTOCOL_VERSION = 1
AUTH_REQUIRED = -32000  # ACP's auth_required error code
#: a session id no agent made (a UUID, the form the agents' own ids take)
UNKNOWN_SESSION = "00000000-0000-4000-8000-00000000a11e"


class AgentGone(Exception):
    """The agent exited or closed its stdout."""


class AgentSession:
    def __init__(self, command: list[str], env: dict, cwd: str, transcript, stderr):
        self.transcript = transcript
        self.recorder = Recorder(transcript, "stdio")
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                     env=env, cwd=cwd, bufsize=0, start_new_session=True)
        self.inbox: queue.Queue = queue.Queue()
        self.next_id = 0
        self.responses: dict = {}
        self.updates: list[dict] = []  # session/update params, in order
        self.permission = "allow"
        self.permissions: list[dict] = []  # every session/request_permission received
        self.held: list[dict] = []  # permission requests kept pending (policy "hold")
        self.cancel_requests: list = []  # the request ids of the agent's $/cancel_request notifications
        self.gone = False
        self.session_id = None
        self.env = env
        self.agent_info: dict = {}  # initialize's agentInfo
        self.capabilities: dict = {}  # initialize's agentCapabilities
        self.cwd = ""  # the working directory of the session (session/new)
        self.authenticated: str | None = None  # the auth method used
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- wire -----------------------------------------------------------------

    def _read(self) -> None:
        buf = b""
        fd = self.proc.stdout.fileno()
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            self.recorder.feed("agent", data)
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, dict):
                    self.inbox.put(msg)
        self.recorder.flush("agent")
        self.inbox.put(None)

    def send(self, msg: dict) -> None:
        line = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        with self._write_lock:
            self.recorder.feed("client", line)
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                self.gone = True

    def request(self, method: str, params: dict) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def answer(self, req: dict, result: dict | None = None, error: dict | None = None) -> None:
        msg = {"jsonrpc": "2.0", "id": req["id"]}
        msg.update({"error": error} if error is not None else {"result": result})
        self.send(msg)

    # -- pumping --------------------------------------------------------------

    def _handle(self, msg: dict) -> None:
        if "method" in msg and "id" in msg:
            self._agent_request(msg)
        elif "method" in msg:
            if msg["method"] == "session/update" and isinstance(msg.get("params"), dict):
                self.updates.append(msg["params"])
            elif msg["method"] == "$/cancel_request" and isinstance(msg.get("params"), dict):
                self.cancel_requests.append(msg["params"].get("requestId"))
        elif "id" in msg:
            self.responses[msg["id"]] = msg

    def _agent_request(self, req: dict) -> None:
        if req["method"] != "session/request_permission":
            self.answer(req, error={"code": -32601, "message": f"Method not found: {req['method']}"})
            return
        self.permissions.append(req)
        if self.permission == "hold":
            self.held.append(req)
            return
        self.answer(req, choose_option(req.get("params") or {}, self.permission))

    def until(self, condition, timeout: float) -> bool:
        """Handle messages until ``condition()`` holds (True) or ``timeout`` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        while not condition():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self.gone and self.inbox.empty():
                raise AgentGone("the agent closed its output")
            try:
                msg = self.inbox.get(timeout=min(left, 0.2))
            except queue.Empty:
                continue
            if msg is None:
                self.gone = True
                continue
            self._handle(msg)
        return True

    def linger(self, seconds: float) -> None:
        """Keep handling messages for ``seconds`` (what an agent sends after its answer)."""
        try:
            self.until(lambda: False, seconds)
        except AgentGone:
            pass

    def wait_response(self, rid: int, timeout: float) -> dict | None:
        self.until(lambda: rid in self.responses, timeout)
        return self.responses.get(rid)

    def saw_update(self, kind: str, since: int = 0) -> bool:
        return any((u.get("update") or {}).get("sessionUpdate") == kind for u in self.updates[since:])

    # -- handshake ------------------------------------------------------------

    AUTHENTICATE = "authenticate"

    def initialize_params(self) -> dict:
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
            "clientInfo": {"name": "acp-lifecycle-probe", "version": "0.1.0"},
        }

    def handshake(self, cwd: str, timeout: float, auth: str | None = None) -> tuple[bool, str]:
        """initialize, ``authenticate`` when needed, session/new; (ok, a note when not), all within
        ``timeout`` seconds. ``auth`` (the profile's method) authenticates before session/new when
        the agent lists it; without it, a session/new answered -32000 (auth_required) is retried
        once after authenticating with a listed method that takes an API key (``pick_auth``)."""
        deadline = time.monotonic() + timeout

        def left() -> float:
            return max(0.0, deadline - time.monotonic())

        rid = self.request("initialize", self.initialize_params())
        init = self.wait_response(rid, left())
        if init is None or "error" in init:
            return False, _failure("initialize", init, timeout)
        result = init.get("result") if isinstance(init.get("result"), dict) else {}
        info = result.get("agentInfo", result.get("info"))  # v1 agentInfo, v2 info
        self.agent_info = info if isinstance(info, dict) else {}
        caps = result.get("agentCapabilities", result.get("capabilities"))  # v1 agentCapabilities, v2 capabilities
        self.capabilities = caps if isinstance(caps, dict) else {}
        self.cwd = cwd
        methods = [dict(m, id=m.get("id", m.get("methodId"))) for m in result.get("authMethods") or [] if isinstance(m, dict)]
        methods = [m for m in methods if isinstance(m["id"], str)]
        if auth and auth != "none" and any(m["id"] == auth for m in methods):
            note = self._authenticate(auth, left(), timeout)
            if note:
                return False, note
        for attempt in (1, 2):
            rid = self.request("session/new", {"cwd": cwd, "mcpServers": []})
            new = self.wait_response(rid, left())
            error = (new or {}).get("error") if isinstance((new or {}).get("error"), dict) else None
            chosen = pick_auth(methods, self.env) if auth != "none" and not self.authenticated else None
            if attempt == 1 and error is not None and error.get("code") == AUTH_REQUIRED and chosen:
                note = self._authenticate(chosen, left(), timeout)
                if note:
                    return False, note
                continue
            break
        if new is None or "error" in new or not isinstance((new.get("result") or {}).get("sessionId"), str):
            return False, _failure("session/new", new, timeout)
        self.session_id = new["result"]["sessionId"]
        return True, ""

    def _authenticate(self, method: str, left: float, timeout: float) -> str:
        """``authenticate`` with ``method``; a note when it failed."""
        rid = self.request(self.AUTHENTICATE, {"methodId": method})
        answer = self.wait_response(rid, left)
        if answer is None or "error" in answer:
            return _failure(f"authenticate ({method})", answer, timeout)
        self.authenticated = method
        return ""

    def prompt(self, text: str) -> int:
        return self.request("session/prompt", {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]})

    def cancel(self) -> None:
        self.notify("session/cancel", {"sessionId": self.session_id})

    def resume_unknown(self) -> int | None:
        """Resume ``UNKNOWN_SESSION``, a session the agent never made: ``session/resume`` where the
        agent offers it (v1 ``sessionCapabilities.resume``), else ``session/load``; the request id,
        or None when the agent offers neither."""
        params = {"sessionId": UNKNOWN_SESSION, "cwd": self.cwd, "mcpServers": []}
        if isinstance((self.capabilities.get("sessionCapabilities") or {}).get("resume"), dict):
            return self.request("session/resume", params)
        if self.capabilities.get("loadSession") is True:
            return self.request("session/load", params)
        return None

    # -- stopping -------------------------------------------------------------

    def stop(self, grace: float = 2.0) -> int | None:
        """Close the agent's stdin, then end its process group (TERM, then KILL)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            pass
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                return self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        try:  # the leader is gone; what it left in its group goes too
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return self.proc.poll()

    def close_transcript(self) -> None:
        self._reader.join(timeout=2)
        self.recorder.flush("client")
        with self.recorder.lock:
            self.transcript.write(b'{"conn":"stdio","event":"closed"}\n')
            self.transcript.flush()


def choose_option(params: dict, policy: str) -> dict:
    """The answer to a permission request: the first option of the wanted kind."""
    kinds = ("allow_once", "allow_always") if policy == "allow" else ("reject_once", "reject_always")
    options = [o for o in params.get("options") or [] if isinstance(o, dict)]
    for kind in kinds:
        for o in options:
            if o.get("kind") == kind and "optionId" in o:
                return {"outcome": {"outcome": "selected", "optionId": o["optionId"]}}
    return {"outcome": {"outcome": "cancelled"}}


def pick_auth(methods: list[dict], env: dict) -> str | None:
    """The auth method to answer ``auth_required`` with: one whose environment variables the
    run sets (``type: env_var``), else one named for an API key; None when none fits (a login in
    a browser or a terminal cannot be scripted)."""
    for m in methods:
        names = [v.get("name") for v in m.get("vars") or [] if isinstance(v, dict)]
        if m.get("type") == "env_var" and names and all(n in env for n in names):
            return m["id"]
    for m in methods:
        if m.get("type") == "env_var":  # its variables are not set: it would fail
            continue
        words = f"{m['id']} {m.get('name', '')}".lower()
        if "key" in words and ("api" in words or "env" in words):
            return m["id"]
    return None


def _failure(method: str, msg: dict | None, timeout: float) -> str:
    if msg is None:
        return f"no answer to {method} within {timeout:g} s"
    err = msg.get("error")
    if isinstance(err, dict):
        return f"{method} failed: {err.get('code')} {err.get('message')}"
    return f"{method}: unexpected answer {json.dumps(msg)[:200]}"
