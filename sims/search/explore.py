"""Exhaustive breadth-first exploration of the composed model.

BFS from the initial state, checking every property of ``model.properties``:
``always`` on each new state, ``step`` and ``sometimes`` on each transition,
``eventually`` on the state graph (networkx: a reachable terminal state or
bottom strongly connected component where the obligation is open). BFS order
makes each counterexample a shortest one.

The hot loop keeps states as the model's tuples, a dict of parent pointers and
an edge list of integers; only the liveness check builds a networkx graph.

>>> from acp_lifecycle.model.config import Config
>>> r = explore(Config(name="doc"))
>>> r.states > 0 and r.verdicts["success_only_after_insertion"].status
'holds'
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import networkx as nx

from acp_lifecycle.model.config import Config, Rules, RFD_RULES
from acp_lifecycle.model.properties import PROPERTIES, Property, step_tags
from acp_lifecycle.model.system import Step, System, initial_state, successors

__all__ = ["Verdict", "Result", "explore", "TooLarge"]


class TooLarge(RuntimeError):
    """The exploration passed its state limit."""


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

    @property
    def outcome(self) -> str:
        """What the verdict means against the property's expectation."""
        exp = self.prop.expect
        if not self.applicable and self.status in ("holds", "unreached") and exp != "must_hold":
            return "not applicable"
        if self.prop.kind == "sometimes":
            return "reached" if self.status == "reached" else "NOT REACHED"
        if self.status == "holds":
            return "holds" if exp == "must_hold" else "NOT CONFIRMED"
        return {
            "must_hold": "VIOLATED",
            "known_limitation": "limitation confirmed",
            "open_question": "open question confirmed",
        }[exp]

    @property
    def ok(self) -> bool:
        return self.outcome in ("holds", "reached", "limitation confirmed", "open question confirmed", "not applicable")


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

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts.values())


def _path(parents: dict, state: System) -> list[tuple[System, Step]]:
    path = []
    while True:
        entry = parents[state]
        if entry is None:
            break
        pre, step = entry
        path.append((pre, step))
        state = pre
    path.reverse()
    return path


def explore(
    cfg: Config,
    rules: Rules = RFD_RULES,
    *,
    max_states: int = 3_000_000,
    progress: Callable[[int, int, int], None] | None = None,
    properties: list[Property] | None = None,
) -> Result:
    """Explore every state reachable under ``cfg`` and ``rules``; check every property."""
    props = PROPERTIES if properties is None else properties
    always = [p for p in props if p.kind == "always"]
    steps = [p for p in props if p.kind == "step"]
    some = [p for p in props if p.kind == "sometimes"]
    eventually = [p for p in props if p.kind == "eventually"]
    verdicts: dict[str, Verdict] = {}

    t0 = time.perf_counter()
    s0 = initial_state(cfg)
    parents: dict[System, tuple[System, Step] | None] = {s0: None}
    index: dict[System, int] = {s0: 0}
    edges: list[tuple[int, int]] = []
    frontier = [s0]
    transitions = depth = 0
    terminal: list[System] = []

    def check_state(s: System) -> None:
        for p in list(always):
            msg = p.check(s)
            if msg:
                verdicts[p.id] = Verdict(p, "violated", msg, _path(parents, s))
                always.remove(p)

    check_state(s0)
    # Dispatch step and sometimes checks by the tags a step carries: the action
    # name and the kinds of message sent. A property is dropped from the
    # dispatch table once it has its verdict.
    untagged = [p for p in steps + some if p.on is None]
    by_tag: dict[str, list[Property]] = {}
    for p in steps + some:
        for tag in p.on or ():
            by_tag.setdefault(tag, []).append(p)
    empty: tuple = ()
    settled: list[Property] = []

    def settle(p: Property, verdict: Verdict) -> None:
        verdicts[p.id] = verdict
        settled.append(p)  # dropped from the dispatch after this step, not while it iterates

    while frontier:
        nxt: list[System] = []
        for pre in frontier:
            i = index[pre]
            succ = successors(pre, cfg, rules)
            if not succ:
                terminal.append(pre)
            for step in succ:
                transitions += 1
                post = step.state
                seen_here = None
                for tag in step_tags(step):
                    for p in by_tag.get(tag, empty):
                        if seen_here is None:
                            seen_here = set()
                        elif p.id in seen_here:
                            continue
                        seen_here.add(p.id)
                        _check_step(p, pre, step, parents, settle)
                for p in untagged:
                    _check_step(p, pre, step, parents, settle)
                if settled:
                    for p in settled:
                        for table in (*by_tag.values(), untagged):
                            if p in table:
                                table.remove(p)
                    settled.clear()
                j = index.get(post)
                if j is None:
                    j = len(index)
                    index[post] = j
                    parents[post] = (pre, step)
                    nxt.append(post)
                    if always:
                        check_state(post)
                    if j >= max_states:
                        raise TooLarge(
                            f"configuration {cfg.name!r} passed {max_states:,} states at depth {depth + 1}; "
                            "lower its bounds or pass a larger limit"
                        )
                edges.append((i, j))
        if nxt:
            depth += 1
        frontier = nxt
        if progress:
            progress(len(index), transitions, depth)

    _check_eventually(eventually, index, edges, terminal, parents, verdicts)
    for p in props:
        if p.id not in verdicts:
            verdicts[p.id] = Verdict(p, "unreached" if p.kind == "sometimes" else "holds", applicable=p.applies(cfg))
    ordered = {p.id: verdicts[p.id] for p in props}
    return Result(cfg, rules, len(index), transitions, depth, time.perf_counter() - t0, ordered, len(terminal))


def _check_step(p: Property, pre: System, step: Step, parents: dict, settle) -> None:
    if p.kind == "step":
        msg = p.check(pre, step)
        if msg:
            settle(p, Verdict(p, "violated", msg, _path(parents, pre) + [(pre, step)]))
    elif p.check(pre, step):
        settle(p, Verdict(p, "reached", "", _path(parents, pre) + [(pre, step)]))


def _check_eventually(eventually, index, edges, terminal, parents, verdicts) -> None:
    """Obligations open in a terminal state or in a whole bottom SCC are violated."""
    if not eventually:
        return
    states = list(index)  # index order == discovery order == BFS order
    # Terminal states first: they are the common case, and need no graph.
    for s in terminal:
        for p in list(eventually):
            msg = p.check(s)
            if msg and p.id not in verdicts:
                verdicts[p.id] = Verdict(p, "violated", msg + " (no step is left)", _path(parents, s), "terminal")
    pending = [p for p in eventually if p.id not in verdicts]
    if not pending:
        return
    core = _cyclic_core(len(states), edges)
    if not core:
        return  # the graph is acyclic: its bottom components are its terminal states
    g = nx.DiGraph()
    g.add_nodes_from(core)
    g.add_edges_from((u, v) for u, v in edges if u in core)
    for comp in nx.attracting_components(g):
        if len(comp) == 1:
            (n,) = comp
            if not g.has_edge(n, n):
                continue  # a terminal state, handled above
        first = min(comp)  # earliest discovered: shortest path into the component
        for p in list(pending):
            msgs = [p.check(states[n]) for n in comp]
            if all(msgs):
                verdicts[p.id] = Verdict(
                    p, "violated", msgs[0] + " (the run can cycle forever)", _path(parents, states[first]), "cycle"
                )
                pending.remove(p)


def _cyclic_core(n: int, edges: list[tuple[int, int]]) -> set[int]:
    """The states Kahn's algorithm cannot remove: those on or after a cycle.

    The set is closed under successors, so the bottom SCCs of the whole graph
    that are not terminal states are exactly the attracting components of it.
    """
    indeg = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        succ[u].append(v)
        indeg[v] += 1
    stack = [v for v in range(n) if indeg[v] == 0]
    removed = 0
    while stack:
        u = stack.pop()
        removed += 1
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                stack.append(v)
    if removed == n:
        return set()
    return {v for v in range(n) if indeg[v] > 0}
