"""Checking a witness independently of the product: replay its run, simulate the other rule set."""

from __future__ import annotations

from acp_lifecycle.model.config import Config, Rules
from acp_lifecycle.model.system import Step, System, initial_state, successors

from acp_lifecycle.sims.search.explore import TooLarge

from .observe import END, canonical, kind, names0, observe

__all__ = ["DiffError", "allows", "answers", "replay", "check_witness"]


class DiffError(RuntimeError):
    """A witness does not replay or does not distinguish: a bug in the diff; one line."""


def _simulate(cfg: Config, rules: Rules, events: list[tuple], limit: int = 0) -> tuple[int, set]:
    """(how many of ``events`` some run of ``rules`` shows, the set of (state, renaming,
    pending events) consistent with them). ``limit``: TooLarge past that many elements."""

    def close(elems):
        out = set()
        stack = list(elems)
        while stack:
            e = stack.pop()
            if e in out:
                continue
            out.add(e)
            if limit and len(out) > limit:
                raise TooLarge(f"{rules.name}: more than {limit:,} states match {len(events)} observations")
            s, nm, pend = e
            if pend:
                continue
            for step in successors(s, cfg, rules):
                if not observe(s, step):
                    stack.append((step.state, nm, ()))
        return out

    s0 = initial_state(cfg, rules)
    current = close([(s0, names0(cfg.clients), ())])
    for n, ev in enumerate(events):
        if ev == END:
            if not any(not pend and not successors(s, cfg, rules) for s, _, pend in current):
                return n, current
            continue
        nxt = []
        for s, nm, pend in current:
            if pend:
                e2, nm2 = canonical(nm, pend[0])
                if e2 == ev:
                    nxt.append((s, nm2, pend[1:]))
                continue
            for step in successors(s, cfg, rules):
                raws = observe(s, step)
                if raws:
                    e2, nm2 = canonical(nm, raws[0])
                    if e2 == ev:
                        nxt.append((step.state, nm2, raws[1:]))
        if not nxt:
            return n, current
        current = close(nxt)
    return len(events), current


def allows(cfg: Config, rules: Rules, events: list[tuple], limit: int = 0) -> int:
    """How many of ``events`` (canonical, from the start) some run of ``rules`` shows.

    A plain subset simulation, no caches shared with the product: the set of
    (state, renaming, pending events) consistent with the events so far, closed
    under steps that show nothing. ``limit``: TooLarge past that many states in the set.
    """
    return _simulate(cfg, rules, events, limit)[0]


def answers(cfg: Config, rules: Rules, events: list[tuple]) -> list[str]:
    """What ``rules``' agent can show next after ``events`` (all of which it allows): the kinds
    (``observe.kind``) of the agent's next messages, and the end of the run, sorted. A client's
    next message is an input and a connection closing a fault, not an answer: both are left out."""
    n, current = _simulate(cfg, rules, events)
    if n < len(events):
        raise DiffError(f"{rules.name} allows only {n} of the {len(events)} observations")
    out = set()
    for s, nm, pend in current:
        if pend:
            if pend[0][0] == "msg" and pend[0][2] == "agent":
                out.add(kind(pend[0], nm))
            continue
        steps = successors(s, cfg, rules)
        if not steps:
            out.add(kind(END, nm))
        for step in steps:
            raws = observe(s, step)
            if raws and raws[0][0] == "msg" and raws[0][2] == "agent":
                out.add(kind(raws[0], nm))
    return sorted(out)


def replay(cfg: Config, rules: Rules, run: list[tuple[System, Step]]) -> list[tuple[System, Step]]:
    """Replay a run's actions from the initial state; DiffError if a step is not one the model offers."""
    s = initial_state(cfg, rules)
    out = []
    for n, (_, step) in enumerate(run, 1):
        match = [st for st in successors(s, cfg, rules) if st.action == step.action and st.state == step.state]
        if len(match) != 1 or match[0].emitted != step.emitted:
            raise DiffError(f"step {n} ({step.action}) is not a step of {rules.name} here")
        out.append((s, match[0]))
        s = match[0].state
    return out


def check_witness(w, cfg: Config, allowed: Rules, refused: Rules) -> None:
    """Replay a witness and check what it claims; DiffError (one line) if it does not hold.

    1. its run is a run of ``allowed`` (every step replays from the initial state);
    2. the run shows exactly the witness's events (up to the distinguishing one);
    3. ``refused`` allows every event before the last, and not the last.
    """
    run = replay(cfg, allowed, w.run)
    nm = names0(cfg.clients)
    shown = []
    for pre, step in run:
        for r in observe(pre, step):
            ev, nm = canonical(nm, r)
            shown.append(ev)
    if w.events[-1] == END:
        if run and successors(run[-1][1].state, cfg, allowed):
            raise DiffError(f"{w.kind}: the run of {allowed.name} does not end where the witness says")
        shown.append(END)
    if shown[: len(w.events)] != w.events:
        raise DiffError(f"{w.kind}: the run of {allowed.name} does not show the witness's events")
    n = allows(cfg, refused, w.events)
    if n != len(w.events) - 1:
        where = "the distinguishing event too" if n == len(w.events) else f"only {n} of the {len(w.events) - 1} before it"
        raise DiffError(f"{w.kind}: {refused.name} allows {where}")
