"""The proposal registry: every protocol change the model can compose with its core.

A *proposal* is one Python file in this folder that declares everything a change to the
protocol adds, the way a TLA+ module composes ``Next == CoreNext \\/ ProposalNext`` and a P
program adds a machine and the spec monitors that observe it: its clauses (the quoted
sentences, with ids, and the document and revision they come from), its wire messages, the
client and agent actions it adds with their bounds, the judges of its rules, its
``sometimes`` witnesses, and the flags it adds with their allowed values. Each file defines
``PROPOSAL = Proposal(...)``; this module finds them (``PROPOSALS``, by name) and the core
composes those a rule set enables (``Rules.proposals``), never naming one. docs/proposals.md
teaches writing one.

A variant file (``model/variants/*.toml``) enables proposals and sets their flags::

    name = "NAME"                 # the variant
    base = "rfd+2.4.0"            # what it changes: a rule set or another variant
    proposals = ["PROPOSAL"]      # the proposals it composes with its base
    [changes]
    FLAG = VALUE                  # a flag of one of them (checked against its allowed values)

Registration is data: removing a proposal's file (and the variants that enable it) changes
nothing else (``tests/test_proposals.py``).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

from ..config import EXTRA_LIMITS, IMPLICIT, LIMITS

__all__ = ["Bound", "Document", "Fault", "Flag", "Message", "Proposal", "ProposalError", "PROPOSALS", "StateSpec",
           "flag_of",
           "get_proposal", "registry"]


class ProposalError(ValueError):
    """A proposal is unknown or malformed, or a flag value is outside its allowed set; one line."""


@dataclass(frozen=True, slots=True)
class Document:
    """Where a proposal's sentences come from."""

    #: its title, as the document gives it
    title: str
    #: where it is (a path in the ACP repository, a pull request)
    where: str
    #: the revision quoted (the document's own revision history entry, or a commit)
    revision: str


@dataclass(frozen=True, slots=True)
class Flag:
    """A question the proposal leaves to the reader (or where two texts differ): one rule flag."""

    name: str
    #: every value it may take; a variant giving another is refused with the list
    values: tuple
    default: object
    #: what each value means, in a sentence
    doc: str
    #: the clauses the question is about
    clauses: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Bound:
    """A budget a proposal adds to ``Config`` (``Config.extra``; 0 unless a member or ``--set`` gives it)."""

    name: str
    #: inclusive range (``--set NAME=VALUE`` checks it)
    limit: tuple[int, int]
    doc: str


@dataclass(frozen=True, slots=True)
class Message:
    """One message a proposal adds: its model tuple ``(kind, ...)`` and its JSON-RPC form.

    ``encode`` renders the tuple as JSON-RPC; ``read`` reads a wire message back into a tuple
    (``(message, request params or None) -> tuple``, ids as they are on the wire), and ``record``
    gives the record its judges read from a tuple: a model step and a transcript line give the
    same record (one judge). A request names its method; a response names the method it answers.
    """

    kind: str
    #: "client" (client -> agent) or "agent"
    sender: str
    encode: Callable[[tuple], dict]
    #: the method it calls (a request or a notification); None for a response
    method: str | None = None
    #: for a response: the method of the request it answers (``error``: an error response)
    answers: str | None = None
    error: bool = False
    #: the position of the JSON-RPC id in the tuple (a request's own, or the one a response answers)
    rid_at: int | None = None
    #: the positions of message IDs in the tuple (renamed with the agent's, by the symmetry reduction)
    ids_at: tuple[int, ...] = ()
    read: Callable | None = None
    record: Callable | None = None
    #: the JSON Schema of its ``params`` (a request or notification) or its ``result``/``error`` (a response)
    schema: dict | None = None
    #: a success response after which the connection is no longer in the session (a close)
    leaves_session: bool = False

    @property
    def request(self) -> bool:
        """Whether it is a request (it has a method and an id)."""
        return self.method is not None and self.rid_at is not None


@dataclass(frozen=True, slots=True)
class StateSpec:
    """What a proposal keeps in the explored state (``System.ext``), and how the symmetry reduction renames it.

    The value is the proposal's own (a NamedTuple, or tuples of them). ``client_fields`` and
    ``id_fields`` name the fields, anywhere inside it, that hold a client index or a message ID;
    ``per_client``, the field of the value that is a tuple with one entry per client. The
    reduction renames these with the rest of the state (``model/composition.py``) and checks,
    step by step, that the renamed state behaves the same.
    """

    start: Callable
    client_fields: tuple[str, ...] = ()
    id_fields: tuple[str, ...] = ()
    per_client: str = ""
    #: ``cfg -> int``: how many message IDs it may make in a run (for the reduction's quick exit)
    ids: Callable = lambda cfg: 0


@dataclass(frozen=True)
class Fault:
    """A fault in what a proposal's agent or clients do, written from one of its clauses: a rule must catch
    it, with a short counterexample (``tests/test_proposals.py``). Rules compose the faulty proposal by the
    name ``PROPOSAL!FAULT``."""

    name: str
    #: the rule (a property id) that catches it
    breaks: str
    summary: str
    #: ``Proposal -> Proposal``: the proposal with one of its functions replaced
    change: Callable
    #: flag values the fault needs (a rule of one reading only), and bounds beyond the proposal's members'
    flags: tuple = ()
    bounds: tuple = ()


@dataclass(frozen=True)
class Proposal:
    """Everything one protocol change adds to the model (see the module docstring)."""

    name: str
    title: str
    document: Document
    summary: str
    #: the quoted sentences (``Clause``, source = the proposal's name)
    clauses: tuple = ()
    flags: tuple[Flag, ...] = ()
    bounds: tuple[Bound, ...] = ()
    messages: tuple[Message, ...] = ()
    state: StateSpec | None = None
    #: ``World -> None``: each adds the steps of one kind of action (the agent's or a client's)
    steps: tuple[Callable, ...] = ()
    #: kind -> ``(world, c, msg) -> None``: the agent takes the head of client c's channel. A core kind
    #: (``$/cancel_request``'s "cancel_req") is taken only where ``claims`` says the message is the proposal's
    receive: dict = field(default_factory=dict)
    #: kind -> ``(world, c, msg) -> bool``: whether a message of a core kind is the proposal's to take
    claims: dict = field(default_factory=dict)
    #: kind -> ``(state, c, msg) -> state``: what client c's part of the proposal's state becomes when it
    #: receives a message of that kind (its own kinds, or a core kind it watches)
    client_receive: dict = field(default_factory=dict)
    #: a core step's action name, or (name, kind) for a receive -> ``(world, step) -> Step | [Step]``: what
    #: the proposal does in the same step (a session/cancel, a lost connection, a restart)
    after: dict = field(default_factory=dict)
    #: the action names its steps carry (``Step.action[0]``)
    action_kinds: tuple[str, ...] = ()
    judges: tuple = ()
    #: its ``Property`` values: witnesses (``sometimes``) and rules judged on the model's state
    properties: tuple = ()
    #: property id -> why it is judged on the model's state rather than by a judge
    why_not_judges: dict = field(default_factory=dict)
    #: the members it adds to the named configurations that enable it: (suite name, Config)
    members: tuple = ()
    #: faults a rule of it must catch (``Fault``), one or more per rule
    faults: tuple = ()
    #: a text it is part of ("rfd+2.4.0": the 2.4.0 schema's own): every rule set that follows that text composes
    #: it without naming it (``Rules.all_proposals``); "" for a proposal a variant composes
    spec: str = ""

    def flag(self, name: str) -> Flag:
        for f in self.flags:
            if f.name == name:
                return f
        raise ProposalError(f"proposal {self.name!r} has no flag {name!r}; its flags: "
                            f"{', '.join(f.name for f in self.flags) or 'none'}")


def _discover() -> dict[str, Proposal]:
    """Every ``PROPOSAL`` of a module of this package (files starting with ``_`` are not proposals)."""
    found: dict[str, Proposal] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        p = getattr(module, "PROPOSAL", None)
        if not isinstance(p, Proposal):
            raise ProposalError(f"model/proposals/{info.name}.py defines no PROPOSAL = Proposal(...)")
        if p.name in found:
            raise ProposalError(f"two proposals are named {p.name!r}")
        found[p.name] = p
    return found


#: every proposal, by name (filled by ``registry()``, which ``acp_lifecycle.model`` calls once on import)
PROPOSALS: dict[str, Proposal] = {}
#: every flag of every proposal, by name (flag names are unique across proposals)
_FLAGS: dict[str, tuple[Proposal, Flag]] = {}


def registry() -> dict[str, Proposal]:
    """``PROPOSALS``, discovered on the first call: each proposal's module imported, its flags and bounds
    registered (``EXTRA_LIMITS`` gains the bounds' ranges, so that ``--set`` and ``Config.validate`` know them)."""
    if _failed:
        raise _failed[0]
    if PROPOSALS or _loaded:
        return PROPOSALS
    _loaded.append(True)
    try:
        found = _discover()
    except ProposalError as e:
        _failed.append(e)
        raise
    except Exception as e:  # a proposal's module does not load: one line, not its traceback
        _failed.append(ProposalError(f"a proposal's module does not load: {type(e).__name__}: {e}"))
        raise _failed[0] from None
    for p in found.values():
        for f in p.flags:
            if f.name in _FLAGS:
                raise ProposalError(f"flag {f.name!r} is declared by {_FLAGS[f.name][0].name!r} and {p.name!r}")
            if f.default not in f.values:
                raise ProposalError(f"flag {f.name!r} of {p.name!r}: its default {f.default!r} is not one of its "
                                    "values")
            _FLAGS[f.name] = (p, f)
        for bound in p.bounds:
            if bound.name in LIMITS or bound.name in EXTRA_LIMITS:
                raise ProposalError(f"bound {bound.name!r} of {p.name!r} is already a bound")
            EXTRA_LIMITS[bound.name] = bound.limit
    PROPOSALS.update(found)
    for p in found.values():
        if p.spec:
            IMPLICIT[p.spec] = tuple(sorted(IMPLICIT.get(p.spec, ()) + (p.name,)))
    return PROPOSALS


_loaded: list = []
#: the error the registry met, raised again by every later call (the command line says it in one line)
_failed: list = []


def get_proposal(name: str) -> Proposal:
    """The proposal named ``name`` (``NAME!FAULT``: with one of its faults); ``ProposalError`` (one line,
    listing them) if none."""
    base, _, fault = name.partition("!")
    try:
        p = registry()[base]
    except KeyError:
        known = ", ".join(PROPOSALS) or "none"
        raise ProposalError(f"unknown proposal {base!r}; the proposals: {known}") from None
    if not fault:
        return p
    for f in p.faults:
        if f.name == fault:
            return f.change(p)
    raise ProposalError(f"proposal {base!r} has no fault {fault!r}; its faults: "
                        f"{', '.join(f.name for f in p.faults) or 'none'}")


def flag_of(name: str) -> tuple[Proposal, Flag]:
    """The proposal declaring flag ``name``, and the flag; ``ProposalError`` if no proposal has it."""
    try:
        return _FLAGS[name]
    except KeyError:
        raise ProposalError(f"no proposal has a flag {name!r}") from None
