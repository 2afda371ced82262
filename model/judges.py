"""Rules written once: judges of the messages a participant observed.

A *judge* is one rule about messages, defined over typed records (``PromptResult``,
``StateUpdate``) that say what a participant sent or received, with named fields. The
same definition judges:

* a model run: ``check`` gives each judge the records of every message the model agent
  sent in a step (``records_of_step``), as the property of the same id
  (``model/properties``, built from ``JUDGES``);
* a transcript: ``trace`` (``model/monitor.py``) gives each judge the record of every
  message of the log (``record_of_json``), as the wire rule of the same id
  (``model/wire_rules.py``, built from ``JUDGES``).

So a rule id has one level, one rule set, one list of clauses and one meaning, whichever
command reports it. The records are built from what is on the wire (or what the model
agent put on it), never from the model's own bookkeeping: a fault that writes the agent's
bookkeeping wrong does not write the verdict.

The judges here read one message at a time; rules that need the order of what one
participant received are still two definitions (a model property and a wire rule, listed
in ``tests/test_judges.py``) and move here one by one (issue 21).

>>> JUDGES["error_only_with_error_stop_reason"].judge(StateUpdate("idle", "end_turn", -32603))
"an idle with stopReason 'end_turn' carries an error object"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

from .config import STOP_REASONS

__all__ = ["JUDGES", "Judge", "PromptResult", "StateUpdate", "judge", "record_of_json", "record_of_model", "records_of_step"]


# ---------------------------------------------------------------------------
# What a participant observed: typed records


class PromptResult(NamedTuple):
    """A successful ``session/prompt`` response, as sent by the agent."""

    rid: object
    #: the messageId: a string on the wire, the message's number in the model; None when
    #: it is absent, null or not a string
    message_id: object
    #: what else is wrong with the result ("" when nothing)
    problem: str = ""


class StateUpdate(NamedTuple):
    """A ``state_update`` session update, as sent by the agent."""

    state: object
    #: None when absent (the model's "")
    stop_reason: object
    #: the error object's code, True for an error object without one, None when the
    #: update has no ``error`` field
    error: object = None


# ---------------------------------------------------------------------------
# Judges


@dataclass(frozen=True, slots=True)
class Judge:
    """One rule about messages, with its single definition."""

    id: str
    #: MUST, MUST NOT, SHOULD or SHOULD NOT
    level: str
    #: "rfd" (the RFD, or JSON-RPC) or "2.4.0" (only the 2.4.0 text says it)
    since: str
    summary: str
    #: clause ids of ``model/clauses/``, the first one quoted in findings
    clauses: tuple[str, ...]
    #: the record type it reads
    reads: type
    #: record -> what is wrong ("" or None when nothing)
    judge: Callable[[tuple], str | None]
    #: the model's message kinds whose records it reads (the property's ``on`` tags)
    kinds: tuple[str, ...]
    #: the witnesses of the property built from it
    witnesses: tuple[str, ...] = ()


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


JUDGES: dict[str, Judge] = {
    j.id: j
    for j in (
        Judge("success_carries_message_id", "MUST", "rfd",
              "a session/prompt success carries the inserted message's messageId as a string",
              ("RFD-INSERT-RESPONSE-ID", "S240-PROMPT-RETURN-ID", "RFD-INSERT-LOCAL-COMMAND"),
              PromptResult, _success_carries_message_id, ("ok",), ("sometimes_success_response",)),
        Judge("error_only_with_error_stop_reason", "MUST", "rfd", "an error object only beside stopReason error",
              ("RFD-ERROR-FIELD-ONLY",), StateUpdate, _error_only_with_error_stop_reason, ("state",),
              ("sometimes_error_idle",)),
        Judge("custom_stop_reason_prefixed", "MUST NOT", "2.4.0",
              "a stop reason the schema does not list starts with _",
              ("S240-STOP-UNKNOWN-RESERVED", "S240-STOP-CUSTOM-UNDERSCORE"), StateUpdate,
              _custom_stop_reason_prefixed, ("state",), ("sometimes_work_ends",)),
    )
}


# ---------------------------------------------------------------------------
# Records from a model step and from a transcript line


def record_of_model(msg: tuple):
    """The record of a message the model agent sends (None for a kind no judge reads)."""
    k = msg[0]
    if k == "state":
        return StateUpdate(msg[1], msg[2] or None, msg[3] or None)
    if k == "ok":
        return PromptResult(msg[1], msg[2])
    return None


def records_of_step(step) -> list:
    """The records of the messages the agent sent in a model step, once each (a broadcast is one
    message the agent sent to each client: every copy is the same)."""
    out, seen = [], set()
    for _, msg in step.emitted:
        if msg[0] in _READ and msg not in seen:
            seen.add(msg)
            rec = record_of_model(msg)
            if rec is not None:
                out.append(rec)
    return out


_READ = frozenset(k for j in JUDGES.values() for k in j.kinds)


def record_of_json(kind: str, body, rid=None):
    """The record of a transcript message: ``kind`` "state_update" with the update object,
    or "prompt_result" with the ``session/prompt`` result."""
    if kind == "state_update":
        error = body.get("error", _ABSENT)
        code = None if error is _ABSENT else (error.get("code", True) if isinstance(error, dict) else True)
        return StateUpdate(body.get("state"), body.get("stopReason"), code)
    if kind == "prompt_result":
        if not isinstance(body, dict):
            return PromptResult(rid, None, "the session/prompt result is not an object")
        if "stopReason" in body:
            return PromptResult(rid, None,
                                f"a v1 session/prompt result (stopReason {body['stopReason']!r}) on a v2 connection")
        mid = body.get("messageId")
        if not isinstance(mid, str):
            return PromptResult(rid, None, f"the session/prompt result has messageId {mid!r}, not a string")
        return PromptResult(rid, mid)
    raise ValueError(f"no record for {kind!r}")


_ABSENT = object()


def judge(record) -> list[tuple[str, str]]:
    """(judge id, what is wrong) for every judge that reads ``record`` and finds it wrong."""
    out = []
    for j in _BY_TYPE.get(type(record), ()):
        why = j.judge(record)
        if why:
            out.append((j.id, why))
    return out


_BY_TYPE: dict[type, list[Judge]] = {}
for _j in JUDGES.values():
    _BY_TYPE.setdefault(_j.reads, []).append(_j)
