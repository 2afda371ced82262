"""What both bridges share: the sentences they rest on, problems, the base class, message helpers."""

from __future__ import annotations

import json
import math
from collections import deque
from typing import NamedTuple

from .translate import say


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
# Outside the prompt lifecycle: the rest of the handshake and the session methods
# (acp-notes.md 1.6, 1.11; the session-close RFD; the 2.4.0 v2 schema)
Q_RUNTIME = (
    "SDKs supporting both versions should expose explicit versioned implementations or build a purpose-specific "
    "adapter at their runtime boundary."
)
Q_CLOSE = (
    "The Agent **MUST** cancel any ongoing work for that session as if `session/cancel` had been called, then free "
    "the resources"
)
Q_NO_REPLAY = "When `replayFrom` is omitted or `null`, the Agent **MUST NOT** replay"
Q_REPLAY_CURSOR = (
    "Agents MUST reject unsupported cursor types or malformed cursor values with `-32602` (Invalid params), rather "
    "than substituting another cursor or resuming without replay."
)
Q_REPLAY_ID = (
    "If an agent retains and replays that same message within the session, it MUST reuse the returned messageId, "
    "including after reconnecting or restarting."
)
Q_SCHEMA = "Every message validates against the official v2 schema for its method."
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
    "no-v1-equivalent": ("v1", "a v2 message, field or value with no v1 counterpart", Q_RUNTIME),
    # v1 agent -> v2 clients
    "ambiguous-echo": ("v2", "a v1 echo (or other first evidence of insertion) while several prompts await insertion", Q_CORRELATE),
    "echo-after-error": ("v2", "a v1 echo after the bridge forwarded an error response as a rejection", Q_RESPONSE),
    "several-stop-reasons": ("v2", "overlapping v1 turns that end differently: v2 has one idle for the session", Q_SESSION_SCOPED),
    "failure-while-work-continues": ("v2", "one of several held v1 prompts fails while another keeps the turn open", Q_RESPONSE),
    "update-after-idle": ("v2", "a v1 update for a tool call of work the bridge already reported idle", Q_IDLE_LAST),
    "v1-agent-not-v1": ("v2", "the v1 agent sends something v1 does not have (a state_update, stopReason \"error\")", Q_V1_CLOSED),
    "v1-cancel-not-cancelled": ("v2", "the v1 agent ends a cancelled turn with another stop reason", Q_V1_CANCEL),
    "no-v2-equivalent": ("v2", "a v1 message, field or value with no v2 counterpart", Q_RUNTIME),
    "close-emulated": ("v2", "session/close for a v1 agent without it: the bridge cancels the work and answers", Q_CLOSE),
    "resume-through-load": ("v2", "a resume without replay for a v1 agent that can only load: the replay is withheld", Q_NO_REPLAY),
    "no-replay": ("v2", "a resume with replay for a v1 agent that cannot load: refused", Q_REPLAY_CURSOR),
    "replay-message-id": ("v2", "a replayed v1 message without messageId: the ID returned at insertion is lost", Q_REPLAY_ID),
    # both
    "malformed": ("both", "a line that is not a JSON-RPC message the bridge can read", "JSON-RPC 2.0"),
    "unbridged-method": ("both", "a method with no counterpart on the other side: a request is answered -32601", Q_RUNTIME),
    "invalid-output": ("both", "a message the bridge built that its side's schema rejects: not sent", Q_SCHEMA),
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
#: v1 updates that are evidence that the agent took a held prompt and its turn is under way:
#: the prompt's echo, and the turn's own output (content, tool calls, plans). A permission
#: request and the v1 response are evidence too. Session metadata (commands, modes, config
#: options, session info, usage) and notices are not: an agent sends them at any time, about
#: the session rather than a prompt (claude-agent-acp's commands arrive after session/new,
#: its usage after a turn), so they cannot tell that this prompt was taken. Neither is
#: anything the bridge did itself: "An ID assigned in advance is not by itself evidence of
#: insertion."
EVIDENCE = frozenset({
    "user_message_chunk", "user_message", "agent_message_chunk", "agent_thought_chunk", "tool_call",
    "tool_call_update", "plan", "plan_update",
})
INTERNAL_ERROR = {"code": -32603, "message": "Internal error"}
CANCELLED = -32800


def request_key(rid):
    """A hashable key for a JSON-RPC id (1 and "1" are different ids)."""
    if rid is None or type(rid) in (str, int):
        return (type(rid).__name__, rid)
    return ("json", json.dumps(rid, sort_keys=True))


def bad_number_at(value, where: str = "msg") -> str:
    """Where ``value`` holds a number JSON does not have (NaN, Infinity), else ''."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    if isinstance(value, dict):
        for k, v in value.items():
            found = bad_number_at(v, f"{where}.{k}")
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = bad_number_at(v, f"{where}[{i}]")
            if found:
                return found
    return ""


def _is_jsonrpc(msg, numbers: bool = True) -> str:
    """'' for a readable JSON-RPC message, else why not (a plain sentence). ``numbers``:
    also refuse NaN and Infinity (off only for messages known finite: the model's)."""
    if not isinstance(msg, dict):
        return "msg is not an object"
    if numbers:
        try:
            json.dumps(msg, allow_nan=False)  # (in C: the walk below only finds where)
        except ValueError:
            return f"{bad_number_at(msg) or 'a number'} is NaN or Infinity, which JSON does not have"
        except (TypeError, RecursionError):
            return "msg holds something JSON cannot carry"
    if "id" in msg and not (msg["id"] is None or isinstance(msg["id"], (str, float)) or type(msg["id"]) is int):
        return f"the id {say(msg['id'])} is not a string, a number or null"
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return "method is not a string"
        if "params" in msg and not isinstance(msg["params"], (dict, list)):
            return "params is neither an object nor an array"
        params = msg.get("params")
        if msg["method"] == "session/update":
            update = params.get("update") if isinstance(params, dict) else None
            if not isinstance(update, dict):
                return "a session/update without an update object"
            if not isinstance(update.get("sessionUpdate"), str):
                return "a session/update whose update has no sessionUpdate kind"
        if msg["method"] == "session/prompt" and "id" in msg:
            if not isinstance(params, dict) or not isinstance(params.get("prompt"), list):
                return "a session/prompt whose prompt is not an array"
        return ""
    if "id" not in msg:
        return "neither a request, a notification nor a response (no method, no id)"
    if ("result" in msg) == ("error" in msg):
        return "a response needs exactly one of result and error"
    if "error" in msg and not isinstance(msg["error"], dict):
        return "error is not an object"
    return ""


_UNREADABLE = {
    KeyError: "it lacks a field the bridge needs",
    TypeError: "a field has a type the bridge cannot use",
    AttributeError: "a field has a type the bridge cannot use",
    ValueError: "a field has a value the bridge cannot use",
    IndexError: "a list is shorter than the bridge needs",
}


class Bridge:
    """What both bridges share: feeding, emitting, problems, provenance."""

    to = ""
    BUGS: tuple[str, ...] = ()
    #: Each bridge's own options: name -> its choices, the default first (``insertion`` of
    #: V1AgentToV2Client, ``background`` of V2AgentToV1Client). Each becomes an attribute.
    OPTIONS: dict[str, tuple[str, ...]] = {}

    def __init__(self, bug: str = "", validators: dict | None = None, history: bool = True, **options: str) -> None:
        if bug and bug not in self.BUGS:
            raise ValueError(f"unknown bug {bug!r} for {type(self).__name__}; choose from {', '.join(self.BUGS)}")
        for name in options.keys() - self.OPTIONS.keys():
            raise TypeError(f"{type(self).__name__} has no option {name!r}; it has {', '.join(self.OPTIONS)}")
        for name, choices in self.OPTIONS.items():
            value = options.get(name, choices[0])
            if value not in choices:
                raise ValueError(f"{name} must be {' or '.join(map(repr, choices))}, not {value!r}")
            setattr(self, name, value)
        self.bug = bug
        #: The schema validator of each side, by who sends there: {"client": ..., "agent": ...}.
        #: With them, a message the bridge built that its side's schema rejects is not sent
        #: (problem ``invalid-output``); without them (the model explorations) nothing is checked.
        self.validators = validators or {}
        #: (conn, requester, id key) -> method, of every request received from either side
        self._asked: dict = {}
        #: (conn, id key) -> what a request was translated into (each bridge keeps its own pair)
        self._routes: dict[tuple, tuple] = {}
        #: Refuse NaN and Infinity in what is fed (off only for the model's own messages).
        self.check_numbers = True
        self.problems: list[Problem] = []
        #: The output side's transcript, with provenance: what its clients sent (as fed) and
        #: everything the bridge sent them, in order (``to="v2"``: the v2 side).
        self.trace: list[Out] = []
        #: The other side's transcript: what the bridge sent the agent and what the agent sent.
        self.agent_side: list[Out] = []
        #: input lines that carried nothing new and were absorbed (see the module doc)
        self.absorbed: list[int] = []
        #: Keep ``trace``, ``agent_side`` and ``absorbed`` (what the converter and the properties
        #: read). A live bridge (``bridge serve``) runs without: it keeps only what the translation
        #: needs, so its memory stays flat over a long session, and empties ``problems`` itself.
        self.history = history
        self._recent: deque = deque(maxlen=4)  # the last problems (one said once, see problem())
        self._line = 0
        self._out: list[dict] = []

    # -- feeding --------------------------------------------------------------
    def feed(self, entry: dict, line: int | None = None) -> list[dict]:
        """Feed one entry as the bridge receives it: a client's message in the client's
        version, the agent's in the agent's. Returns what the bridge sends: entries ``from``
        ``"client"`` go to the agent, entries ``from`` ``"agent"`` to the client of ``conn``."""
        self._line = self._line + 1 if line is None else line
        self._out = []
        try:
            if not isinstance(entry, dict) or "conn" not in entry:
                self.problem("malformed", "not a transcript entry (an object with conn)")
            elif entry.get("event") == "closed":
                self._emit_entry(dict(entry))
                if self.history:
                    self.agent_side.append(Out(self._line, self._line, dict(entry)))
                conn = str(entry["conn"])
                for table in (self._routes, self._asked):  # the connection's open requests die with it
                    for k in [k for k in table if k[0] == conn]:
                        del table[k]
                self._closed(conn)
            elif entry.get("from") not in ("client", "agent"):
                self.problem("malformed", 'not a transcript entry: "from" must be "client" or "agent"')
            else:
                why = _is_jsonrpc(entry.get("msg"), self.check_numbers)
                if why:
                    self.problem("malformed", f"not a JSON-RPC message: {why}; not forwarded")
                else:
                    if self.history:
                        side = self.trace if entry["from"] == "client" else self.agent_side
                        side.append(Out(self._line, self._line, {"conn": str(entry["conn"]), "from": entry["from"], "msg": entry["msg"]}))
                    self.ask(str(entry["conn"]), entry["from"], entry["msg"])
                    self._message(str(entry["conn"]), entry["from"], entry["msg"])
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as e:
            why = next(why for cls, why in _UNREADABLE.items() if isinstance(e, cls))
            what = entry.get("msg", {}).get("method") if isinstance(entry.get("msg"), dict) else None
            self.problem("malformed", f"a {what or 'message'} the bridge cannot read ({why}); not forwarded")
        return self._out

    def finish(self, partial: bool = False) -> list[dict]:
        """The end of the input: what a bridge still owes (see each bridge)."""
        self._out = []
        self._finish(partial)
        return self._out

    # -- helpers ----------------------------------------------------------------
    def problem(self, kind: str, message: str, line: int | None = None) -> None:
        p = Problem(self._line if line is None else line, message, kind)
        if p not in self._recent:  # one idle answering several prompts says it once
            self._recent.append(p)
            self.problems.append(p)

    def absorb(self) -> None:
        """The input line carried nothing new (see the module doc)."""
        if self.history:
            self.absorbed.append(self._line)

    def _emit_entry(self, entry: dict, cause: int | None = None) -> None:
        """Send ``entry``: to the agent when it is from the client, else to the clients."""
        self._out.append(entry)
        if self.history:
            side = self.agent_side if entry.get("from") == "client" else self.trace
            side.append(Out(self._line if cause is None else cause, self._line, entry))

    def emit(self, conn: str, sender: str, msg: dict, cause: int | None = None) -> bool:
        """Send ``msg`` as ``sender`` on ``conn``; False when the output gate stopped it."""
        check = self.validators.get(sender)
        if check is not None and not self._valid(check, conn, sender, msg, cause):
            return False
        self._emit_entry({"conn": conn, "from": sender, "msg": msg}, cause)
        return True

    def _valid(self, check, conn: str, sender: str, msg: dict, cause: int | None) -> bool:
        """The output gate: True when ``msg`` validates against its side's schema. Otherwise
        it is not sent: a response becomes an internal error, a request is answered with one
        on the other side, a notification is dropped; each is a problem."""
        method = msg.get("method")
        asked = None
        if method is None:
            asked = self._asked.get((conn, "agent" if sender == "client" else "client", request_key(msg.get("id"))))
        found = check.check(msg, sender, asked)
        if not found:
            return True
        what = method or f"response to {asked or 'a request'}"
        self.problem("invalid-output", f"the bridge's {what} does not validate on its side ({found[0]}); not sent", cause)
        error = {"jsonrpc": "2.0", "id": msg.get("id"),
                 "error": {"code": -32603, "message": "Internal error: the bridge could not translate this message"}}
        if method is None and "id" in msg:
            self._emit_entry({"conn": conn, "from": sender, "msg": error}, cause)
        elif method is not None and "id" in msg:
            self._emit_entry({"conn": conn, "from": "agent" if sender == "client" else "client", "msg": error}, cause)
        return False

    def ask(self, conn: str, sender: str, msg: dict) -> None:
        """Remember the method of a request received from ``sender`` (its response's shape)."""
        if "id" in msg and isinstance(msg.get("method"), str):
            self._asked[(conn, sender, request_key(msg["id"]))] = msg["method"]

    def answered(self, conn: str, requester: str, rid) -> str | None:
        """The method of the request ``requester`` sent with id ``rid``, now answered."""
        return self._asked.pop((conn, requester, request_key(rid)), None)

    def reply(self, conn: str, requester: str, msg: dict, result=None, error: dict | None = None) -> None:
        """The bridge answers a request itself (the other side never sees it)."""
        answer = {"jsonrpc": "2.0", "id": msg.get("id")}
        answer.update({"error": error} if error is not None else {"result": {} if result is None else result})
        self.emit(conn, "agent" if requester == "client" else "client", answer)
        self.answered(conn, requester, msg.get("id"))

    def unbridged(self, conn: str, sender: str, msg: dict, side: str) -> None:
        """A method the other side does not have: a request is answered -32601, a notification dropped."""
        method = msg.get("method")
        if "id" in msg:
            self.problem("unbridged-method", f"{method} has no {side} counterpart; the bridge answered it with -32601 (method not found)")
            self.reply(conn, sender, msg, error={"code": -32601, "message": "Method not found", "data": {"method": method}})
        else:
            self.problem("unbridged-method", f"the notification {method} has no {side} counterpart; not forwarded")

    def _message(self, conn: str, sender: str, msg: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _closed(self, conn: str) -> None:
        pass

    def _finish(self, partial: bool) -> None:
        pass


def session_update(sid, update: dict) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}


def with_message_id(update: dict, mid) -> dict:
    """The update with ``messageId`` set, placed after ``sessionUpdate``."""
    new = {"sessionUpdate": update["sessionUpdate"], "messageId": mid}
    new.update((k, v) for k, v in update.items() if k not in new)
    return new


def params_of(msg: dict) -> dict:
    p = msg.get("params")
    return p if isinstance(p, dict) else {}
