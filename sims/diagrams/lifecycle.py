"""The composed lifecycle of a configuration, projected onto the foreground state and the first prompt's phase."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from acp_lifecycle.model.config import RFD_RULES, Config, Rules
from acp_lifecycle.model.machines import ForegroundMachine, PromptRequestMachine
from acp_lifecycle.model.properties import PROPERTIES
from acp_lifecycle.model.system import System, initial_state, successors

from .base import NOT_SENT, SENT
from .machines import dot_quoted

# ---------------------------------------------------------------------------
# The composed lifecycle, projected
# ---------------------------------------------------------------------------

_FG_ORDER = [s.id for s in ForegroundMachine.states]
_PHASE_ORDER = [NOT_SENT, SENT] + [s.id for s in PromptRequestMachine.states]


def _node_key(node: tuple[str, str]) -> tuple:
    fg, phase = node
    return (
        _PHASE_ORDER.index(phase) if phase in _PHASE_ORDER else len(_PHASE_ORDER),
        phase,
        _FG_ORDER.index(fg) if fg in _FG_ORDER else len(_FG_ORDER),
        fg,
    )


def project(state: System) -> tuple[str, str]:
    """(foreground state, first prompt's phase): ``"not sent"``, ``"sent"`` (a
    client sent it, the agent has not received it), then the agent's phase."""
    a = state.agent
    if a.reqs:
        return (a.fg, a.reqs[0].phase)
    return (a.fg, SENT if any(c.subs for c in state.clients) else NOT_SENT)


@dataclass
class Lifecycle:
    """The composed model of one configuration, projected onto (fg, phase)."""

    config: str
    rules: str
    states: int
    initial: tuple[str, str]
    #: projected nodes, sorted (phase order, then foreground order)
    nodes: list[tuple[str, str]]
    #: (from, to) -> sorted action names
    edges: dict[tuple[tuple[str, str], tuple[str, str]], tuple[str, ...]]
    #: node -> sorted ids of the ``always`` properties failing in some state it projects
    violations: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    #: nodes in the order the exploration found them (the layout's starting order)
    discovered: list[tuple[str, str]] = field(default_factory=list)

    @property
    def title(self) -> str:
        rules = "" if self.rules == RFD_RULES.name else f", rules {self.rules}"
        return f"Lifecycle of configuration {self.config}{rules}"


def lifecycle(config: str | Config = "tiny", rules: Rules = RFD_RULES, *, max_states: int = 200_000) -> Lifecycle:
    """Explore ``config`` (a configuration or member name, or a ``Config``) and project it.

    A node is the agent's foreground state and the first prompt's phase; an
    edge is every action (``step.action[0]``) that moves between two distinct
    nodes. Every reachable state is checked against every ``always`` property.

    >>> lc = lifecycle("tiny")
    >>> lc.initial, lc.edges[(("idle", "not sent"), ("idle", "sent"))]
    (('idle', 'not sent'), ('ClientSubmitPrompt',))
    """
    if isinstance(config, str):
        from acp_lifecycle.sims.configs import get_suite

        config = get_suite(config).members[0]
    always = [p for p in PROPERTIES if p.kind == "always"]
    s0 = initial_state(config)
    seen = {s0}
    frontier = [s0]
    order: dict[tuple[str, str], None] = {project(s0): None}
    edges: dict[tuple, set[str]] = {}
    bad: dict[tuple, set[str]] = {}

    def check(s: System) -> None:
        for p in always:
            if p.check(s):
                bad.setdefault(project(s), set()).add(p.id)

    check(s0)
    while frontier:
        nxt = []
        for s in frontier:
            u = project(s)
            for step in successors(s, config, rules):
                v = project(step.state)
                order.setdefault(v, None)
                if u != v:
                    edges.setdefault((u, v), set()).add(step.action[0])
                if step.state not in seen:
                    seen.add(step.state)
                    nxt.append(step.state)
                    check(step.state)
                    if len(seen) > max_states:
                        raise RuntimeError(f"configuration {config.name!r} has more than {max_states:,} states")
        frontier = nxt
    return Lifecycle(
        config=config.name,
        rules=rules.name,
        states=len(seen),
        initial=project(s0),
        nodes=sorted(order, key=_node_key),
        edges={k: tuple(sorted(edges[k])) for k in sorted(edges, key=lambda e: (_node_key(e[0]), _node_key(e[1])))},
        violations={k: tuple(sorted(bad[k])) for k in sorted(bad, key=_node_key)},
        discovered=list(order),
    )


def _lc_ids(lc: Lifecycle) -> dict[tuple[str, str], str]:
    return {n: f"n{i}" for i, n in enumerate(lc.nodes)}


def lifecycle_mermaid(lc: Lifecycle) -> str:
    """A Mermaid ``flowchart``: one node per (foreground state, phase), sorted."""
    ids = _lc_ids(lc)
    lines = [
        "---",
        f"title: {json.dumps(lc.title + ' (foreground state / first prompt phase)')}",
        "---",
        "flowchart LR",
        f"    %% Generated by `acp-lifecycle diagrams`: {lc.states} states of the composed model, projected.",
        "    start((start))",
    ]
    for n in lc.nodes:
        label = "<br/>".join(n)
        if n in lc.violations:
            label += "<br/>violates:<br/>" + "<br/>".join(lc.violations[n])
        lines.append(f'    {ids[n]}["{label}"]')
    lines.append(f"    start --> {ids[lc.initial]}")
    for (u, v), actions in lc.edges.items():
        lines.append(f'    {ids[u]} -->|"{"<br/>".join(actions)}"| {ids[v]}')
    lines.append("    classDef violated fill:#fde0e0,stroke:#c00000,stroke-width:3px,color:#800000")
    if lc.violations:
        lines.append("    class " + ",".join(ids[n] for n in lc.violations) + " violated")
    return "\n".join(lines) + "\n"


def lifecycle_dot(lc: Lifecycle) -> str:
    """A deterministic DOT digraph of the projection (nodes and edges sorted)."""
    ids = _lc_ids(lc)
    lines = [
        "// Generated by `acp-lifecycle diagrams` from model/system.py; do not edit by hand.",
        "digraph lifecycle {",
        "  rankdir=LR;",
        f"  label={dot_quoted(lc.title + ': foreground state / first prompt phase')};",
        "  labelloc=t;",
        '  node [shape=box, style=rounded, fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
        '  "__start__" [shape=point, width=0.15, label=""];',
    ]
    for n in lc.nodes:
        label = "\n".join(n)
        attrs = ""
        if n in lc.violations:
            label += "\nviolates:\n" + "\n".join(lc.violations[n])
            attrs = ', style="rounded,filled", fillcolor="#fde0e0", color="#c00000", penwidth=3'
        lines.append(f"  {ids[n]} [label={dot_quoted(label)}{attrs}];")
    lines.append(f'  "__start__" -> {ids[lc.initial]};')
    for (u, v), actions in lc.edges.items():
        lines.append(f"  {ids[u]} -> {ids[v]} [label={dot_quoted(chr(10).join(actions))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


