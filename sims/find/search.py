"""The shortest run matching a pattern: breadth-first over (state, events matched so far).

Each member of the configuration is searched breadth-first, steps counted from the initial state;
a member stops at the length of the shortest match found so far, so the first match is the
shortest over the members (the earlier member on a tie). A step that matches an ``and never``
event cuts the branch. The messages a step sends are matched by their compact summary and by
the kind ``diff`` groups them by; the kind's renaming (which request a response answers) is the
one of the first run that reached the state.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from acp_lifecycle.model.config import Config, Rules
from acp_lifecycle.model.spec import Lifecycle
from acp_lifecycle.sims.diff.observe import canonical, kind, names0, observe, render_message
from acp_lifecycle.sims.diff.report import compact
from acp_lifecycle.sims.search.explore import TooLarge

from .pattern import Event, Pattern

__all__ = ["Found", "FindResult", "find", "find_member"]


@dataclass
class Found:
    member: Config
    #: (pre-state, step) pairs from the initial state
    run: list
    #: for each event of the pattern, the number (1-based) of the step that matched it
    at: list[int]


@dataclass
class FindResult:
    pattern: Pattern
    rules: Rules
    found: Found | None = None
    #: (state, events matched) pairs visited, over every member searched
    nodes: int = 0
    seconds: float = 0.0
    members: list[str] = field(default_factory=list)


def _step_texts(pre, step, names) -> tuple[list, tuple]:
    """[(conn, sender, texts) or ("closed", conn)] of one step, and the renaming after it."""
    out = []
    for raw in observe(pre, step):
        if raw[0] == "closed":
            out.append(("closed", raw[1]))
            _, names = canonical(names, raw)
            continue
        _, c, sender, msg = raw
        texts = (compact(render_message(sender, msg)), kind(raw, names))
        _, names = canonical(names, raw)
        out.append((c, sender, texts))
    return out, names


def _advance(events, p: int, goal: int, step, shown) -> int:
    """How many events are matched after ``step``, ``p`` before it. One step may match several, in
    the order it sends its messages: a message (or closure) event matches the step's message that
    the event before matched, or a later one; an action event matches the step's action."""
    at = 0  # the first of the step's messages the next message event may match
    while p < goal:
        e = events[p]
        if e.kind == "action":
            if not e.matches_action(step.action):
                break
        elif e.kind in ("message", "closed"):
            i = next((i for i in range(at, len(shown)) if _shows(e, shown[i])), None)
            if i is None:
                break
            at = i
        else:
            break
        p += 1
    return p


def _shows(e: Event, item) -> bool:
    """Whether one message (or closure) of a step matches the message (or closure) event ``e``."""
    if item[0] == "closed":
        return e.kind == "closed"
    return e.kind == "message" and e.matches_message(*item)


def _matches(e: Event, step, shown) -> bool:
    if e.kind == "action":
        return e.matches_action(step.action)
    if e.kind == "closed":
        return any(x[0] == "closed" for x in shown)
    if e.kind == "message":
        return any(x[0] != "closed" and e.matches_message(*x) for x in shown)
    return False


def find_member(cfg: Config, rules: Rules, pattern: Pattern, *, max_depth: int | None = None,
                max_nodes: int = 2_000_000) -> tuple[Found | None, int]:
    """(the shortest run of one member matching ``pattern`` no longer than ``max_depth``, nodes visited)."""
    model = Lifecycle(cfg, rules)
    (s0,) = model.init_states()
    events, never, k = pattern.events, pattern.never, len(pattern.events)
    want_end = events[-1].kind == "end"
    goal = k - 1 if want_end else k
    # node -> (parent node, step, events matched, renaming, depth)
    root = (s0, 0)
    info = {root: (None, None, 0, names0(cfg.clients), 0)}
    queue = deque([root])
    while queue:
        node = queue.popleft()
        s, pos = node
        _, _, _, names, depth = info[node]
        steps = model.next_steps(s)
        if pos == goal and (not want_end or not steps):
            return _found(cfg, info, node), len(info)
        if max_depth is not None and depth >= max_depth:
            continue
        for step in steps:
            shown, names2 = _step_texts(s, step, names)
            if any(_matches(e, step, shown) for e in never):
                continue
            p = _advance(events, pos, goal, step, shown)
            child = (step.state, p)
            if child in info:
                continue
            info[child] = (node, step, p, names2, depth + 1)
            if len(info) > max_nodes:
                raise TooLarge(f"member {cfg.name!r}: find passed {max_nodes:,} states; lower the bounds")
            queue.append(child)
    return None, len(info)


def _found(cfg: Config, info: dict, node) -> Found:
    chain = []
    while info[node][0] is not None:
        parent, step, p, _, _ = info[node]
        chain.append((parent[0], step, p))
        node = parent
    chain.reverse()
    run, at, last = [], [], 0
    for n, (pre, step, p) in enumerate(chain, 1):
        run.append((pre, step))
        at += [n] * (p - last)
        last = p
    return Found(cfg, run, at)


def find(members, rules: Rules, pattern: Pattern, *, max_nodes: int = 2_000_000,
         on_member: Callable[[str], None] | None = None) -> FindResult:
    """The shortest run over ``members`` (Configs) matching ``pattern`` under ``rules``."""
    t0 = time.perf_counter()
    r = FindResult(pattern, rules)
    for cfg in members:
        if on_member:
            on_member(cfg.name)
        best = len(r.found.run) - 1 if r.found else None
        if best is not None and best < 0:
            break
        got, nodes = find_member(cfg, rules, pattern, max_depth=best, max_nodes=max_nodes)
        r.nodes += nodes
        r.members.append(cfg.name)
        if got is not None:
            r.found = got
    if r.found and pattern.events[-1].kind == "end":
        r.found.at.append(len(r.found.run))
    r.seconds = time.perf_counter() - t0
    return r
