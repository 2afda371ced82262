"""The model as one object, in the shape of Stateright's ``Model`` trait.

A checker takes a ``Lifecycle`` and asks it for what any model has: its initial states,
the steps enabled in a state (each with its action, next state and the messages it sent),
its properties, and how to bring a state to the representative of its symmetry class. It
knows nothing else of ACP. A seeded bug, a variant of the spec and a mutant are each the
same object with other ``Rules`` (``bug.rules``, ``variant.rules``, ``mutant.on()``: a
mutant's faulty functions travel in ``Rules.parts``), never a patched module.

>>> from acp_lifecycle.model.config import Config
>>> m = Lifecycle(Config(name="doc"))
>>> [step.action[0] for step in m.next_steps(m.init_states()[0])]
['ClientSubmitPrompt']
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from .config import RFD_RULES, Config, Rules
from .properties import PROPERTIES, Property
from .symmetry import canonicalizer, ids_opaque
from .system import Step, System, initial_state, successors

__all__ = ["Lifecycle"]


@dataclass(frozen=True)
class Lifecycle:
    """One session's agent, its clients and the faults between them, under a rule set."""

    cfg: Config
    rules: Rules = RFD_RULES

    def init_states(self) -> list[System]:
        return [initial_state(self.cfg)]

    def next_steps(self, s: System) -> list[Step]:
        """Every step enabled in ``s``, in a deterministic order."""
        return successors(s, self.cfg, self.rules)

    def properties(self, every: list[Property] | None = None) -> list[Property]:
        """The properties that are rules of this rule set (of ``every``, by default all)."""
        return [p for p in (PROPERTIES if every is None else every) if p.expectation(self.rules)]

    def expectation(self, p: Property) -> str:
        """What ``p`` is expected to do here ("" when it is no rule of this rule set)."""
        return p.expectation(self.rules)

    def canonicalizer(self) -> Callable[[System], System] | None:
        """The symmetry reduction: a state to its class's representative (None: nothing to reduce)."""
        return canonicalizer(self.rules, self.cfg)

    @property
    def ids_renamed(self) -> bool:
        """Whether the reduction renames message IDs (what ``model/symmetry.py`` then checks step by step)."""
        return ids_opaque(self.rules)

    def with_rules(self, rules: Rules) -> "Lifecycle":
        return replace(self, rules=rules)
