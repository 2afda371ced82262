"""What a participant observed: typed records of the messages it sent and received.

The judges (``judges/``) are rules over these records, and the records are built from what
is on the wire (a transcript line, ``judges.record_of_json``) or what the model agent put on
it (``judges.record_of_model``), never from the model's own bookkeeping. Each is a small
immutable value with named fields; ``judges/`` re-exports them.

>>> StateUpdate("idle", "end_turn").stop_reason
'end_turn'
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "PromptResult",
    "PromptError",
    "UserMessage",
    "UserChunk",
    "ResumeRequest",
    "ResumeResult",
    "Response",
    "Request",
    "CancelRequest",
    "Closed",
    "Left",
    "SessionCancel",
    "Sent",
    "StateUpdate",
    "ToolUpdate",
]


class PromptResult(NamedTuple):
    """A successful ``session/prompt`` response, as sent by the agent."""

    rid: object
    #: the messageId: a string on the wire, the message's number in the model; None when
    #: it is absent, null or not a string
    message_id: object
    #: what else is wrong with the result ("" when nothing)
    problem: str = ""


class PromptError(NamedTuple):
    """An error response to ``session/prompt``."""

    rid: object
    code: object


class UserMessage(NamedTuple):
    """A ``user_message`` update (``content`` None: a metadata-only update; () is ``[]``)."""

    message_id: object
    content: object
    replay: bool


class UserChunk(NamedTuple):
    """A ``user_message_chunk`` update."""

    message_id: object
    replay: bool


class ResumeRequest(NamedTuple):
    """A ``session/resume`` request (``replay``: it carries ``replayFrom``)."""

    rid: object
    replay: bool


class ResumeResult(NamedTuple):
    """The response to ``session/resume`` (``ok``: a success)."""

    rid: object
    ok: bool = True


class Response(NamedTuple):
    """Any other response: to the request ``rid`` of ``asker`` ("agent" or "client")."""

    asker: str
    rid: object


class Request(NamedTuple):
    """Any request, by ``asker``: a later response names it by ``rid`` (which may then be reused)."""

    asker: str
    rid: object
    method: str


class CancelRequest(NamedTuple):
    """``$/cancel_request`` by ``asker`` for its own request ``rid``."""

    asker: str
    rid: object


class Closed(NamedTuple):
    """The connection is gone."""


class SessionCancel(NamedTuple):
    """A ``session/cancel`` notification, by the client."""


class StateUpdate(NamedTuple):
    """A ``state_update`` session update, as sent by the agent."""

    state: object
    #: None when absent (the model's "")
    stop_reason: object
    #: the error object's code, True for an error object without one, None when the
    #: update has no ``error`` field
    error: object = None
    #: the tool call ids of its ``background`` list (2.4.0), () when it lists none
    background: tuple = ()


class Left(NamedTuple):
    """The connection left the session (a close was answered): it stays open, and the session is no longer
    reported on it."""


class Sent(NamedTuple):
    """Any session update or request the agent sent for the session on a connection (its ``sessionUpdate`` or
    its method): for a rule about everything it sends there, read only where a judge asks for it."""

    kind: object


class ToolUpdate(NamedTuple):
    """A ``tool_call`` or ``tool_call_update`` (``status`` None: the update leaves it as it was)."""

    tool_id: object
    status: object
