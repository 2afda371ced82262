"""The search engine (sims/search/engine.py): compact storage, parallel and Dask searches.

The parallel search must find the same states and the same shortest
counterexamples as the sequential one; the members here are small, so the
tests lower the frontier width at which the search forks its workers.
"""

import gc

import numpy as np
import pytest

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.spec import Lifecycle
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.search import engine, graph
from acp_lifecycle.sims.search.explore import explore


def _summary(r):
    return (r.states, r.transitions, r.terminal_states), {
        k: (v.status, len(v.trace), v.ending) for k, v in r.verdicts.items()
    }


@pytest.fixture
def fork_early(monkeypatch):
    monkeypatch.setattr(engine, "SPLIT_AT", 4)


@pytest.mark.parametrize("name", ["multi-client", "lost-response", "fifo"])
@pytest.mark.parametrize("symmetry", [True, False])
def test_two_workers_find_the_same_states_and_shortest_counterexamples(fork_early, name, symmetry):
    cfg = get_suite(name).members[0]
    one = explore(cfg, symmetry=symmetry)
    two = explore(cfg, symmetry=symmetry, workers=2)
    assert two.workers == 2
    assert _summary(two) == _summary(one)


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("bug", ["answer-at-receipt", "never-echo", "no-idle-after-failure"])
def test_the_parallel_search_catches_a_seeded_bug_with_the_same_shortest_trace(fork_early, workers, bug):
    b = BUGS[bug]
    cfg = get_suite(b.member).members[0]
    one = explore(cfg, b.rules)
    many = explore(cfg, b.rules, workers=workers)
    assert _summary(many) == _summary(one)
    assert many.verdicts[b.breaks].status == "violated"


def test_a_small_member_stays_in_one_process():
    r = explore(get_suite("tiny").members[0], workers=2)
    assert r.workers == 1


@pytest.mark.parametrize("workers", [1, 2])
def test_packed_frontiers_give_the_same_search(fork_early, monkeypatch, workers):
    # only huge's levels pass storage.COMPRESS_AT: pack every level of a small member instead
    from acp_lifecycle.sims.search import storage

    cfg = get_suite("lost-response").members[0]
    whole = explore(cfg, workers=workers)
    monkeypatch.setattr(storage, "COMPRESS_AT", 1)
    packed = explore(cfg, workers=workers)
    assert _summary(packed) == _summary(whole)
    frontier = storage.Frontier()
    states = [(s, k) for k, s in enumerate([next(iter(Lifecycle(cfg).init_states()))] * 300)]
    for s, k in states:
        frontier.add(s, k)
    frontier.seal()
    assert any(isinstance(b, bytes) for b in frontier.blocks)
    assert list(frontier.drain()) == states


def test_the_run_states_its_collision_probability_as_tlc_does():
    r = explore(get_suite("multi-client").members[0])
    optimistic, actual = r.collision
    n, m = r.states, r.transitions + 1
    assert optimistic == pytest.approx(n * (m - n) / 2**64)
    assert 0 < optimistic < 1e-9 and 0 < actual < 1e-6


def test_garbage_collection_is_back_on_after_a_search():
    assert gc.isenabled()
    explore(get_suite("tiny").members[0])
    assert gc.isenabled()


def test_the_portable_fingerprint_does_not_depend_on_the_process():
    import subprocess
    import sys

    from acp_lifecycle.model.system import initial_state

    s = initial_state(get_suite("multi-client").members[0])
    code = (
        "from acp_lifecycle.model.system import initial_state;"
        "from acp_lifecycle.sims.configs import get_suite;"
        "from acp_lifecycle.sims.search.engine import portable_fingerprint as f;"
        "print(f(initial_state(get_suite('multi-client').members[0])))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123"}).stdout
    assert int(out) == engine.portable_fingerprint(s)


def test_the_local_fingerprint_is_a_function_of_the_value():
    """The judges' memory is hashed once per object (sims/search/fingerprint.py): equal states give one
    fingerprint whatever objects make them, before and after the remembered hashes are forgotten, and
    states that differ only in their memory differ."""
    import copy

    from acp_lifecycle.model import Lifecycle
    from acp_lifecycle.sims.search import fingerprint

    model = Lifecycle(get_suite("multi-client").members[0])
    (s,) = model.init_states()
    states = [step.state for step in model.next_steps(s)]
    f = fingerprint.local_fingerprint
    first = [f(t) for t in states]
    twins = [copy.deepcopy(t) for t in states]  # equal values, other objects (the memory's too)
    assert all(t.seen is not u.seen or not t.seen for t, u in zip(states, twins))
    assert [f(t) for t in twins] == first
    fingerprint._HASHES.clear()
    assert [f(t) for t in states] == first
    assert len({f(t) for t in states}) == len(set(states))
    changed = [(t._replace(seen=((object(),),) + t.seen[1:]), t) for t in states if t.seen]
    assert changed and all(f(u) != f(t) for u, t in changed)
    assert f((1, "x")) == hash((1, "x"))  # not a state: Python's hash


def test_bottom_cycles_are_found_on_an_integer_graph():
    # 0 -> 1 -> 2 -> 1 (a bottom cycle), 0 -> 3 (terminal), 4 -> 4 (a self-loop)
    src = np.array([0, 1, 2, 0, 4])
    dst = np.array([1, 2, 1, 3, 4])
    comps = [c.tolist() for c in graph._bottom_cycles(5, src, dst)]
    assert comps == [[1, 2], [4]]


def test_dask_gives_the_local_state_count_on_a_two_worker_cluster(fork_early):
    pytest.importorskip("distributed", reason="dask is optional: pip install 'acp-lifecycle[dask]'")
    from acp_lifecycle.sims.search.dask import cluster

    cfg = get_suite("lost-response").members[0]
    with cluster(None, 2) as client:
        r = explore(cfg, cluster=client)
    assert r.workers == 2
    assert _summary(r) == _summary(explore(cfg))


@pytest.mark.slow
def test_dask_gives_the_local_state_count_on_wide():
    pytest.importorskip("distributed", reason="dask is optional: pip install 'acp-lifecycle[dask]'")
    from acp_lifecycle.sims.configs import SUITES
    from acp_lifecycle.sims.search.check import check_suite
    from acp_lifecycle.sims.search.dask import cluster

    local = check_suite(SUITES["wide"], workers=2)
    with cluster(None, 2) as client:
        remote = check_suite(SUITES["wide"], cluster=client)
    assert [m.states for m in remote.members] == [m.states for m in local.members]
    assert {k: v.status for k, v in remote.verdicts.items()} == {k: v.status for k, v in local.verdicts.items()}


@pytest.mark.slow
def test_huge_completes_with_every_verdict_as_expected():
    """About 10 minutes on 2 cores: huge-lost-response alone is 3.2 million states."""
    from acp_lifecycle.sims.configs import SUITES
    from acp_lifecycle.sims.search.check import check_suite

    r = check_suite(SUITES["huge"], workers=2)  # the suite's own limit: 10,000,000 a member
    assert r.ok, {k: v.outcome for k, v in r.verdicts.items() if not v.ok}
    assert all(m.config.clients >= 2 for m in r.members)


def test_huge_is_three_clients_with_every_fault_it_names():
    from acp_lifecycle.sims.configs import SUITES

    members = SUITES["huge"].members
    assert max(m.clients for m in members) == 3 and max(m.prompts for m in members) == 2
    for budget in ("failures", "cancels", "losses", "resumes"):
        assert any(getattr(m, budget) for m in members if m.clients == 3), budget


def test_a_suite_carries_its_state_limit_to_its_members():
    """huge's largest member passes the usual 3,000,000 states: the suite raises the guard for
    itself (and for a member named alone); ``--max-states`` still overrides it."""
    import dataclasses

    from acp_lifecycle.sims.configs import SUITES, get_suite
    from acp_lifecycle.sims.search.check import check_suite
    from acp_lifecycle.sims.search.explore import TooLarge

    assert SUITES["default"].max_states == 3_000_000
    assert SUITES["huge"].max_states == get_suite("huge-lost-response").max_states == 10_000_000
    small = get_suite("multi-client")
    with pytest.raises(TooLarge, match="passed 50 states"):
        check_suite(dataclasses.replace(small, max_states=50))
    with pytest.raises(TooLarge, match="passed 60 states"):
        check_suite(small, max_states=60)


def test_a_sigint_swallowed_while_watched_is_raised_again_and_forgotten_after():
    import os
    import signal
    import time

    from acp_lifecycle.sims.search import interrupt

    with interrupt.watch():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            pass  # as a `try: import ... except ImportError` around a C extension may swallow it
        with pytest.raises(KeyboardInterrupt):
            interrupt.check()
    interrupt.check()  # a later search starts afresh
