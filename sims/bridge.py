"""Runnable v1 <-> v2 bridges for the ACP prompt lifecycle, as stateful functions over JSON-RPC.

Two bridges, each fed transcript entries (``{"conn", "from", "msg"}``, see
``sims.wire.transcript``) in the order observed, each returning the entries the
other side sees:

* ``V1AgentToV2Client``: a v1 agent behind, v2 clients in front. It picks its
  insertion point (the v1 agent's echo of the prompt, or at once), answers the
  v2 ``session/prompt`` there with ``{"messageId"}``, reports ``running`` when
  the v1 turn is under way and turns the v1 response into the idle
  ``state_update`` (a v1 error after insertion into an idle ``error``).
* ``V2AgentToV1Client``: a v2 agent behind, a v1 client in front. It holds the
  v1 ``session/prompt`` open until the idle that ends the work, and turns that
  idle into the v1 response: a ``stopReason`` result, or a JSON-RPC error for
  the ``error`` stop reason.

The RFD's rule ("Report failures after insertion"):

    A bridge from a v1 Agent to a v2 Client maps an error response that arrives
    after the bridge reported the message inserted to an idle state_update with
    the error stop reason and the same error object. A bridge from a v2 Agent to
    a v1 Client maps that update to an error response for the pending v1 prompt,
    using -32603 (internal error) when error is absent.

Whatever a bridge cannot carry to the other side is a *problem*:
``(line, message)`` with the input line, and a ``kind`` (the open question it
belongs to). Nothing is dropped without a problem, except what carries no
information: the v2 ``{messageId}`` result a v1 client has no field for (the
bridge keeps the association), ``running`` while a v1 prompt is open (the open
request is v1's running state), a repeated idle snapshot while one is open, a
whole-message update whose content is exactly what the v1 client already holds,
and a tool update repeating the ``failed`` status the bridge already sent.

``bridge_transcript`` runs a bridge over a parsed transcript; ``bridge_file``
and ``bridge_command`` are what ``acp-lifecycle bridge`` calls. The bridge
properties (``PROPERTIES``) and the exhaustive check against the model
(``explore_bridge``) are at the end; docs/bridges.md explains all of it.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

from acp_lifecycle.sims.wire.transcript import V1_STOP_REASONS, check_transcript, dumps, parse

__all__ = [
    "Problem",
    "Out",
    "V1AgentToV2Client",
    "V2AgentToV1Client",
    "BridgeRun",
    "run_bridge",
    "bridge_transcript",
    "bridge_file",
    "bridge_command",
    "BridgeProperty",
    "PROPERTIES",
    "BY_ID",
    "check_properties",
    "BRIDGE_BUGS",
    "OPEN_QUESTIONS",
    "model_transcripts",
    "explore_bridge",
    "client_view",
    "compact",
]

# ---------------------------------------------------------------------------
# Sentences the rules rest on (verbatim; RFD = v2 Prompt Lifecycle, 2026-10-01)
# ---------------------------------------------------------------------------

Q_V1_TO_V2 = (
    "A bridge from a v1 Agent to a v2 Client maps an error response that arrives after the bridge reported the "
    "message inserted to an idle state_update with the error stop reason and the same error object."
)
Q_V2_TO_V1 = (
    "A bridge from a v2 Agent to a v1 Client maps that update to an error response for the pending v1 prompt, "
    "using -32603 (internal error) when error is absent."
)
Q_ADAPTER = (
    "An adapter can use an underlying agent\u2019s user-message echo or insertion event as evidence of insertion "
    "and respond with the message\u2019s ID while processing continues."
)
Q_NO_EARLY = "It MUST NOT send a successful response before insertion."
Q_ID = (
    "The returned ID may be native to the underlying agent or adapter-owned, provided updates and replay "
    "preserve it consistently."
)
Q_V1_UNCHANGED = "v1\u2019s session/prompt is unchanged; it already reports these failures as an error response."
Q_RESPONSE = (
    "Because the response no longer spans the turn, it can no longer report failures that happen during it."
)
Q_SESSION_SCOPED = "Agent messages and tool calls retain their own IDs; state_update remains session-scoped."
Q_AGENT_INITIATED = (
    "This can even allow the agent to initiate an interaction in a session rather than requiring it to wait "
    "for a user prompt"
)
Q_ANY_TIME = "Once a session is created, the agent will be able to send session updates at any point in time"
Q_IDLE_LAST = "As with every stop reason, the idle update follows all updates for the work that ended."
Q_TOOLS_FAILED = (
    "Before sending it, the Agent SHOULD give each tool call that the failed work left unfinished a terminal "
    "status, using failed for calls that did not complete."
)
Q_ERROR_MEANS = (
    "stopReason: \"error\" means foreground work ended because something failed, not because it finished, "
    "reached a limit, was refused, or was cancelled."
)
Q_UNKNOWN_STOP = (
    "A v2 Client that predates the error stop reason handles it like any unknown stop reason: foreground work "
    "has ended, and it shows a generic stopped state."
)
Q_QUEUEING = "This RFD does not specify queueing, steering, or whether agents insert new prompts while busy."
Q_CORRELATE = (
    "Neither content equality nor notification arrival order should be used to infer which client submitted a "
    "message."
)
# acp-notes.md section 1.5 (Message Updates and Chunks RFD), its bridge note
Q_CHUNKS = (
    "A stateful adapter may convert a content-bearing whole-message update to v1 by fanning out one v1 chunk "
    "per content block only when it knows the v1 side has not already received content for that `messageId`; "
    "v1 has no way to replace earlier chunks. Patch-only updates, `content: null`, `content: []`, and "
    "`_meta: null` cannot be represented by v1 chunks and must not be silently dropped."
)
# v1 prompt turn (docs/protocol/v1/prompt-turn.mdx)
Q_V1_END = (
    "If there are no pending tool calls, the turn ends and the Agent **MUST** respond to the original "
    "`session/prompt` request with a `StopReason`"
)
Q_V1_CANCEL = (
    "After all ongoing operations have been successfully aborted and pending updates have been sent, the Agent "
    "**MUST** respond to the original `session/prompt` request with the `cancelled` stop reason."
)
Q_V1_CLOSED = "v1 `StopReason` is closed: a bridge must never emit `\"error\"` as a v1 stop reason (DeepSeek-Reasonix #8241)."

# ---------------------------------------------------------------------------
# Problems: what a bridge cannot carry across, by kind (the open questions)
# ---------------------------------------------------------------------------

#: kind -> (direction, title, the sentence that makes it a question)
OPEN_QUESTIONS: dict[str, tuple[str, str, str]] = {
    # v2 agent -> v1 client
    "agent-initiated-work": ("v1", "agent-initiated work with no pending v1 prompt", Q_AGENT_INITIATED),
    "background-update": ("v1", "updates with no pending v1 prompt (background, or work no v1 prompt started)", Q_ANY_TIME),
    "echo-after-turn": ("v1", "the user message of a v1 prompt reported after the idle that answered it", Q_SESSION_SCOPED),
    "idle-without-prompt": ("v1", "an idle with no pending v1 prompt", Q_SESSION_SCOPED),
    "insertion-after-idle": ("v1", "the prompt reported inserted only after an idle that may have ended its work", Q_SESSION_SCOPED),
    "custom-stop-reason": ("v1", "a custom (`_...`) or unknown stop reason: v1 has five", Q_UNKNOWN_STOP),
    "missing-stop-reason": ("v1", "an idle that ends work without a stop reason: v1 requires one", Q_V1_END),
    "whole-after-chunks": ("v1", "a whole-message update after chunks of that message", Q_CHUNKS),
    "whole-message-clear": ("v1", "a whole-message update with `content: []` or `null` (or patch-only, or `_meta: null`)", Q_CHUNKS),
    "several-prompts": ("v1", "several v1 prompts held at once (v1 allows one turn)", Q_QUEUEING),
    "no-idle": ("v1", "an inserted prompt whose work never reports idle", Q_V1_END),
    "no-v1-equivalent": ("v1", "a v2 update with no v1 counterpart", Q_CHUNKS),
    # v1 agent -> v2 clients
    "ambiguous-echo": ("v2", "a v1 echo while several prompts await insertion", Q_CORRELATE),
    "echo-after-error": ("v2", "a v1 echo after the bridge forwarded an error response as a rejection", Q_RESPONSE),
    "several-stop-reasons": ("v2", "overlapping v1 turns that end differently: v2 has one idle for the session", Q_SESSION_SCOPED),
    "failure-while-work-continues": ("v2", "one of several held v1 prompts fails while another keeps the turn open", Q_RESPONSE),
    "update-after-idle": ("v2", "a v1 update for a tool call of work the bridge already reported idle", Q_IDLE_LAST),
    "v1-agent-not-v1": ("v2", "the v1 agent sends something v1 does not have (a state_update, stopReason \"error\")", Q_V1_CLOSED),
    "v1-cancel-not-cancelled": ("v2", "the v1 agent ends a cancelled turn with another stop reason", Q_V1_CANCEL),
    # both
    "malformed": ("both", "a line that is not a JSON-RPC message the bridge can read", "JSON-RPC 2.0"),
}

#: Problem kinds that are the v1 agent breaking v1: a v2 rule the bridged output
#: then breaks is inherited, not the bridge's.
V1_AGENT_FAULTS = frozenset({"v1-agent-not-v1", "v1-cancel-not-cancelled"})


class Problem(tuple):
    """``(line, message)``: something the bridge could not carry across, at the input line.

    A 2-tuple (so ``line, message = p`` works) with a ``kind`` attribute naming
    its open question (``OPEN_QUESTIONS``).
    """

    kind: str

    def __new__(cls, line: int, message: str, kind: str):
        p = tuple.__new__(cls, (line, message))
        p.kind = kind
        return p

    @property
    def line(self) -> int:
        return self[0]

    @property
    def message(self) -> str:
        return self[1]

    def data(self) -> dict:
        return {"line": self[0], "kind": self.kind, "message": self[1]}


class Out(NamedTuple):
    """One output entry: the input line that caused it, the input line being fed when it was sent."""

    cause: int
    at: int
    entry: dict


WORKING = ("running", "requires_action")
CHUNK_OF = {"user_message": "user_message_chunk", "agent_message": "agent_message_chunk", "agent_thought": "agent_thought_chunk"}
#: session/update kinds a v1 client knows (v1 stable and unstable, SDK 2.4.0)
V1_UPDATE_KINDS = frozenset({
    "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan",
    "available_commands_update", "current_mode_update", "config_option_update", "session_info_update",
    "usage_update", "plan_update", "plan_removed", "notice", "compaction_update", "compaction_summary_chunk",
    "subagent_update", "session_message", "session_message_chunk",
})
#: v1 updates that show a prompt turn is under way (session metadata and notices do not)
TURN_SIGNS = frozenset({
    "user_message_chunk", "user_message", "agent_message_chunk", "agent_thought_chunk", "tool_call",
    "tool_call_update", "plan", "plan_update",
})
INTERNAL_ERROR = {"code": -32603, "message": "Internal error"}
CANCELLED = -32800


def _key(rid):
    """A hashable key for a JSON-RPC id (1 and "1" are different ids)."""
    if rid is None or type(rid) in (str, int):
        return (type(rid).__name__, rid)
    return ("json", json.dumps(rid, sort_keys=True))


def _is_jsonrpc(msg) -> str:
    """'' for a readable JSON-RPC message, else why not."""
    if not isinstance(msg, dict):
        return "msg is not an object"
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return "method is not a string"
        if "params" in msg and not isinstance(msg["params"], (dict, list)):
            return "params is neither an object nor an array"
        return ""
    if "id" not in msg:
        return "neither a request, a notification nor a response (no method, no id)"
    if ("result" in msg) == ("error" in msg):
        return "a response needs exactly one of result and error"
    if "error" in msg and not isinstance(msg["error"], dict):
        return "error is not an object"
    return ""


class _Bridge:
    """What both bridges share: feeding, emitting, problems, provenance."""

    to = ""
    BUGS: tuple[str, ...] = ()

    def __init__(self, bug: str = "") -> None:
        if bug and bug not in self.BUGS:
            raise ValueError(f"unknown bug {bug!r} for {type(self).__name__}; choose from {', '.join(self.BUGS)}")
        self.bug = bug
        self.problems: list[Problem] = []
        #: every output entry with its provenance, in order
        self.trace: list[Out] = []
        #: input lines that carried nothing new and were absorbed (see the module doc)
        self.absorbed: list[int] = []
        self._line = 0
        self._out: list[dict] = []

    # -- feeding --------------------------------------------------------------
    def feed(self, entry: dict, line: int | None = None) -> list[dict]:
        """Feed one transcript entry; return the entries the other side sees."""
        self._line = self._line + 1 if line is None else line
        self._out = []
        try:
            if not isinstance(entry, dict) or "conn" not in entry:
                self.problem("malformed", "not a transcript entry (an object with conn)")
            elif entry.get("event") == "closed":
                self._emit_entry(dict(entry))
                self._closed(str(entry["conn"]))
            elif entry.get("from") not in ("client", "agent"):
                self.problem("malformed", 'not a transcript entry: "from" must be "client" or "agent"')
            else:
                why = _is_jsonrpc(entry.get("msg"))
                if why:
                    self.problem("malformed", f"not a JSON-RPC message: {why}; not forwarded")
                else:
                    self._message(str(entry["conn"]), entry["from"], entry["msg"])
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as e:
            self.problem("malformed", f"a message the bridge cannot read ({type(e).__name__}: {e}); not forwarded")
        return self._out

    def finish(self, partial: bool = False) -> list[dict]:
        """The end of the input: what a bridge still owes (see each bridge)."""
        self._out = []
        self._finish(partial)
        return self._out

    # -- helpers ----------------------------------------------------------------
    def problem(self, kind: str, message: str, line: int | None = None) -> None:
        p = Problem(self._line if line is None else line, message, kind)
        if p not in self.problems[-4:]:  # one idle answering several prompts says it once
            self.problems.append(p)

    def _emit_entry(self, entry: dict, cause: int | None = None) -> None:
        self._out.append(entry)
        self.trace.append(Out(self._line if cause is None else cause, self._line, entry))

    def emit(self, conn: str, sender: str, msg: dict, cause: int | None = None) -> None:
        self._emit_entry({"conn": conn, "from": sender, "msg": msg}, cause)

    def _message(self, conn: str, sender: str, msg: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _closed(self, conn: str) -> None:
        pass

    def _finish(self, partial: bool) -> None:
        pass


def _update(sid, update: dict) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}


def _with_id(update: dict, mid) -> dict:
    """The update with ``messageId`` set, placed after ``sessionUpdate``."""
    new = {"sessionUpdate": update["sessionUpdate"], "messageId": mid}
    new.update((k, v) for k, v in update.items() if k not in new)
    return new


def _params(msg: dict) -> dict:
    p = msg.get("params")
    return p if isinstance(p, dict) else {}


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
    whole: set = field(default_factory=set)  # messageIds the bridge reported whole itself
    echoed: set = field(default_factory=set)  # (conn, messageId) that received an echo of a whole-reported message
    rejected: list = field(default_factory=list)  # _Held forwarded as error before any echo (echo mode)
    tools: dict = field(default_factory=dict)  # tool calls of the current span -> status
    ended_tools: set = field(default_factory=set)
    failed_by_bridge: set = field(default_factory=set)
    prompt_mids: set = field(default_factory=set)  # messageIds the bridge made a prompt's insertion
    finished: set = field(default_factory=set)  # messageIds of prompts the v1 agent has answered

    def add_conn(self, conn: str) -> None:
        if conn not in self.conns:
            self.conns.append(conn)


class V1AgentToV2Client(_Bridge):
    """Between a v1 agent and v2 clients.

    ``insertion="echo"``: the insertion point is the v1 agent's
    ``user_message_chunk`` echo of the prompt (or its response, which proves it
    took the prompt); ``"immediate"``: as soon as the bridge forwards the prompt.
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

    def __init__(self, insertion: str = "echo", bug: str = "") -> None:
        super().__init__(bug)
        if insertion not in ("echo", "immediate"):
            raise ValueError(f"insertion must be 'echo' or 'immediate', not {insertion!r}")
        self.insertion = insertion
        self._sessions: dict[str, _Session2] = {}
        self._held: dict[tuple, _Held] = {}  # (conn, id key) -> _Held
        self._requests: dict[tuple, str] = {}  # (conn, id key) -> method, other client requests
        self._next = 0
        self._noid: dict[str, list] = {}  # conn -> [kind of the last update, sequence]

    def _session(self, sid) -> _Session2:
        return self._sessions.setdefault(_key(sid), _Session2())

    def _new_id(self) -> str:
        self._next += 1
        return f"bridge_msg_{self._next}"

    def _broadcast(self, s: _Session2, sid, update: dict, cause: int | None = None) -> None:
        # One fresh top level per connection; nested values are shared and never mutated.
        for conn in s.conns:
            self.emit(conn, "agent", _update(sid, dict(update)), cause)

    # -- messages ---------------------------------------------------------------
    def _message(self, conn: str, sender: str, msg: dict) -> None:
        method = msg.get("method")
        if sender == "client":
            self._client(conn, msg, method)
        elif method is None:
            self._response(conn, msg)
        elif method == "session/update":
            self._agent_update(conn, msg)
        else:
            sid = _params(msg).get("sessionId")
            if sid is not None:
                self._started(self._session(sid), sid)  # a permission request belongs to the turn
            self.emit(conn, "agent", msg)

    def _client(self, conn: str, msg: dict, method) -> None:
        params = _params(msg)
        sid = params.get("sessionId")
        s = self._session(sid) if sid is not None else None
        if s is not None:
            s.add_conn(conn)
        if method == "session/prompt":
            self.emit(conn, "client", msg)
            prompt = params["prompt"]
            if not isinstance(prompt, list):
                raise TypeError("session/prompt params.prompt is not an array")
            held = _Held(conn, msg["id"], self._line, sid, prompt)
            self._held[(conn, _key(msg["id"]))] = held
            s.turn.append(held)
            if self.insertion == "immediate":
                self._started(s, sid)
                self._insert(held, s, whole=True)
            elif self.bug == "v2-answer-before-insertion":
                # Bug: the success response at receipt, before the echo that is the insertion point.
                held.mid = self._new_id()
                self._respond(held)
            return
        if method == "session/load":
            # v1's session/load is v2's session/resume with replay from the start.
            new = copy.deepcopy(msg)
            new["method"] = "session/resume"
            new.setdefault("params", {})["replayFrom"] = {"type": "start"}
            self._requests[(conn, _key(msg.get("id")))] = method
            self.emit(conn, "client", new)
            return
        if method == "session/cancel" and s is not None:
            if s.fg in WORKING:
                s.cancel_line = self._line
            if s.turn and not s.v1_cancel_line:
                s.v1_cancel_line = self._line
        if method is not None and "id" in msg:
            self._requests[(conn, _key(msg["id"]))] = method
        self.emit(conn, "client", msg)

    def _started(self, s: _Session2, sid) -> None:
        """The v1 turn shows it is under way: report running (once per span).

        Not at the prompt itself: a v1 agent that rejects the prompt before doing
        anything started no work, and v2 reports a rejection only as the error
        response ("Rejected before the user message is inserted: JSON-RPC error
        response to session/prompt").
        """
        if s.fg == "idle" and s.turn:
            s.fg, s.stops, s.cancel_line, s.tools = "running", [], 0, {}
            self._broadcast(s, sid, {"sessionUpdate": "state_update", "state": "running"})

    def _respond(self, held: _Held) -> None:
        held.answered = True
        self.emit(held.conn, "agent", {"jsonrpc": "2.0", "id": held.rid, "result": {"messageId": held.mid}})

    def _insert(self, held: _Held, s: _Session2, whole: bool, mid: str | None = None) -> None:
        """The insertion point: the v2 success response, and (whole) the user message."""
        held.inserted = True
        if held.mid is None:
            held.mid = mid if isinstance(mid, str) else self._new_id()
        s.prompt_mids.add(held.mid)
        if not held.answered:
            self._respond(held)
        if whole:
            s.whole.add(held.mid)
            s.unmatched.append(held)
            self._broadcast(
                s, held.sid,
                {"sessionUpdate": "user_message", "messageId": held.mid, "content": copy.deepcopy(held.prompt)},
            )

    def _response(self, conn: str, msg: dict) -> None:
        held = self._held.pop((conn, _key(msg["id"])), None)
        if held is None:
            self._requests.pop((conn, _key(msg["id"])), None)
            self.emit(conn, "agent", msg)
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
        if not s.turn:
            s.v1_cancel_line = 0

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
            self.problem("v1-agent-not-v1", f"the v1 agent answered with stopReason {reason!r}, not a v1 value{note}; passed on unchanged")
        if s.v1_cancel_line and reason != "cancelled":
            self.problem(
                "v1-cancel-not-cancelled",
                f"the v1 agent answered stopReason {reason!r} after session/cancel (line {s.v1_cancel_line}): a "
                "cancelled v1 turn answers cancelled, unless it ended before the agent saw the cancel; the v2 idle "
                f"carries {reason!r}, which breaks v2's cancellation rule if v2 saw the cancel while running",
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
        distinct = {(r, _key(e)) for _, r, e in s.stops}
        if len(distinct) > 1:
            ends = ", ".join(f"line {n}: {r}" for n, r, _ in s.stops)
            self.problem("several-stop-reasons", f"overlapping v1 turns ended differently ({ends}); the v2 idle carries the last")
        s.ended_tools |= set(s.tools)
        s.tools = {}
        update = {"sessionUpdate": "state_update", "state": "idle"}
        if reason is not None:
            update["stopReason"] = reason
        if reason == "error" and err is not None and self.bug != "v2-idle-drop-error":
            update["error"] = copy.deepcopy(err)
        update.update(extra or {})
        self._broadcast(s, sid, update)
        s.fg, s.stops, s.cancel_line = "idle", [], 0

    def _agent_update(self, conn: str, msg: dict) -> None:
        params = _params(msg)
        sid = params.get("sessionId")
        update = params["update"]
        kind = update["sessionUpdate"]
        s = self._session(sid)
        s.add_conn(conn)
        if update["sessionUpdate"] in TURN_SIGNS and update["sessionUpdate"] not in ("user_message", "user_message_chunk"):
            self._started(s, sid)  # (an echo decides in _echo: it may belong to a finished prompt)
        last = self._noid.setdefault(conn, [None, 0])
        if kind in ("user_message_chunk", "user_message"):
            noid = kind == "user_message_chunk" and update.get("messageId") is None
            if noid and last[0] != "noid":
                last[1] += 1
            last[0] = "noid" if noid else kind
            self._echo(conn, sid, s, msg, update, ("noid", conn, last[1]) if noid else update.get("messageId"))
            return
        if kind in ("agent_message_chunk", "agent_thought_chunk") and update.get("messageId") is None:
            # v2 requires messageId on chunks: consecutive id-less chunks are one message.
            if last[0] != kind:
                last[1] += 1
                self._noid[conn + "\0" + kind] = self._new_id()
            last[0] = kind
            new_update = _with_id(update, self._noid[conn + "\0" + kind])
            self.emit(conn, "agent", dict(msg, params=dict(msg["params"], update=new_update)))
            return
        last[0] = kind
        if kind == "state_update":
            self.problem("v1-agent-not-v1", "a state_update from the v1 agent: v1 has none, and the bridge reports state itself; not forwarded")
            return
        if kind in ("tool_call", "tool_call_update"):
            tid = update.get("toolCallId")
            if tid in s.ended_tools and tid not in s.tools:
                if tid in s.failed_by_bridge and update.get("status") == "failed" and set(update) <= {"sessionUpdate", "toolCallId", "status"}:
                    self.absorbed.append(self._line)  # repeats the failed status the bridge already sent
                    return
                self.problem(
                    "update-after-idle",
                    f"{kind} for {tid!r}, a tool call of work the bridge already reported idle; "
                    "v2: the idle follows all updates for the work that ended; not forwarded",
                )
                return
            s.tools[tid] = update.get("status", s.tools.get(tid, "pending"))
        self.emit(conn, "agent", msg)

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
        new_update = _with_id(update, mid)
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
    content: dict = field(default_factory=dict)  # messageId -> the content the v1 client holds for it
    answered: dict = field(default_factory=dict)  # messageId -> line of the v1 prompt the bridge answered


class V2AgentToV1Client(_Bridge):
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

    def __init__(self, background: str = "forward", bug: str = "") -> None:
        super().__init__(bug)
        if background not in ("forward", "drop"):
            raise ValueError(f"background must be 'forward' or 'drop', not {background!r}")
        self.background = background
        self._conns: dict[tuple, _Conn1] = {}
        self._open: dict[tuple, tuple] = {}  # (conn, id key) -> (_Conn1, _Open)
        self._requests: dict[tuple, str] = {}

    def _c(self, conn: str, sid) -> _Conn1:
        return self._conns.setdefault((conn, _key(sid)), _Conn1())

    def _message(self, conn: str, sender: str, msg: dict) -> None:
        method = msg.get("method")
        if sender == "client":
            self._client(conn, msg, method)
        elif method is None:
            self._response(conn, msg)
        elif method == "session/update":
            self._agent_update(conn, msg)
        else:
            self.emit(conn, "agent", msg)

    def _client(self, conn: str, msg: dict, method) -> None:
        params = _params(msg)
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
            self._open[(conn, _key(msg["id"]))] = (c, o)
            self.emit(conn, "client", msg)
            return
        if method == "session/resume" and params.get("replayFrom"):
            # v2's resume with replay is v1's session/load.
            new = copy.deepcopy(msg)
            new["method"] = "session/load"
            del new["params"]["replayFrom"]
            self.emit(conn, "client", new)
            return
        self.emit(conn, "client", msg)

    def _response(self, conn: str, msg: dict) -> None:
        found = self._open.get((conn, _key(msg["id"])))
        if found is None:
            self.emit(conn, "agent", msg)
            return
        c, o = found
        if o.mid is not None:
            self.emit(conn, "agent", msg)  # a second response: not the bridge's to hide
            return
        if "error" in msg:
            # Rejected before insertion: the same error response in v1.
            del self._open[(conn, _key(msg["id"]))]
            c.held.remove(o)
            self.emit(conn, "agent", msg)
            return
        result = msg["result"]
        mid = result.get("messageId") if isinstance(result, dict) else None
        if not isinstance(mid, str):
            self.problem("malformed", f"the v2 session/prompt result has messageId {mid!r}, not a string; taken as inserted")
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

    def _complete(self, conn: str, c: _Conn1, o: _Open, line: int, update: dict) -> None:
        """Answer the held v1 prompt from the idle on ``line``."""
        c.held.remove(o)
        del self._open[(conn, _key(o.rid))]
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
                self.problem("malformed", f"the idle's error {err!r} is not a JSON-RPC error object; answered -32603", line)
                err = dict(INTERNAL_ERROR, data={"error": err})
            else:
                err = copy.deepcopy(err)
            self.emit(conn, "agent", {"jsonrpc": "2.0", "id": o.rid, "error": err}, cause=line)
            return
        if reason not in V1_STOP_REASONS and not (reason == "error" and self.bug == "v1-error-stop-reason"):
            if reason is None:
                self.problem("missing-stop-reason", "an idle that ends work without a stopReason: v1 requires one; answered end_turn", line)
            else:
                self.problem("custom-stop-reason", f"stopReason {reason!r} has no v1 value (v1 has five); answered end_turn", line)
            reason = "end_turn"
        result = {"stopReason": reason}
        if "usage" in update:
            result["usage"] = copy.deepcopy(update["usage"])
        self.emit(conn, "agent", {"jsonrpc": "2.0", "id": o.rid, "result": result}, cause=line)

    def _agent_update(self, conn: str, msg: dict) -> None:
        params = _params(msg)
        sid = params.get("sessionId")
        update = params["update"]
        kind = update["sessionUpdate"]
        c = self._c(conn, sid)
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
                    f"the {kind} for {mid!r}, the message of the v1 prompt on line {c.answered[mid]}, after the "
                    f"idle that answered that prompt: v1 reports a prompt's updates before its response; {action}",
                )
            else:
                where = "while idle (background work)" if c.fg == "idle" else "during work no v1 prompt on this connection started"
                self.problem("background-update", f"a {kind} update {where}: v1 reports updates inside a prompt turn; {action}")
            if self.background == "drop":
                return
        if kind in CHUNK_OF:
            self._whole(conn, c, msg, update, kind)
            return
        if kind not in V1_UPDATE_KINDS:
            self.problem("no-v1-equivalent", f"a {kind} update has no v1 counterpart; not forwarded")
            return
        if kind in CHUNK_OF.values() and "messageId" in update:
            c.content.setdefault(update["messageId"], []).append(update.get("content"))
        self.emit(conn, "agent", msg)

    def _whole(self, conn: str, c: _Conn1, msg: dict, update: dict, kind: str) -> None:
        """A whole-message update, fanned out as v1 chunks where that is exact."""
        mid = update.get("messageId")
        content = update.get("content", ...)
        if content is ...:
            self.problem("whole-message-clear", f"a patch-only {kind} for {mid!r} (no content): v1 chunks cannot patch; not forwarded")
            return
        if content is None or content == []:
            self.problem("whole-message-clear", f"a {kind} for {mid!r} with content {json.dumps(content)} clears it: v1 chunks cannot; not forwarded")
            return
        if "_meta" in update and update["_meta"] is None:
            self.problem("whole-message-clear", f"a {kind} for {mid!r} with _meta: null: v1 chunks cannot unset _meta; content forwarded")
        if mid in c.content and c.content[mid] == content and "_meta" not in update:
            self.absorbed.append(self._line)  # replaces the content with what the v1 client already holds
            return
        if mid in c.content:
            self.problem("whole-after-chunks", f"a {kind} for {mid!r} after the v1 client received content for it: v1 has no way to replace earlier chunks; not forwarded")
            return
        if not isinstance(content, list):
            raise TypeError(f"{kind} content is not an array")
        sid = _params(msg).get("sessionId")
        for block in content:
            chunk = {"sessionUpdate": CHUNK_OF[kind], "content": copy.deepcopy(block)}
            if mid is not None:
                chunk["messageId"] = mid
            if isinstance(update.get("_meta"), dict):
                chunk["_meta"] = copy.deepcopy(update["_meta"])
            self.emit(conn, "agent", _update(sid, chunk))
        c.content[mid] = list(content)

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
            self.problem("no-v1-equivalent", f"state {state!r} has no v1 counterpart; not forwarded")
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
            f"an idle (stopReason {update.get('stopReason')!r}) that ends work no open v1 prompt was waiting on: "
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


# ---------------------------------------------------------------------------
# Running a bridge over a transcript
# ---------------------------------------------------------------------------


@dataclass
class BridgeRun:
    """A bridge run: the input, every output entry with its provenance, the problems."""

    to: str
    options: dict
    inp: list  # [(line, entry)]
    out: list  # [Out]
    problems: list  # [Problem]
    absorbed: list  # input lines absorbed (they repeat what the bridge already sent)
    partial: bool = False
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def entries(self) -> list[dict]:
        return [o.entry for o in self.out]

    def cached(self, name: str, make):
        if name not in self._cache:
            self._cache[name] = make()
        return self._cache[name]


def make_bridge(to: str, **options) -> _Bridge:
    """The bridge whose output side is ``to``: "v2" (a v1 agent) or "v1" (a v2 agent)."""
    if to == "v2":
        return V1AgentToV2Client(**options)
    if to == "v1":
        return V2AgentToV1Client(**options)
    raise ValueError(f"to must be 'v1' or 'v2', not {to!r}")


def _numbered(entries) -> list[tuple[int, dict]]:
    entries = list(entries)
    if entries and isinstance(entries[0], tuple):
        return entries
    return list(enumerate(entries, 1))


def run_bridge(entries, to: str, partial: bool = False, **options) -> BridgeRun:
    """Run a bridge over ``entries`` (entries, or ``(line, entry)`` pairs as ``parse`` gives)."""
    inp = _numbered(entries)
    b = make_bridge(to, **options)
    for n, entry in inp:
        b.feed(entry, n)
    b.finish(partial)
    return BridgeRun(to, dict(options), inp, b.trace, b.problems, b.absorbed, partial)


def bridge_transcript(entries, to: str, partial: bool = False, **options) -> tuple[list[dict], list[Problem]]:
    """``(out_entries, problems)``: the transcript the ``to`` side sees, and what could not cross.

    ``to="v2"``: the input is a v1 agent's transcript; options ``insertion``
    ("echo" | "immediate"). ``to="v1"``: the input is a v2 agent's transcript;
    option ``background`` ("forward" | "drop"). ``partial``: the log is cut, so
    the bridge does not settle what it still holds at the end.
    """
    r = run_bridge(entries, to, partial, **options)
    return r.entries, r.problems


def bridge_file(path, to: str, partial: bool = False, **options) -> tuple[str, list[Problem]]:
    """``(text, problems)`` for a transcript file; ``TranscriptError`` (one line) when it is unusable."""
    out, problems = bridge_transcript(parse(Path(path)), to, partial, **options)
    return dumps(out), problems


def bridge_command(
    path, to: str, insertion: str | None = None, as_json: bool = False, partial: bool = False,
    background: str | None = None, out=None, err=None,
) -> int:
    """``acp-lifecycle bridge --to v1|v2 FILE``: the transcript on ``out``, problems on ``err``.

    ``insertion`` applies to ``--to v2`` only (default "echo"), ``background`` to
    ``--to v1`` only (default "forward"); the other direction's option, an unknown
    value or an unknown ``to`` raises ``ValueError`` (one line). Returns the exit
    status: 0 when everything crossed, 1 when a problem was reported (the
    transcript is still written). Raises ``TranscriptError`` (one line naming file
    and line) for an unusable file. The CLI turns both errors into exit status 2.
    With ``as_json`` one object goes to ``out``: ``{"file", "to", "options",
    "transcript": [entries], "problems": [{"line", "kind", "message"}]}``.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if to == "v2":
        if background is not None:
            raise ValueError("--background applies to --to v1 (a v2 agent's transcript)")
        options = {"insertion": insertion or "echo"}
    elif to == "v1":
        if insertion is not None:
            raise ValueError("--insertion applies to --to v2 (a v1 agent's transcript)")
        options = {"background": background or "forward"}
    else:
        raise ValueError(f"--to must be v1 or v2, not {to!r}")
    make_bridge(to, **options)  # validates the option values before reading the file
    text, problems = bridge_file(path, to, partial, **options)
    if as_json:
        data = {
            "file": str(path),
            "to": to,
            "options": options,
            "transcript": [json.loads(line) for line in text.splitlines()],
            "problems": [p.data() for p in problems],
        }
        out.write(json.dumps(data, indent=2) + "\n")
    else:
        out.write(text)
        for p in problems:
            err.write(f"{path}:{p.line}: {p.kind}: {p.message}\n")
    return 1 if problems else 0


# ---------------------------------------------------------------------------
# Bridge properties: plain functions over a run, each with its sentence
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BridgeProperty:
    id: str
    to: str  # the output side the property is about
    title: str
    source: str
    quote: str
    check: Callable[[BridgeRun], list[str]]


def _id(k) -> str:
    """The JSON-RPC id of a (conn, id key) pair, for messages."""
    kind, value = k[1]
    return value if kind == "json" else json.dumps(value)


def _msg(entry: dict):
    m = entry.get("msg")
    return m if isinstance(m, dict) else None


def _state_update(msg) -> dict | None:
    if msg is None or msg.get("method") != "session/update":
        return None
    u = _params(msg).get("update")
    return u if isinstance(u, dict) and u.get("sessionUpdate") == "state_update" else None


def _prompt_exchanges(pairs) -> tuple[dict, dict]:
    """(prompts, responses) of ``(position, entry)`` pairs: (conn, id key) -> position / [position]."""
    prompts: dict = {}
    responses: dict = {}
    for pos, e in pairs:
        m = _msg(e)
        if m is None:
            continue
        k = (str(e.get("conn")), _key(m.get("id")))
        if e.get("from") == "client" and m.get("method") == "session/prompt":
            prompts[k] = pos
        elif e.get("from") == "agent" and "method" not in m and k in prompts:
            responses.setdefault(k, []).append(pos)
    return prompts, responses


def _out_exchanges(run: BridgeRun):
    return run.cached("out", lambda: _prompt_exchanges(enumerate(run.entries)))


def _in_exchanges(run: BridgeRun):
    return run.cached("in", lambda: _prompt_exchanges(run.inp))


def _problem_lines(run: BridgeRun, kinds=None) -> set:
    return {p.line for p in run.problems if kinds is None or p.kind in kinds}


def _inputs(run: BridgeRun) -> dict:
    return run.cached("inputs", lambda: dict(run.inp))


def _caused(run: BridgeRun) -> dict:
    """input line -> [Out] it caused."""
    def make():
        d: dict = {}
        for o in run.out:
            d.setdefault(o.cause, []).append(o)
        return d
    return run.cached("caused", make)


# -- v2 agent -> v1 client ----------------------------------------------------


def _v1_answered_once(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    _, in_responses = _in_exchanges(run)
    reported = _problem_lines(run)
    bad = []
    for k, pos in prompts.items():
        rs = responses.get(k, [])
        if len(rs) > 1:
            bad.append(f"v1 prompt {_id(k)} on {k[0]} got {len(rs)} responses")
        elif not rs and not run.partial and k in in_responses:
            line = run.out[pos].cause
            if line not in reported and not reported & set(in_responses[k]):
                bad.append(f"v1 prompt {_id(k)} on {k[0]} (line {line}) never got a response, and no problem says why")
    return bad


def _v1_never_error(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    bad = []
    for k, rs in responses.items():
        for pos in rs:
            m = run.out[pos].entry["msg"]
            if "result" in m:
                r = m["result"]
                if not isinstance(r, dict) or r.get("stopReason") not in V1_STOP_REASONS:
                    bad.append(f"v1 result for prompt {_id(k)} is {json.dumps(r)}: stopReason not one of v1's five")
                elif "messageId" in r:
                    bad.append(f"v1 result for prompt {_id(k)} carries messageId")
    return bad


def _expected_error(update: dict) -> dict:
    err = update.get("error")
    if isinstance(err, dict) and isinstance(err.get("code"), int) and isinstance(err.get("message"), str):
        return err
    return INTERNAL_ERROR


def _v1_error_idle(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    inputs = _inputs(run)
    bad = []
    for k, rs in responses.items():
        for pos in rs:
            o = run.out[pos]
            u = _state_update(_msg(inputs.get(o.cause, {})))
            if u is None or u.get("state") != "idle" or u.get("stopReason") != "error":
                continue
            m = o.entry["msg"]
            want = _expected_error(u)
            if "error" not in m:
                bad.append(f"the error idle on line {o.cause} became {json.dumps(m.get('result'))} for prompt {_id(k)}, not an error response")
                continue
            got = m["error"]
            if got.get("code") != want["code"] or got.get("message") != want["message"] or (
                "data" in want and got.get("data") != want["data"]
            ):
                bad.append(f"the error idle on line {o.cause} carries {json.dumps(want)}; the v1 error response carries {json.dumps(got)}")
    return bad


def _v1_unchanged(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    inputs = _inputs(run)
    reported = _problem_lines(run)
    bad = []
    for k, rs in responses.items():
        for pos in rs:
            o = run.out[pos]
            src = inputs.get(o.cause, {})
            m, sm = o.entry["msg"], _msg(src)
            u = _state_update(sm)
            if u is not None and u.get("state") == "idle":
                reason = u.get("stopReason")
                if reason == "error":
                    continue  # _v1_error_idle
                got = m.get("result", {}).get("stopReason") if isinstance(m.get("result"), dict) else None
                if reason in V1_STOP_REASONS and got != reason:
                    bad.append(f"the idle on line {o.cause} has stopReason {reason!r}; the v1 result has {got!r}")
                elif reason not in V1_STOP_REASONS and o.cause not in reported:
                    bad.append(f"the idle on line {o.cause} has stopReason {reason!r}, which v1 lacks, and no problem was reported")
            elif sm is not None and src.get("from") == "agent" and "method" not in sm and (str(src.get("conn")), _key(sm.get("id"))) == k:
                if m != sm:
                    bad.append(f"the v2 error response on line {o.cause} reached v1 changed: {json.dumps(m)}")
            else:
                bad.append(f"the v1 response to prompt {_id(k)} has no idle or error response as its cause (line {o.cause})")
    return bad


def _pending_before(run: BridgeRun) -> dict:
    """input line -> {conn: number of v1 prompts open on the output side just before it}."""
    opened: dict = {}
    answered = set()
    out, i, result = run.out, 0, {}
    prompts, _ = _out_exchanges(run)
    positions = {pos: k for k, pos in prompts.items()}
    for n, _ in run.inp:
        while i < len(out) and out[i].at < n:
            e, m = out[i].entry, _msg(out[i].entry)
            if i in positions:
                opened[positions[i]] = True
            elif m is not None and e.get("from") == "agent" and "method" not in m:
                k = (str(e.get("conn")), _key(m.get("id")))
                if k in opened:
                    answered.add(k)
            i += 1
        counts: dict = {}
        for k in opened:
            if k not in answered:
                counts[k[0]] = counts.get(k[0], 0) + 1
        result[n] = counts
    return result


def _v1_nothing_lost(run: BridgeRun) -> list[str]:
    causes = {o.cause for o in run.out}
    reported = _problem_lines(run)
    absorbed = set(run.absorbed)
    pending = _pending_before(run)
    in_prompts, _ = _in_exchanges(run)
    last_state: dict = {}
    bad = []
    for n, e in run.inp:
        m = _msg(e)
        conn = str(e.get("conn"))
        u = _state_update(m) if e.get("from") == "agent" else None
        before = last_state.get(conn, "idle")
        if u is not None:
            last_state[conn] = u.get("state")
        if n in causes or n in reported or n in absorbed:
            continue
        if m is not None and e.get("from") == "agent" and "method" not in m and "result" in m and (conn, _key(m.get("id"))) in in_prompts:
            continue  # the {messageId} result: v1 has no field for it; the association is kept
        if u is not None and (u.get("state") in WORKING or before == "idle") and pending[n].get(conn):
            continue  # running while a v1 prompt is open, or a repeated idle snapshot
        bad.append(f"line {n} ({compact([e])[0]}) reached the v1 side neither as a message nor as a reported problem")
    return bad


def _v1_speaks_v1(run: BridgeRun) -> list[str]:
    bad = []
    for pos, o in enumerate(run.out):
        m = _msg(o.entry)
        if m is None:
            continue
        if m.get("method") == "session/update":
            kind = _params(m).get("update", {}).get("sessionUpdate")
            if kind not in V1_UPDATE_KINDS:
                bad.append(f"output {pos + 1}: a {kind} update, which v1 does not have")
        if m.get("method") == "session/resume" and _params(m).get("replayFrom"):
            bad.append(f"output {pos + 1}: session/resume with replayFrom, which v1 does not have")
    return bad


# -- v1 agent -> v2 clients ----------------------------------------------------


def _v2_rules(run: BridgeRun) -> list[str]:
    findings = check_transcript(list(enumerate(run.entries, 1)), partial=run.partial)
    inherited = _problem_lines(run, V1_AGENT_FAULTS)
    bad = []
    for f in findings:
        if f.severity != "violation":
            continue
        cause = run.out[f.line - 1].cause if 0 < f.line <= len(run.out) else 0
        if cause in inherited:
            continue  # the v1 agent broke v1 there, and the bridge reported it
        bad.append(f"output {f.line} (from input line {cause}): {f.property}: {f.message}")
    return bad


def _v2_insertion_point(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    inputs = _inputs(run)
    immediate = run.options.get("insertion", "echo") == "immediate"
    bad = []
    for k, rs in responses.items():
        req = run.out[prompts[k]].cause
        for pos in rs:
            o = run.out[pos]
            if "result" not in o.entry["msg"]:
                continue
            src = inputs.get(o.cause, {})
            sm = _msg(src) or {}
            if immediate:
                ok = o.cause == req
            else:
                echo = sm.get("method") == "session/update" and _params(sm).get("update", {}).get("sessionUpdate") in (
                    "user_message", "user_message_chunk")
                own = src.get("from") == "agent" and "method" not in sm and (str(src.get("conn")), _key(sm.get("id"))) == k
                ok = src.get("from") == "agent" and (echo or own) and o.cause > req
            if not ok or o.at < o.cause:
                bad.append(
                    f"the v2 success response to prompt {_id(k)} (line {req}) was sent at input line {o.at}, "
                    f"before the bridge's insertion point ({run.options.get('insertion', 'echo')})"
                )
    return bad


def _v2_error_after_insertion(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    _, in_responses = _in_exchanges(run)
    inputs = _inputs(run)
    continuing = _problem_lines(run, {"failure-while-work-continues"})
    after_cancel = _problem_lines(run, {"v1-cancel-not-cancelled"})
    bad = []
    for k, lines in in_responses.items():
        for n in lines:
            m = inputs[n]["msg"]
            if "error" not in m:
                continue
            outs = [run.out[p] for p in responses.get(k, [])]
            inserted = any("result" in o.entry["msg"] and o.at < n for o in outs)
            caused = _caused(run).get(n, [])
            if inserted:
                if any("error" in o.entry["msg"] for o in outs):
                    bad.append(f"the v1 error on line {n} came after the bridge reported insertion, yet became an error response")
                idles = [u for u in (_state_update(_msg(o.entry)) for o in caused) if u and u.get("state") == "idle"]
                if not idles and n not in continuing:
                    bad.append(f"the v1 error on line {n} after insertion ended no foreground work with an idle")
                cancelled = m["error"].get("code") == CANCELLED or (
                    n in after_cancel and idles and idles[0].get("stopReason") == "cancelled")
                for u in idles:
                    if cancelled:
                        if u.get("stopReason") != "cancelled" or "error" in u:
                            bad.append(f"the v1 -32800 on line {n} after insertion became {json.dumps(u)}, not an idle cancelled")
                    elif u.get("stopReason") != "error" or u.get("error") != m["error"]:
                        bad.append(
                            f"the v1 error on line {n} ({json.dumps(m['error'])}) after insertion became idle "
                            f"stopReason={u.get('stopReason')!r} error={json.dumps(u.get('error'))}"
                        )
            elif not any(o.entry["msg"] == m for o in caused):
                bad.append(f"the v1 error on line {n} before insertion was not forwarded as the v2 error response")
    return bad


def _v2_stop_reason(run: BridgeRun) -> list[str]:
    _, in_responses = _in_exchanges(run)
    inputs = _inputs(run)
    bad = []
    for k, lines in in_responses.items():
        for n in lines:
            m = inputs[n]["msg"]
            if "result" not in m:
                continue
            reason = m["result"].get("stopReason") if isinstance(m["result"], dict) else None
            idles = [u for u in (_state_update(_msg(o.entry)) for o in _caused(run).get(n, [])) if u and u.get("state") == "idle"]
            for u in idles:
                if u.get("stopReason") != reason:
                    bad.append(f"the v1 result on line {n} (stopReason {reason!r}) became an idle with {u.get('stopReason')!r}")
            if not idles and not run.partial and not any(
                o.cause > n and (_state_update(_msg(o.entry)) or {}).get("state") == "idle" for o in run.out
            ):
                bad.append(f"the v1 result on line {n} (stopReason {reason!r}) never became an idle")
    return bad


def _v2_nothing_lost(run: BridgeRun) -> list[str]:
    causes = {o.cause for o in run.out}
    reported = _problem_lines(run)
    absorbed = set(run.absorbed)
    _, in_responses = _in_exchanges(run)
    answers = {n for lines in in_responses.values() for n in lines}
    bad = []
    for n, e in run.inp:
        if n in causes or n in reported or n in absorbed or n in answers:
            continue  # (a v1 answer's outcome is checked by the two properties above)
        bad.append(f"line {n} ({compact([e])[0]}) reached the v2 side neither as a message nor as a reported problem")
    return bad


def _v2_answered_once(run: BridgeRun) -> list[str]:
    prompts, responses = _out_exchanges(run)
    _, in_responses = _in_exchanges(run)
    bad = []
    for k, pos in prompts.items():
        rs = responses.get(k, [])
        if len(rs) > 1:
            bad.append(f"v2 prompt {_id(k)} on {k[0]} got {len(rs)} responses")
        elif not rs and not run.partial and k in in_responses:
            bad.append(f"v2 prompt {_id(k)} on {k[0]} never got a response though the v1 agent answered it")
    return bad


PROPERTIES: tuple[BridgeProperty, ...] = (
    BridgeProperty("v1-prompt-answered-once", "v1", "every held v1 prompt gets exactly one response",
                   "RFD + v1 prompt turn", Q_V2_TO_V1 + " / v1: " + Q_V1_END, _v1_answered_once),
    BridgeProperty("v1-stop-reason-never-error", "v1", "a v1 result never carries \"error\" (or any non-v1 value) as stopReason",
                   "RFD; DeepSeek-Reasonix#8241", Q_V1_UNCHANGED + " / " + Q_V1_CLOSED, _v1_never_error),
    BridgeProperty("v1-error-idle-becomes-error-response", "v1",
                   "an error idle becomes a JSON-RPC error with its code and message (-32603 when absent)",
                   "RFD, Report failures after insertion", Q_V2_TO_V1, _v1_error_idle),
    BridgeProperty("v1-stop-reasons-pass-unchanged", "v1", "the five v1 stop reasons pass unchanged; error responses pass as they are",
                   "RFD", Q_V1_UNCHANGED, _v1_unchanged),
    BridgeProperty("v1-nothing-representable-lost", "v1", "every input line reaches the v1 side or is reported",
                   "Message Updates RFD (acp-notes 1.5)", Q_CHUNKS, _v1_nothing_lost),
    BridgeProperty("v1-output-speaks-v1", "v1", "the v1 side sees only v1 updates and methods",
                   "RFD", Q_V1_UNCHANGED, _v1_speaks_v1),
    BridgeProperty("v2-rules-hold", "v2", "the bridged transcript passes every v2 rule of `acp-lifecycle trace`",
                   "RFD", "(every property of sims.wire.transcript.check_transcript)", _v2_rules),
    BridgeProperty("v2-response-at-insertion-point", "v2", "the v2 success response never precedes the bridge's insertion point",
                   "RFD, Correlate prompts with accepted user messages", Q_ADAPTER + " / " + Q_NO_EARLY, _v2_insertion_point),
    BridgeProperty("v2-error-after-insertion-becomes-error-idle", "v2",
                   "a v1 error after insertion becomes an idle error with the same error object; before it, the v2 error response",
                   "RFD, Report failures after insertion", Q_V1_TO_V2, _v2_error_after_insertion),
    BridgeProperty("v2-stop-reason-becomes-idle", "v2", "the v1 response's stopReason becomes the idle's stopReason",
                   "RFD, Report failures after insertion", Q_RESPONSE, _v2_stop_reason),
    BridgeProperty("v2-nothing-representable-lost", "v2", "every input line reaches the v2 side or is reported",
                   "RFD", Q_ANY_TIME, _v2_nothing_lost),
    BridgeProperty("v2-prompt-answered-once", "v2", "every v2 prompt the v1 agent answered gets exactly one response",
                   "RFD, Change the session/prompt response",
                   "The agent MUST respond successfully once the user message has been inserted, without waiting for "
                   "foreground processing to finish.", _v2_answered_once),
)
BY_ID = {p.id: p for p in PROPERTIES}


def check_properties(run: BridgeRun) -> dict[str, list[str]]:
    """Property id -> violations (empty when it holds), for the properties of the run's output side."""
    return {p.id: p.check(run) for p in PROPERTIES if p.to == run.to}


#: Seeded bridge bugs: name -> (output side, the property that catches it, what it is)
BRIDGE_BUGS: dict[str, tuple[str, str, str]] = {
    "v1-error-stop-reason": (
        "v1", "v1-stop-reason-never-error",
        "the error idle becomes a v1 result with stopReason \"error\" (DeepSeek-Reasonix#8241)",
    ),
    "v1-drop-error-code": (
        "v1", "v1-error-idle-becomes-error-response",
        "the error idle becomes a v1 error response with -32603, dropping the agent's code and message",
    ),
    "v2-idle-drop-error": (
        "v2", "v2-error-after-insertion-becomes-error-idle",
        "a v1 error after insertion becomes an idle error without the error object",
    ),
    "v2-answer-before-insertion": (
        "v2", "v2-response-at-insertion-point",
        "the v2 prompt is answered with a messageId at receipt, before the echo that is the insertion point",
    ),
}


# ---------------------------------------------------------------------------
# Against the model: every terminal path, through each bridge
# ---------------------------------------------------------------------------


def model_transcripts(cfg, rules, conn: str | None = None) -> tuple[list[tuple], int]:
    """``(transcripts, paths)``: the distinct transcripts of every terminal path of the
    model from ``initial_state``, shortest first, and how many terminal paths there are.

    A bridge sees only the wire, so paths with the same transcript (they differ in
    internal steps: holding, reserving, inserting) need one run. ``conn`` keeps one
    connection's lines. Members with resumes are refused: their connection labels
    depend on the whole path.
    """
    from acp_lifecycle.model.system import initial_state, successors

    from acp_lifecycle.sims.wire.transcript import export

    if cfg.resumes:
        raise ValueError(f"member {cfg.name} has resumes: its connection labels depend on the whole path")
    table: list[dict] = []
    ids: dict[str, int] = {}
    memo: dict = {}
    counts: dict = {}

    def line_ids(pre, step) -> tuple:
        out = []
        for line in export([(pre, step)]):
            if conn is not None and line.get("conn") != conn:
                continue
            k = json.dumps(line, sort_keys=True)
            if k not in ids:
                ids[k] = len(table)
                table.append(line)
            out.append(ids[k])
        return tuple(out)

    def walk(s):
        if s in memo:
            return memo[s]
        steps = successors(s, cfg, rules)
        if not steps:
            memo[s], counts[s] = frozenset([()]), 1
            return memo[s]
        found, n = set(), 0
        for step in steps:
            head = line_ids(s, step)
            for tail in walk(step.state):
                found.add(head + tail)
            n += counts[step.state]
        memo[s], counts[s] = frozenset(found), n
        return memo[s]

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        s0 = initial_state(cfg)
        found = walk(s0)
    finally:
        sys.setrecursionlimit(limit)
    ordered = sorted(found, key=lambda t: (len(t), t))
    return [tuple(table[i] for i in t) for t in ordered], counts[s0]


@dataclass
class BridgeExploration:
    member: str
    to: str
    options: dict
    paths: int
    transcripts: int
    seconds: float
    #: property id -> (shortest input transcript, its violations)
    violations: dict
    #: problem kind -> (shortest input transcript, the problem)
    questions: dict


def explore_bridge(
    member: str, to: str, rules=None, conn: str | None = None, until: str | None = None, **options
) -> BridgeExploration:
    """Bridge every terminal path of a model member and check the bridge properties.

    ``to="v1"``: the model agent speaks v2 (``RFD_RULES``); ``to="v2"``: it
    speaks v1 (``VARIANTS["v1"].rules``). ``conn`` keeps one connection's lines.
    ``until``: stop at the first (shortest) violation of that property. Options
    go to the bridge (``bug``, ``insertion``, ``background``).
    """
    from acp_lifecycle.model.config import RFD_RULES
    from acp_lifecycle.model.variants import VARIANTS

    from acp_lifecycle.sims.configs import get_suite

    cfg = get_suite(member).members[0]
    if rules is None:
        rules = RFD_RULES if to == "v1" else VARIANTS["v1"].rules
    t0 = time.perf_counter()
    transcripts, paths = model_transcripts(cfg, rules, conn)
    violations: dict = {}
    questions: dict = {}
    for tr in transcripts:
        run = run_bridge(tr, to, **options)
        for pid, msgs in check_properties(run).items():
            if msgs and pid not in violations:
                violations[pid] = (tr, msgs)
        for p in run.problems:
            if p.kind not in questions:
                questions[p.kind] = (tr, p)
        if until is not None and until in violations:
            break
    return BridgeExploration(member, to, dict(options), paths, len(transcripts), time.perf_counter() - t0, violations, questions)


def client_view(entries) -> dict:
    """What each connection's client ends up knowing, for comparing transcripts across bridges.

    Per connection: ``prompts`` (request id -> the response's result or
    ``{"error": ...}``), ``messages`` ((kind, messageId) -> content, the upsert
    rules applied: a whole update replaces, a chunk appends), ``idles`` (the
    ``(stopReason, error)`` of each idle that ends work) and ``tools`` (last status).
    """
    view: dict = {}
    for e in (x[1] if isinstance(x, tuple) else x for x in entries):
        m = _msg(e) if isinstance(e, dict) else None
        if m is None:
            continue
        v = view.setdefault(str(e.get("conn")), {"prompts": {}, "messages": {}, "idles": [], "tools": {}, "_fg": "idle"})
        if e.get("from") == "client" and m.get("method") == "session/prompt":
            v["prompts"][json.dumps(m.get("id"))] = None
        elif e.get("from") == "agent" and "method" not in m and json.dumps(m.get("id")) in v["prompts"]:
            v["prompts"][json.dumps(m.get("id"))] = m["result"] if "result" in m else {"error": m.get("error")}
        elif m.get("method") == "session/update":
            u = _params(m).get("update", {})
            kind = u.get("sessionUpdate", "")
            base = kind[: -len("_chunk")] if kind.endswith("_chunk") else kind
            if base in CHUNK_OF:
                key = (base, u.get("messageId"))
                if kind == base:
                    if "content" in u:
                        v["messages"][key] = list(u["content"] or [])
                else:
                    v["messages"].setdefault(key, []).append(u.get("content"))
            elif kind == "state_update":
                if u.get("state") == "idle" and v["_fg"] != "idle":
                    v["idles"].append((u.get("stopReason"), u.get("error")))
                v["_fg"] = u.get("state")
            elif kind in ("tool_call", "tool_call_update"):
                v["tools"][u.get("toolCallId")] = u.get("status", v["tools"].get(u.get("toolCallId")))
    for v in view.values():
        del v["_fg"]
    return view


def compact(entries) -> list[str]:
    """One line per entry: ``conn from summary`` (``sims``' wire summary where it applies)."""
    from acp_lifecycle.model.wire import summary

    lines = []
    for e in entries:
        if not isinstance(e, dict):
            lines.append(repr(e))
            continue
        if e.get("event"):
            lines.append(f"{e.get('conn')} {e['event']}")
            continue
        m = e.get("msg")
        try:
            text = summary(m)
            if isinstance(m, dict) and m.get("method") == "session/update":
                u = m["params"]["update"]
                if u.get("sessionUpdate") in ("user_message", "user_message_chunk", "agent_message_chunk") and "messageId" not in u:
                    text = f"{u['sessionUpdate']} (no messageId)"
            if isinstance(m, dict) and "error" in m and "method" not in m:
                text += f" {m['error'].get('message', '')!r}" if isinstance(m["error"], dict) else ""
        except (AttributeError, KeyError, TypeError, IndexError):
            text = json.dumps(m, separators=(",", ":"))[:100]
        lines.append(f"{e.get('conn')} {e.get('from')}: {text}")
    return lines
