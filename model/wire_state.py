"""What the wire monitor (``monitor.py``) remembers of a transcript, and how it reads ids.

Ids are compared exactly as sent (``id_key``): ``1``, ``1.0`` and ``"1"`` are three
ids, and an integer beyond 2^53 is compared digit for digit. The records below are
the monitor's memory: per request (``PendingRequest``), per resume window (``ResumeWindow``),
per session as one connection was told about it (``SessionView``), per connection
(``Connection``) and per session across connections (``SessionRecord``). ``monitor.py``
moves them message by message; the rules they feed are ``wire_rules.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .wire_rules import FINAL_TOOL

__all__ = [
    "RawFloat",
    "id_key",
    "shown_id",
    "with_article",
    "PendingRequest",
    "ResumeWindow",
    "SessionView",
    "Connection",
    "SessionRecord",
    "session_key",
    "object_or_empty",
    "permission_tool_call",
    "background_items",
    "is_announced",
    "is_final",
]


# ---------------------------------------------------------------------------
# Ids, exactly as sent


class RawFloat(float):
    """A JSON number with a fraction or exponent, keeping its literal (``1.0`` is not ``1``).

    Use as ``json.loads(text, parse_float=RawFloat)``.
    """

    __slots__ = ("literal",)

    def __new__(cls, literal: str):
        obj = super().__new__(cls, literal)
        obj.literal = literal
        return obj


def id_key(rid) -> str:
    """A request id as compared on the wire: its JSON text.

    >>> id_key(1), id_key("1"), id_key(RawFloat("1.0")), id_key(2**64 + 1)
    ('1', '"1"', '1.0', '18446744073709551617')
    """
    t = type(rid)
    if t is str:  # the common cases first, as json.dumps writes them (it calls these two)
        return _quoted(rid)
    if t is int:
        return int.__repr__(rid)
    if isinstance(rid, RawFloat):
        return rid.literal
    if isinstance(rid, bool) or rid is None or isinstance(rid, (int, str)):
        return json.dumps(rid)
    try:
        return _canonical(rid)
    except (TypeError, ValueError):
        return repr(rid)


#: ``json.dumps`` of a string (ensure_ascii, as by default)
_quoted = json.encoder.encode_basestring_ascii
#: ``json.dumps(value, sort_keys=True)``, without building an encoder per call (prompt content blocks)
_canonical = json.JSONEncoder(sort_keys=True).encode


def with_article(word) -> str:
    """``word`` with its indefinite article: "an agent_message_chunk", "a tool_call"."""
    return f"{'an' if str(word)[:1] in 'aeiou' else 'a'} {word}"


def shown_id(rid) -> str:
    """A request id as a finding shows it: its JSON text, cut to 60 characters."""
    text = id_key(rid)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------------------
# State


@dataclass
class PendingRequest:
    sender: str
    method: str
    line: int
    params: dict
    session: object = None
    #: line of the sender's $/cancel_request for it
    cancel_request: int = 0
    #: line of a session/cancel (or a message that cancels as it does) that found it pending (permissions)
    cut_by: int = 0


@dataclass
class ResumeWindow:
    line: int
    replay: bool
    cursor_ok: bool
    cleared: set = field(default_factory=set)
    snapshot: int = 0  # line of the last state_update in the window
    snapshot_state: object = None
    created_view: bool = False
    #: the connection has had the session open since its session/new: every user message
    #: inserted since was echoed to it live, so a replayed messageId must be one it knows
    watch: bool = False


@dataclass
class SessionView:
    """One session as one connection was told about it."""

    opened: int = 0
    how: str = "seen"  # "new", "resume", "seen" (the log does not show how)
    provisional: int = 0  # an update before the session/new response that may create it
    state: object = None  # None: not known
    stop: object = None
    tool_status: dict = field(default_factory=dict)
    tool_cancel: dict = field(default_factory=dict)
    terminals: dict = field(default_factory=dict)  # terminalId -> exited
    background: object = None  # frozenset of item keys of the last list, None if not reported
    acked: dict = field(default_factory=dict)  # messageId -> line of the success response
    echoed: set = field(default_factory=set)
    cancel: int = 0  # line of a session/cancel (or a message that cancels as it does) that found this view working
    cancel_perms: dict = field(default_factory=dict)  # agent request key -> line
    closed_at: int = 0  # line where the connection left the session (a proposal's response that closes it)
    flagged: set = field(default_factory=set)
    resume: ResumeWindow | None = None
    expect: tuple | None = None  # (line, state, conn) of another connection's resume snapshot
    tool_cancels: dict = field(default_factory=dict)  # toolCallId -> line of the accepted tool_call/cancel
    custom_work: int = 0  # line of a custom state reported right after idle (no standard state since)
    replayed_unknown: dict = field(default_factory=dict)  # messageId -> line: replayed, not known live yet
    reqaction_flagged: bool = False
    judged: dict = field(default_factory=dict)  # judge id -> its state on this view (model/judges/)


@dataclass
class Connection:
    label: str
    started: bool = False
    closed: bool = False
    pending: dict = field(default_factory=dict)  # (sender, key) -> PendingRequest
    answered: dict = field(default_factory=dict)  # (sender, key) -> line of the response
    views: dict = field(default_factory=dict)  # sessionId key -> SessionView
    new_pending: int = 0
    #: the client's initialize carries an extension (a `_` key): it may have advertised custom states
    extensions: bool = False
    judged: dict = field(default_factory=dict)  # judge id -> its state on this connection (model/judges/)


@dataclass
class SessionRecord:
    created: bool = False
    ran: bool = False
    background_since: int = 0
    message_ids: dict = field(default_factory=dict)  # messageId -> line of the success response
    not_approved: dict = field(default_factory=dict)  # toolCallId -> line that made it not approved
    live_user_ids: set = field(default_factory=set)  # user messageIds reported live (outside a replay)


def session_key(value):
    """A session id as a dict key (any JSON value)."""
    return value if isinstance(value, str) else id_key(value)


def object_or_empty(value) -> dict:
    """``value`` if it is a JSON object, else ``{}`` (a malformed part reads as empty)."""
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------------------
# Readers of message parts


def permission_tool_call(params: dict):
    """The toolCallId a session/request_permission asks about, or None."""
    subject = object_or_empty(params.get("subject"))
    if subject.get("type") == "tool_call":
        tid = object_or_empty(subject.get("toolCall")).get("toolCallId")
        return tid if isinstance(tid, str) else None
    if subject.get("type") == "command":
        tid = subject.get("toolCallId")
        return tid if isinstance(tid, str) else None
    return None


def background_items(listed):
    """The keys of a well-formed background list, or None (omitted, null or malformed: not reported)."""
    if not isinstance(listed, list):
        return None
    out = set()
    for item in listed:
        if not isinstance(item, dict):
            return None
        kind = item.get("type")
        if kind == "tool_call" and isinstance(item.get("toolCallId"), str):
            out.add(("tool_call", item["toolCallId"]))
        elif kind == "terminal" and isinstance(item.get("terminalId"), str):
            out.add(("terminal", item["terminalId"]))
        elif isinstance(kind, str):
            continue  # a custom or future item: nothing to check
        else:
            return None
    return frozenset(out)


def is_announced(view: SessionView, item) -> bool:
    """The background item was reported to this view before (a tool call or a terminal)."""
    kind, ident = item
    return ident in (view.tool_status if kind == "tool_call" else view.terminals)


def is_final(view: SessionView, item) -> bool:
    """The background item has ended, as this view was told (a final tool status, an exited terminal)."""
    kind, ident = item
    if kind == "tool_call":
        return view.tool_status.get(ident) in FINAL_TOOL
    return bool(view.terminals.get(ident))


def not_a_message(value) -> str:
    """A transcript's ``msg`` that is JSON but not one message object, as a finding says it."""
    if isinstance(value, list):
        what = "a batch" if value and all(isinstance(v, dict) for v in value) else "an array"
    elif isinstance(value, (bool, type(None))):
        what = json.dumps(value)
    else:
        what = "a string" if isinstance(value, str) else "a number"
    return f"{what}, not one JSON-RPC message object: {json.dumps(value, default=str)[:80]}"
