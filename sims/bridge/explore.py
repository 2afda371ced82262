"""Against the model: every terminal path, through each bridge."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass

from .properties import check_properties
from .run import run_bridge


# ---------------------------------------------------------------------------
# Against the model: every terminal path, through each bridge
# ---------------------------------------------------------------------------


def model_transcripts(cfg, rules, conn: str | None = None) -> tuple[list[tuple], int]:
    """``(transcripts, paths)``: the distinct transcripts of every terminal path of the
    model from ``initial_state``, shortest first, and how many terminal paths there are.

    A bridge sees only the wire, so paths with the same transcript (they differ in
    internal steps: holding, reserving, inserting) need one run. ``conn`` keeps one
    connection's lines. Members with resumes are refused: their connection labels
    depend on the whole path.
    """
    from acp_lifecycle.model.system import initial_state, successors

    from acp_lifecycle.sims.wire.transcript import export

    if cfg.resumes:
        raise ValueError(f"member {cfg.name} has resumes: its connection labels depend on the whole path")
    table: list[dict] = []
    ids: dict[str, int] = {}
    memo: dict = {}
    counts: dict = {}

    def line_ids(pre, step) -> tuple:
        out = []
        for line in export([(pre, step)]):
            if conn is not None and line.get("conn") != conn:
                continue
            k = json.dumps(line, sort_keys=True)
            if k not in ids:
                ids[k] = len(table)
                table.append(line)
            out.append(ids[k])
        return tuple(out)

    def walk(s):
        if s in memo:
            return memo[s]
        steps = successors(s, cfg, rules)
        if not steps:
            memo[s], counts[s] = frozenset([()]), 1
            return memo[s]
        found, n = set(), 0
        for step in steps:
            head = line_ids(s, step)
            for tail in walk(step.state):
                found.add(head + tail)
            n += counts[step.state]
        memo[s], counts[s] = frozenset(found), n
        return memo[s]

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        s0 = initial_state(cfg)
        found = walk(s0)
    finally:
        sys.setrecursionlimit(limit)
    ordered = sorted(found, key=lambda t: (len(t), t))
    return [tuple(table[i] for i in t) for t in ordered], counts[s0]


@dataclass
class BridgeExploration:
    member: str
    to: str
    options: dict
    paths: int
    transcripts: int
    seconds: float
    #: property id -> (shortest input transcript, its violations)
    violations: dict
    #: problem kind -> (shortest input transcript, the problem)
    questions: dict


def explore_bridge(
    member: str, to: str, rules=None, conn: str | None = None, until: str | None = None, **options
) -> BridgeExploration:
    """Bridge every terminal path of a model member and check the bridge properties.

    ``to="v1"``: the model agent speaks v2 (``RFD_RULES``); ``to="v2"``: it
    speaks v1 (``VARIANTS["v1"].rules``). ``conn`` keeps one connection's lines.
    ``until``: stop at the first (shortest) violation of that property. Options
    go to the bridge (``bug``, ``insertion``, ``background``).
    """
    from acp_lifecycle.model.config import RFD_RULES
    from acp_lifecycle.model.variants import VARIANTS

    from acp_lifecycle.sims.configs import get_suite

    cfg = get_suite(member).members[0]
    if rules is None:
        rules = RFD_RULES if to == "v1" else VARIANTS["v1"].rules
    t0 = time.perf_counter()
    transcripts, paths = model_transcripts(cfg, rules, conn)
    violations: dict = {}
    questions: dict = {}
    for tr in transcripts:
        run = run_bridge(tr, to, finite=True, **options)
        for pid, msgs in check_properties(run).items():
            if msgs and pid not in violations:
                violations[pid] = (tr, msgs)
        for p in run.problems:
            if p.kind not in questions:
                questions[p.kind] = (tr, p)
        if until is not None and until in violations:
            break
    return BridgeExploration(member, to, dict(options), paths, len(transcripts), time.perf_counter() - t0, violations, questions)
