"""``composition(rules)`` for the compiled modules (setup.py): the composition of the rules asked last,
read without calling ``composition.py``'s interpreted function. A search asks for one rule set at every
step, several times a step (the successor function, the fresh-ID check, whether a state renumbers), and
an interpreted call from compiled code cost more than the rest of such a lookup: replacing the fresh-ID
check's took 2.8 % off the instructions of a search (docs/performance.md, "A compiled model")."""

from __future__ import annotations

from typing import Final

from .composition import Composition, composition
from .config import Rules

__all__ = ["composed"]

#: the rules asked last and their composition
_LAST: Final[list] = [None, None]


def composed(rules: Rules) -> Composition:
    """``composition(rules)`` (``Rules`` is frozen: the same rules, the same composition)."""
    if rules is not _LAST[0]:
        _LAST[0], _LAST[1] = rules, composition(rules)
    return _LAST[1]
