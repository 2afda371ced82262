"""Mutants of the model agent and clients, and running them against a suite.

A *mutant* is a fault a real implementation could have, put into the model's
agent or clients: either a few ``Rules`` fields changed (every seeded bug of
``model/bugs.py`` is one), or one of the model's component functions
(``model/parts.py``: the agent's echo, a client's receive, the steps of a group)
replaced by a faulty version, carried in ``Rules.parts``: a mutant is a value of
the model, nothing patches a module. Each lives in a small file of ``sims/mutate/mutants/``
and names the clauses it breaks, the property expected to catch it and the
smallest member that shows it.

``run_mutant`` explores the members of a suite in order with the mutant in
place and stops at the first member where a verdict of ``check`` changes:
a rule of the rule set violated (the mutant is *killed*), or, for a mutant
that removes a choice or a known limitation, a witness not reached or a
limitation no longer confirmed. A mutant no member notices *survives*: it is
either *equivalent* (the spec allows what it does; ``Mutant.equivalent`` says
why) or a hole in the properties.

Kinds: ``fault`` (breaks a rule: counts in the mutation score), ``choice``
(removes a choice the spec allows: only a ``sometimes`` witness can notice;
it shows that the permission (MAY) clause it names is earned), ``limitation``
(removes a limitation the RFD states or a question it leaves open: the
expected counterexample disappears).
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass, field
from typing import Callable

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.clauses import CITATIONS
from acp_lifecycle.model.config import RULE_SETS, Rules
from acp_lifecycle.model import parts as model_parts
from acp_lifecycle.model import system  # noqa: F401 - composes the model's parts (model_parts.DEFAULT)
from acp_lifecycle.model.state import Step, System, Outbox

from acp_lifecycle.sims.configs import Suite, get_suite
from acp_lifecycle.sims.search.explore import TooLarge, explore

__all__ = [
    "Mutant",
    "MutantRun",
    "KINDS",
    "all_mutants",
    "get_mutant",
    "run_mutant",
    "run_all",
    "Report",
    "with_agent",
    "with_sent",
    "broadcast",
    "post",
    "filter_steps",
    "wrap",
]

KINDS = ("fault", "choice", "limitation")


@dataclass(frozen=True)
class Mutant:
    name: str
    #: the fault, as an implementation would have it
    summary: str
    #: the clauses it breaks (or, for a choice, the permission it takes away)
    clauses: tuple[str, ...]
    #: the property expected to notice it
    kills: str
    #: the smallest member of ``default`` that shows it
    member: str
    #: ``Rules`` fields changed
    changes: tuple[tuple[str, object], ...] = ()
    #: ``(("echo", replacement), ...)``: the model's parts replaced (``model/parts.py``)
    patches: tuple = ()
    #: the rule set it is a mutant of
    rules: str = "rfd+2.4.0"
    kind: str = "fault"
    #: why the spec allows it, for an equivalent mutant ("" otherwise)
    equivalent: str = ""
    #: where an implementation shipped it
    source: str = ""
    #: a seeded bug of model/bugs.py
    seeded: bool = False

    def on(self, base: Rules | None = None) -> Rules:
        """The mutant's model: its ``Rules`` changes and its parts, on a rule set."""
        base = RULE_SETS[self.rules] if base is None else base
        rules = base.with_(name=f"mutant:{self.name}", **dict(self.changes))
        if self.patches:
            rules = rules.with_(parts=model_parts.of(rules).with_(**dict(self.patches)))
        return rules


def _bug_mutant(b) -> Mutant:
    return Mutant(
        b.name, b.summary, CITATIONS.get(b.breaks, ()), b.breaks, b.member, b.changes,
        source=b.source, seeded=True,
    )


_MUTANTS: dict[str, Mutant] | None = None


def all_mutants() -> dict[str, Mutant]:
    """Every mutant: the seeded bugs first, then the files of ``sims/mutate/mutants`` by name (one mutant each,
    or a family: ``value_family.py``, where a clause names a value, a mutant sends another)."""
    global _MUTANTS
    if _MUTANTS is None:
        import acp_lifecycle.sims.mutate.mutants as package

        found = {b.name: _bug_mutant(b) for b in BUGS.values()}
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            # a file defines one MUTANT, or a family of them (MUTANTS: value_family.py)
            for m in getattr(module, "MUTANTS", {}).values() or (module.MUTANT,):
                if m.name in found:
                    raise ValueError(f"duplicate mutant {m.name!r}")
                found[m.name] = m
        _MUTANTS = found
    return _MUTANTS


def get_mutant(name: str) -> Mutant:
    try:
        return all_mutants()[name]
    except KeyError:
        raise KeyError(f"unknown mutant {name!r}; `acp-lifecycle mutate --list` shows them") from None


# ---------------------------------------------------------------------------
# Patching
# ---------------------------------------------------------------------------


def wrap(short: str, name: str, make: Callable) -> tuple:
    """A patch entry: ``make(original)`` returns the replacement of the model's ``<short>.<name>``
    (a component of ``model/parts.py``), as ``(part, replacement)``."""
    part = model_parts.FIELDS[(short, name)]
    return (part, make(getattr(model_parts.DEFAULT, part)))


# ---------------------------------------------------------------------------
# Helpers for faults in what a step sends
# ---------------------------------------------------------------------------


def with_agent(step: Step, agent) -> Step:
    """The step, ending with ``agent`` as the agent's state (everything else as it was)."""
    return step._replace(state=step.state._replace(agent=agent))


def with_sent(pre: System, step: Step, change: Callable[[int, tuple], list[tuple]]) -> Step:
    """The step with each message it sent replaced by ``change(client, message)`` (a list).

    Use on agent steps before delivery (the functions ``successors`` composes):
    the messages are the tail of each ``down`` channel and ``emitted``.
    """
    emitted = []
    down = list(step.state.down)
    tails: dict[int, list] = {}
    for c, msg in step.emitted:
        for new in change(c, msg):
            emitted.append((c, new))
            tails.setdefault(c, []).append(new)
    counts: dict[int, int] = {}
    for c, _ in step.emitted:
        counts[c] = counts.get(c, 0) + 1
    for c, n in counts.items():
        down[c] = down[c][: len(down[c]) - n] + tuple(tails.get(c, ()))
    return step._replace(state=step.state._replace(down=tuple(down)), emitted=tuple(emitted))


def broadcast(step: Step, msg: tuple, mask: int | None = None) -> Step:
    """The step, sending one more message to every attached client (or ``mask``)."""
    o = Outbox(step.state)
    o.broadcast(msg, mask)
    return step._replace(state=step.state._replace(down=tuple(o.down)), emitted=step.emitted + tuple(o.emitted))


def post(short: str, name: str, fix: Callable[[System, Step], Step | None]) -> tuple:
    """A patch of a step-producing function of the model (its last argument is the list
    it appends to): each step it makes becomes ``fix(pre, step)``, or is dropped (None)."""

    def make(original):
        def steps(*args):
            *head, out = args
            made: list = []
            original(*head, made)
            for step in made:
                step = fix(head[0], step)
                if step is not None:
                    out.append(step)

        return steps

    return wrap(short, name, make)


def filter_steps(keep: Callable[[System, Step], bool]) -> tuple:
    """A patch that drops the steps ``keep`` refuses (a choice taken away)."""
    return ("keep", keep)


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


@dataclass
class MutantRun:
    mutant: Mutant
    rules: str
    #: "killed" | "survived" | "unbounded" (the mutant's state space passed max_states)
    status: str
    #: the member where a verdict changed ("" if none)
    member: str = ""
    #: property id -> (new outcome, counterexample or witness length) for every changed verdict
    changed: dict[str, tuple[str, int]] = field(default_factory=dict)
    seconds: float = 0.0
    states: int = 0

    @property
    def killed(self) -> bool:
        return self.status == "killed"

    @property
    def caught_by(self) -> str:
        """The property that noticed, preferring the expected one."""
        if self.mutant.kills in self.changed:
            return self.mutant.kills
        return min(self.changed, key=lambda p: self.changed[p][1]) if self.changed else ""

    @property
    def length(self) -> int:
        return self.changed[self.caught_by][1] if self.changed else 0


def _changes(base, mutated) -> dict[str, tuple[str, int]]:
    """The verdicts that fail ``check`` under the mutant and did not without it."""
    out = {}
    for pid, v in mutated.verdicts.items():
        if not v.ok and base.verdicts[pid].ok:
            b = base.verdicts[pid]
            out[pid] = (v.outcome, len(v.trace) if v.status == "violated" else len(b.trace))
    return out


_BASE: dict = {}


def _base(cfg, rules: Rules):
    key = (cfg, rules)
    if key not in _BASE:
        _BASE[key] = explore(cfg, rules)
    return _BASE[key]


def run_mutant(
    m: Mutant,
    suite: Suite | str = "default",
    rules: str | None = None,
    members: list[str] | None = None,
    max_states: int = 500_000,
) -> MutantRun:
    """Explore the suite's members (the mutant's own member first) until a verdict changes."""
    suite = get_suite(suite) if isinstance(suite, str) else suite
    base_rules = RULE_SETS[rules or m.rules]
    mutated_rules = m.on(base_rules)
    order = list(suite.members)
    order.sort(key=lambda c: c.name != m.member)  # its own member first: the kill is quick
    if members is not None:
        order = [c for c in order if c.name in members]
    run = MutantRun(m, base_rules.name, "survived")
    for cfg in order:
        base = _base(cfg, base_rules)  # the correct model's verdicts, not timed
        t0 = time.perf_counter()
        try:
            # with the symmetry reduction: where a faulty part breaks what renaming assumes,
            # the search notices and explores again without it (model/symmetry.py)
            r = explore(cfg, mutated_rules, max_states=max_states)
        except TooLarge:
            run.status, run.member = "unbounded", cfg.name
            break
        run.seconds += time.perf_counter() - t0
        run.states += r.states
        changed = _changes(base, r)
        if changed:
            run.status, run.member, run.changed = "killed", cfg.name, changed
            break
    return run


@dataclass
class Report:
    """Every mutant run, and the score."""

    runs: list[MutantRun]
    config: str

    def of(self, kind: str) -> list[MutantRun]:
        return [r for r in self.runs if r.mutant.kind == kind]

    @property
    def faults(self) -> list[MutantRun]:
        """The fault mutants that are not equivalent: the denominator of the score."""
        return [r for r in self.of("fault") if not r.mutant.equivalent]

    @property
    def score(self) -> float:
        faults = self.faults
        return sum(r.killed for r in faults) / len(faults) if faults else 1.0

    @property
    def problems(self) -> list[str]:
        """What makes the run fail: a surviving non-equivalent mutant, an 'equivalent' one killed."""
        out = []
        for r in self.runs:
            m = r.mutant
            if m.equivalent and r.killed:
                out.append(f"{m.name}: said to be equivalent, but {r.caught_by} catches it")
            elif not m.equivalent and not r.killed:
                out.append(f"{m.name}: {r.status} ({m.kind}); a hole in the properties")
        return out

    def data(self) -> dict:
        return {
            "config": self.config,
            "score": round(self.score, 4),
            "faults": len(self.faults),
            "killed": sum(r.killed for r in self.faults),
            "mutants": [
                {
                    "name": r.mutant.name,
                    "kind": r.mutant.kind,
                    "seeded": r.mutant.seeded,
                    "rules": r.rules,
                    "status": r.status,
                    "caught_by": r.caught_by,
                    "expected": r.mutant.kills,
                    "steps": r.length,
                    "member": r.member,
                    "also": sorted(p for p in r.changed if p != r.caught_by),
                    "seconds": round(r.seconds, 3),
                    "clauses": list(r.mutant.clauses),
                    "equivalent": r.mutant.equivalent,
                }
                for r in self.runs
            ],
        }


def _run_one(args):
    name, config, rules = args
    run = run_mutant(get_mutant(name), config, rules)
    run.mutant = name  # parts are local functions: the parent process looks the mutant up again
    return run


def run_all(names: list[str] | None = None, config: str = "default", rules: str | None = None,
            jobs: int = 1, on_done: Callable | None = None) -> Report:
    """Run the named mutants (all by default); ``jobs`` > 1 runs them in forked processes."""
    names = list(all_mutants()) if names is None else names
    work = [(n, config, rules) for n in names]
    runs: list[MutantRun] = []
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for r in pool.imap(_run_one, work):
                r.mutant = get_mutant(r.mutant)
                runs.append(r)
                if on_done:
                    on_done(r)
    else:
        for w in work:
            r = _run_one(w)
            r.mutant = get_mutant(r.mutant)
            runs.append(r)
            if on_done:
                on_done(r)
    return Report(runs, config)
