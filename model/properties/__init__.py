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

from . import rules, witnesses  # noqa: F401 - importing them registers the properties, in this order
from ._core import EXPECTATIONS, KINDS, PROPERTIES, Property
from .dispatch import Dispatch, may_fire

__all__ = ["Property", "PROPERTIES", "BY_ID", "KINDS", "EXPECTATIONS", "Dispatch", "may_fire"]

BY_ID: dict[str, Property] = {p.id: p for p in PROPERTIES}
