"""The live model agent on stdio: JSON-RPC lines in, the model agent's choices out, every line recorded.

``run(...)`` reads newline-delimited JSON-RPC from ``stdin`` on a thread of its own and handles
it on this one, between the agent's own steps (``session.LiveSession``). It answers
``initialize``, ``session/new``, ``session/list``, ``session/prompt``, ``session/cancel``,
``$/cancel_request``, ``session/resume`` and ``session/close`` and the client's answers to its
``session/request_permission``; any other request gets -32601. Every line it reads and writes goes
to ``trace``'s rules as it is recorded (``judge.WireJudge``). At end of input it finishes what it
can do alone (asking its client nothing more), judges what is still owed, and returns the report.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time

from .judge import WireJudge
from .policy import BUDGETS, policy
from .session import LiveSession

__all__ = ["Agent", "run"]

_EOF = object()


#: the protocol version the agent speaks
PROTOCOL_VERSION = 2


class Agent:
    def __init__(self, rules, policy_name: str, seed: int, out, record=None, grace: float = 1.0, validator=None,
                 err=None):
        #: trace's rules, under the rule set as named (``rules`` below is the model agent's reading of it)
        self.judge = WireJudge(rules, validator)
        if rules.cancel_rejects_held == "must":
            # 2.4.0 read to the letter, as `trace --model` reads it: the prompts a session/cancel covers
            # are answered -32800 at some point after it, each a step of its own. ("must" rejects them
            # all in the step that receives the cancel, before the $/cancel_request of a pending
            # permission request: an order `trace --model` does not explain.)
            rules = rules.with_(cancel_rejects_held="later")
        self.rules = rules
        self.policy = policy(policy_name, seed)
        self.budgets = BUDGETS[policy_name]
        self.out, self.record = out, record
        self.err = err if err is not None else sys.stderr
        self.grace = grace
        self.sessions: dict[str, LiveSession] = {}
        self.line = 0
        self.perm_owner: dict[str, tuple[LiveSession, int]] = {}
        self.pending: set[str] = set()  # the client's requests not yet answered: json.dumps of each id
        self.initialized = False

    # --- output -------------------------------------------------------------------------------
    def send(self, msg: dict) -> None:
        self._write(msg)
        self._sent(msg)

    def _write(self, msg: dict) -> None:
        self.out.write(json.dumps(msg, separators=(",", ":")) + "\n")
        self.out.flush()

    def _sent(self, msg: dict) -> None:
        """Record and judge a message written (after the write: the client is not kept waiting)."""
        self._log("agent", msg)
        if "method" not in msg and msg.get("id") is not None:
            self.pending.discard(json.dumps(msg["id"]))  # answered
        if msg.get("method") == "session/request_permission":
            key = msg["params"]["sessionId"]
            self.perm_owner[msg["id"]] = (self.sessions[key], int(msg["id"].rsplit("_", 1)[1]))

    def _log(self, side: str, msg=None, raw: str | None = None) -> None:
        self.line += 1
        entry = {"conn": "c0", "from": side}
        entry.update({"raw": raw} if raw is not None else {"msg": msg})
        if self.record is not None:
            self.record.write(json.dumps(entry, separators=(",", ":")) + "\n")
            self.record.flush()
        self.judge.feed(self.line, entry)

    def _answer(self, req: dict, result=None, error: tuple | None = None) -> None:
        if "id" not in req:
            return
        if error is not None:
            self.send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": error[0], "message": error[1]}})
        else:
            self.send({"jsonrpc": "2.0", "id": req["id"], "result": result if result is not None else {}})

    # --- input --------------------------------------------------------------------------------
    def handle(self, text: str, arrived: float | None = None) -> None:
        """One line from the client; ``arrived``: when it was read from stdin (the client's rules
        judge it as sent then, not when the agent got round to it)."""
        now = time.monotonic() if arrived is None else arrived
        try:
            msg = json.loads(text)
        except ValueError:
            self._log("client", raw=text)
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            return
        self._log("client", msg)
        problem = invalid_request(msg)
        if problem is None and "method" in msg and "id" in msg and json.dumps(msg["id"]) in self.pending:
            problem = (f"id {json.dumps(msg['id'])} is still pending "
                       "(a request id names one request until it is answered)")
        if problem is not None:  # JSON-RPC 2.0: the id of an Invalid Request's error is null
            error = {"code": -32600, "message": f"Invalid Request: {problem}"}
            self.send({"jsonrpc": "2.0", "id": None, "error": error})
            return
        if "method" not in msg:
            self._response(msg, now)
            return
        method, params = msg["method"], msg.get("params") or {}
        if "id" in msg:
            self.pending.add(json.dumps(msg["id"]))
        if method == "initialize":
            self.initialized = True
        elif not self.initialized:
            if "id" in msg:
                self._answer(msg, error=(-32600, f"Invalid Request: {method} before initialize"))
            return
        handler = _METHODS.get(method)
        if handler is None:
            if "id" in msg:
                self._answer(msg, error=(-32601, f"Method not found: {method}"))
            return
        handler(self, msg, params if isinstance(params, dict) else {}, now)

    def _session(self, msg: dict, params: dict) -> LiveSession | None:
        s = self.sessions.get(params.get("sessionId"))
        if s is None or s.closed:
            # 2.4.0: -32002 (Resource not found) "when a session-scoped request names a session that
            # does not exist or is not active", its data the session id (SessionNotFoundErrorData)
            if "id" in msg:
                self.send({"jsonrpc": "2.0", "id": msg["id"], "error": {
                    "code": -32002, "message": "Resource not found", "data": {"sessionId": params.get("sessionId")}}})
            return None
        return s

    def _emit(self, messages: list[dict] | None) -> None:
        """Write what a step sends, then record and judge it: the client's rules take each message
        as written when the step was taken (``LiveSession.sent_at``)."""
        messages = messages or ()
        for m in messages:
            self._write(m)
        for m in messages:
            self._sent(m)

    def _response(self, msg: dict, now: float) -> None:
        owner = self.perm_owner.pop(msg.get("id"), None) if isinstance(msg.get("id"), str) else None
        if owner is None:
            return  # an answer to nothing the agent asked: ignored
        session, pid = owner
        if session.closed:
            return
        result = msg.get("result") if isinstance(msg.get("result"), dict) else {}
        outcome = (result.get("outcome") or {}).get("outcome") if isinstance(result.get("outcome"), dict) else None
        self._emit(session.permission_answer(pid, "selected" if outcome == "selected" else "cancelled", self.line, now))

    # --- the agent's own steps ------------------------------------------------------------------
    def busy(self) -> list[LiveSession]:
        return [s for s in self.sessions.values() if s.agent_steps()]

    def tick(self, wait: bool = True) -> str:
        """Take one agent step in a session that has one: "step"; or "wait" (the policy waits a tick);
        or "" (no session has a step to take)."""
        busy = self.busy()
        if not busy:
            return ""
        if wait and self.policy.waits():
            return "wait"
        self._emit(self.policy.rng.choice(busy).act())
        return "step"

    def hang_up(self) -> None:
        """The client closed its side: the agent asks it nothing more (no permission request)."""
        for s in self.sessions.values():
            s.alone = True

    def finish(self) -> dict:
        for s in self.sessions.values():
            s.finish()
        return report(self)


def _initialize(agent: Agent, msg, params, now) -> None:
    """ACP's version negotiation as the 2.4.0 SDK's v2 agent does it: a client that asks for this
    version or a newer one is answered with this one ("the latest version it supports"); one that
    asks for an older one gets -32022 (Unsupported protocol version: "No protocol version supported
    by the Agent is at or below the requested version") with the versions it supports, and its user
    a line on stderr: put the bridge in front."""
    from acp_lifecycle import __version__

    asked = params.get("protocolVersion")
    if type(asked) is not int or asked < 0:
        agent.initialized = False
        agent._answer(msg, error=(-32602, "Invalid params: protocolVersion must be a non-negative integer"))
        return
    if asked < PROTOCOL_VERSION:
        agent.initialized = False
        print(f"acp-lifecycle agent: the client asked for protocol version {asked}; this agent speaks "
              f"{PROTOCOL_VERSION} only (answered -32022); for a v1 client: acp-lifecycle bridge serve --to v1 -- "
              "acp-lifecycle agent", file=agent.err, flush=True)
        if "id" in msg:
            agent.send({"jsonrpc": "2.0", "id": msg["id"], "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"requested": asked, "supported": [PROTOCOL_VERSION]}}})
        return
    agent._answer(msg, {"protocolVersion": PROTOCOL_VERSION,
                        "info": {"name": "acp-lifecycle-agent", "title": "The acp-lifecycle model agent",
                                 "version": __version__},
                        "capabilities": {"session": {}}, "authMethods": []})


def _new(agent: Agent, msg, params, now) -> None:
    key = f"sess_{len(agent.sessions) + 1}"
    agent.sessions[key] = LiveSession(key, len(agent.sessions) + 1, agent.rules, agent.budgets, agent.policy.choose,
                                      agent.grace, shoulds=not agent.policy.skips_shoulds)
    agent._answer(msg, {"sessionId": key})


def _list(agent: Agent, msg, params, now) -> None:
    agent._answer(msg, {"sessions": [{"sessionId": k, "cwd": "/"} for k, s in agent.sessions.items() if not s.closed]})


def _prompt(agent: Agent, msg, params, now) -> None:
    s = agent._session(msg, params)
    blocks = params.get("prompt")
    if s is None:
        return
    if "id" not in msg or not isinstance(blocks, list) or not blocks:
        agent._answer(msg, error=(-32602, "Invalid params: a prompt needs at least one content block"))
        return
    agent._emit(s.prompt(msg["id"], blocks, agent.line, now))


def _cancel(agent: Agent, msg, params, now) -> None:
    s = agent.sessions.get(params.get("sessionId"))
    if s is not None and not s.closed:
        agent._emit(s.cancel(agent.line, now))


def _cancel_request(agent: Agent, msg, params, now) -> None:
    rid = params.get("requestId")
    for s in agent.sessions.values():
        if not s.closed:
            out = s.cancel_request(rid, agent.line, now)
            if out is not None:
                agent._emit(out)
                return


def _resume(agent: Agent, msg, params, now) -> None:
    s = agent._session(msg, params)
    if s is None or "id" not in msg:
        return
    replay = params.get("replayFrom")
    if replay is not None and replay != {"type": "start"}:
        agent._answer(msg, error=(-32602, "Invalid params: replayFrom must be {type: start}"))
        return
    agent._emit(s.resume(msg["id"], replay is not None, agent.line, now))


def _close(agent: Agent, msg, params, now) -> None:
    s = agent._session(msg, params)
    if s is None:
        return
    agent._emit(s.close())
    agent._answer(msg, {})


def invalid_request(msg) -> str | None:
    """Why ``msg`` (parsed JSON) is not a JSON-RPC 2.0 request, notification or response; None if it is one."""
    if not isinstance(msg, dict):
        return f"a message is one JSON object, not {json_kind(msg)}"
    if "jsonrpc" not in msg:
        return '"jsonrpc": "2.0" is missing'
    if msg["jsonrpc"] != "2.0":
        return f'"jsonrpc" must be "2.0" (got {json.dumps(msg["jsonrpc"])})'
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return '"method" must be a string'
        if "id" in msg and not _valid_id(msg["id"]):
            return f'"id" must be a string or an integer (got {json.dumps(msg["id"])})'
        return None
    if "result" not in msg and "error" not in msg:
        return 'neither a request ("method") nor a response ("result" or "error")'
    return None  # a response: answered by nothing, whatever its id


def json_kind(value) -> str:
    """What a JSON value that is not an object is, in words (a batch: an array of objects)."""
    if isinstance(value, list):
        return "a batch" if value and all(isinstance(v, dict) for v in value) else "an array"
    if isinstance(value, bool):
        return "a boolean"
    return {str: "a string", int: "a number", float: "a number", type(None): "null"}.get(type(value), "not an object")


def _valid_id(rid) -> bool:
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


_METHODS = {"initialize": _initialize, "session/new": _new, "session/list": _list, "session/prompt": _prompt,
            "session/cancel": _cancel, "$/cancel_request": _cancel_request, "session/resume": _resume,
            "session/close": _close}


def report(agent: Agent) -> dict:
    """What the agent did and what it found, each finding with whose it is (``by``: "client" or
    "agent") and what judged it (``judge``): ``trace``'s rules on the record ("trace": ``trace`` on
    the ``--record`` file reports the same), or the model client's rules, which need the agent's
    clock ("model")."""
    findings = list(agent.judge.findings())
    sessions = []
    for s in agent.sessions.values():
        sessions.append({"session": s.key, "steps": s.steps, "closed": s.closed, "notes": s.notes})
        for f in s.findings:
            findings.append({"line": f["line"], "property": f["property"],
                             "severity": "violation" if f["level"] == "MUST" else "warning", "message": f["message"],
                             "clause": f.get("clause", ""), "quote": " ".join(f.get("quote", "").split()),
                             "level": f["level"],
                             "by": "client", "judge": "model", "session": s.key})
    findings.sort(key=lambda f: (f["line"] or 0, f["property"]))

    def count(by: str, severity: str) -> int:
        return sum(1 for f in findings if f["by"] == by and f["severity"] == severity)

    return {"policy": agent.policy.name, "seed": agent.policy.seed, "rules": agent.rules.name,
            "skips_shoulds": agent.policy.skips_shoulds, "schema": agent.judge.monitor.validator is not None,
            "lines": agent.line, "sessions": sessions, "findings": findings,
            "client_violations": count("client", "violation"), "client_warnings": count("client", "warning"),
            "agent_violations": count("agent", "violation"), "agent_warnings": count("agent", "warning")}


def run(rules, policy_name: str, seed: int, stdin=None, stdout=None, record=None, grace: float = 1.0,
        idle_timeout: float | None = None, validator=None, err=None) -> dict:
    """Serve one connection until end of input (or ``idle_timeout`` seconds without a message); the report.
    ``validator``: the v2 schema's, to judge every message as ``trace`` does (None: no schema check)."""
    stdin = stdin or sys.stdin
    agent = Agent(rules, policy_name, seed, stdout or sys.stdout, record, grace, validator, err)
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for raw in stdin:
            raw = raw.rstrip("\r\n")
            if raw.strip():
                lines.put((raw, time.monotonic()))
        lines.put(_EOF)

    threading.Thread(target=read, name="stdin", daemon=True).start()
    last = time.monotonic()
    while True:
        did = agent.tick()
        try:
            if did == "step":
                item = lines.get_nowait()
            else:
                item = lines.get(timeout=agent.policy.pause() if did == "wait" else (idle_timeout or 3600))
        except queue.Empty:
            if not did and idle_timeout is not None and time.monotonic() - last >= idle_timeout:
                break
            continue
        if item is _EOF:
            break
        last = time.monotonic()
        agent.handle(*item)
    # End of input: the agent finishes what it can do alone (its output may still be read: `cat | agent`),
    # asking its client nothing more.
    agent.hang_up()
    try:
        for _ in range(10_000):
            if agent.tick(wait=False) != "step":
                break
    except (BrokenPipeError, OSError):
        pass
    return agent.finish()
