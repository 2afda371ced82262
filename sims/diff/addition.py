"""The review of an addition: what a proposal brings to a rule set, and whether it is a conservative extension.

When NEW composes proposals BASE does not (``Rules.proposals``), NEW's clients can send messages
BASE's cannot: a plain diff stops at the first of them ("client sends" the proposal's request) and never
shows what the proposal is about. The review of an addition asks two questions instead, the way a
TLA+ spec that ``EXTENDS`` a base is checked against it:

1. **Is it a conservative extension?** Restricted to the runs that send none of the proposal's
   messages (``Lifecycle.without_messages``: its actions hidden), does NEW allow and forbid exactly
   what BASE does? That is a diff of BASE against the restricted NEW: no difference means yes,
   within the bounds; each difference is a run where the proposal changes what the core does.
2. **What does it bring?** Each situation its witnesses name (``sometimes``: each outcome of its
   races) as the shortest run NEW's check found, and the verdict of each of its rules.

And for each flag of the proposal (a question it leaves open, or where two texts differ), what the
other value changes on the wire, on the members the proposal brings: the diff of NEW against NEW
with that flag set otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from acp_lifecycle.model import Lifecycle, Rules
from acp_lifecycle.model.proposals import get_proposal

from .product import SuiteDiff, diff_suite
from .report import annotate

__all__ = ["Addition", "Behaviour", "FlagDiff", "added", "addition"]


@dataclass
class Behaviour:
    """A situation an added proposal names (one of its witnesses), and the shortest run that reaches it."""

    proposal: str
    prop: object  # the witness (a ``Property`` of kind sometimes)
    member: str
    #: (pre-state, step) pairs from the initial state; [] when NEW's check did not reach it
    run: list
    #: the clauses of the proposal's rules that name this situation as their witness
    clauses: tuple[str, ...] = ()


@dataclass
class FlagDiff:
    """What setting one of the proposal's flags otherwise changes on the wire."""

    proposal: str
    flag: object  # the ``Flag``
    value: object  # the other value
    diff: SuiteDiff


@dataclass
class Addition:
    base: Rules
    new: Rules
    #: the proposals NEW composes and BASE does not, and the JSON-RPC methods they add
    proposals: tuple[str, ...]
    methods: tuple[str, ...]
    #: BASE against NEW restricted to the runs that send none of their messages
    restricted: SuiteDiff
    behaviours: list[Behaviour] = field(default_factory=list)
    #: (property, verdict) of the proposals' rules under NEW
    rules: list = field(default_factory=list)
    flags: list[FlagDiff] = field(default_factory=list)

    @property
    def conservative(self) -> bool:
        """Whether NEW, restricted to the runs without the proposals' messages, is BASE (within the bounds)."""
        return not self.restricted.different


def added(base: Rules, new: Rules) -> tuple[str, ...]:
    """The proposals ``new`` composes and ``base`` does not (a fault's proposal counts as its proposal). A feature
    of a text ``new`` follows (``Proposal.spec``) is part of that text, not an addition: ``rfd`` to ``rfd+2.4.0``
    is a change of the spec, diffed as one."""
    have = {p.split("!")[0] for p in base.all_proposals}
    return tuple(p for p in new.proposals if p.split("!")[0] not in have)


def addition(suite, base: Rules, new: Rules, checked_new, *, max_nodes: int = 3_000_000, robust: bool = True,
             on_member: Callable[[str], None] | None = None, progress: Callable[[int, int], None] | None = None,
             flags: bool = True, workers: int = 1) -> Addition:
    """The review of what ``new`` adds to ``base`` on ``suite``; ``checked_new`` is NEW's ``SuiteResult`` there."""
    names = added(base, new)
    proposals = [get_proposal(n) for n in names]
    restricted = diff_suite(suite, base, Lifecycle.without_messages(new, names), max_nodes=max_nodes,
                            on_member=on_member, workers=workers)
    annotate(restricted, robust=robust, progress=progress)
    methods = tuple(m.method for p in proposals for m in p.messages if m.method)
    out = Addition(base, new, names, methods, restricted)
    for p in proposals:
        rules = [prop for prop in p.properties if prop.kind != "sometimes" and prop.expectation(new)]
        for prop in p.properties:
            if prop.kind != "sometimes":
                continue
            v = checked_new.verdicts.get(prop.id)
            run = list(v.trace) if v is not None and v.status == "reached" else []
            cites = tuple(dict.fromkeys(c for r in rules if prop.id in r.witnesses for c in r.clauses))
            out.behaviours.append(Behaviour(p.name, prop, checked_new.found_in.get(prop.id, ""), run, cites))
        out.rules += [(prop, checked_new.verdicts.get(prop.id)) for prop in rules]
        if flags:
            out.flags += _flag_diffs(suite, p, new, max_nodes, workers)
    out.behaviours.sort(key=lambda b: (not b.run, len(b.run)))
    return out


def _flag_diffs(suite, p, new: Rules, max_nodes: int, workers: int = 1) -> list[FlagDiff]:
    """For each flag of proposal ``p``, NEW against NEW with the flag's other values, on the members ``p`` adds."""
    from dataclasses import replace

    own = [m for name, m in p.members if name == suite.name] or list(suite.members)
    members = replace(suite, members=tuple(m.validate() for m in own))
    out = []
    for f in p.flags:
        now = new.flag(f.name, f.default)
        for value in f.values:
            if value == now:
                continue
            flags = tuple(sorted({**dict(new.flags), f.name: value}.items()))
            flags = tuple((k, v) for k, v in flags if not (k == f.name and v == f.default))
            other = new.with_(name=f"{new.name} with {f.name}={_show(value)}", flags=flags)
            d = diff_suite(members, new, other, max_nodes=max_nodes, workers=workers)
            annotate(d, robust=False)
            out.append(FlagDiff(p.name, f, value, d))
    return out


def _show(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
