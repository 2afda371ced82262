"""Hypothesis stateful exploration of the composed model, for configurations too big to exhaust.

The same actions and the same property functions as the exhaustive explorer
(``sims.search.explore``), with no second copy of any rule: Hypothesis only chooses
*which* enabled step of the model object (``Lifecycle.next_steps``) to take next.

* One ``@rule`` per action kind of the model (``Lifecycle.action_kinds``). Its precondition
  is that a step of that kind is enabled; a drawn integer picks one of the enabled steps
  of that kind (shrinking prefers the first, in ``next_steps`` order).
  ``ClientSubmitPrompt`` and ``ClientRetryPrompt`` put ``(client, request id)``
  into the ``requests`` bundle; ``ClientCancelRequest`` draws a request from it,
  so a cancel always names a request some client really sent.
* One ``@invariant`` per ``always`` property; every ``step`` and ``sometimes``
  property is checked on every step taken (those that can say anything of it,
  ``Lifecycle.dispatch``, in the model's property order). In ``teardown`` the run is driven to a terminal state
  by taking the first enabled step repeatedly, checking the same properties on
  the way, and every ``eventually`` property is checked there: an obligation
  open in a terminal state is a violation, as in the explorer.
* Only ``must_hold`` properties fail a run; a known limitation or an open
  question that shows a counterexample is recorded in ``FuzzResult.limitations``.
* A failure raises ``PropertyViolation`` (an ``AssertionError``) whose message
  starts with the property id. Hypothesis replays the shrunk failing run last,
  so the trace recorded by the last failing run is the one it shrank.
* Hypothesis alone leaves runs far longer than the shortest (46 steps for a
  2-step violation on fuzz-3-clients): it cannot shorten the teardown's drive,
  which is not drawn, and a deleted step changes what every later drawn choice
  picks, so most of its shortened runs stop failing. ``shorten`` then deletes
  steps from the concrete run, replayed by action label (see there): on each
  seeded bug's member the printed run is at most two steps longer than the
  explorer's shortest (tests/test_fuzz.py pins it).

Determinism: ``fuzz`` seeds Hypothesis with ``hypothesis.seed`` (no
``derandomize``), with ``database=None`` and no ``reuse``/``target``/``explain``
phases, and reports one bug (``report_multiple_bugs=False``: the search for
more bugs is cut off after 10 s of wall time, which would make results depend on
machine speed). The model is deterministic and properties are checked in
the model's order (``Lifecycle.every_property``; not in the order of a ``frozenset``
of tags, which depends on ``PYTHONHASHSEED``), so the same seed gives the same result. Hypothesis
also draws, 5% of the time, an integer from the literal constants of every
*local* module loaded into ``sys.modules`` (its "local constants": here the
project's own modules, not tests): the result would then depend on which
modules the caller had imported and on every number written anywhere in
``model/`` and ``sims/``. ``fuzz`` switches that pool off while it runs
(``_without_local_constants``). The one timing dependence left is Hypothesis's
5-minute cap on shrinking, far above what a shrink of this model takes.

>>> from acp_lifecycle.sims.configs import get_suite
>>> r = fuzz(get_suite("tiny").members[0], examples=5, steps=10)
>>> r.ok, r.property, r.examples
(True, None, 5)
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from acp_lifecycle.model import RFD_RULES, Config, Lifecycle, Property, Rules, Step, System, restate

__all__ = ["PropertyViolation", "FuzzResult", "Record", "ModelMachine", "make_machine", "fuzz", "shorten", "DRIVE_LIMIT"]

#: Steps the teardown takes (first enabled step each time) to reach a terminal state.
DRIVE_LIMIT = 500


class PropertyViolation(AssertionError):
    """A ``must_hold`` property failed; the message starts with the property id."""

    def __init__(self, prop: str, message: str):
        super().__init__(f"{prop}: {message}")
        self.prop = prop
        self.detail = message


@dataclass
class Record:
    """What every run of one machine class has seen (shared by its instances)."""

    states: set = field(default_factory=set)
    #: action kinds taken by Hypothesis's rules (the teardown's drive not counted)
    actions: set = field(default_factory=set)
    sometimes: set = field(default_factory=set)
    #: known limitations / open questions seen violated: id -> first message
    limitations: dict = field(default_factory=dict)
    #: runs started (Hypothesis's invalid runs and shrinking included)
    runs: int = 0
    #: runs that ended normally or with a property violation
    valid: int = 0
    #: the valid run (1-based) in which the first violation happened
    first_failure: int = 0
    #: the last violation: (property id, message, trace)
    failure: tuple | None = None
    #: runs whose drive stopped at DRIVE_LIMIT before a terminal state (eventually not checked)
    unterminated: int = 0


@dataclass
class FuzzResult:
    config: Config
    rules: Rules
    seed: int
    #: no must_hold property failed
    ok: bool
    #: the failing property's id, or None
    property: str | None
    message: str
    #: the shrunk failing run: (pre-state, step) pairs from the initial state
    trace: list[tuple[System, Step]]
    #: valid runs up to and including the first failing one (all valid runs when none failed)
    examples: int
    #: every run, shrinking and Hypothesis's discarded runs included
    runs: int
    #: runs Hypothesis abandoned (an invalid draw, e.g. every enabled rule switched off by its swarm flags)
    discarded: int
    seconds: float
    #: distinct states visited (drive to terminal included)
    states: set
    #: action kinds fired by Hypothesis's rules
    actions: set
    #: sometimes properties reached
    sometimes: set
    #: known limitations / open questions observed: id -> message
    limitations: dict
    unterminated: int = 0
    #: the length of the failing run as Hypothesis shrank it, before ``shorten`` (0 when ok)
    hypothesis_steps: int = 0

    def lines(self) -> list[str]:
        """The failing run as numbered steps with their JSON-RPC messages (empty when ok)."""
        from acp_lifecycle.sims.traces import trace_lines

        return trace_lines(self.trace, note=f"{self.property}: {self.message}") if self.property else []


class ModelMachine(RuleBasedStateMachine):
    """A ``RuleBasedStateMachine`` over the model's steps (``Lifecycle(cfg, rules).next_steps``).

    Abstract: ``make_machine(cfg, rules)`` makes the subclass for one configuration and
    rule set, which sets the class attributes below and adds one ``@rule`` per action
    kind of its model (``_action_rule``) and one ``@invariant`` per ``always`` property.
    The class's ``record`` (a ``Record``) accumulates what all its runs saw.
    """

    model: Lifecycle
    #: ids of the must_hold properties of the rule set (the others are only recorded)
    must: frozenset = frozenset()
    always: list = []
    eventually: list = []
    #: the step and sometimes properties that can say anything of a step, in the model's order
    select: Callable[[Step], list[Property]]
    record: Record
    progress: Callable[[int], None] | None = None
    drive_limit: int = DRIVE_LIMIT
    #: the instance running now: the bundle filter of ClientCancelRequest reads the enabled steps
    running: ModelMachine | None = None

    requests = Bundle("requests")

    def __init__(self) -> None:
        super().__init__()
        ModelMachine.running = self
        (self.state,) = self.model.init_states()
        self.trace: list[tuple[System, Step]] = []
        self.failed = False
        self.record.states.add(self.state)
        self._refresh()

    def _refresh(self) -> None:
        self.enabled = self.model.next_steps(self.state)
        by_kind: dict[str, list[Step]] = {}
        for step in self.enabled:
            by_kind.setdefault(step.action[0], []).append(step)
        self.by_kind = by_kind
        self.labels = {step.action: step for step in self.enabled}

    def _fail(self, p: Property, msg: str) -> None:
        self.failed = True
        self.record.failure = (p.id, msg, list(self.trace))
        raise PropertyViolation(p.id, msg)

    def _violated(self, p: Property, msg: str) -> None:
        if p.id in self.must:
            self._fail(p, msg)
        self.record.limitations.setdefault(p.id, msg)

    def _seen_enough(self, p: Property) -> bool:
        """A known limitation or open question already observed: no need to look again."""
        return p.id not in self.must and p.id in self.record.limitations

    def _check_always(self, p: Property) -> None:
        if not self._seen_enough(p):
            msg = p.check(self.state)
            if msg:
                self._violated(p, msg)

    def _take(self, step: Step) -> None:
        pre = self.state
        self.trace.append((pre, step))
        for p in self.select(step):
            if p.kind == "step":
                if not self._seen_enough(p):
                    msg = p.check(pre, step)
                    if msg:
                        self._violated(p, msg)
            elif p.id not in self.record.sometimes and p.check(pre, step):
                self.record.sometimes.add(p.id)
        self.state = step.state
        self.record.states.add(self.state)
        self._refresh()

    def _take_kind(self, kind: str, data) -> None:
        options = self.by_kind[kind]
        i = data.draw(st.integers(0, len(options) - 1), label=f"{kind} choice") if len(options) > 1 else 0
        self.record.actions.add(kind)
        self._take(options[i])

    def teardown(self) -> None:
        record = self.record
        record.runs += 1
        # Hypothesis calls teardown in a ``finally``. A run that is ending
        # with an exception other than a property violation (an invalid or
        # overrun draw: Hypothesis abandons it) is not an example.
        if not self.failed and sys.exc_info()[1] is not None:
            return
        try:
            if not self.failed:
                self._drive()
        finally:
            record.valid += 1
            if self.failed and not record.first_failure:
                record.first_failure = record.valid
            # Runs after the first failure are Hypothesis shrinking it, not examples.
            if self.progress is not None and record.first_failure in (0, record.valid):
                self.progress(record.valid)

    def _drive(self) -> None:
        """Take the first enabled step until none is left; check eventually there."""
        for _ in range(self.drive_limit):
            if not self.enabled:
                break
            self._take(self.enabled[0])
            for p in self.always:
                self._check_always(p)
        if self.enabled:
            self.record.unterminated += 1
            return
        for p in self.eventually:
            if not self._seen_enough(p):
                msg = p.check(self.state)
                if msg:
                    self._violated(p, restate(msg, msg + " (no step is left)"))


def _cancellable(req) -> bool:
    """The bundle's (client, request id) names a cancel the running machine can take."""
    return ("ClientCancelRequest", *req) in ModelMachine.running.labels


def _action_rule(kind: str):
    """The ``@rule`` of one action kind: take one of its enabled steps (a drawn index picks which)."""

    # In a terminal state every rule but the cancel is valid and stands
    # still: Hypothesis goes on drawing steps up to its step count and needs
    # a valid rule for each. Were one stand-still rule valid there, swarm
    # testing (which switches a random subset of rules off for a run) would
    # switch it off in half the runs, and Hypothesis would throw away each
    # of them after it had run to the end; with every rule valid, it always
    # keeps one on. (Named functions, not lambdas: Hypothesis describes every
    # precondition it evaluates, and describing a lambda means reading its source.)
    def enabled_or_terminal(self) -> bool:
        return kind in self.by_kind or not self.enabled

    def enabled(self) -> bool:
        return kind in self.by_kind

    if kind in ("ClientSubmitPrompt", "ClientRetryPrompt"):

        def fire(self, data):
            if not self.enabled:
                return multiple()
            self._take_kind(kind, data)
            c = self.trace[-1][1].action[1]
            return (c, self.state.clients[c].subs[-1].rid)

        valid, decorate = precondition(enabled_or_terminal), rule(target=ModelMachine.requests, data=st.data())
    elif kind == "ClientCancelRequest":
        # A precondition cannot see which request the bundle will give, so the
        # draw is filtered against the current state instead (``_cancellable``):
        # Hypothesis resolves a bundle filter within the one draw (it falls back
        # to the elements that pass), so no run is thrown away. Every enabled
        # ("ClientCancelRequest", c, rid) has (c, rid) in the bundle (every
        # submission and retry is put there), so the precondition guarantees
        # that some element passes.
        def fire(self, req):
            step = self.labels.get(("ClientCancelRequest", *req))
            # Never fails given the filter; kept so a change to the model's
            # label shape shows up as discarded runs, not as a crash.
            hypothesis.assume(step is not None)
            self.record.actions.add(kind)
            self._take(step)

        valid, decorate = precondition(enabled), rule(req=ModelMachine.requests.filter(_cancellable))
    else:

        def fire(self, data):
            if self.enabled:
                self._take_kind(kind, data)

        valid, decorate = precondition(enabled_or_terminal), rule(data=st.data())
    fire.__name__ = fire.__qualname__ = kind
    return valid(decorate(fire))


def _always_invariant(n: int, p: Property):
    """The ``@invariant`` checking one ``always`` property after every step."""

    def check(self):
        self._check_always(p)

    # Hypothesis runs invariants in name order: the number keeps the model's
    # property order, so a state that breaks two properties names the same one as
    # the drive (and the explorer's property list) would.
    check.__name__ = check.__qualname__ = f"always_{n:02d}_{p.id}"
    return invariant()(check)


def make_machine(
    cfg: Config,
    rules: Rules = RFD_RULES,
    *,
    progress: Callable[[int], None] | None = None,
    drive_limit: int = DRIVE_LIMIT,
    expectation: Callable[[Property], str] | None = None,
) -> type[ModelMachine]:
    """The ``ModelMachine`` of one configuration and rule set, with a fresh ``record``; each property
    judged by ``expectation`` (a variant's), by the rule set's own without it.

    >>> from acp_lifecycle.sims.configs import get_suite
    >>> machine = make_machine(get_suite("tiny").members[0])
    >>> machine.__name__, machine.record.runs
    ('Model_tiny', 0)
    """
    # the rules of the rule set only; a SHOULD a lenient agent may skip is not a failure
    model = Lifecycle(cfg, rules)
    expectation = expectation or model.expectation
    props = [p for p in model.every_property() if expectation(p)]
    always = [p for p in props if p.kind == "always"]
    name = f"Model_{cfg.name.replace('-', '_')}"
    attributes = {
        "model": model,
        "must": frozenset(p.id for p in props if expectation(p) == "must_hold"),
        "always": always,
        "eventually": [p for p in props if p.kind == "eventually"],
        "select": staticmethod(model.dispatch(props).for_step),
        "record": Record(),
        "progress": staticmethod(progress) if progress is not None else None,
        "drive_limit": drive_limit,
        "__qualname__": name,
    }
    # one rule per action kind of this model (Hypothesis collects them in name order)
    for kind in model.action_kinds:
        attributes[kind] = _action_rule(kind)
    for n, p in enumerate(always):
        check = _always_invariant(n, p)
        attributes[check.__name__] = check
    return type(name, (ModelMachine,), attributes)


def _replay(labels: list[tuple], model: Lifecycle, prop: Property, others: list[Property]):
    """Take the steps labelled ``labels`` in turn from the initial state of ``model``.

    Returns ``(trace, message)``: the run cut at the first step where ``prop``
    fails, or None when a label is not enabled where it comes, when another
    ``must_hold`` step or always property fails first, or when ``prop`` never
    fails (an ``eventually`` property fails only in a terminal state).
    """
    (state,) = model.init_states()
    trace: list[tuple[System, Step]] = []
    for label in labels:
        step = next((x for x in model.next_steps(state) if x.action == label), None)
        if step is None:
            return None
        trace.append((state, step))
        for p in (prop, *others):
            if p.kind == "step" and model.may_fire(p, step):
                msg = p.check(state, step)
            elif p.kind == "always":
                msg = p.check(step.state)
            else:
                continue
            if msg:
                return (trace, msg) if p is prop else None
        state = step.state
    if prop.kind == "eventually" and not model.next_steps(state):
        msg = prop.check(state)
        if msg:
            return trace, restate(msg, msg + " (no step is left)")
    return None


def shorten(trace: list[tuple[System, Step]], cfg: Config, rules: Rules, prop_id: str,
            budget: float = 20.0, expectation: Callable[[Property], str] | None = None,
            ) -> tuple[list[tuple[System, Step]], str | None]:
    """Delete steps from a failing run while ``prop_id`` still fails the same way.

    The pass Hypothesis cannot make itself: a run's steps come from drawn
    choices (which rule, which of its enabled steps), and deleting one step
    changes what every later choice picks, so the shortened runs Hypothesis
    tries mostly stop failing; and the teardown's drive to a terminal state is
    not drawn at all. Here the run is replayed by its action labels, which keep
    their meaning when an earlier step goes: chunks of steps, halves first and
    single steps last, are deleted while the run still takes enabled steps
    only and breaks ``prop_id`` (and no other ``must_hold`` property before
    it). Deterministic; stops after ``budget`` seconds with the shortest run so
    far. Returns ``(trace, message)`` (message None when nothing was deleted).
    """
    model = Lifecycle(cfg, rules)
    prop = model.property_by_id(prop_id)
    # the other rules of this rule set (a rule of the 2.4.0 text is none under rfd), or of the variant
    expectation = expectation or model.expectation
    others = [p for p in model.every_property() if expectation(p) == "must_hold"
              and p.kind in ("step", "always") and p is not prop]
    labels = [step.action for _, step in trace]
    best, message = None, None
    start = time.perf_counter()
    # chunk sizes: halves down to 8, then every size from 8 to 1 (a detour such
    # as a lost connection, the resume and its answer is a few steps that go together)
    sizes, n = [], len(labels) // 2
    while n > 8:
        sizes.append(n)
        n //= 2
    sizes += range(min(8, max(len(labels) - 1, 1)), 0, -1)
    steps = [step for _, step in trace]
    deleted = True
    while deleted:  # until a whole sweep deletes nothing
        deleted = False
        for chunk in [*sizes, _WITH_DELIVERIES]:
            i = 0
            while i + max(chunk, 1) <= len(labels):
                if time.perf_counter() - start > budget:
                    return (best or trace), message
                if chunk == _WITH_DELIVERIES:
                    shorter = _without_step_and_deliveries(labels, steps, i)
                else:
                    shorter = labels[:i] + labels[i + chunk:]
                r = _replay(shorter, model, prop, others) if shorter is not None else None
                if r is None:
                    i += 1
                    continue
                best, message = r
                labels, steps = [step.action for _, step in best], [step for _, step in best]
                deleted = True
    return (best or trace), message


#: the last pass of a sweep: a step with the deliveries of what it sent (not a chunk size)
_WITH_DELIVERIES = 0


def _without_step_and_deliveries(labels: list[tuple], steps: list[Step], i: int) -> list[tuple] | None:
    """The labels without step ``i`` and, for each message it sent, the next delivery of a
    message of that kind to that client (a fault and the notices it sent every client are
    one detour, which no contiguous chunk covers). None when step ``i`` sent nothing."""
    if i >= len(steps) or not steps[i].emitted:
        return None
    drop = {i}
    for c, msg in steps[i].emitted:
        want = ("ClientReceive", c, msg[0])
        j = next((j for j in range(i + 1, len(labels)) if j not in drop and labels[j] == want), None)
        if j is not None:
            drop.add(j)
    return [lab for k, lab in enumerate(labels) if k not in drop]


@contextlib.contextmanager
def _without_local_constants():
    """Hide the project's literal constants from Hypothesis while fuzzing (see the module doc).

    Hypothesis (6.131 and later) has no setting for this: the pool is a
    module-level function of ``hypothesis.internal.conjecture.providers`` and a
    cache beside it. Where a Hypothesis version has neither, there is nothing to hide.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - older Hypothesis: no local constants
        yield
        return
    get = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if get is None or cache is None:  # pragma: no cover
        yield
        return
    empty = Constants()
    providers._get_local_constants = lambda: empty
    cache.clear()  # permitted constants computed with the real pool
    try:
        yield
    finally:
        providers._get_local_constants = get
        cache.clear()


def fuzz(
    cfg: Config,
    rules: Rules = RFD_RULES,
    examples: int = 200,
    seed: int = 0,
    steps: int = 60,
    progress: Callable[[int], None] | None = None,
    *,
    shrink: bool = True,
    expectation: Callable[[Property], str] | None = None,
) -> FuzzResult:
    """Run ``examples`` random runs of up to ``steps`` drawn steps each; shrink the first failure.

    ``progress(n)`` is called after each example with the number run so far
    (not during shrinking). ``shrink=False`` reports the first failing run as
    found (the runs before it are the same either way). ``expectation`` judges each property (a
    variant's expectations: ``check --variant`` judges by them too); the rule set's without it.
    """
    machine = make_machine(cfg, rules, progress=progress, expectation=expectation)
    hypothesis.seed(seed)(machine)
    run_settings = settings(
        max_examples=examples,
        stateful_step_count=steps,
        database=None,
        deadline=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink) if shrink else (Phase.explicit, Phase.generate),
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
        # too_slow / large_base_example / data_too_large: a run of this model is
        # long by design; filter_too_much: the cancel rule's bundle filter.
        suppress_health_check=(
            HealthCheck.too_slow,
            HealthCheck.large_base_example,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ),
    )
    t0 = time.perf_counter()
    prop, message, trace, shrunk = None, "", [], 0
    try:
        with _without_local_constants():
            run_state_machine_as_test(machine, settings=run_settings)
    except PropertyViolation as e:
        prop, message = e.prop, e.detail
        rec_prop, _, trace = machine.record.failure
        assert rec_prop == prop  # the final replay is the last failing run
        shrunk = len(trace)
        if shrink:
            trace, shorter = shorten(trace, cfg, rules, prop, expectation=expectation)
            message = shorter or message
    seconds = time.perf_counter() - t0
    rec = machine.record
    return FuzzResult(
        config=cfg,
        rules=rules,
        seed=seed,
        ok=prop is None,
        property=prop,
        message=message,
        trace=trace,
        examples=rec.first_failure or rec.valid,
        runs=rec.runs,
        discarded=rec.runs - rec.valid,
        seconds=seconds,
        states=rec.states,
        actions=rec.actions,
        sometimes=rec.sometimes,
        limitations=rec.limitations,
        unterminated=rec.unterminated,
        hypothesis_steps=shrunk,
    )
