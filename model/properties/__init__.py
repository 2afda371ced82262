"""The rules of the v2 prompt lifecycle as named properties of the model.

Each property is one claim (one conjunct: a violation names exactly one rule),
a plain function defined once here and used by every explorer:

* ``always``     ``check(state) -> message | None``: true in every reachable state.
* ``step``       ``check(pre, step) -> message | None``: true of every transition
                 (a rule about what a step may send, like "no tool update after idle").
* ``eventually`` ``check(state) -> obligation | None``: the obligation named must
                 not stay open forever: no reachable terminal state or bottom
                 strongly connected component of the state graph has it open.
* ``sometimes``  ``check(pre, step) -> bool``: some reachable step has it. Every
                 other property names its ``witnesses``: the situations it guards,
                 which must be reached, or the property holds only because
                 nothing happens.

``expect`` says what the RFD leads us to expect: ``must_hold``; ``known_limitation``
(the RFD says it does not hold: a lost response is ambiguous, a retry may create a
second message); ``open_question`` (the RFD defers it: cancellation races,
current-state synchronization on resume); ``reachable`` for ``sometimes``.
Clause ids come from ``clauses.CITATIONS``.

Rule sets: ``spec`` says which text makes a property a rule: ``"rfd"`` (the RFD,
and so every rule set) or ``"2.4.0"`` (the 2.4.0 schema text only: under the
rule set ``rfd`` its verdict is "not applicable"). ``expect_240`` is the
expectation under ``rfd+2.4.0`` where the 2.4.0 text settles what the RFD
leaves open. ``Property.expectation(rules)`` combines them, and under lenient
rules (the agent may skip a SHOULD) a SHOULD property is expected ``should``:
a violation is reported, not failed.

Rule 3: a property judges what participants observed (what each client
received, what the agent sent), reading the agent's bookkeeping only where it
was written by an earlier step than the one judged, and ghost fields (which no
participant reads) for facts of the environment (who was attached when a
message was inserted, which prompts a session/cancel found not yet inserted).
"""

from __future__ import annotations

from dataclasses import replace

from ..composition import composition
from ..proposals import PROPOSALS
from . import rules as _rules, witnesses as _witnesses  # noqa: F401 - importing them registers the properties, in this order
from ._core import EXPECTATIONS, KINDS, PROPERTIES, Property, owed_at
from .dispatch import Dispatch, may_fire

__all__ = ["Property", "PROPERTIES", "BY_ID", "KINDS", "EXPECTATIONS", "Dispatch", "may_fire", "owed_at",
           "properties_of", "property_by_id"]

#: the core's properties by id (``property_by_id`` finds a proposal's too)
BY_ID: dict[str, Property] = {p.id: p for p in PROPERTIES}


def properties_of(rules) -> list[Property]:
    """The core's properties and those of the proposals ``rules`` composes (``model/proposals``), in order.

    A proposal's ``eventually`` property of a judge reads that judge's memory in ``System.seen``,
    whose place depends on the judges the rule set runs: it is bound to it here."""
    if not rules.all_proposals:
        return PROPERTIES
    comp = composition(rules)
    at = {j.id: k for k, j in enumerate(comp.judges.stateful)}
    out = list(PROPERTIES)
    for p in comp.proposals:
        for prop in p.properties:
            if prop.kind == "eventually" and prop.id in at:
                prop = replace(prop, check=owed_at(at[prop.id], comp.judges.stateful[at[prop.id]]))
            out.append(prop)
    return out


def property_by_id(pid: str, rules=None) -> Property:
    """The property ``pid``: the core's, or a proposal's (as ``properties_of(rules)`` gives it); KeyError if none."""
    p = BY_ID.get(pid)
    if p is not None:
        return p
    if rules is not None and rules.all_proposals:
        for prop in properties_of(rules):
            if prop.id == pid:
                return prop
    for proposal in PROPOSALS.values():
        for prop in proposal.properties:
            if prop.id == pid:
                return prop
    raise KeyError(pid)
