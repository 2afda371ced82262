"""Exhaustive breadth-first exploration of the composed model.

BFS from the initial state, checking every property of the rule set (``Lifecycle.properties``):
``always`` on each state, ``step`` and ``sometimes`` on each transition,
``eventually`` on the state graph (a reachable terminal state or bottom
strongly connected component where the obligation is open). BFS order makes
each counterexample a shortest one.

The search itself is ``engine.py``: 64-bit fingerprints of canonical
representatives (``model/symmetry.py``) instead of whole states, traces
rebuilt by running the model again, optionally on several processes or a
Dask cluster. This module turns what it found into verdicts.

>>> from acp_lifecycle.model import Config
>>> r = explore(Config(name="doc"))
>>> r.states > 0 and r.verdicts["success_only_after_insertion"].status
'holds'
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from acp_lifecycle.model import RFD_RULES, Config, Lifecycle, Property, Rules, Step, System

from .engine import TooLarge, search
from .graph import cyclic_core

__all__ = ["Verdict", "Result", "explore", "TooLarge"]


@dataclass
class Verdict:
    prop: Property
    #: holds | violated | reached | unreached
    status: str
    message: str = ""
    #: the counterexample (violated) or witness (reached): (pre-state, step) pairs from the initial state
    trace: list[tuple[System, Step]] = field(default_factory=list)
    #: for an eventually violation: "terminal" or "cycle"
    ending: str = ""
    #: whether the configuration can exhibit the property's situation at all
    applicable: bool = True
    #: the expectation under the rules checked (``Property.expectation``); None:
    #: the property's own; "": the property is no rule of the rule set checked
    expect: str | None = None

    @property
    def expectation(self) -> str:
        return self.prop.expect if self.expect is None else self.expect

    @property
    def outcome(self) -> str:
        """What the verdict means against the property's expectation."""
        exp = self.expectation
        if exp == "":
            return "not applicable"
        if not self.applicable and self.status in ("holds", "unreached") and exp not in ("must_hold", "should"):
            return "not applicable"
        if self.prop.kind == "sometimes":
            return "reached" if self.status == "reached" else "NOT REACHED"
        if self.status == "holds":
            return "holds" if exp in ("must_hold", "should") else "NOT CONFIRMED"
        return {
            "must_hold": "VIOLATED",
            "should": "SHOULD not followed",
            "known_limitation": "limitation confirmed",
            "open_question": "open question confirmed",
        }[exp]

    @property
    def ok(self) -> bool:
        return self.outcome in (
            "holds", "reached", "limitation confirmed", "open question confirmed", "not applicable",
            "SHOULD not followed",
        )


@dataclass
class Result:
    config: Config
    rules: Rules
    states: int
    transitions: int
    depth: int
    seconds: float
    verdicts: dict[str, Verdict]
    terminal_states: int
    #: whether states were reduced by symmetry (client names, message IDs)
    symmetry: bool = False
    #: processes the search ran on
    workers: int = 1
    #: TLC's estimates of the probability that two distinct states shared a
    #: fingerprint: (optimistic, based on the actual fingerprints)
    collision: tuple[float, float] = (0.0, 0.0)
    #: how much the worker processes' peak resident sets grew past what they
    #: shared with this process (bytes, summed; 0 in one process)
    workers_grown: int = 0
    #: this process's peak resident set before the workers handed their
    #: records over (bytes; 0 in one process)
    peak_before_finish: int = 0
    #: why the search turned the symmetry reduction off ("" when it did not):
    #: a step broke what the reduction assumes (``model.symmetry.SymmetryBroken``)
    symmetry_broken: str = ""
    #: whether the partial-order reduction was on (``sims/search/por.py``); why the search
    #: turned it off ("" when it did not); (states reduced, states expanded fully, steps put off)
    por: bool = False
    por_broken: str = ""
    por_counts: tuple[int, int, int] = (0, 0, 0)

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts.values())


def explore(
    cfg: Config,
    rules: Rules = RFD_RULES,
    *,
    max_states: int = 3_000_000,
    progress: Callable[[int, int, int], None] | None = None,
    properties: list[Property] | None = None,
    symmetry: bool = True,
    workers: int = 1,
    cluster=None,
    por: bool = False,
) -> Result:
    """Explore every state reachable under ``cfg`` and ``rules``; check every property of the rule set.

    ``symmetry``: store one representative per class of states that differ
    only in client names and message IDs (``model/symmetry.py``); verdicts
    and the lengths of the shortest counterexamples are the same.
    ``workers``: processes searching in parallel (same states, same
    lengths); ``cluster``: a Dask client to search on (``sims.search.dask``).
    ``por``: the partial-order reduction (``sims/search/por.py``): the same verdicts,
    fewer states, counterexamples perhaps longer.
    """
    model = Lifecycle(cfg, rules)
    every = model.every_property() if properties is None else properties
    expect = {p.id: model.expectation(p) for p in every}
    props = [p for p in every if expect[p.id] != ""]  # the others are no rules of this rule set
    t0 = time.perf_counter()
    out = search(model, props, symmetry=symmetry, workers=workers, max_states=max_states,
                 progress=progress, cluster=cluster, por=por)
    verdicts: dict[str, Verdict] = {}
    for p in every:
        if p.id in out.verdicts:
            status, message, trace, ending = out.verdicts[p.id]
            verdicts[p.id] = Verdict(p, status, message, trace, ending)
        else:
            verdicts[p.id] = Verdict(p, "unreached" if p.kind == "sometimes" else "holds", applicable=p.applies(cfg))
        verdicts[p.id].expect = expect[p.id]
    return Result(cfg, rules, out.states, out.transitions, out.depth, time.perf_counter() - t0, verdicts,
                  out.terminal_states, out.symmetry, out.workers, out.collision, out.workers_grown,
                  out.peak_before_finish, out.symmetry_broken, out.por, out.por_broken, out.por_counts)


def _cyclic_core(n: int, edges: list[tuple[int, int]]) -> set[int]:
    """The states on or after a cycle (``engine.cyclic_core`` on an edge list)."""
    if not edges:
        return set()
    src, dst = np.array(edges, dtype=np.int64).T
    return set(cyclic_core(n, src, dst).tolist())
