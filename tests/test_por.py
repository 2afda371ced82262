"""The partial-order reduction (sims/search/por.py) keeps every verdict, as symmetry does.

Each test explores with the reduction on and off and compares what a verdict says
(status per property); a counterexample found with it may be longer (the reduced graph
can put a step off), so lengths are not compared, but every trace is a real run. With
the reduction on, every reduced state is also checked against its full successors
(``SAMPLE`` = 1): a step put off that does not commute, or that a property judges
otherwise after the ample step, turns the reduction off and says why.
"""

from __future__ import annotations

import pytest

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.config import RFD_RULES, Config
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.sims.configs import SUITES, get_suite
from acp_lifecycle.sims.mutate import all_mutants
from acp_lifecycle.sims.search import shard
from acp_lifecycle.sims.search.explore import explore
from acp_lifecycle.sims.search.por import _chan, writes
from test_symmetry import _assert_real_runs  # noqa: E402 - each trace is a real run, as symmetry's

MUTANTS = all_mutants()


@pytest.fixture(autouse=True)
def _check_every_reduced_state(monkeypatch):
    monkeypatch.setattr(shard, "SAMPLE", 1)


def _statuses(r) -> dict:
    return {pid: v.status for pid, v in r.verdicts.items()}


def _same(cfg, rules=RFD_RULES):
    with_, without = explore(cfg, rules, por=True), explore(cfg, rules, por=False)
    assert _statuses(with_) == _statuses(without), cfg.name
    assert with_.por and with_.states <= without.states or with_.por_broken
    _assert_real_runs(with_)
    return with_, without


def test_channel_changes_are_told_apart():
    assert _chan((1, 2), (1, 2)) == ""
    assert _chan((1,), (1, 2)) == "append"
    assert _chan((1, 2), (2,)) == "pop"
    assert _chan((1, 2), (3,)) == "other"


def test_what_a_step_writes_is_read_off_the_states():
    cfg = Config(name="t", clients=2, down_latency=True)
    s0 = initial_state(cfg)
    for step in successors(s0, cfg, RFD_RULES):
        w = writes(s0, step.state)
        if step.action[0].startswith("Client"):
            c = step.action[1]
            assert ("client", c) in w and all(k[1] == c for k in w if len(k) > 1 and k[0] in ("client", "up")), w


@pytest.mark.parametrize("name", [m.name for m in SUITES["default"].members])
def test_default_members_give_the_same_verdicts_with_and_without_it(name):
    _same(get_suite(name).members[0])


def test_a_step_put_off_that_a_property_judges_otherwise_turns_it_off():
    # on fifo a client's delivery of a chunk changes what sometimes_echo_before_response
    # says of the agent receiving a $/cancel_request: the check sees it, and the member
    # is explored again without the reduction
    with_, without = _same(get_suite("fifo").members[0])
    assert with_.por_broken and not with_.por and with_.states == without.states


def test_it_reduces_where_a_client_delivers_alone():
    with_, without = _same(get_suite("permission-2-clients").members[0])
    assert with_.por and with_.states < without.states and with_.por_counts[0] > 0


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_every_seeded_bug_is_caught_the_same_with_and_without_it(bug):
    b = BUGS[bug]
    _same(get_suite(b.member).members[0], b.rules)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, m in MUTANTS.items() if not m.equivalent))
def test_every_mutant_is_caught_the_same_with_and_without_it(name):
    m = MUTANTS[name]
    _same(get_suite(m.member).members[0], m.on())


@pytest.mark.slow
@pytest.mark.parametrize("name", [m.name for m in SUITES["wide"].members if m.name.startswith("wide-")])
def test_wide_members_give_the_same_verdicts_with_and_without_it(name):
    _same(get_suite(name).members[0])
