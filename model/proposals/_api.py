"""What a proposal's file builds with: the one module of the model a proposal imports.

A proposal (``model/proposals/NAME.py``, docs/proposals.md) reads top to bottom as its RFD
section: the document and its quoted sentences (``Clause``), the flags where it leaves a
question open (``Flag``), the budgets of its actions (``Bound``), its wire messages
(``Message``: the tuple the model passes around, its JSON-RPC form, how a transcript reads it
back, the record its judges read), what it keeps in the explored state (``StateSpec``), the
actions of each participant (functions of a ``World``, each making steps with a ``Change``),
the judges of its rules (``Judge``, over records of what a participant observed) and the
situations that show its races happen (``witness``). Everything here is re-exported from the
model; nothing of the model's records needs to be known beyond what ``World`` shows.
"""

from __future__ import annotations

from typing import Callable

from ... import docstring
from ..clauses import Clause
from ..composition import Change, World
from ..config import Config
from ..judges import (
    CancelRequest,
    Closed,
    Judge,
    Left,
    PromptError,
    PromptResult,
    Request,
    Response,
    ResumeRequest,
    Sent,
    SessionCancel,
    StateUpdate,
    ToolUpdate,
    UserChunk,
    UserMessage,
    put_pair,
    sorted_tuple,
    with_item,
)
from ..properties import Property, owed_at
from ..state import IDLE, REQUIRES_ACTION, RUNNING, Step
from ..wire import SESSION
from . import Bound, Document, Fault, Flag, Message, Proposal, StateSpec

__all__ = [
    "Bound",
    "CancelRequest",
    "Change",
    "Clause",
    "Closed",
    "Config",
    "Document",
    "Fault",
    "Flag",
    "IDLE",
    "Judge",
    "Left",
    "Message",
    "Proposal",
    "PromptError",
    "PromptResult",
    "Property",
    "REQUIRES_ACTION",
    "RUNNING",
    "Request",
    "Response",
    "ResumeRequest",
    "SESSION",
    "Sent",
    "SessionCancel",
    "StateSpec",
    "StateUpdate",
    "Step",
    "ToolUpdate",
    "UserChunk",
    "UserMessage",
    "World",
    "error",
    "sometimes",
    "replace_at",
    "params_of",
    "ext_of",
    "error_reason",
    "error_code",
    "judged",
    "message_id",
    "put_pair",
    "request",
    "result",
    "rule",
    "sorted_tuple",
    "swap",
    "text_of",
    "witness",
    "with_item",
]


# --- JSON-RPC ----------------------------------------------------------------------------------


def message_id(mid) -> str:
    """A message ID as the model's agent writes it on the wire (``msg_3``); a transcript's stays as it was."""
    return mid if isinstance(mid, str) else f"msg_{mid}"


def request(rid, method: str, params: dict) -> dict:
    """A JSON-RPC request of session ``SESSION``."""
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"sessionId": SESSION, **params}}


def result(rid, value: dict) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "result": value}


def error(rid, code: int, message: str, data: dict | None = None) -> dict:
    err: dict = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def text_of(content) -> str:
    """The text of the first block of a ``ContentBlock[]`` (a transcript's content, read back)."""
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return str(content[0].get("text", ""))
    return ""


# --- properties ---------------------------------------------------------------------------------


def sometimes(proposal: str, pid: str, summary: str, check: Callable, applies: Callable = lambda cfg: True) -> Property:
    """A situation that must be reachable, as a ``Property`` of ``proposal``: ``check(pre, step) -> bool``."""
    return Property(pid, "sometimes", "reachable", summary, check, applies=applies, proposal=proposal)


def replace_at(t: tuple, i: int, v) -> tuple:
    """``t`` with its ``i``-th item ``v``."""
    return t[:i] + (v,) + t[i + 1:]


def ext_of(s, kind: type, default=None):
    """The value of type ``kind`` the state keeps for a proposal (``System.ext``), for a property of the
    proposal that reads it (``default`` when the rules compose no such proposal)."""
    for v in s.ext:
        if isinstance(v, kind):
            return v
    return default


def params_of(msg: dict) -> dict:
    """A request's ``params`` (a transcript's, read back), {} when it has none or they are no object."""
    p = msg.get("params") if isinstance(msg, dict) else None
    return p if isinstance(p, dict) else {}


def error_code(msg: dict):
    """An error response's ``error.code`` (None for a result)."""
    return (msg.get("error") or {}).get("code")


def error_reason(msg: dict):
    """An error response's ``error.data.reason`` (None when it has none)."""
    data = (msg.get("error") or {}).get("data")
    return data.get("reason") if isinstance(data, dict) else None


def swap(**faults) -> Callable:
    """A fault's change (``Fault.change``): the proposal with each of its functions called with ``faults``
    (its steps, its handlers of what it receives and what it does in core steps), where a function takes
    them; each function says which it knows (``def agent_answer(w, **faults)``)."""
    from dataclasses import replace
    from functools import partial
    from inspect import signature

    def given(fn):
        takes = any(p.kind is p.VAR_KEYWORD for p in signature(fn).parameters.values())
        return partial(fn, **faults) if takes else fn

    def change(p: Proposal) -> Proposal:
        return replace(p, steps=tuple(map(given, p.steps)), receive={k: given(f) for k, f in p.receive.items()},
                       after={k: given(f) for k, f in p.after.items()})

    return change


def witness(proposal: str, applies: Callable = lambda cfg: True) -> Callable:
    """``@witness(NAME)`` above ``def sometimes_x(pre, step) -> bool``: a situation that must be reachable
    (its first doc line is its summary), as a ``Property`` of proposal ``NAME``."""

    def make(fn: Callable) -> Property:
        doc = docstring(fn).strip().splitlines()[0]
        return Property(fn.__name__, "sometimes", "reachable", doc, fn, applies=applies, proposal=proposal)

    return make


def rule(proposal: str, kind: str, *, witnesses: tuple[str, ...], cites: tuple[str, ...], level: str = "MUST",
         expect: str = "must_hold", applies: Callable = lambda cfg: True, when: Callable | None = None) -> Callable:
    """``@rule(NAME, "step", witnesses=..., cites=...)`` above a property judged on the model's state (say
    why in ``Proposal.why_not_judges``): ``always`` ``check(state)``, ``step`` ``check(pre, step)``,
    ``eventually`` ``check(state)`` (an obligation that must not stay open)."""

    def make(fn: Callable) -> Property:
        doc = docstring(fn).strip().splitlines()[0]
        return Property(fn.__name__, kind, expect, doc, fn, witnesses, level, applies=applies, cites=cites,
                        proposal=proposal, when=when)

    return make


def judged(judge: Judge, applies: Callable = lambda cfg: True) -> Property:
    """The property of a proposal's judge: what the judge finds in a step (``step``), or the obligation
    it keeps open (``eventually``; bound to its place in ``System.seen`` by ``properties_of``)."""
    level = "SHOULD" if judge.level.startswith("SHOULD") else "MUST"
    summary = judge.summary[:1].upper() + judge.summary[1:] + "."
    if judge.owes is None:
        jid = judge.id

        def check(pre, step):
            for found, why in step.found:
                if found == jid:
                    return why
            return None

        return Property(judge.id, "step", "must_hold", summary, check, judge.witnesses, level, applies=applies,
                        cites=judge.clauses, proposal=judge.proposal, when=judge.when, from_judge=True)
    return Property(judge.id, "eventually", "must_hold", summary, owed_at(0, judge), judge.witnesses, level,
                    applies=applies, cites=judge.clauses, proposal=judge.proposal, when=judge.when, from_judge=True)
