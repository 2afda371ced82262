"""``acp-lifecycle review BASE NEW``: one Markdown document a reviewer pastes into a pull request.

``build`` runs what a review needs on one configuration: ``diff`` both ways with every
distinguishing run checked under larger bounds and the model's other readings
(``sims.diff.robust``), and ``check`` under both rule sets for the verdicts (``verdicts``).
``markdown`` writes the document: what NEW allows and forbids on the wire (robust differences
first, artefacts apart), verdict changes with class flips flagged, each run as a table of
messages and a Mermaid chart with both rule sets' answers, the clauses involved, the bounds,
and the commands that reproduce it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Callable

from acp_lifecycle.model.config import Rules

from .verdicts import Change, verdict_changes

__all__ = ["Review", "build", "rule_changes", "clauses_of", "responsible", "RULE_CLAUSES", "Change"]

#: The clause each rule of ``Rules`` encodes, where one sentence does (model/clauses).
RULE_CLAUSES: dict[str, tuple[str, ...]] = {
    "cancel_rejects_held": ("S240-CANCEL-SCOPE",),
    "resume_snapshot": ("S240-STATE-RESUME-SNAPSHOT",),
    "spec": ("S240-STOP-SHOULD-INCLUDE",),
    "response_message_id": ("RFD-INSERT-RESPONSE-ID",),
    "client_associates_by": ("RFD-CLIENT-RECONCILE",),
}


@dataclass
class Review:
    base: Rules
    new: Rules
    config: str
    diff: object  # sims.diff.SuiteDiff, annotated (robustness, answers)
    changes: list[Change] = field(default_factory=list)
    #: the rules the command line named them by (BASE, NEW)
    names: tuple[str, str] = ("", "")
    #: when NEW composes proposals BASE does not: what they bring (``sims.diff.addition``); ``diff`` is then
    #: BASE against NEW restricted to the runs without their messages
    addition: object = None

    @property
    def different(self) -> bool:
        return self.diff.different or bool(self.changes) or self.addition is not None

    def runs(self) -> list:
        """Every distinguishing run, robust ones first, then shortest first."""
        ws = list(self.diff.only_a.values()) + list(self.diff.only_b.values())
        return sorted(ws, key=lambda w: (not (w.robustness is None or w.robustness.robust), w.length))


def rule_changes(base: Rules, new: Rules) -> list[tuple[str, object, object]]:
    """(field, BASE's value, NEW's value) for every rule that differs (the name aside)."""
    return [(f.name, getattr(base, f.name), getattr(new, f.name)) for f in fields(Rules)
            if f.name != "name" and getattr(base, f.name) != getattr(new, f.name)]


def clauses_of(w, cfg, refused: Rules) -> list:
    """The properties of ``refused`` (rules it must keep) that the run breaks, in the order it breaks them:
    what the distinguishing message goes against, with the clauses they cite."""
    from acp_lifecycle.model.properties import PROPERTIES

    props = [p for p in PROPERTIES if p.kind in ("always", "step") and p.expectation(refused) in ("must_hold", "should")]
    out = []
    for pre, step in w.run:
        for p in props:
            if p in out:
                continue
            try:
                bad = p.check(step.state) if p.kind == "always" else p.check(pre, step)
            except Exception:  # a property of one rule set may not read another's state
                bad = None
            if bad:
                out.append(p)
    return out


def responsible(w, cfg, allowed: Rules, refused: Rules) -> list[str]:
    """The rules that make the difference: each field of ``refused`` that differs from ``allowed`` and,
    set back to ``allowed``'s value alone, lets ``refused`` show the whole run."""
    from acp_lifecycle.sims.diff import allows

    out = []
    for name, _, value in rule_changes(refused, allowed):
        if allows(cfg, refused.with_(**{name: value}), w.events) == len(w.events):
            out.append(name)
    return out


def build(config: str, base: Rules, new: Rules, *, robust: bool = True, max_nodes: int = 3_000_000,
          on_member: Callable[[str], None] | None = None, progress: Callable[[int, int], None] | None = None,
          verdicts: bool = True, names: tuple[str, str] = ("", ""), workers: int = 1) -> Review:
    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.diff import diff_suite
    from acp_lifecycle.sims.diff.addition import added, addition
    from acp_lifecycle.sims.diff.report import annotate
    from acp_lifecycle.sims.search.check import check_suite, check_suites

    suite = get_suite(config, base, new)  # with the members the proposals of either add
    names = (names[0] or base.name, names[1] or new.name)
    if added(base, new):
        # an addition: is it a conservative extension, and what does it bring (sims/diff/addition.py)
        checked_new = check_suite(suite, new, workers=workers)
        add = addition(suite, base, new, checked_new, max_nodes=max_nodes, robust=robust, on_member=on_member,
                       progress=progress, workers=workers)
        changes = verdict_changes(base, new, check_suite(suite, base, workers=workers), checked_new) if verdicts else []
        return Review(base, new, suite.name, add.restricted, changes, names=names, addition=add)
    d = diff_suite(suite, base, new, max_nodes=max_nodes, on_member=on_member, workers=workers)
    annotate(d, robust=robust, progress=progress)
    changes = []
    if verdicts:
        changes = verdict_changes(base, new, *check_suites([(suite, base), (suite, new)], workers=workers))
    return Review(base, new, suite.name, d, changes, names=names)
