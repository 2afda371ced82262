"""The exhaustive explorer: pinned state counts, shortest witnesses, verdicts on default.

An intended model change updates the pinned numbers in the same commit, so the
change shows up in review (as the TLA+ Examples pin `distinctStates`).
"""

import pytest

from acp_lifecycle.model.config import RFD_RULES, Config
from acp_lifecycle.model.properties import BY_ID, PROPERTIES
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.sims.search.check import check_suite
from acp_lifecycle.sims.configs import SUITES, get_suite
from acp_lifecycle.sims.search.explore import _cyclic_core, explore

# member: (distinct states, transitions, depth, terminal states)
PINNED = {
    "tiny": (296, 539, 11, 4),
    "multi-client": (4060, 14988, 15, 98),
    "failures": (860, 3250, 13, 26),
    "cancel-race": (1490, 4579, 13, 40),
    "permission": (1318, 4230, 15, 30),
    "lost-response": (5237, 18217, 18, 164),
    "restart": (232, 453, 10, 60),
    "import": (1385, 3586, 13, 205),
    "fifo": (9882, 26900, 15, 16),
}


@pytest.fixture(scope="module")
def default():
    return check_suite(SUITES["default"])


@pytest.mark.parametrize("name", PINNED)
def test_state_counts_are_pinned(name):
    r = explore(get_suite(name).members[0], symmetry=False)  # reduced counts: tests/test_symmetry.py
    assert (r.states, r.transitions, r.depth, r.terminal_states) == PINNED[name]


def test_the_default_suite_is_exactly_the_pinned_members():
    assert [m.name for m in SUITES["default"].members] == [n for n in PINNED if n != "tiny"]


def test_tiny_witnesses_are_shortest_and_pinned():
    r = explore(get_suite("tiny").members[0])
    lengths = {k: len(v.trace) for k, v in r.verdicts.items() if v.status == "reached"}
    assert lengths == {
        "sometimes_success_response": 4,
        "sometimes_error_response": 3,
        "sometimes_prompt_answered": 3,
        "sometimes_live_echo": 4,
        "sometimes_reserved_id_rejected": 4,
        "sometimes_work_ends": 5,
        "sometimes_echo_before_response": 5,
        "sometimes_echo_after_response": 5,
    }
    actions = [step.action for _, step in r.verdicts["sometimes_error_response"].trace]
    assert actions == [
        ("ClientSubmitPrompt", 0, "a"),
        ("AgentReceive", 0, "prompt"),
        ("AgentRejectPrompt", 0),
    ]


def test_default_passes_with_every_verdict_as_expected(default):
    bad = {k: v.outcome for k, v in default.verdicts.items() if not v.ok}
    assert bad == {}
    assert default.ok


def test_default_holds_every_must_hold_property(default):
    for p in PROPERTIES:
        if p.expect == "must_hold":
            assert default.verdicts[p.id].status == "holds", p.id


def test_default_confirms_every_limitation_and_open_question_with_a_counterexample(default):
    for p in PROPERTIES:
        if p.expect in ("known_limitation", "open_question"):
            v = default.verdicts[p.id]
            assert v.status == "violated" and v.trace and v.message, p.id


def test_default_reaches_every_sometimes(default):
    for p in PROPERTIES:
        if p.kind == "sometimes":
            assert default.verdicts[p.id].status == "reached", p.id


def test_every_property_names_a_reachable_witness():
    witnesses = {p.id for p in PROPERTIES if p.kind == "sometimes"}
    for p in PROPERTIES:
        if p.kind != "sometimes":
            assert p.witnesses and set(p.witnesses) <= witnesses, p.id


def test_the_lost_response_counterexample_is_the_rfd_story(default):
    v = default.verdicts["lost_response_recoverable"]
    names = [step.action[0] for _, step in v.trace]
    assert names == ["ClientSubmitPrompt", "AgentReceive", "AgentInsert", "ConnectionLost", "ClientResume", "AgentResume"]


def test_the_2_4_0_snapshot_rule_closes_the_resume_question():
    rules = RFD_RULES.with_(resume_snapshot="must")
    r = explore(get_suite("lost-response").members[0], rules)
    assert r.verdicts["resumed_client_sees_current_state"].status == "holds"


def test_a_correlation_token_makes_the_lost_response_recoverable():
    rules = RFD_RULES.with_(correlation_token=True)
    r = check_suite(SUITES["default"], rules)
    assert r.verdicts["lost_response_recoverable"].status == "holds"
    assert r.verdicts["association_points_at_own_submission"].status == "holds"


def test_successors_are_deterministic():
    cfg = get_suite("failures").members[0]
    s = initial_state(cfg)
    for _ in range(6):
        a = successors(s, cfg, RFD_RULES)
        b = successors(s, cfg, RFD_RULES)
        assert a == b and a
        s = a[-1].state


def test_the_tiny_state_graph_is_acyclic():
    # Every step spends a budget or advances a phase; the liveness check relies
    # on bottom components, and this shows which kind the graph has.
    cfg = get_suite("tiny").members[0]
    s0 = initial_state(cfg)
    index, edges, frontier = {s0: 0}, [], [s0]
    while frontier:
        nxt = []
        for s in frontier:
            for step in successors(s, cfg, RFD_RULES):
                if step.state not in index:
                    index[step.state] = len(index)
                    nxt.append(step.state)
                edges.append((index[s], index[step.state]))
        frontier = nxt
    assert _cyclic_core(len(index), edges) == set()


def test_the_cyclic_core_finds_a_cycle_and_what_follows_it():
    # 0 -> 1 -> 2 -> 1, 2 -> 3, 4 -> 0
    assert _cyclic_core(5, [(0, 1), (1, 2), (2, 1), (2, 3), (4, 0)]) == {1, 2, 3}


def test_a_too_large_configuration_stops_with_a_clear_error():
    from acp_lifecycle.sims.search.explore import TooLarge

    with pytest.raises(TooLarge, match="passed 100 states"):
        explore(Config(name="big", clients=2), max_states=100)


def test_the_same_prompt_twice_gets_two_ids_and_each_client_its_own():
    r = explore(get_suite("multi-client").members[0])
    trace = r.verdicts["sometimes_identical_prompts_two_clients"].trace
    final = trace[-1][1].state
    mids = {c: [sub.mid for sub in cl.subs] for c, cl in enumerate(final.clients)}
    assert mids[0] != mids[1] and all(mids.values())
    assert BY_ID["association_points_at_own_submission"].check(final) is None
