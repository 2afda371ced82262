"""The step properties' dispatch (``model/properties/dispatch.py``): derived from their code, never
skipping a step a property says something of."""

from __future__ import annotations

import pytest

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.config import RFD_RULES, S240_RULES
from acp_lifecycle.model.properties import PROPERTIES, Dispatch, may_fire
from acp_lifecycle.model.properties.dispatch import key_of
from acp_lifecycle.model.state import Step
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.sims.configs import get_suite

STEPWISE = [p for p in PROPERTIES if p.kind in ("step", "sometimes")]


def _steps(cfg, rules, limit: int = 1000):
    """(pre, step) for every step out of the first ``limit`` states of a breadth-first walk."""
    s0 = initial_state(cfg)
    seen, todo, out = {s0}, [s0], []
    while todo and len(seen) < limit:
        nxt = []
        for s in todo:
            for step in successors(s, cfg, rules):
                out.append((s, step))
                if step.state not in seen:
                    seen.add(step.state)
                    nxt.append(step.state)
        todo = nxt
    return out


def _assert_sound(steps) -> set:
    """A property the dispatch skips says nothing of the step; returns the (property, key) pairs it skipped."""
    skipped = set()
    for pre, step in steps:
        for p in STEPWISE:
            if not may_fire(p, step):
                assert not p.check(pre, step), (p.id, step.action)
                skipped.add((p.id, key_of(step)))
    return skipped


@pytest.mark.parametrize("member", [m.name for m in get_suite("default").members])
def test_a_skipped_property_says_nothing_on_the_default_members(member):
    cfg = get_suite(member).members[0]
    for rules in (RFD_RULES, S240_RULES):
        assert _assert_sound(_steps(cfg, rules))  # and it does skip some


def test_a_skipped_property_says_nothing_under_the_seeded_bugs():
    # a bug's steps are where a property fires: none of its findings may be skipped
    fired = 0
    for bug in BUGS.values():
        steps = _steps(get_suite(bug.member).members[0], bug.rules, limit=400)
        _assert_sound(steps)
        fired += sum(1 for pre, step in steps for p in STEPWISE if p.check(pre, step) and p.kind == "step")
    assert fired > 0


def _step(action, *kinds, found=()):
    return Step(action, None, tuple((0, (k, 1, "x", False)) for k in kinds), found)


def _prop(check, kind="step"):
    from acp_lifecycle.model.properties import Property

    return Property("test_" + check.__name__, kind, "must_hold", "", check)


def test_the_dispatch_derives_from_what_a_property_reads():
    def by_action(pre, step):
        return step.action[0] == "A" and pre.anything  # reads the state only on an A step

    def by_kind(pre, step):
        return any(m[0] == "state" and m[1] == "idle" for _, m in step.emitted)

    def state_first(pre, step):
        agent = pre.agent  # read before the step: the dispatch cannot tell, so it runs it everywhere
        return agent if step.action[0] == "A" else None

    def swallows(pre, step):
        try:
            return pre.agent
        except Exception:  # noqa: BLE001 - what a careless property might do: the view is no Exception
            return None

    def constant(pre, step):
        return step.action[0] == "A"  # fires on every A step, reading nothing else

    a, b, b_idle = _step(("A", 1)), _step(("B", 1)), _step(("B", 1), "state")
    assert may_fire(_prop(by_action), a) and not may_fire(_prop(by_action), b)
    assert may_fire(_prop(by_kind), b_idle) and not may_fire(_prop(by_kind), b)
    assert all(may_fire(_prop(state_first), x) for x in (a, b))
    assert all(may_fire(_prop(swallows), x) for x in (a, b))
    assert may_fire(_prop(constant), a) and not may_fire(_prop(constant), b)


def test_judged_properties_come_from_the_steps_findings():
    judged = [p for p in STEPWISE if p.judged]
    assert judged
    p = judged[0]
    found = _step(("B",), found=((p.id, "wrong"),))
    d = Dispatch(PROPERTIES)
    assert p in d.for_step(found) and p not in d.for_step(_step(("B",)))
    assert may_fire(p, found) and not may_fire(p, _step(("B",)))
    d.settle([p.id])
    assert p not in d.for_step(found)


def test_lost_response_recoverable_says_nothing_when_the_resuming_connection_is_lost():
    # It fired on a ConnectionLost during a resume with replay, which the hand-written list of
    # its steps (a resume's response, a client's receive) used to hide: its condition now says
    # "the client has just processed its replay's response".
    from acp_lifecycle.model.properties import BY_ID

    prop = BY_ID["lost_response_recoverable"]
    steps = _steps(get_suite("lost-response").members[0], RFD_RULES, limit=4000)
    lost = [(pre, step) for pre, step in steps if step.action[0] == "ConnectionLost"
            and any(cl.resuming == 2 for cl in pre.clients)]
    assert lost
    assert not any(prop.check(pre, step) for pre, step in lost)
