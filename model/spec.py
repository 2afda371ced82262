"""The model as one object, in the shape of Stateright's ``Model`` trait.

A checker takes a ``Lifecycle`` and asks it for what any model has: its initial states,
the steps enabled in a state (each with its action, next state and the messages it sent),
its properties, and how to bring a state to the representative of its symmetry class. It
knows nothing else of ACP. A seeded bug, a variant of the spec and a mutant are each the
same object with other ``Rules`` (``bug.rules``, ``variant.rules``, ``mutant.on()``: a
mutant's faulty functions travel in ``Rules.parts``), never a patched module.

Everything a way of running the model needs goes through this object: the search, fuzz, the
explorer, the model agent, ``trace --model`` and the scenarios import ``Lifecycle`` (and the
values that make one: ``Config``, ``Rules``) from ``acp_lifecycle.model`` and nothing from the
model's own modules (``tests/test_structure.py`` checks their imports). The object also
renders a step's messages as JSON-RPC, checks the assumptions of the symmetry reduction, and
names the model's vocabulary (``Lifecycle.vocab``: states, error codes, action kinds).

>>> from acp_lifecycle.model.config import Config
>>> m = Lifecycle(Config(name="doc"))
>>> [step.action[0] for step in m.next_steps(m.init_states()[0])]
['ClientSubmitPrompt']
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from types import SimpleNamespace
from typing import Callable

from . import state as _state
from .composition import composition, without_messages
from .config import RFD_RULES, STOP_REASONS, Config, Rules
from .properties import Dispatch, Property, may_fire, properties_of, property_by_id
from .symmetry import canonicalizer, check_commutes, check_fresh_ids, ids_opaque, renumber_ids, renumbers
from .system import Step, System, initial_state, successors
from .wire import agent_message, client_message, step_messages, summary

__all__ = ["Lifecycle", "VOCAB"]

#: The model's vocabulary, for the ways of running it: foreground states, the phases of a
#: prompt before insertion, the JSON-RPC error codes the model agent uses, stop reasons and
#: the name of every action a step can carry (``Step.action[0]``).
VOCAB = SimpleNamespace(
    IDLE=_state.IDLE,
    RUNNING=_state.RUNNING,
    REQUIRES_ACTION=_state.REQUIRES_ACTION,
    NOT_INSERTED=_state.NOT_INSERTED,
    ERR_CANCELLED=_state.ERR_CANCELLED,
    ERR_INVALID=_state.ERR_INVALID,
    ERR_FAILURE=_state.ERR_FAILURE,
    ERR_INTERNAL=_state.ERR_INTERNAL,
    STOP_REASONS=STOP_REASONS,
    ACTION_KINDS=_state.ACTION_KINDS,
)


@dataclass(frozen=True)
class Lifecycle:
    """One session's agent, its clients and the faults between them, under a rule set."""

    cfg: Config
    rules: Rules = RFD_RULES

    #: the model's vocabulary (``VOCAB``), on the class: ``Lifecycle.vocab.IDLE``
    vocab = VOCAB

    # --- the model -------------------------------------------------------------------

    def init_states(self) -> list[System]:
        return [initial_state(self.cfg, self.rules)]

    def next_steps(self, s: System) -> list[Step]:
        """Every step enabled in ``s``, in a deterministic order."""
        return successors(s, self.cfg, self.rules)

    @property
    def action_kinds(self) -> tuple[str, ...]:
        """Every action name a step of this model can carry (the core's and its proposals')."""
        return composition(self.rules).action_kinds

    @staticmethod
    def members_for(suite: str, rules: Rules) -> tuple[Config, ...]:
        """The members the proposals ``rules`` composes add to the named configuration ``suite``: a proposal
        brings the configurations that exercise it (its own bounds are 0 in the core's members)."""
        return composition(rules).members(suite)

    @staticmethod
    def without_messages(rules: Rules, proposals: tuple[str, ...]) -> Rules:
        """``rules`` restricted to the runs that send no message of ``proposals`` (a conservative extension
        then allows and forbids exactly what the rules without the proposals do)."""
        return without_messages(rules, proposals)

    def with_rules(self, rules: Rules) -> "Lifecycle":
        return replace(self, rules=rules)

    def with_config(self, cfg: Config) -> "Lifecycle":
        return replace(self, cfg=cfg)

    # --- properties ----------------------------------------------------------------

    def every_property(self) -> list[Property]:
        """Every property of the core and of the proposals this rule set composes, whatever makes it a rule."""
        return properties_of(self.rules)

    def property_by_id(self, pid: str) -> Property:
        """The property named ``pid`` (the core's or a proposal's); ``KeyError`` if none."""
        return property_by_id(pid, self.rules)

    def properties(self, every: list[Property] | None = None) -> list[Property]:
        """The properties that are rules of this rule set (of ``every``, by default all)."""
        return [p for p in (properties_of(self.rules) if every is None else every) if p.expectation(self.rules)]

    def expectation(self, p: Property) -> str:
        """What ``p`` is expected to do here ("" when it is no rule of this rule set)."""
        return p.expectation(self.rules)

    @staticmethod
    def dispatch(props) -> Dispatch:
        """Which of the step and sometimes properties ``props`` can say anything of a step (``Dispatch``)."""
        return Dispatch(props)

    @staticmethod
    def may_fire(p: Property, step: Step) -> bool:
        """Whether the step or sometimes property ``p`` can say anything of ``step``."""
        return may_fire(p, step)

    def seen_at_start(self, clients: int) -> tuple:
        """What the judges remember at the start of a session with ``clients`` connections
        (``System.seen`` of the initial state): each stateful judge's start, per connection."""
        return composition(self.rules).judges.start(clients)

    # --- the symmetry reduction and its assumptions ---------------------------------

    def canonicalizer(self) -> Callable[[System], System] | None:
        """The symmetry reduction: a state to its class's representative (None: nothing to reduce)."""
        return canonicalizer(self.rules, self.cfg)

    @property
    def ids_renamed(self) -> bool:
        """Whether the reduction renames message IDs (what ``model/symmetry.py`` then checks step by step)."""
        return ids_opaque(self.rules)

    def renumber_ids(self, s: System) -> tuple[System, dict[int, int]]:
        """``s`` with its message IDs numbered in order of first appearance, and the renaming."""
        return renumber_ids(s, self.rules)

    def renumbers(self, s: System) -> bool:
        """Whether the representative of ``s`` renames its message IDs."""
        return renumbers(s, self.rules)

    def guards(self) -> tuple[Callable, Callable]:
        """``(check_fresh_ids, renumbers)`` bound to these rules, as calls the search's inner loop makes
        at every step without a method of this class in between (compiled where the model is)."""
        return partial(check_fresh_ids, rules=self.rules), partial(renumbers, rules=self.rules)

    def check_fresh_ids(self, pre: System, step: Step) -> str:
        """Why ``step`` breaks the fresh-ID assumption ID renaming rests on ("" when it does not)."""
        return check_fresh_ids(pre, step, self.rules)

    @staticmethod
    def check_commutes(concrete: System, rep: System, canon, fingerprint, next_steps) -> str:
        """Why ``concrete`` and its representative are no stand-ins for each other ("" when they are)."""
        return check_commutes(concrete, rep, canon, fingerprint, next_steps)

    # --- the wire --------------------------------------------------------------------

    @staticmethod
    def render(sender: str, msg: tuple) -> dict:
        """A model message as JSON-RPC: ``sender`` "client" (client -> agent) or "agent"."""
        return client_message(msg) if sender == "client" else agent_message(msg)

    @staticmethod
    def step_messages(pre: System, step: Step) -> list[tuple[str, int, dict]]:
        """The wire messages of one step: ``[(direction, client, message), ...]``."""
        return step_messages(pre, step)

    @staticmethod
    def summary(msg: dict) -> str:
        """A one-line summary of a JSON-RPC message, for people."""
        return summary(msg)
