"""Judges of a whole session (``per="session"``): each keeps its state per connection but reads what
every connection of the session carried. Message IDs distinct across the session; every inserted
message reported to every connection that was in the session when it was inserted."""

from __future__ import annotations

from typing import NamedTuple

from ..observed import (Closed, Left, PromptError, PromptResult, Request, ResumeRequest, ResumeResult, UserChunk,
                        UserMessage)
from ..records import compile_replace
from ._judge import Memory, Judge, rename_items, with_item, without_item

__all__ = ['JUDGES']

class _Ids(NamedTuple):
    """What one connection knows of a session's message IDs."""

    returned: Memory = ()  # every messageId a session/prompt success carried, on any connection
    replayed: Memory = ()  # IDs a resume replayed on this connection (messages inserted before it)
    here: Memory = ()  # ((request id, messageId), ...) of the successes on this connection
    pending: int = 0  # this connection's session/prompt requests not answered yet


compile_replace(_Ids)


def _distinct_message_ids(t: _Ids, rec, mine: bool):
    """A messageId names one message: no success carries one that another success carried, or
    one a replay on this connection showed while none of its prompts was pending (a replay
    shows messages inserted before it; the connection's later prompts are inserted after)."""
    k = type(rec)
    if k is PromptResult:
        mid, why = rec.message_id, ""
        if mine:
            t = t._replace(pending=max(t.pending - 1, 0))
        if mid is None or mid == 0:
            return t, ""
        if mine and (rec.rid, mid) in t.here:
            return t, ""  # the same answer again: one_response_per_request says so
        if mine:
            t = t._replace(here=with_item(t.here, (rec.rid, mid)))
        if mine and mid in t.returned:
            why = f"messageId {mid} was already returned for another submission"
        elif mine and mid in t.replayed:
            why = f"messageId {mid} was already replayed on this connection for another message"
        return (t if mid in t.returned else t._replace(returned=with_item(t.returned, mid))), why
    if not mine:
        return t, ""
    if k is Request:
        return (t._replace(pending=t.pending + 1) if rec.method == "session/prompt" else t), ""
    if k is PromptError:
        return t._replace(pending=max(t.pending - 1, 0)), ""
    if k is Closed:
        return t._replace(pending=0), ""
    if (k is UserMessage or k is UserChunk) and rec.replay and not t.pending:
        mid = rec.message_id
        if mid not in t.replayed and mid not in t.returned:
            return t._replace(replayed=with_item(t.replayed, mid)), ""
    return t, ""


def _rename_ids(t: _Ids, f) -> _Ids:
    return t._replace(returned=rename_items(t.returned, f), replayed=rename_items(t.replayed, f),
                      here=rename_items(t.here, lambda p: (p[0], f(p[1]))))


class _Echo(NamedTuple):
    """What one connection is owed of a session's user messages."""

    attached: bool = True  # the connection is in the session (a new session's clients are)
    owed: Memory = ()  # IDs of messages inserted while attached and not reported here yet
    known: Memory = ()  # IDs reported here or owed here already
    pending: int = 0  # prompts of the other connections not answered yet
    #: at most this many of them were sent before this connection attached (-1: unknown, for a
    #: connection that joined the session later and did not see what the others sent before)
    before: int = 0


compile_replace(_Echo)


def _every_inserted_message_echoed(t: _Echo, rec, mine: bool):
    """A message inserted while the connection is in the session is reported on it by
    user_message(_chunk), unless the connection goes. Insertion shows as the success that
    carries its ID: on this connection, or on another for a prompt that reached the agent
    while this connection was in the session (insertion follows receipt). A prompt sent
    before this connection attached may have been inserted before it too: its message is
    not owed here, and nor is one whose live report merely arrives later."""
    k = type(rec)
    if k is UserMessage or k is UserChunk:
        mid = rec.message_id
        if mine and not (mid in t.known and mid not in t.owed):
            return t._replace(owed=without_item(t.owed, mid), known=with_item(t.known, mid)), ""
        return t, ""
    if not mine and k is Request:
        if rec.asker == "client" and rec.method == "session/prompt":
            return t._replace(pending=t.pending + 1), ""
        return t, ""
    if not mine and (k is PromptResult or k is PromptError):
        pending = max(0, t.pending - 1)
        # the answered prompt may be one sent before this connection attached, unless none was
        sure = t.before == 0
        t = t._replace(pending=pending, before=min(t.before, pending))
        if k is PromptError or not sure:
            return t, ""
    if k is PromptResult:
        mid = rec.message_id
        if mid is None or mid == 0 or not t.attached or mid in t.known:
            return t, ""
        return t._replace(owed=with_item(t.owed, mid), known=with_item(t.known, mid)), ""
    if mine and (k is Closed or k is ResumeRequest or k is Left):  # in the session again only once a resume succeeds
        return t._replace(attached=False, owed=()), ""
    if mine and k is ResumeResult and rec.ok:
        return t._replace(attached=True, before=t.pending if t.before >= 0 else -1), ""
    return t, ""


def _owes_echoes(t: _Echo) -> list:
    return [(mid, f"message {mid} was inserted and never reported by user_message(_chunk)") for mid in t.owed]


def _rename_echo(t: _Echo, f) -> _Echo:
    return t._replace(owed=rename_items(t.owed, f), known=rename_items(t.known, f))


JUDGES = (
    Judge("distinct_message_ids", "MUST", "rfd",
          "each accepted submission gets a messageId unique in its session, never reused (also across restart)",
          ("RFD-ID-DISTINCT", "RFD-ID-NO-REUSE"),
          (PromptResult, PromptError, Request, UserMessage, UserChunk, Closed), None,
          ("sometimes_identical_prompts_inserted", "sometimes_insert_after_restart"), per="session",
          start=_Ids(), step=_distinct_message_ids, rename=_rename_ids, join=lambda t: _Ids(t.returned)),
    Judge("every_inserted_message_echoed", "MUST", "rfd",
          "every inserted message is reported by user_message(_chunk) to every connection in the session "
          "when it was inserted, unless that connection goes",
          ("RFD-ECHO-EVERY", "RFD-ID-ECHO-SAME", "RFD-ID-SAME-EVERYWHERE", "S240-RESPONSE-ECHO-LIVE",
           "RFD-INSERT-LOCAL-COMMAND", "RFD-FAIL-NO-UNDO"),
          (PromptResult, PromptError, Request, UserMessage, UserChunk, ResumeRequest, ResumeResult, Closed, Left),
          None, ("sometimes_echo_to_two_clients",), per="session", start=_Echo(),
          step=_every_inserted_message_echoed, rename=_rename_echo, owes=_owes_echoes,
          join=lambda t: _Echo(before=-1)),
)
