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

    name = "session-inject"
    base = "rfd+2.4.0"
    proposals = ["session-inject"]
    [changes]
    pending_injects_survive_cancel = true

Registration is data: removing a proposal's file (and the variants that enable it) changes
nothing else (``tests/test_proposals.py``).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field

from ..config import LIMITS

__all__ = ["Bound", "Document", "Flag", "Proposal", "ProposalError", "PROPOSALS", "flag_of", "get_proposal"]


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


@dataclass(frozen=True)
class Proposal:
    """Everything one protocol change adds to the model (see the module docstring)."""

    name: str
    title: str
    document: Document
    summary: str
    clauses: tuple = ()
    flags: tuple[Flag, ...] = ()
    bounds: tuple[Bound, ...] = ()
    #: everything else it declares (messages, actions, judges, witnesses): see ``model/proposals/_compose.py``
    parts: dict = field(default_factory=dict)

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


PROPOSALS: dict[str, Proposal] = _discover()

#: every flag of every proposal, by name (flag names are unique across proposals)
_FLAGS: dict[str, tuple[Proposal, Flag]] = {}
for _p in PROPOSALS.values():
    for _f in _p.flags:
        if _f.name in _FLAGS:
            raise ProposalError(f"flag {_f.name!r} is declared by {_FLAGS[_f.name][0].name!r} and {_p.name!r}")
        _FLAGS[_f.name] = (_p, _f)
    for _b in _p.bounds:
        if _b.name in LIMITS:
            raise ProposalError(f"bound {_b.name!r} of {_p.name!r} is already a bound")
        LIMITS[_b.name] = _b.limit  # registration: ``--set`` and ``Config.validate`` know it now


def get_proposal(name: str) -> Proposal:
    """The proposal named ``name``; ``ProposalError`` (one line, listing them) if none."""
    try:
        return PROPOSALS[name]
    except KeyError:
        known = ", ".join(PROPOSALS) or "none"
        raise ProposalError(f"unknown proposal {name!r}; the proposals: {known}") from None


def flag_of(name: str) -> tuple[Proposal, Flag]:
    """The proposal declaring flag ``name``, and the flag; ``ProposalError`` if no proposal has it."""
    try:
        return _FLAGS[name]
    except KeyError:
        raise ProposalError(f"no proposal has a flag {name!r}") from None
