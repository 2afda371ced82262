"""``composition(rules)`` for the compiled modules (setup.py): the composition of the rules asked last,
read from ``composition.py``'s own record of it (``LAST``) without calling its interpreted function. A
search asks for one rule set several times a step (the successor function, the fresh-ID check, whether
a state renumbers), and an interpreted call from compiled code costs about a thousand instructions:
reading the record here took 1.9 % off those of a search (docs/performance.md, "A compiled model")."""

from __future__ import annotations

from typing import Final

from .composition import LAST, Composition, composition
from .config import Rules

__all__ = ["composed"]

#: ``composition.py``'s record of the rules asked last and their composition (one list, changed in place)
_LAST: Final[list] = LAST


def composed(rules: Rules) -> Composition:
    """``composition(rules)`` (``Rules`` is frozen: the same rules, the same composition)."""
    if rules is _LAST[0]:
        return _LAST[1]
    return composition(rules)
