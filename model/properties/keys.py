"""A step's key for the dispatch of the step properties (``dispatch.py``): compiled with the model
(setup.py), because the search asks for it at every step (``sims/search/expand.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the type compiled code reads the fields by (state.py imports the properties' judges)
    from ..state import Step

__all__ = ["key_of"]


def key_of(step: Step):
    """The action's name and the kinds of the messages the step sent, in order; the name alone
    (a string: cheaper to hash, a step at a time) for a step that sends nothing."""
    em = step.emitted
    return step.action[0] if not em else (step.action[0], *[m[0] for _, m in em])
