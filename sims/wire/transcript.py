"""JSON-RPC transcripts: export model traces, and check a real agent's transcript.

Format (docs/transcripts.md): JSON Lines, one object per line,
``{"conn": LABEL, "from": "client" | "agent", "msg": <JSON-RPC message>}``, in
the order observed at the agent, all connections of one agent in one file.
Blank lines are allowed. A tool that knows a connection closed may write
``{"conn": LABEL, "event": "closed"}``. A transcript may start at any point;
``initialize`` may be absent (v2 is assumed).

``check_transcript`` applies every rule observable on the wire. Findings name
the model's property (its id, clause and quoted sentence: the same definitions
the explorers check), a severity (``violation`` for a MUST, ``warning`` for a
SHOULD or a rule the RFD defers) and the line number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from acp_lifecycle.model.properties import BY_ID
from acp_lifecycle.model.wire import agent_message, client_message

__all__ = ["Finding", "TranscriptError", "export", "dumps", "parse", "parse_text", "check_transcript", "V1_STOP_REASONS"]

V1_STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")
KNOWN_STOP_REASONS = V1_STOP_REASONS + ("error",)
WORKING = ("running", "requires_action")


class TranscriptError(ValueError):
    """The transcript is unusable (not JSON, a line without msg, a missing file); one line."""


# Rules the model has no property for: they are about the JSON-RPC envelope.
WIRE_RULES = {
    "response_matches_a_request": (
        "JSON-RPC 2.0",
        "A response carries the id of a request the other side sent and has not answered.",
    ),
    "custom_stop_reason_prefixed": (
        "RFD-ERROR-FIELD-ONLY",
        "Extensions MUST NOT define custom non-underscore values. (enum-variant-extension RFD)",
    ),
    "updates_only_for_opened_sessions": (
        "S240-STATE-NEW-IDLE",
        "A connection receives updates only for sessions it created or resumed.",
    ),
    "schema_valid": ("2.4.0", "Every message validates against the official v2 schema for its method."),
}


@dataclass
class Finding:
    line: int
    property: str
    severity: str
    message: str

    @property
    def clause(self) -> str:
        if self.property in BY_ID:
            p = BY_ID[self.property]
            return p.clauses[0] if p.clauses else ""
        return WIRE_RULES.get(self.property, ("", ""))[0]

    @property
    def quote(self) -> str:
        if self.property in BY_ID:
            return BY_ID[self.property].quote
        return WIRE_RULES.get(self.property, ("", ""))[1]

    def data(self) -> dict:
        return {
            "line": self.line,
            "property": self.property,
            "severity": self.severity,
            "message": self.message,
            "clause": self.clause,
        }


# ---------------------------------------------------------------------------
# Export: a model trace as the transcript the agent would log
# ---------------------------------------------------------------------------


def export(trace) -> list[dict]:
    """The transcript of a model trace, as observed at the agent.

    A client's message appears when the agent handles it; what the agent sends
    appears when it sends it (broadcasts once per connection); a lost
    connection or a restart closes connections. Client ``c``'s connections are
    labelled ``c0``, ``c0.1``, ``c0.2``, ... in the order they open.
    """
    lines: list[dict] = []
    epoch: dict[int, int] = {}

    def label(c: int) -> str:
        e = epoch.get(c, 0)
        return f"c{c}" if e == 0 else f"c{c}.{e}"

    for pre, step in trace:
        name = step.action[0]
        if name == "ClientResume":
            epoch[step.action[1]] = epoch.get(step.action[1], 0) + 1
        elif name in ("AgentReceive", "AgentResume"):
            c = step.action[1]
            lines.append({"conn": label(c), "from": "client", "msg": client_message(pre.up[c][0])})
        elif name == "ConnectionLost":
            lines.append({"conn": label(step.action[1]), "event": "closed"})
        elif name == "AgentRestart":
            for c, cl in enumerate(pre.clients):
                if cl.connected:
                    lines.append({"conn": label(c), "event": "closed"})
        for c, msg in step.emitted:
            lines.append({"conn": label(c), "from": "agent", "msg": agent_message(msg)})
    return lines


def dumps(lines: list[dict]) -> str:
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


def parse(path: Path) -> list[tuple[int, dict]]:
    """``[(line number, entry), ...]``; TranscriptError (one line) for an unusable file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TranscriptError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TranscriptError(f"{path}: is a directory") from None
    except UnicodeDecodeError as e:
        raise TranscriptError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise TranscriptError(f"{path}: cannot read: {e.strerror}") from None
    return parse_text(text, str(path))


def parse_text(text: str, name: str = "<transcript>") -> list[tuple[int, dict]]:
    """Parse transcript text; TranscriptError names the file and line."""
    path = name
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except ValueError as e:
            raise TranscriptError(f"{path}:{n}: not JSON ({getattr(e, 'msg', e)})") from None
        except RecursionError:
            raise TranscriptError(f"{path}:{n}: JSON nested too deeply") from None
        if not isinstance(entry, dict):
            raise TranscriptError(f"{path}:{n}: a line must be a JSON object, not {type(entry).__name__}")
        if not isinstance(entry.get("conn"), (str, int)):
            raise TranscriptError(f"{path}:{n}: a line needs \"conn\" (a connection label)")
        if entry.get("event") == "closed":
            out.append((n, entry))
            continue
        if entry.get("from") not in ("client", "agent"):
            raise TranscriptError(f"{path}:{n}: \"from\" must be \"client\" or \"agent\"")
        if not isinstance(entry.get("msg"), dict):
            raise TranscriptError(f"{path}:{n}: a line needs \"msg\" (a JSON-RPC message object)")
        out.append((n, entry))
    return out


# ---------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------


@dataclass
class _Conn:
    pending: dict = field(default_factory=dict)  # (sender, id) -> (method, line, params)
    answered: dict = field(default_factory=dict)  # (sender, id) -> line of the response
    acked: dict = field(default_factory=dict)  # messageId -> line of the success response
    echoed: set = field(default_factory=set)  # messageIds reported on this connection
    held: dict = field(default_factory=dict)  # messageId -> content held by the client (from updates)
    sessions: set = field(default_factory=set)  # sessions opened or resumed here
    started: bool = False  # the transcript shows this connection's start (initialize)
    closed: bool = False
    resume: dict | None = None  # the resume in progress: {"id", "line", "replay", "cleared", "state_seen"}


@dataclass
class _Session:
    state: str = "idle"
    stop: str | None = None  # stop reason of the last idle, None after running
    cancel_line: int = 0  # a session/cancel received while work ran, not yet followed by an idle
    tools: dict = field(default_factory=dict)  # tool calls of the current work -> last status
    ended_tools: set = field(default_factory=set)


def check_transcript(entries: list[tuple[int, dict]], partial: bool = False, validator=None) -> list[Finding]:
    """Every rule observable on the wire, applied to a parsed transcript."""
    findings: list[Finding] = []
    conns: dict[str, _Conn] = {}
    sessions: dict[str, _Session] = {}
    accepted: dict[str, int] = {}  # messageId -> line of the first success response

    def add(line, prop, message, severity="violation"):
        findings.append(Finding(line, prop, severity, message))

    for n, entry in entries:
        conn = conns.setdefault(str(entry["conn"]), _Conn())
        if entry.get("event") == "closed":
            conn.closed = True
            continue
        try:
            _line(n, entry, conn, sessions, accepted, validator, add)
        except (AttributeError, TypeError, KeyError, ValueError) as e:
            # A message too malformed for a rule to read: that is the finding.
            add(n, "schema_valid", f"malformed message ({type(e).__name__}: {e})")
    if not partial:
        for label, conn in conns.items():
            if conn.closed:
                continue
            for mid, line in conn.acked.items():
                if mid not in conn.echoed:
                    add(line, "every_inserted_message_echoed", f"messageId {mid!r} was acknowledged on {label} and never reported there by user_message or user_message_chunk")
    findings.sort(key=lambda f: (f.line, f.property))
    return findings


def _line(n, entry, conn, sessions, accepted, validator, add):
    """Apply the rules to one message."""
    msg, sender = entry["msg"], entry["from"]
    method = msg.get("method")
    if method == "initialize":
        conn.started = True
    if validator is not None:
        request_method = None
        if method is None and "id" in msg:
            other = "agent" if sender == "client" else "client"
            request_method = conn.pending.get((other, _key(msg["id"])), (None,))[0]
        for problem in validator.check(msg, sender, request_method):
            add(n, "schema_valid", problem)
    if method is not None:
        if "id" in msg:
            conn.pending[(sender, _key(msg["id"]))] = (method, n, msg.get("params") or {})
        if sender == "client":
            _client_request(n, conn, sessions, method, msg, add)
        else:
            _agent_notification(n, conn, sessions, method, msg, add)
        return
    # A response.
    rid = _key(msg.get("id"))
    other = "agent" if sender == "client" else "client"
    if (other, rid) in conn.answered:
        add(n, "one_response_per_request", f"a second response to request {msg.get('id')!r} (the first was on line {conn.answered[(other, rid)]})")
        return
    request = conn.pending.pop((other, rid), None)
    if request is None:
        add(n, "response_matches_a_request", f"a response to request {msg.get('id')!r}, which this connection has no record of sending", "warning" if not conn.started else "violation")
        return
    conn.answered[(other, rid)] = n
    req_method, req_line, params = request
    if sender == "agent" and req_method == "session/prompt" and "result" in msg:
        _prompt_result(n, conn, accepted, msg["result"], add)
    if sender == "agent" and req_method == "session/resume":
        _resume_response(n, conn, sessions, params, msg, add)


def _key(rid):
    return json.dumps(rid)


def _client_request(n, conn, sessions, method, msg, add):
    params = msg.get("params") or {}
    sid = params.get("sessionId")
    if method == "session/resume" and sid is not None:
        conn.sessions.add(sid)
        replay = bool(params.get("replayFrom"))
        conn.resume = {"id": _key(msg.get("id")), "line": n, "replay": replay, "cleared": set(), "state_seen": False}
    elif method == "session/cancel" and sid is not None:
        s = sessions.setdefault(sid, _Session())
        if s.state in WORKING:
            s.cancel_line = n
    elif sid is not None and method.startswith("session/"):
        conn.sessions.add(sid) if not conn.started else None


def _agent_notification(n, conn, sessions, method, msg, add):
    if method != "session/update":
        return
    params = msg.get("params") or {}
    sid = params.get("sessionId")
    update = params.get("update") or {}
    kind = update.get("sessionUpdate")
    if conn.started and sid not in conn.sessions:
        add(n, "updates_only_for_opened_sessions", f"a {kind} update for session {sid!r}, which this connection never created or resumed")
    s = sessions.setdefault(sid, _Session())
    in_resume = conn.resume is not None
    if kind == "state_update":
        _state_update(n, conn, s, update, add)
    elif kind in ("user_message", "user_message_chunk"):
        mid = update.get("messageId")
        if in_resume and not conn.resume["replay"]:
            add(n, "no_replay_without_replay_from", f"a {kind} for {mid!r} while resuming without replayFrom (request on line {conn.resume['line']})")
        if kind == "user_message":
            content = update.get("content")
            if in_resume and content == []:
                conn.resume["cleared"].add(mid)
            if content is not None or "content" in update:
                conn.held[mid] = len(content or [])
        else:
            if in_resume and conn.resume["replay"] and mid not in conn.resume["cleared"]:
                # "When replay reconstructs a user message from its beginning using
                # chunks, the agent MUST first send a user_message update with content: []"
                add(n, "chunked_replay_resets_first", f"a replayed chunk of {mid!r} without a user_message with content [] first")
                conn.resume["cleared"].add(mid)
            conn.held[mid] = conn.held.get(mid, 0) + 1
        conn.echoed.add(mid)
    elif kind in ("tool_call", "tool_call_update"):
        tid = update.get("toolCallId")
        if tid in s.ended_tools and tid not in s.tools:
            add(n, "no_update_after_idle_of_its_work", f"{kind} for {tid!r} after the idle that ended its work")
        s.tools[tid] = update.get("status", s.tools.get(tid, "pending"))


def _state_update(n, conn, s, update, add):
    state = update.get("state")
    if conn.resume is not None:
        conn.resume["state_seen"] = True
    if state in WORKING:
        if s.state == "idle":
            s.tools = {}
        s.state, s.stop = state, None
        return
    if state != "idle":
        return
    stop = update.get("stopReason")
    if "error" in update and stop != "error":
        add(n, "error_only_with_error_stop_reason", f"an idle with stopReason {stop!r} carries an error object")
    if stop is not None and stop not in KNOWN_STOP_REASONS and not str(stop).startswith("_"):
        add(n, "custom_stop_reason_prefixed", f"stopReason {stop!r} is neither a defined value nor a custom value starting with _")
    if s.state == "idle" and s.stop is not None and stop is not None and stop != s.stop:
        add(n, "no_second_stop_reason", f"work already reported idle with {s.stop!r} is reported idle again with {stop!r}")
    if s.state in WORKING and s.cancel_line and stop not in (None, "cancelled"):
        add(n, "cancelled_work_ends_cancelled", f"work cancelled by session/cancel (line {s.cancel_line}) ended with stopReason {stop!r}")
    if stop == "error" and s.state in WORKING:
        unfinished = sorted(t for t, st in s.tools.items() if st not in ("completed", "failed"))
        if unfinished:
            add(n, "tools_terminal_before_error_idle", f"the error idle leaves tool call(s) {unfinished} unfinished", "warning")
    if s.state in WORKING:
        s.ended_tools |= set(s.tools)
        s.tools = {}
        s.cancel_line = 0
    s.state = "idle"
    if stop is not None:
        s.stop = stop


def _prompt_result(n, conn, accepted, result, add):
    if not isinstance(result, dict):
        add(n, "success_carries_message_id", "the session/prompt result is not an object")
        return
    if "stopReason" in result:
        add(n, "success_carries_message_id", f"a v1 session/prompt result (stopReason {result['stopReason']!r}) on a v2 connection")
    mid = result.get("messageId")
    if not isinstance(mid, str):
        add(n, "success_carries_message_id", f"the session/prompt result has messageId {mid!r}, not a string")
        return
    if mid in accepted:
        add(n, "distinct_message_ids", f"messageId {mid!r} was already returned for another submission (line {accepted[mid]})")
    else:
        accepted[mid] = n
    conn.acked[mid] = n


def _resume_response(n, conn, sessions, params, msg, add):
    resume = conn.resume
    conn.resume = None
    if "result" in msg and resume is not None and not resume["state_seen"]:
        add(
            n,
            "resumed_client_sees_current_state",
            "the session/resume response was not preceded by a state_update after the resume request "
            "(required by the 2.4.0 schema; the RFD defers it)",
            "warning",
        )
