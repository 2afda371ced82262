"""The model's component functions, as one table a variant of the model can change.

A mutant (``sims/mutate``) is the model with one of these replaced: a faulty echo, a client
that appends what it should replace, steps taken away. The table travels in ``Rules.parts``
(None: the model's own, ``DEFAULT``), so a faulty model is a value, like a seeded bug's
``Rules``: nothing patches a module at run time, and two models with different parts can
run side by side in one process.

``DEFAULT`` is filled in by ``system.py``, which composes the agent's and the clients' steps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

__all__ = ["DEFAULT", "FIELDS", "Parts", "of"]


@dataclass(frozen=True)
class Parts:
    # the step-producing functions ``successors`` composes: (..., out) append Steps
    agent_receive: Callable
    agent_prompts: Callable
    agent_work: Callable
    agent_faults: Callable
    clients: Callable
    # what the participants do inside a step
    client_receive: Callable
    end: Callable
    reject: Callable
    insert: Callable
    echo: Callable
    answer: Callable
    #: ``(pre, step) -> bool``: the steps kept (a choice taken away); None keeps every step
    keep: Callable | None = None

    def with_(self, **changes) -> "Parts":
        return replace(self, **changes)


#: the model module and function each part stands for (``agent.echo`` is ``echo``)
FIELDS: dict[tuple[str, str], str] = {
    ("agent", "agent_receive"): "agent_receive",
    ("agent", "agent_prompts"): "agent_prompts",
    ("agent", "agent_work"): "agent_work",
    ("agent", "agent_faults"): "agent_faults",
    ("clients", "clients"): "clients",
    ("clients", "client_receive"): "client_receive",
    ("agent", "end"): "end",
    ("agent", "reject"): "reject",
    ("agent", "insert"): "insert",
    ("agent", "echo"): "echo",
    ("agent", "answer"): "answer",
}

DEFAULT: Parts | None = None


def of(rules) -> Parts:
    """The parts a rule set runs with."""
    return rules.parts or DEFAULT
