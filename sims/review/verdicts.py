"""The verdicts of two rule sets side by side, and the changes of class a reviewer must see.

A **class flip** is a verdict of NEW that BASE's class of the property would not accept: a
known limitation that holds, an open question that closes, a *sometimes* never reached. A rule
of BASE that NEW violates is flagged beside them ("breaks"). One NEW foresees (its own
expectation: the 2.4.0 snapshot rule closes the resume question; or its ``worse_on``: the
price a variant declares) is listed as foreseen; one it does not is a red flag (⚠).
"""

from __future__ import annotations

from dataclasses import dataclass

from acp_lifecycle.model.config import Rules
from acp_lifecycle.model.properties import PROPERTIES
from acp_lifecycle.sims.variants import FLIPS

__all__ = ["Change", "verdict_changes", "cell"]


def _variant(rules: Rules):
    from acp_lifecycle.model.variants import VARIANTS

    v = VARIANTS.get(rules.name)
    return v if v is not None and v.rules == rules else None


def _expectation(rules: Rules, p) -> str:
    v = _variant(rules)
    if v is not None:
        if p.id in v.not_applicable:
            return ""
        return v.expectation(p)
    return p.expectation(rules)


def cell(v, expectation: str) -> str:
    """A verdict as the matrix shows it: holds, violated (N steps), reached, unreached, n/a."""
    if not expectation or v.outcome == "not applicable":
        return "n/a"
    return f"violated ({len(v.trace)} steps)" if v.status == "violated" else v.status


@dataclass
class Change:
    property: str
    summary: str
    base: str
    new: str
    base_expectation: str
    new_expectation: str
    #: the change of class ("a known limitation now holds", "an open question closes", "a sometimes is
    #: never reached", as ``variants`` flags them), "violated" for a rule of BASE broken, "" for none
    flip: str = ""
    #: why NEW foresees it ("" = it does not): its own expectation, or its ``worse_on``
    foreseen_by: str = ""

    @property
    def scope(self) -> bool:
        """Whether the property is a rule of one rule set only (n/a under the other): a change of scope."""
        return "n/a" in (self.base, self.new)

    @property
    def foreseen(self) -> bool:
        """Whether NEW says so itself (the flip is what the change is for, or its declared price)."""
        return bool(self.foreseen_by)

    def data(self) -> dict:
        return {"property": self.property, "base": self.base, "new": self.new,
                "base_expectation": self.base_expectation, "new_expectation": self.new_expectation,
                "class_flip": self.flip, "foreseen": self.foreseen if self.flip else None,
                "foreseen_by": self.foreseen_by}


def verdict_changes(base: Rules, new: Rules, rb, rn) -> list[Change]:
    """The properties whose verdict differs between two ``SuiteResult``s (``rb`` of BASE, ``rn`` of NEW)."""
    out = []
    for p in PROPERTIES:
        eb, en = _expectation(base, p), _expectation(new, p)
        vb, vn = rb.verdicts[p.id], rn.verdicts[p.id]
        cb, cn = cell(vb, eb), cell(vn, en)
        if cb == cn:
            continue
        # the change of class, in the words of ``variants``' own flags (sims/variants.py), or a rule broken
        flip = ""
        if cn != "n/a":  # a property NEW cannot state changes scope, not class
            flip = FLIPS.get((eb, vb.status, vn.status), "")
            if not flip and eb == "must_hold" and vn.status == "violated":
                flip = "violated"
        why = ""
        if flip and en != eb:
            why = f"expects {en}"
        elif flip and p.id in getattr(_variant(new), "worse_on", ()):
            why = "lists it in worse_on"
        out.append(Change(p.id, p.summary, cb, cn, eb, en, flip, why))
    return out
