"""The bridge between a v2 agent and a v1 client."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field

from acp_lifecycle.sims.wire.transcript import V1_STOP_REASONS

from . import translate as tr
from .core import CHUNK_OF, INTERNAL_ERROR, WORKING, Bridge, request_key, params_of, session_update

WHOLE_OF = {chunk: whole for whole, chunk in CHUNK_OF.items()}

from .translate import a, say


def _digest(blocks, into=None):
    """A running digest of content blocks (``into``: the digest so far): the bridge compares a
    whole message with what the v1 client holds without keeping the conversation's text."""
    h = into if into is not None else hashlib.sha256()
    for block in blocks:
        h.update(json.dumps(block, sort_keys=True, separators=(",", ":")).encode() + b"\n")
    return h


# ---------------------------------------------------------------------------
# v2 agent -> v1 client
# ---------------------------------------------------------------------------


@dataclass
class _Open:
    """A v1 session/prompt the bridge holds open."""

    rid: object
    line: int
    mid: str | None = None  # from the v2 {messageId} result (swallowed)
    resp_line: int = 0


@dataclass
class _Conn1:
    """One v1 client's connection, for one session: everything is per connection."""

    fg: str = "idle"
    idles: list = field(default_factory=list)  # (line, update) of every idle that ended work
    used: set = field(default_factory=set)  # idle lines that answered a prompt or were reported
    evidence: dict = field(default_factory=dict)  # messageId -> len(idles) when first reported inserted
    held: list = field(default_factory=list)  # _Open, oldest first
    content: dict = field(default_factory=dict)  # (kind, messageId) -> a digest of the content the v1 client holds for it
    answered: dict = field(default_factory=dict)  # messageId -> line of the v1 prompt the bridge answered
    tools: dict = field(default_factory=dict)  # tool call -> the content the v1 client holds for it
    setup: str = ""  # "session/load" or "session/resume" while one is under way (replay, the state snapshot)
    sid: object = None


class V2AgentToV1Client(Bridge):
    """Between a v2 agent and a v1 client.

    Holds the v1 ``session/prompt`` open (swallowing the v2 ``{messageId}``
    result and remembering the association) until the idle ``state_update`` that
    ends the work, which becomes the v1 response. Which idle: state_update is
    session-scoped, so the bridge takes the first idle that ends work after the
    agent reported the message inserted (its result, or a user-message update
    with its ID, whichever came first); when that report came only after an
    idle, it says so (``insertion-after-idle``) and, at the end of the input,
    answers with the last idle.

    ``background="forward"`` (default) passes updates that arrive with no v1
    prompt open to the v1 client (v1's wire allows them; clients differ) and
    reports them; ``"drop"`` reports and drops them.

    ``bug`` seeds a bridge bug (``BRIDGE_BUGS``): ``"v1-error-stop-reason"``,
    ``"v1-drop-error-code"``.
    """

    to = "v1"
    BUGS = ("v1-error-stop-reason", "v1-drop-error-code")
    OPTIONS = {"background": ("forward", "drop")}
    background: str

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self._conns: dict[tuple, _Conn1] = {}
        self._open: dict[tuple, tuple] = {}  # (conn, id key) -> (_Conn1, _Open)
        self._serial = 0

    def _c(self, conn: str, sid) -> _Conn1:
        return self._conns.setdefault((conn, request_key(sid)), _Conn1(sid=sid))

    def _message(self, conn: str, sender: str, msg: dict) -> None:
        method = msg.get("method")
        if sender == "client":
            if method is None:
                self.emit(conn, "client", msg)  # v1's permission outcomes are v2's
                self.answered(conn, "agent", msg.get("id"))
            else:
                self._client(conn, msg, method)
        elif method is None:
            self._response(conn, msg)
        elif method == "session/update":
            self._agent_update(conn, msg)
        elif method == "session/request_permission":
            self._serial += 1
            new, notes = tr.permission_to_v1(params_of(msg), self._serial)
            self._notes(notes)
            self.emit(conn, "agent", dict(msg, params=new))
        elif method in tr.V1_CLIENT_METHODS or method.startswith("_") or method == "$/cancel_request":
            self.emit(conn, "agent", msg)
        else:
            self.unbridged(conn, "agent", msg, "v1")

    def _notes(self, notes) -> None:
        for note in notes:
            self.problem("no-v1-equivalent", note)

    def _route(self, conn: str, msg: dict, method: str, params: dict, sid=None) -> None:
        self._routes[(conn, request_key(msg["id"]))] = (msg["method"], sid)
        self.emit(conn, "client", dict(msg, method=method, params=params))

    def _client(self, conn: str, msg: dict, method) -> None:
        params = params_of(msg)
        request = "id" in msg
        if method == "initialize" and request:
            new, notes = tr.init_request_to_v2(params)
            self._notes(notes)
            self._route(conn, msg, method, new)
            return
        if method == "session/new" and request:
            new, notes = tr.session_request_to_v2(params)
            self._notes(notes)
            self._route(conn, msg, method, new)
            return
        if method in ("session/load", "session/resume") and request:
            # v1's session/load is v2's session/resume with replay from the start.
            new, notes = tr.session_request_to_v2(params)
            self._notes(notes)
            if method == "session/load":
                new["replayFrom"] = {"type": "start"}
            sid = params.get("sessionId")
            c = self._c(conn, sid)
            c.setup = method
            if method == "session/load":
                c.content, c.tools = {}, {}  # the v1 client rebuilds the conversation from the replay
            self._route(conn, msg, "session/resume", new, sid)
            return
        if method == "$/cancel_request":
            found = self._open.get((conn, request_key(params.get("requestId"))))
            if found is not None and found[1].mid is not None:
                # v1: cancelling the prompt request cancels its turn. v2: the prompt was
                # inserted, its request is answered, "the work is stopped with session/cancel".
                self.emit(conn, "client", {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": found[0].sid}})
                return
        if method == "session/set_config_option" and request:
            new, notes = tr.set_config_to_v2(params)
            self._route(conn, msg, method, new)
            return
        if method in tr.RENAMED_V1:
            if request:
                self._route(conn, msg, tr.RENAMED_V1[method], params)
            else:
                self.emit(conn, "client", dict(msg, method=tr.RENAMED_V1[method]))
            return
        if method not in tr.V2_AGENT_METHODS and not method.startswith("_") and method != "$/cancel_request":
            self.unbridged(conn, "client", msg, "v2")
            return
        if method == "session/prompt":
            c = self._c(conn, params.get("sessionId"))
            if c.held:
                lines = ", ".join(str(o.line) for o in c.held)
                self.problem(
                    "several-prompts",
                    f"a second v1 prompt while the one on line {lines} is held open: v1 allows one turn at a time, "
                    "and idles cannot be attributed to prompts; forwarded",
                )
            o = _Open(msg["id"], self._line)
            c.held.append(o)
            self._open[(conn, request_key(msg["id"]))] = (c, o)
            self.emit(conn, "client", msg)
            return
        self.emit(conn, "client", msg)

    def _response(self, conn: str, msg: dict) -> None:
        found = self._open.get((conn, request_key(msg["id"])))
        if found is None:
            self._routed(conn, msg)
            return
        c, o = found
        if o.mid is not None:
            self.emit(conn, "agent", msg)  # a second response: not the bridge's to hide
            return
        if "error" in msg:
            # Rejected before insertion: the same error response in v1.
            del self._open[(conn, request_key(msg["id"]))]
            c.held.remove(o)
            self.emit(conn, "agent", msg)
            return
        result = msg["result"]
        mid = result.get("messageId") if isinstance(result, dict) else None
        if not isinstance(mid, str):
            said = "no messageId" if mid is None else f"messageId {say(mid)}, not a string"
            self.problem("malformed", f"the v2 session/prompt result has {said}; taken as inserted")
            mid = f"?{o.line}"
        # Swallowed: v1's result has no messageId; the bridge keeps the association.
        o.mid, o.resp_line = mid, self._line
        idx = c.evidence.setdefault(mid, len(c.idles))
        earlier = [n for n, _ in c.idles[:idx] if n > o.line]
        if earlier:
            self.problem(
                "insertion-after-idle",
                f"the agent reported this prompt inserted only after the idle on line {earlier[-1]}, which may have "
                "ended its work: state_update is session-scoped; the bridge answers from the first idle after "
                "the report (if none comes by the end of the input, from that earlier idle)",
            )
        if idx < len(c.idles):
            self._complete(conn, c, o, *c.idles[idx])

    def _routed(self, conn: str, msg: dict) -> None:
        """The v2 agent's answer to a client request other than a prompt, in v1's shape."""
        asked, sid = self._routes.pop((conn, request_key(msg["id"])), (None, None))
        result = msg.get("result")
        commands = None
        if asked in ("session/load", "session/resume"):
            self._c(conn, sid).setup = ""
        if "result" in msg and isinstance(result, dict):
            notes: list = []
            if asked == "initialize":
                result, notes = tr.init_response_to_v1(result)
            elif asked in ("session/new", "session/load", "session/resume"):
                result, notes, commands = tr.session_result_to_v1(result)
                if asked == "session/new":
                    sid = result.get("sessionId")
            elif asked == "session/set_config_option" and isinstance(result.get("configOptions"), list):
                options, notes = tr.config_options_to_v1(result["configOptions"])
                result = dict(result, configOptions=options)
            self._notes(notes)
            msg = dict(msg, result=result)
        self.emit(conn, "agent", msg)
        self.answered(conn, "client", msg["id"])
        if commands:
            # v1 has the session's commands only as an update: sent right after the session is there.
            self.emit(conn, "agent", session_update(sid, {"sessionUpdate": "available_commands_update", "availableCommands": commands}))

    def _complete(self, conn: str, c: _Conn1, o: _Open, line: int, update: dict) -> None:
        """Answer the held v1 prompt from the idle on ``line``."""
        c.held.remove(o)
        del self._open[(conn, request_key(o.rid))]
        c.used.add(line)
        c.answered[o.mid] = o.line
        reason = update.get("stopReason")
        if reason == "error" and self.bug != "v1-error-stop-reason":
            err = update.get("error")
            if self.bug == "v1-drop-error-code":
                err = dict(INTERNAL_ERROR)
            elif err is None:
                # "using -32603 (internal error) when error is absent"
                err = dict(INTERNAL_ERROR)
            elif not (isinstance(err, dict) and isinstance(err.get("code"), int) and isinstance(err.get("message"), str)):
                self.problem("malformed", f"the idle's error {say(err)} is not a JSON-RPC error object; answered -32603", line)
                err = dict(INTERNAL_ERROR, data={"error": err})
            else:
                err = copy.deepcopy(err)
            self.emit(conn, "agent", {"jsonrpc": "2.0", "id": o.rid, "error": err}, cause=line)
            self.answered(conn, "client", o.rid)
            return
        if reason not in V1_STOP_REASONS and not (reason == "error" and self.bug == "v1-error-stop-reason"):
            if reason is None:
                self.problem("missing-stop-reason", "an idle that ends work without a stopReason: v1 requires one; answered end_turn", line)
            else:
                self.problem("custom-stop-reason", f"stopReason {say(reason)} has no v1 value (v1 has five); answered end_turn", line)
            reason = "end_turn"
        result = {"stopReason": reason}
        if "usage" in update:
            result["usage"] = copy.deepcopy(update["usage"])
        self.emit(conn, "agent", {"jsonrpc": "2.0", "id": o.rid, "result": result}, cause=line)
        self.answered(conn, "client", o.rid)

    def _agent_update(self, conn: str, msg: dict) -> None:
        params = params_of(msg)
        sid = params.get("sessionId")
        update = params["update"]
        kind = update["sessionUpdate"]
        c = self._c(conn, sid)
        if c.setup:
            self._replayed(conn, c, msg, update, kind)
            return
        if kind == "state_update":
            self._state(conn, c, update)
            return
        if kind in ("user_message", "user_message_chunk"):
            mid = update.get("messageId")
            if isinstance(mid, str):
                c.evidence.setdefault(mid, len(c.idles))
        if not c.held:
            action = "forwarded outside any v1 turn" if self.background == "forward" else "not forwarded"
            mid = update.get("messageId")
            if kind in ("user_message", "user_message_chunk") and mid in c.answered:
                self.problem(
                    "echo-after-turn",
                    f"the {kind} for {say(mid)}, the message of the v1 prompt on line {c.answered[mid]}, after the "
                    f"idle that answered that prompt: v1 reports a prompt's updates before its response; {action}",
                )
            else:
                where = "while idle (background work)" if c.fg == "idle" else "during work no v1 prompt on this connection started"
                self.problem("background-update", f"{a(kind)} update {where}: v1 reports updates inside a prompt turn; {action}")
            if self.background == "drop":
                return
        self._forward_update(conn, c, msg, update, kind)

    def _forward_update(self, conn: str, c: _Conn1, msg: dict, update: dict, kind: str) -> None:
        if kind in CHUNK_OF:
            self._whole(conn, c, msg, update, kind)
            return
        if kind in CHUNK_OF.values():
            if "messageId" in update:
                # each message type has its own ID space (2.4.0 MessageId)
                key = (WHOLE_OF[kind], update["messageId"])
                c.content[key] = _digest([update.get("content")], c.content.get(key))
            self.emit(conn, "agent", msg)
            return
        new, notes = tr.update_to_v1(update, c.tools)
        self._notes(notes)
        if new is update:
            self.emit(conn, "agent", msg)
        elif new is not None:
            self.emit(conn, "agent", dict(msg, params=dict(msg["params"], update=new)))

    def _replayed(self, conn: str, c: _Conn1, msg: dict, update: dict, kind: str) -> None:
        """An update while a session/load or session/resume is under way on this connection."""
        if kind == "state_update":
            # The current-state snapshot v2 sends before the resume response: v1's load and
            # resume have none ("Repeated or resume snapshots ... MUST NOT be counted as new
            # completions"); the state itself is kept for the prompts to come.
            c.fg = "idle" if update.get("state") == "idle" else update.get("state", c.fg)
            self.absorb()
            return
        if c.setup == "session/resume" and kind in ("user_message", "user_message_chunk", "agent_message",
                                                     "agent_message_chunk", "agent_thought", "agent_thought_chunk"):
            self.problem("no-v1-equivalent", f"{a(kind)} while resuming without replay: v1's session/resume replays nothing; forwarded")
        self._forward_update(conn, c, msg, update, kind)

    def _whole(self, conn: str, c: _Conn1, msg: dict, update: dict, kind: str) -> None:
        """A whole-message update, fanned out as v1 chunks where that is exact."""
        mid = update.get("messageId")
        content = update.get("content", ...)
        if content is ...:
            self.problem("whole-message-clear", f"a patch-only {kind} for {say(mid)} (no content): v1 chunks cannot patch; not forwarded")
            return
        if content is None or content == []:
            self.problem("whole-message-clear", f"{a(kind)} for {say(mid)} with content {json.dumps(content)} clears it: v1 chunks cannot; not forwarded")
            return
        if "_meta" in update and update["_meta"] is None:
            self.problem("whole-message-clear", f"{a(kind)} for {say(mid)} with _meta: null: v1 chunks cannot unset _meta; content forwarded")
        key = (kind, mid)  # each message type has its own ID space (2.4.0 MessageId)
        if key in c.content and isinstance(content, list) and c.content[key].digest() == _digest(content).digest() and "_meta" not in update:
            self.absorb()  # replaces the content with what the v1 client already holds
            return
        if key in c.content:
            self.problem("whole-after-chunks", f"{a(kind)} for {say(mid)} after the v1 client received content for it: v1 has no way to replace earlier chunks; not forwarded")
            return
        if not isinstance(content, list):
            raise TypeError(f"{kind} content is not an array")
        sid = params_of(msg).get("sessionId")
        for block in content:
            chunk = {"sessionUpdate": CHUNK_OF[kind], "content": copy.deepcopy(block)}
            if mid is not None:
                chunk["messageId"] = mid
            if isinstance(update.get("_meta"), dict):
                chunk["_meta"] = copy.deepcopy(update["_meta"])
            self.emit(conn, "agent", session_update(sid, chunk))
        c.content[key] = _digest(content)

    def _state(self, conn: str, c: _Conn1, update: dict) -> None:
        state = update.get("state")
        if state in WORKING:
            if c.fg == "idle" and not c.held:
                self.problem(
                    "agent-initiated-work",
                    f"{state} with no v1 prompt open on this connection: v1 reports work only through a "
                    "prompt's response, so work no prompt of this client started has no place; not forwarded",
                )
            c.fg = state  # swallowed: an open v1 request is v1's running state
            return
        if state != "idle":
            self.problem("no-v1-equivalent", f"state {say(state)} has no v1 counterpart; not forwarded")
            return
        if c.fg == "idle":
            # A repeated snapshot: "MUST NOT be counted as new completions".
            if not c.held:
                self.problem("idle-without-prompt", "an idle snapshot with no v1 prompt open; not forwarded")
            return
        c.fg = "idle"
        c.idles.append((self._line, update))
        i = len(c.idles) - 1
        for conn_key, (cc, o) in list(self._open.items()):
            if cc is c and o.mid is not None and c.evidence.get(o.mid, i + 1) <= i:
                self._complete(conn, c, o, self._line, update)
        if not c.held and self._line not in c.used:
            self._report_idle(c, self._line, update)

    def _report_idle(self, c: _Conn1, line: int, update: dict) -> None:
        c.used.add(line)
        self.problem(
            "idle-without-prompt",
            f"an idle ({_stop(update)}) that ends work no open v1 prompt was waiting on: "
            "v1 has no way to report it; not forwarded",
            line,
        )

    def _finish(self, partial: bool) -> None:
        for (conn, _), c in self._conns.items():
            for o in list(c.held):
                if o.mid is None or partial:
                    continue  # the agent never answered it (or the log was cut): nothing to carry
                after = [(n, u) for n, u in c.idles if n > o.line]
                if after:
                    self._complete(conn, c, o, *after[-1])
                else:
                    self.problem("no-idle", "the agent reported this prompt inserted, and no idle ever ended its work: the v1 prompt stays open", o.resp_line or o.line)
            for line, update in c.idles:
                if line not in c.used:
                    self._report_idle(c, line, update)

    def _closed(self, conn: str) -> None:
        for k in [k for k in self._open if k[0] == conn]:
            c, o = self._open.pop(k)
            c.held.remove(o)


def _stop(update: dict) -> str:
    reason = update.get("stopReason")
    return "no stopReason" if reason is None else f"stopReason {say(reason)}"
