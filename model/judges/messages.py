"""Judges of one message at a time: what a prompt's success carries, what an idle's stop reason and error may be."""

from __future__ import annotations

from ..config import STOP_REASONS
from ..observed import PromptResult, StateUpdate
from ._judge import Judge

__all__ = ['JUDGES']

def _success_carries_message_id(r: PromptResult) -> str:
    if r.problem:
        return r.problem
    if r.message_id is None or r.message_id == 0:
        return f"the session/prompt result for request {r.rid} carries no messageId"
    return ""


def _error_only_with_error_stop_reason(r: StateUpdate) -> str:
    if r.state == "idle" and r.error is not None and r.stop_reason != "error":
        return f"an idle with stopReason {r.stop_reason!r} carries an error object"
    return ""


_KNOWN = frozenset(STOP_REASONS)


def _custom_stop_reason_prefixed(r: StateUpdate) -> str:
    stop = r.stop_reason
    if r.state == "idle" and stop is not None and stop not in _KNOWN and not (isinstance(stop, str) and stop.startswith("_")):
        return f"stopReason {stop!r} is neither a defined value nor a custom value starting with _"
    return ""


JUDGES = (
    Judge("success_carries_message_id", "MUST", "rfd",
          "a session/prompt success carries the inserted message's messageId as a string",
          ("RFD-INSERT-RESPONSE-ID", "S240-PROMPT-RETURN-ID", "RFD-INSERT-LOCAL-COMMAND"),
          PromptResult, _success_carries_message_id, ("sometimes_success_response",)),
    Judge("error_only_with_error_stop_reason", "MUST", "rfd", "an error object only beside stopReason error",
          ("RFD-ERROR-FIELD-ONLY",), StateUpdate, _error_only_with_error_stop_reason,
          ("sometimes_error_idle",)),
    Judge("custom_stop_reason_prefixed", "MUST NOT", "2.4.0",
          "a stop reason the schema does not list starts with _",
          ("S240-STOP-UNKNOWN-RESERVED", "S240-STOP-CUSTOM-UNDERSCORE"), StateUpdate,
          _custom_stop_reason_prefixed, ("sometimes_work_ends",)),
)
