"""The bridge between a v1 agent and v2 clients."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from acp_lifecycle.sims.wire.transcript import V1_STOP_REASONS

from . import translate as tr
from .core import CANCELLED, EVIDENCE, WORKING, Bridge, request_key, params_of, session_update, with_message_id
from .translate import say


# ---------------------------------------------------------------------------
# v1 agent -> v2 clients
# ---------------------------------------------------------------------------


@dataclass
class _Held:
    """A v1 session/prompt the bridge forwarded and the v1 agent has not answered."""

    conn: str
    rid: object
    line: int
    sid: object
    prompt: list
    answered: bool = False  # the v2 success response was sent
    inserted: bool = False  # the bridge reported the message inserted
    mid: str | None = None
    span: int = 0  # the foreground span in which it was inserted or rejected


@dataclass
class _Session2:
    conns: list = field(default_factory=list)
    fg: str = "idle"
    turn: list = field(default_factory=list)  # _Held, oldest first
    stops: list = field(default_factory=list)  # (line, stopReason, error) of the prompts the span ended
    cancel_line: int = 0  # a session/cancel while the bridge reported running (v2's rule)
    v1_cancel_line: int = 0  # a session/cancel while a v1 prompt was held (v1's rule)
    idmap: dict = field(default_factory=dict)  # v1 message key -> v2 messageId
    unmatched: list = field(default_factory=list)  # _Held reported whole, whose v1 echo has not come
    echoed: set = field(default_factory=set)  # (conn, messageId) that received an echo of a whole-reported message
    rejected: list = field(default_factory=list)  # _Held forwarded as error before any echo (echo mode)
    tools: dict = field(default_factory=dict)  # tool calls of the current span -> status
    ended_tools: set = field(default_factory=set)
    failed_by_bridge: set = field(default_factory=set)
    prompt_mids: set = field(default_factory=set)  # messageIds the bridge made a prompt's insertion
    finished: set = field(default_factory=set)  # messageIds of prompts the v1 agent has answered
    titles: dict = field(default_factory=dict)  # tool call -> its last title (a v2 permission request needs one)
    closing: list = field(default_factory=list)  # (conn, request) of session/close the bridge answers when the turn ends
    runs: dict = field(default_factory=dict)  # conn -> (kind, ID): the v1 message without messageId under way
    permissions: dict = field(default_factory=dict)  # (conn, id key) -> id: permission requests the v2 clients hold
    span: int = 0  # foreground spans reported so far

    def add_conn(self, conn: str) -> None:
        if conn not in self.conns:
            self.conns.append(conn)


@dataclass
class _Replay:
    """A v1 session/load the bridge runs for a v2 session/resume on one connection."""

    sid: object
    rid: object
    line: int
    forward: bool  # False: the client asked no replay (resume through load): withheld
    seen: set = field(default_factory=set)  # (message type, messageId) replayed so far
    noid: list = field(default_factory=lambda: [None, 0, None])  # [kind of the last id-less chunk, serial, its id]
    withheld: int = 0


#: What the bridge knows of a v1 agent that answered no initialize (a log without the
#: handshake, the model's agent): it is taken to have what the client asks for.
_ASSUMED = {"load": True, "resume": True, "close": True, "list": True}


class V1AgentToV2Client(Bridge):
    """Between a v1 agent and v2 clients.

    ``insertion="echo"`` (the default): the insertion point is the first evidence
    that the v1 agent took the prompt: its ``user_message_chunk`` echo, any other
    output of the turn for that session (``EVIDENCE``: content, tool calls, plans;
    a permission request), or its response. Published agents do not echo, so
    waiting for an echo would answer every prompt at the end of its turn.
    ``"immediate"``: as soon as the bridge forwards the prompt.
    At the insertion point the bridge answers the v2 ``session/prompt`` with
    ``{"messageId"}`` (the echo's ``messageId``, else ``bridge_msg_N``) and
    reports the user message under that ID. ``running`` goes out when the turn
    is under way: the first v1 message of the turn (an echo, content, a tool
    call, a permission request, the response), or at once with immediate
    insertion; a v1 agent that rejects the prompt before any of that started no
    work, and its error response passes alone.

    ``bug`` seeds a bridge bug (``BRIDGE_BUGS``): ``"v2-idle-drop-error"``,
    ``"v2-answer-before-insertion"``.
    """

    to = "v2"
    BUGS = ("v2-idle-drop-error", "v2-answer-before-insertion")
    OPTIONS = {"insertion": ("echo", "immediate")}
    insertion: str

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self._sessions: dict[str, _Session2] = {}
        self._held: dict[tuple, _Held] = {}  # (conn, id key) -> _Held
        self._next = 0
        self._next_echo = 0
        self._cancelled_permissions: set = set()  # (conn, id key) of permission requests the bridge cancelled
        self._caps: dict[str, dict] = {}  # conn -> what the v1 agent supports (its initialize result)
        self._replays: dict[str, _Replay] = {}  # conn -> the session/load under way for a resume

    def _session(self, sid) -> _Session2:
        return self._sessions.setdefault(request_key(sid), _Session2())

    def _new_id(self) -> str:
        self._next += 1
        return f"bridge_msg_{self._next}"

    def _broadcast(self, s: _Session2, sid, update: dict, cause: int | None = None) -> None:
        # One fresh top level per connection; nested values are shared and never mutated.
        for conn in s.conns:
            self.emit(conn, "agent", session_update(sid, dict(update)), cause)

    # -- messages ---------------------------------------------------------------
    def _message(self, conn: str, sender: str, msg: dict) -> None:
        method = msg.get("method")
        if sender == "client":
            if method is None:
                self._client_response(conn, msg)
            else:
                self._client(conn, msg, method)
        elif method is None:
            self._response(conn, msg)
        elif method == "session/update":
            self._agent_update(conn, msg)
        else:
            self._agent_request(conn, msg, method)

    def _agent_request(self, conn: str, msg: dict, method: str) -> None:
        """A request or notification from the v1 agent other than session/update."""
        params = params_of(msg)
        sid = params.get("sessionId")
        if method == "session/request_permission":
            s = self._session(sid)
            if conn not in self._replays:
                self._evidence(s, sid, "a permission request")  # a permission request belongs to the turn
            tool = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
            if "toolCall" not in params and "title" in params:
                new = params  # (the model's v1 agent asks in v2's shape)
            else:
                new, notes = tr.permission_to_v2(params, s.titles.get(tool.get("toolCallId")))
                for note in notes:
                    self.problem("no-v2-equivalent", note)
            if new is None:
                self.reply(conn, "agent", msg, result={"outcome": {"outcome": "cancelled"}})
                return
            sent = self.emit(conn, "agent", msg if new is params else dict(msg, params=new))
            if sent and "id" in msg and s.turn and conn not in self._replays:
                s.permissions[(conn, request_key(msg["id"]))] = msg["id"]  # cancelled if the turn ends unanswered
        elif method in tr.V2_CLIENT_METHODS or method.startswith("_") or method == "$/cancel_request":
            if method == "$/cancel_request":
                self._permission_settled(conn, params.get("requestId"))  # the agent cancels it itself
            self.emit(conn, "agent", msg)
        else:
            self.unbridged(conn, "agent", msg, "v2")

    def _client_response(self, conn: str, msg: dict) -> None:
        """A v2 client's answer to a request of the v1 agent."""
        method = self._asked.get((conn, "agent", request_key(msg.get("id"))))
        cancelled = self._permission_settled(conn, msg.get("id"))
        if method == "session/request_permission" and isinstance(msg.get("result"), dict):
            result, notes = tr.permission_result_to_v1(msg["result"])
            for note in notes:
                self.problem("no-v2-equivalent", note)
            msg = dict(msg, result=result)
        elif method == "session/request_permission" and cancelled and (msg.get("error") or {}).get("code") == CANCELLED:
            # The bridge cancelled it, not the v1 agent, which still waits for v1's answer
            # to a cancelled permission request: the cancelled outcome.
            msg = {"jsonrpc": "2.0", "id": msg.get("id"), "result": {"outcome": {"outcome": "cancelled"}}}
        self.emit(conn, "client", msg)
        self.answered(conn, "agent", msg.get("id"))

    def _permission_settled(self, conn: str, rid) -> bool:
        """A permission request answered (or cancelled by the agent): no longer pending.
        True when the bridge had cancelled it."""
        k = (conn, request_key(rid))
        for s in self._sessions.values():
            s.permissions.pop(k, None)
        if k in self._cancelled_permissions:
            self._cancelled_permissions.discard(k)
            return True
        return False

    def _cancel_permissions(self, s: _Session2) -> None:
        """The v1 turn ended while v2 clients still hold its permission requests: cancel
        them (2.4.0: the Agent "SHOULD cancel each of them with `$/cancel_request`"; a v1
        agent that ends its turn stops waiting for them)."""
        for (conn, k), rid in s.permissions.items():
            self._cancelled_permissions.add((conn, k))
            self.emit(conn, "agent", {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}})
        s.permissions = {}

    def _agent_caps(self, conn: str) -> dict:
        return self._caps.get(conn) or next(iter(self._caps.values()), _ASSUMED)

    def _route(self, conn: str, msg: dict, method: str, params: dict, asked: str | None = None) -> None:
        """Send the client's request to the v1 agent as ``method`` with ``params``; its answer
        comes back through ``_routed``."""
        self._routes[(conn, request_key(msg["id"]))] = (asked or msg["method"], method)
        self.emit(conn, "client", dict(msg, method=method, params=params))

    def _client(self, conn: str, msg: dict, method) -> None:
        params = params_of(msg)
        sid = params.get("sessionId")
        s = self._session(sid) if sid is not None else None
        if s is not None:
            s.add_conn(conn)
        if method != "session/prompt" and self._session_method(conn, msg, method, params, s):
            return
        if method == "session/prompt":
            self.emit(conn, "client", msg)
            prompt = params["prompt"]
            if not isinstance(prompt, list):
                raise TypeError("session/prompt params.prompt is not an array")
            held = _Held(conn, msg["id"], self._line, sid, prompt)
            self._held[(conn, request_key(msg["id"]))] = held
            s.turn.append(held)
            if self.insertion == "immediate":
                self._started(s, sid)
                self._insert(held, s, whole=True)
            elif self.bug == "v2-answer-before-insertion":
                # Bug: the success response at receipt, before the echo that is the insertion point.
                held.mid = self._new_id()
                self._respond(held)
            return
        if method == "$/cancel_request":
            held = self._held.get((conn, request_key(params.get("requestId"))))
            if held is not None and held.answered:
                # The v2 prompt was answered at insertion: "Receivers MUST ignore this
                # notification for an unknown or already-answered request ID"; in v1 it
                # would cancel the turn, so it is not forwarded.
                self.absorb()
                return
        if method == "session/cancel" and s is not None:
            if s.fg in WORKING:
                s.cancel_line = self._line
            if s.turn and not s.v1_cancel_line:
                s.v1_cancel_line = self._line
        self.emit(conn, "client", msg)

    def _session_method(self, conn: str, msg: dict, method: str, params: dict, s) -> bool:
        """The handshake and session methods of a v2 client; True when handled."""
        request = "id" in msg
        if method == "initialize" and request:
            version = params.get("protocolVersion")
            if not isinstance(version, int) or isinstance(version, bool) or version < tr.V2_PROTOCOL:
                # "If no such version exists, initialization fails with error code -32022."
                self.reply(conn, "client", msg, error={
                    "code": -32022, "message": "Unsupported protocol version",
                    "data": {"requested": version, "supported": [tr.V2_PROTOCOL]}})
                return True
            new, notes = tr.init_request_to_v1(params)
            self._notes(notes)
            self._route(conn, msg, method, new)
            return True
        if method == "session/new" and request:
            new, notes = tr.session_request_to_v1(params, method)
            self._notes(notes)
            self._route(conn, msg, method, new)
            return True
        if method == "session/resume" and request:
            self._resume(conn, msg, params)
            return True
        if method == "session/close" and request and not self._agent_caps(conn)["close"]:
            self.problem(
                "close-emulated",
                "the v1 agent lacks session/close: the bridge cancels the session's work and answers session/close "
                "itself once the turn has ended; the v1 agent keeps the session",
            )
            if s is not None and s.turn:
                self.emit(conn, "client", {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": params.get("sessionId")}})
                if not s.v1_cancel_line:
                    s.v1_cancel_line = self._line
                if s.fg in WORKING:
                    s.cancel_line = self._line
                s.closing.append((conn, msg))
            else:
                self.reply(conn, "client", msg)
            return True
        if method == "session/set_config_option" and request:
            new, notes = tr.set_config_to_v1(params)
            if new is None:
                self.problem("no-v2-equivalent", notes[0] + "; the bridge answered -32602")
                self.reply(conn, "client", msg, error={"code": -32602, "message": "Invalid params", "data": {"type": params.get("type")}})
            else:
                self._route(conn, msg, method, new)
            return True
        if method in tr.RENAMED:
            if request:
                self._route(conn, msg, tr.RENAMED[method], params)
            else:
                self.emit(conn, "client", dict(msg, method=tr.RENAMED[method]))
            return True
        if method not in tr.V1_AGENT_METHODS and not method.startswith("_") and method != "$/cancel_request":
            self.unbridged(conn, "client", msg, "v1")
            return True
        return False

    def _notes(self, notes, kind: str = "no-v2-equivalent") -> None:
        for note in notes:
            self.problem(kind, note)

    def _resume(self, conn: str, msg: dict, params: dict) -> None:
        """v2's session/resume: v1's session/resume (no replay) or session/load (replay)."""
        caps = self._agent_caps(conn)
        replay = params.get("replayFrom")
        sid = params.get("sessionId")
        if replay is not None and not (isinstance(replay, dict) and replay.get("type") == "start"):
            # "Agents MUST reject unsupported cursor types or malformed cursor values with -32602"
            self.reply(conn, "client", msg, error={"code": -32602, "message": "Invalid params", "data": {"replayFrom": replay}})
            return
        if replay is not None and not caps["load"]:
            self.problem("no-replay", "a resume with replay, and the v1 agent cannot load a session (no loadSession): refused with -32602")
            self.reply(conn, "client", msg, error={
                "code": -32602, "message": "Invalid params: the agent cannot replay this session", "data": {"replayFrom": replay}})
            return
        if replay is None and (caps["resume"] or not caps["load"]):
            new, notes = tr.session_request_to_v1(params, "session/resume")
            self._notes(notes)
            self._replays[conn] = _Replay(sid, msg["id"], self._line, forward=False)
            self._route(conn, msg, "session/resume", new)
            return
        if replay is None:
            self.problem(
                "resume-through-load",
                "a resume without replay, and the v1 agent can only load the session (no session/resume): the bridge "
                "loads it and withholds the replayed updates",
            )
        new, notes = tr.session_request_to_v1(params, "session/load")
        self._notes(notes)
        self._replays[conn] = _Replay(sid, msg["id"], self._line, forward=replay is not None)
        self._route(conn, msg, "session/load", new, asked="session/resume")

    def _started(self, s: _Session2, sid) -> None:
        """The v1 turn shows it is under way: report running (once per span).

        Not at the prompt itself: a v1 agent that rejects the prompt before doing
        anything started no work, and v2 reports a rejection only as the error
        response ("Rejected before the user message is inserted: JSON-RPC error
        response to session/prompt").
        """
        if s.fg == "idle" and s.turn:
            s.fg, s.stops, s.cancel_line, s.tools = "running", [], 0, {}
            s.span += 1
            # What a span two spans back left can no longer be matched (an echo comes in
            # its turn, or right after its response): forget it, so memory stays flat.
            s.unmatched = [h for h in s.unmatched if h.span >= s.span - 1]
            s.rejected = [h for h in s.rejected if h.span >= s.span - 1]
            self._broadcast(s, sid, {"sessionUpdate": "state_update", "state": "running"})

    def _evidence(self, s: _Session2, sid, what: str) -> None:
        """An update or request of the v1 agent for this session that only the turn's work
        sends (``EVIDENCE``), after a prompt was forwarded: the turn is under way, and with
        ``echo`` insertion it is the first evidence that the agent took the oldest prompt
        awaiting insertion, unless a prompt already inserted is still held: v1 runs one turn
        at a time, so the update is that prompt's (an agent that queues a second prompt
        streams the first one's reply meanwhile)."""
        self._started(s, sid)
        if self.insertion != "echo" or any(h.inserted for h in s.turn):
            return
        waiting = [h for h in s.turn if not h.inserted]
        if not waiting:
            return
        held = waiting[0]
        if len(waiting) > 1:
            lines = ", ".join(str(h.line) for h in waiting)
            self.problem(
                "ambiguous-echo",
                f"{what}, the first evidence of insertion, while {len(waiting)} prompts (lines {lines}) await one: "
                f"v1 has no per-submission token, so the bridge takes the oldest (line {held.line})",
            )
        # The insertion point: the agent took the prompt; v1 agents do not echo it, so the
        # bridge reports the user message whole (a later echo replaces that report).
        self._insert(held, s, whole=True)

    def _respond(self, held: _Held) -> None:
        held.answered = True
        self.emit(held.conn, "agent", {"jsonrpc": "2.0", "id": held.rid, "result": {"messageId": held.mid}})

    def _insert(self, held: _Held, s: _Session2, whole: bool, mid: str | None = None) -> None:
        """The insertion point: the v2 success response, and (whole) the user message."""
        held.inserted = True
        held.span = s.span
        if held.mid is None:
            held.mid = mid if isinstance(mid, str) else self._new_id()
        s.prompt_mids.add(held.mid)
        if not held.answered:
            self._respond(held)
        if whole:
            s.unmatched.append(held)
            self._broadcast(
                s, held.sid,
                {"sessionUpdate": "user_message", "messageId": held.mid, "content": copy.deepcopy(held.prompt)},
            )

    def _response(self, conn: str, msg: dict) -> None:
        held = self._held.pop((conn, request_key(msg["id"])), None)
        if held is None:
            self._routed(conn, msg)
            return
        s = self._session(held.sid)
        if "error" not in msg:
            self._started(s, held.sid)
        if held in s.turn:
            s.turn.remove(held)
        if "error" in msg:
            self._prompt_error(held, s, msg)
        else:
            self._prompt_result(held, s, msg)
        if held.mid is not None:
            s.finished.add(held.mid)
        self.answered(conn, "client", msg["id"])
        s.runs.clear()  # the turn ended: the next chunk starts a new message
        if not s.turn:
            self._cancel_permissions(s)
            s.v1_cancel_line = 0
            for c, request in s.closing:
                # session/close "behaves as session/cancel" (its idle went out above), then answers
                self.reply(c, "client", request)
            s.closing = []

    def _routed(self, conn: str, msg: dict) -> None:
        """The v1 agent's answer to a client request other than a prompt, in v2's shape."""
        asked, sent = self._routes.pop((conn, request_key(msg["id"])), (None, None))
        result = msg.get("result")
        if asked == "session/resume":
            replay = self._replays.pop(conn, None)
            if replay is not None and replay.withheld:
                self.absorb()
        if "result" in msg and isinstance(result, dict):
            notes: list = []
            if asked == "initialize":
                result, notes, caps = tr.init_response_to_v2(result)
                self._caps[conn] = caps
            elif asked in ("session/new", "session/resume"):
                result, notes = tr.session_result_to_v2(result)
                sid = result.get("sessionId") if asked == "session/new" else (replay.sid if replay else None)
                if sid is not None:
                    s = self._session(sid)
                    s.add_conn(conn)
                    if asked == "session/resume":
                        # 2.4.0: "The agent MUST send a current state_update after any requested
                        # history replay and before this response, even without replay."
                        self.emit(conn, "agent", session_update(sid, {"sessionUpdate": "state_update", "state": "idle" if s.fg == "idle" else "running"}))
            elif asked == "session/set_config_option" and isinstance(result.get("configOptions"), list):
                options, notes = tr.config_options_to_v2(result["configOptions"])
                result = dict(result, configOptions=options)
            self._notes(notes)
            msg = dict(msg, result=result)
        self.emit(conn, "agent", msg)
        self.answered(conn, "client", msg["id"])

    def _prompt_result(self, held: _Held, s: _Session2, msg: dict) -> None:
        result = msg["result"]
        if not isinstance(result, dict):
            raise TypeError("the session/prompt result is not an object")
        reason = result.get("stopReason")
        if not held.inserted:
            # The v1 response proves the v1 agent took the prompt: report it inserted
            # now, since no echo came ("the agent MUST report each inserted user message").
            self._insert(held, s, whole=True)
        if reason not in V1_STOP_REASONS:
            note = " (DeepSeek-Reasonix#8241: the error's code and message are lost)" if reason == "error" else ""
            said = "without a stopReason" if reason is None else f"with stopReason {say(reason)}, not a v1 value"
            self.problem("v1-agent-not-v1", f"the v1 agent answered {said}{note}; passed on unchanged")
        if s.v1_cancel_line and reason != "cancelled":
            self.problem(
                "v1-cancel-not-cancelled",
                f"the v1 agent answered stopReason {say(reason)} after session/cancel (line {s.v1_cancel_line}): a "
                "cancelled v1 turn answers cancelled, unless it ended before the agent saw the cancel; the v2 idle "
                f"carries {say(reason)}, which breaks v2's cancellation rule if v2 saw the cancel while running",
            )
        s.stops.append((self._line, reason, None))
        if not s.turn:
            extra = {"usage": copy.deepcopy(result["usage"])} if "usage" in result else {}
            self._end(s, held.sid, reason, None, extra)

    def _prompt_error(self, held: _Held, s: _Session2, msg: dict) -> None:
        err = msg["error"]
        reason = "cancelled" if err.get("code") == CANCELLED else "error"
        if held.answered:
            # "maps an error response that arrives after the bridge reported the message
            # inserted to an idle state_update with the error stop reason and the same error object"
            if s.v1_cancel_line and reason != "cancelled":
                if s.cancel_line:
                    # v2's rule wins: "Work is cancelled, even if aborting raises errors:
                    # Idle state_update with stopReason: cancelled"
                    reason = "cancelled"
                    how = "the v2 idle says cancelled, and the error object cannot ride on it"
                else:
                    how = "the v2 idle carries the error (v2 saw no running work to cancel)"
                self.problem(
                    "v1-cancel-not-cancelled",
                    f"the v1 agent answered an error (code {err.get('code')}) after session/cancel (line "
                    f"{s.v1_cancel_line}): either it rejected the prompt before its turn began or it broke v1's rule "
                    f"that a cancelled turn answers cancelled, and v1's error response cannot say which; {how}",
                )
            s.stops.append((self._line, reason, err))
            if s.turn:
                self.problem(
                    "failure-while-work-continues",
                    f"the v1 prompt on line {held.line} failed (code {err.get('code')}) while another prompt keeps "
                    "the turn open: v2 can report it only on the idle that ends all foreground work",
                )
            else:
                self._end(s, held.sid, reason, err if reason == "error" else None, failed=True)
            return
        # Before the insertion point: the v2 error response ("A request rejected
        # before insertion uses a JSON-RPC error response instead").
        self.emit(held.conn, "agent", msg)
        if self.insertion == "echo":
            held.span = s.span
            s.rejected.append(held)
        if not s.turn and s.fg in WORKING:
            # The running the bridge reported must end. If prompts of this span were
            # answered, their outcome ends it (this one was never inserted); else the
            # work that ran before the rejection failed, or, after a session/cancel,
            # was cancelled ("Work is cancelled, even if aborting raises errors").
            if s.stops:
                _, reason, err = s.stops[-1]
                self._end(s, held.sid, reason, err if reason == "error" else None)
                return
            if s.cancel_line:
                reason = "cancelled"
            s.stops.append((self._line, reason, err))
            self._end(s, held.sid, reason, err if reason == "error" else None, failed=True)

    def _end(self, s: _Session2, sid, reason, err, extra: dict | None = None, failed: bool = False) -> None:
        """End the bridge's foreground span with an idle (``failed``: a v1 error response ended it)."""
        self._cancel_permissions(s)
        if failed:
            # "Before sending it, the Agent SHOULD give each tool call that the failed
            # work left unfinished a terminal status, using failed" -- a v1 agent that
            # answers with an error may report its tools after the response, which v2
            # would see after the idle.
            for tid, status in list(s.tools.items()):
                if status not in ("completed", "failed"):
                    s.tools[tid] = "failed"
                    s.failed_by_bridge.add(tid)
                    self._broadcast(s, sid, {"sessionUpdate": "tool_call_update", "toolCallId": tid, "status": "failed"})
        distinct = {(r, request_key(e)) for _, r, e in s.stops}
        if len(distinct) > 1:
            ends = ", ".join(f"line {n}: {r}" for n, r, _ in s.stops)
            self.problem("several-stop-reasons", f"overlapping v1 turns ended differently ({ends}); the v2 idle carries the last")
        # Kept for the late updates of this span's tool calls only (memory stays flat).
        s.ended_tools = set(s.tools)
        s.failed_by_bridge &= s.ended_tools
        s.tools, s.titles = {}, {}
        update = {"sessionUpdate": "state_update", "state": "idle"}
        if reason is not None:
            update["stopReason"] = reason
        if reason == "error" and err is not None and self.bug != "v2-idle-drop-error":
            update["error"] = copy.deepcopy(err)
        update.update(extra or {})
        self._broadcast(s, sid, update)
        s.fg, s.stops, s.cancel_line = "idle", [], 0

    def _agent_update(self, conn: str, msg: dict) -> None:
        params = params_of(msg)
        sid = params.get("sessionId")
        update = params["update"]
        kind = update["sessionUpdate"]
        s = self._session(sid)
        replay = self._replays.get(conn)
        if replay is not None and request_key(replay.sid) == request_key(sid):
            self._replayed(conn, replay, s, msg, update)
            return
        s.add_conn(conn)
        if kind in ("user_message_chunk", "user_message"):
            key = update.get("messageId")
            if kind == "user_message_chunk" and key is None:
                key = self._run(s, conn, kind, self._echo_key)
            else:
                s.runs.pop(conn, None)  # a user message ends the agent's message under way
            self._echo(conn, sid, s, msg, update, key)
            return
        if kind == "state_update":
            self.problem("v1-agent-not-v1", "a state_update from the v1 agent: v1 has none, and the bridge reports state itself; not forwarded")
            return
        if kind in ("tool_call", "tool_call_update"):
            tid = update.get("toolCallId")
            if tid in s.ended_tools and tid not in s.tools:
                if tid in s.failed_by_bridge and update.get("status") == "failed" and set(update) <= {"sessionUpdate", "toolCallId", "status"}:
                    self.absorb()  # repeats the failed status the bridge already sent
                    return
                self.problem(
                    "update-after-idle",
                    f"{kind} for {say(tid)}, a tool call of work the bridge already reported idle; "
                    "v2: the idle follows all updates for the work that ended; not forwarded",
                )
                return
        if kind in EVIDENCE:
            self._evidence(s, sid, f"a {kind}")  # (first: a new span starts with no tool calls)
        if kind in ("tool_call", "tool_call_update"):
            tid = update.get("toolCallId")
            s.tools[tid] = update.get("status", s.tools.get(tid, "pending"))
            if isinstance(update.get("title"), str):
                s.titles[tid] = update["title"]
            if kind == "tool_call":
                s.runs.pop(conn, None)  # a new tool call: the text after it is a new message
        if kind in ("agent_message_chunk", "agent_thought_chunk") and update.get("messageId") is None:
            # v2 requires messageId on chunks: one ID per agent message (see _run).
            new_update = with_message_id(update, self._run(s, conn, kind, self._new_id))
            self.emit(conn, "agent", dict(msg, params=dict(msg["params"], update=new_update)))
            return
        self._forward_update(conn, msg, update)

    def _echo_key(self) -> tuple:
        self._next_echo += 1
        return ("noid", self._next_echo)

    @staticmethod
    def _run(s: _Session2, conn: str, kind: str, make):
        """The ID of the v1 message without ``messageId`` that a chunk of ``kind`` belongs to.

        v1 chunks carry no message boundary; a message is the chunks of one kind that
        follow each other on the connection. It ends with the turn (the v1 response), a
        user message, a chunk of another kind (an agent message after a thought, ...) or a
        new tool call, after which v1 clients show the text as a new message. Session
        metadata (commands, modes, usage, session info), notices, plans and updates of
        existing tool calls do not end it: they are not part of the conversation's text.
        """
        run = s.runs.get(conn)
        if run is not None and run[0] == kind:
            return run[1]
        mid = make()
        s.runs[conn] = (kind, mid)
        return mid

    def _forward_update(self, conn: str, msg: dict, update: dict) -> None:
        """An update other than a message: in v2's shape, or a problem."""
        new, notes = tr.update_to_v2(update)
        self._notes(notes)
        if new is update:
            self.emit(conn, "agent", msg)
        elif new is not None:
            self.emit(conn, "agent", dict(msg, params=dict(msg["params"], update=new)))

    def _replayed(self, conn: str, replay: _Replay, s: _Session2, msg: dict, update: dict) -> None:
        """An update of the v1 agent's session/load replay, for the resuming v2 client."""
        kind = update["sessionUpdate"]
        if not replay.forward:
            replay.withheld += 1
            self.absorb()  # the client asked no replay (problem resume-through-load)
            return
        if kind == "state_update":
            self.problem("v1-agent-not-v1", "a state_update from the v1 agent: v1 has none, and the bridge reports state itself; not forwarded")
            return
        base = kind[: -len("_chunk")] if kind.endswith("_chunk") else kind
        if base not in ("user_message", "agent_message", "agent_thought"):
            if kind == "tool_call":
                replay.noid[0] = None  # as live (_run): the text after a new tool call is a new message
            self._forward_update(conn, msg, update)
            return
        mid = update.get("messageId")
        if mid is None:
            noid = replay.noid
            if noid[0] != kind:
                noid[:] = [kind, noid[1] + 1, self._new_id()]
                self.problem(
                    "replay-message-id",
                    f"a replayed {base.replace('_', ' ')} without messageId: the bridge cannot tell which message it "
                    "was, so it gets a fresh ID and v2 clients may show it twice",
                )
            mid = noid[2]
        else:
            replay.noid[0] = None
            mid = s.idmap.get(mid, mid) if base == "user_message" else mid
        new = with_message_id(update, mid)
        if (base, mid) not in replay.seen and kind != base:  # (each message type has its own ID space)
            # "When replay reconstructs a user message from its beginning using chunks, the
            # agent MUST first send a user_message update with content: []" (and so for agent
            # messages and thoughts: the client may hold the message from the live session).
            self.emit(conn, "agent", session_update(params_of(msg).get("sessionId"), {"sessionUpdate": base, "messageId": mid, "content": []}))
        replay.seen.add((base, mid))
        self.emit(conn, "agent", dict(msg, params=dict(msg["params"], update=new)))

    def _echo(self, conn: str, sid, s: _Session2, msg: dict, update: dict, key) -> None:
        """A v1 user-message update: the echo that may be the insertion point."""
        held = None
        if key in s.idmap:
            mid = s.idmap[key]
        else:
            candidates = sorted([h for h in s.turn if not h.inserted] + s.unmatched, key=lambda h: h.line)
            if candidates:
                held = candidates[0]
                if len(candidates) > 1:
                    lines = ", ".join(str(h.line) for h in candidates)
                    self.problem(
                        "ambiguous-echo",
                        f"an echo while {len(candidates)} prompts (lines {lines}) await one: v1 has no per-submission "
                        f"token, so the bridge takes the oldest (line {held.line})",
                    )
                if held in s.unmatched:
                    s.unmatched.remove(held)
                mid = None
            else:
                if s.rejected:
                    rejected = s.rejected.pop(0)
                    self.problem(
                        "echo-after-error",
                        f"a v1 echo after the bridge forwarded the error for the prompt on line {rejected.line} as a "
                        "rejection: the v1 agent may have inserted that prompt before failing, and v2 clients were "
                        "told it was not inserted",
                    )
                mid = key if isinstance(key, str) else self._new_id()
        # A late echo of a prompt already answered is no sign of a new turn.
        if not (held is not None and held not in s.turn or held is None and mid in s.finished):
            self._started(s, sid)
        if held is not None:
            if not held.inserted:
                # The insertion point: "use an underlying agent's user-message echo ...
                # as evidence of insertion and respond with the message's ID"
                self._insert(held, s, whole=False, mid=key if isinstance(key, str) else None)
            mid = held.mid
        s.idmap[key] = mid
        new_update = with_message_id(update, mid)
        new = dict(msg, params=dict(msg["params"], update=new_update))
        first = (conn, mid) not in s.echoed
        s.echoed.add((conn, mid))
        if new_update["sessionUpdate"] == "user_message_chunk" and first and mid in s.prompt_mids:
            # The first echo of a prompt's message on a connection becomes the whole
            # message: it replaces the bridge's own report (immediate) rather than
            # appending to it, and keeps the RFD's user_message shape.
            new_update["sessionUpdate"] = "user_message"
            new_update["content"] = [new_update["content"]]
        self.emit(conn, "agent", new)

    def _closed(self, conn: str) -> None:
        for k in [k for k in self._held if k[0] == conn]:
            held = self._held.pop(k)
            s = self._session(held.sid)
            if held in s.turn:
                s.turn.remove(held)
        for s in self._sessions.values():
            if conn in s.conns:
                s.conns.remove(conn)
            s.closing = [(c, r) for c, r in s.closing if c != conn]
            s.runs.pop(conn, None)
            s.permissions = {k: v for k, v in s.permissions.items() if k[0] != conn}
        self._cancelled_permissions = {k for k in self._cancelled_permissions if k[0] != conn}
        self._replays.pop(conn, None)
