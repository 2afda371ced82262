"""Judges of JSON-RPC requests on one connection: one response each, every prompt answered, a cancelled
request still answered (``per="connection"``: JSON-RPC ids are per connection)."""

from __future__ import annotations

from ..observed import CancelRequest, Closed, PromptError, PromptResult, Request, ResumeResult, Response
from ._judge import Memory, Cite, Judge, with_item, without_item

__all__ = ['JUDGES']

def _answered(rec):
    """The request a response record answers, as (asker, rid); None for a record that answers none."""
    t = type(rec)
    if t is PromptResult or t is PromptError or t is ResumeResult:
        return ("client", rec.rid)
    if t is Response:
        return (rec.asker, rec.rid)
    return None


def _one_response_per_request(state: Memory, rec):
    """state: the requests answered on the connection, (asker, rid) (``with_item``: the set grows with the
    connection). A second response breaks JSON-RPC's one reply to a call (quoted); 2.4.0 says it again of a
    $/cancel_request for an answered request (cited: to tell that case apart the judge would remember every late
    cancel, 8 % more states on ``default``)."""
    t = type(rec)
    if t is Closed:
        return (), ""
    if t is Request:
        # answered: its id may be used again
        return without_item(state, (rec.asker, rec.rid)), ""
    key = _answered(rec)
    if key is None:
        return state, ""
    if key in state:
        return state, f"a second response to the {key[0]}'s request {key[1]}"
    return with_item(state, key), ""


def _pending_requests(state: Memory, rec):
    """state: the requests of the connection not answered yet, ((asker, rid, method, cancelled), ...) sorted."""
    t = type(rec)
    if t is Closed:
        return (), ""
    if t is Request:
        return with_item(tuple(p for p in state if p[:2] != (rec.asker, rec.rid)), (rec.asker, rec.rid, rec.method, False)), ""
    if t is CancelRequest:
        return tuple((a, r, m, True) if (a, r) == (rec.asker, rec.rid) else (a, r, m, c) for a, r, m, c in state), ""
    key = _answered(rec)
    if key is not None and state:
        return tuple(p for p in state if p[:2] != key), ""
    return state, ""


def _owes_prompts(state: Memory) -> list:
    """Every session/prompt is answered, whatever cancellation it got: JSON-RPC and the RFD ("the agent will
    respond once the prompt has been accepted") owe it under both rule sets (one cancelled with $/cancel_request
    quotes JSON-RPC's reply to every call, as it may not have been inserted); 2.4.0 says it again of a request
    cancelled so (``cancelled_request_still_answered``)."""
    return [((a, r), Cite(f"session/prompt {r}, cancelled with $/cancel_request, is never answered", "JSONRPC-REPLY")
             if c else f"session/prompt {r} is never answered") for a, r, m, c in state
            if a == "client" and m == "session/prompt"]


def _owes_cancelled(state: Memory) -> list:
    return [((a, r), f"the {a}'s {m} {r}, cancelled with $/cancel_request, is never answered") for a, r, m, c in state
            if c]


_REQUESTS = (Request, CancelRequest, PromptResult, PromptError, ResumeResult, Response, Closed)


JUDGES = (
    Judge("one_response_per_request", "MUST NOT", "rfd", "a request gets one response, never a second",
          ("JSONRPC-REPLY", "S240-CANCELREQ-NO-SECOND-RESPONSE"),
          (PromptResult, PromptError, ResumeResult, Response, Request, Closed), None,
          ("sometimes_cancel_request_after_answer",),
          per="connection", start=(), step=_one_response_per_request),
    Judge("every_prompt_answered", "MUST", "rfd", "every session/prompt is answered by the end of the log",
          ("RFD-INSERT-RESPOND", "S240-PROMPT-RETURN-ID", "JSONRPC-REPLY"), _REQUESTS, None,
          ("sometimes_prompt_answered",), per="connection", start=(), step=_pending_requests,
          owes=_owes_prompts),
    Judge("cancelled_request_still_answered", "MUST", "2.4.0",
          "a request cancelled with $/cancel_request is still answered", ("S240-CANCELREQ-STILL-RESPOND",),
          _REQUESTS, None, ("sometimes_cancel_request_after_insertion", "sometimes_permission_cancelled"),
          per="connection", start=(),
          step=_pending_requests, owes=_owes_cancelled),
)
