"""The Hypothesis explorer (``sims.search.fuzz``): agreement with the exhaustive explorer, determinism, seeded bugs.

No count here is Hypothesis's exact behaviour on one seed: a seeded bug must be
caught, with its property and a real run close to the explorer's shortest,
within one budget with a wide margin over several seeds (``BUDGET``;
``SLOW_BUGS`` are the few without that margin). Tests marked ``slow`` run only with ``-m slow``.
"""

import functools
import json
import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.stateful import run_state_machine_as_test

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.config import RFD_RULES, Config
from acp_lifecycle.model.properties import BY_ID
from acp_lifecycle.model.system import ACTION_KINDS, initial_state, successors
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.search.explore import explore
from acp_lifecycle.sims.search.fuzz import ModelMachine, PropertyViolation, fuzz, make_machine, shorten

TINY = get_suite("tiny").members[0]
FUZZ = get_suite("fuzz").members[0]

#: Drawn steps per run on the small members: the exhaustive depth of every
#: default member is at most 18 (test_explore.PINNED), and the teardown takes
#: a run on to a terminal state anyway.
SMALL_STEPS = 20

#: Examples given to fuzz for a seeded bug: the command's default.
BUDGET = 1000

#: Bugs the suite leaves to ``-m slow``: on some seed, fuzz needs more than a fifth of BUDGET
#: examples to meet them (the fault or the replay sits deep in a run), so the margin the suite
#: wants (5x over the worst of seeds 0-3, measured 2026-12-04) is not there. Every other bug
#: runs in the suite with seed 0 and BUDGET: a change to the model or to Hypothesis that moves
#: the runs does not fail the test; a bug fuzz stops finding does.
SLOW_BUGS = {
    "error-when-abort-raises": "seeds 0 and 3 meet no failure during cancellation within 1,000",
    "no-tool-terminal-before-error": "seed 1 took 806 examples",
    "replay-chunks-without-reset": "seed 3 found nothing within 1,000",
    "replay-reexecutes-command": "seed 2 took 801 examples",
    "replay-under-new-id": "seed 3 took 672 examples",
}
QUICK_BUGS = set(BUGS) - set(SLOW_BUGS)

#: Seeds for the `fuzz` command's slow test where seed 0 does not catch the bug within
#: BUDGET (error-when-abort-raises: seed 0 meets no failure during cancellation in 3,000).
SEEDS = {"error-when-abort-raises": 1}

#: A printed run is at most this many steps longer than the explorer's shortest
#: (3 since issue 11: tool-update-after-idle prints 10 steps, the explorer's is 7).
SLACK = 3

#: The correct model breaks failed_work_ends_with_error_idle on fuzz-3-clients:
#: a failure while no client is attached (after a restart, or after every
#: connection was lost) ends the work with an idle that goes to nobody, and the
#: step property looks for the idle among the messages sent.


def _slow_only(request):
    # CI runs plain `python -m pytest`: a slow test runs only when asked for with -m slow.
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("slow: run with -m slow")


def _exhaustive(cfg: Config, rules=RFD_RULES):
    """Every reachable state and every action kind that fires, by BFS over successors."""
    s0 = initial_state(cfg)
    seen, frontier, kinds = {s0}, [s0], set()
    while frontier:
        nxt = []
        for s in frontier:
            for step in successors(s, cfg, rules):
                kinds.add(step.action[0])
                if step.state not in seen:
                    seen.add(step.state)
                    nxt.append(step.state)
        frontier = nxt
    return seen, kinds


def _assert_real_run_ending_in_violation(trace, cfg, rules, prop_id):
    """The trace starts in the initial state, takes enabled steps only, and its end breaks prop_id."""
    assert trace and trace[0][0] == initial_state(cfg)
    for (pre, step), nxt in zip(trace, [p for p, _ in trace[1:]] + [None]):
        assert step in successors(pre, cfg, rules), step.action
        if nxt is not None:
            assert nxt == step.state
    p = BY_ID[prop_id]
    pre, step = trace[-1]
    if p.kind == "step":
        assert p.check(pre, step)
    elif p.kind == "always":
        assert p.check(step.state)
    else:
        assert p.check(step.state) and not successors(step.state, cfg, rules)


# ---------------------------------------------------------------------------
# Agreement with the exhaustive explorer (tiny)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    return fuzz(TINY, examples=100, steps=SMALL_STEPS), _exhaustive(TINY)


def test_every_state_hypothesis_reaches_on_tiny_is_in_the_exhaustive_reachable_set(tiny):
    r, (reachable, _) = tiny
    assert r.ok and r.examples == 100
    assert r.states and r.states <= reachable


def test_hypothesis_fires_exactly_the_action_kinds_the_exhaustive_search_fires_on_tiny(tiny):
    r, (_, kinds) = tiny
    assert r.actions == kinds


def test_every_sometimes_hypothesis_reaches_on_tiny_the_explorer_reaches_too(tiny):
    from acp_lifecycle.sims.search.explore import explore

    r, _ = tiny
    reached = {k for k, v in explore(TINY).verdicts.items() if v.status == "reached"}
    assert r.sometimes and r.sometimes <= reached


def test_hypothesis_stays_in_the_reachable_set_of_a_member_with_faults_and_cancels():
    cfg = get_suite("failures").members[0]
    r = fuzz(cfg, examples=30, steps=SMALL_STEPS)
    reachable, kinds = _exhaustive(cfg)
    assert r.ok and r.states <= reachable and r.actions <= kinds
    assert "ClientCancelRequest" in r.actions  # drawn from the bundle of requests really sent


# ---------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_result():
    bug = BUGS["cancel-after-insertion"]
    cfg = get_suite(bug.member).members[0]
    a, b = (fuzz(cfg, bug.rules, examples=10, steps=SMALL_STEPS) for _ in range(2))
    assert a.property == bug.breaks
    assert (a.property, a.message, a.examples, a.runs) == (b.property, b.message, b.examples, b.runs)
    assert a.trace == b.trace and a.states == b.states and a.actions == b.actions
    c, d = (fuzz(TINY, examples=20, steps=SMALL_STEPS) for _ in range(2))
    assert c.states == d.states and c.runs == d.runs and c.sometimes == d.sometimes


def test_another_seed_gives_other_runs():
    a = fuzz(TINY, examples=20, steps=SMALL_STEPS, seed=0)
    b = fuzz(TINY, examples=20, steps=SMALL_STEPS, seed=1)
    assert a.states != b.states


_SCRIPT = """
CONSTANTS = {constants}  # Hypothesis would draw from these were its local-constant pool left on
import json
from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.search.fuzz import fuzz
bug = BUGS["error-after-insertion"]
r = fuzz(get_suite(bug.member).members[0], bug.rules, examples=40, steps=20, shrink=False)
print(json.dumps([r.property, r.examples, r.runs, len(r.states), sorted(map(repr, r.states))[:50]]))
"""


def test_the_result_depends_neither_on_the_hash_seed_nor_on_the_callers_constants(tmp_path):
    out = []
    for n, (hash_seed, constants) in enumerate((("1", (7, 13, 77, 123, 200, 250)), ("2", (3, 99, 141, 17)))):
        script = tmp_path / f"caller_{n}.py"
        script.write_text(textwrap.dedent(_SCRIPT.format(constants=constants)))
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        done = subprocess.run([sys.executable, str(script)], env=env, cwd=root, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        out.append(json.loads(done.stdout))
    assert out[0] == out[1]


def test_progress_counts_the_examples_and_not_the_shrinking():
    seen = []
    bug = BUGS["answer-at-reserve"]
    r = fuzz(TINY, bug.rules, examples=2, steps=SMALL_STEPS, progress=seen.append)
    assert not r.ok and r.runs > r.examples
    assert seen == list(range(1, r.examples + 1))
    seen.clear()
    r = fuzz(TINY, examples=7, steps=SMALL_STEPS, progress=seen.append)
    assert seen == list(range(1, 8))


# ---------------------------------------------------------------------------
# The correct model, and what it is expected to violate
# ---------------------------------------------------------------------------


def test_the_correct_model_runs_clean_on_fuzz_3_clients_for_30_examples():
    r = fuzz(FUZZ, examples=30, shrink=False)  # once clean there is nothing to shrink
    assert r.ok, "\n".join(r.lines())
    assert r.examples == 30 and not r.unterminated


def test_a_failure_while_no_client_is_attached_is_not_taken_for_a_missing_idle():
    cfg = Config(name="unattached", restarts=1, agent_work=1, failures=1, prompts=0).validate()
    s = initial_state(cfg)
    for label in (("AgentRestart",), ("AgentInitiateWork",)):
        s = next(step.state for step in successors(s, cfg, RFD_RULES) if step.action == label)
    fail = next(step for step in successors(s, cfg, RFD_RULES) if step.action == ("AgentFailWork", "stops-work"))
    assert fail.state.agent.stop == "error"  # the agent did end the work with stopReason error
    assert BY_ID["failed_work_ends_with_error_idle"].check(s, fail) is None


def test_limitations_and_open_questions_are_recorded_and_do_not_fail_the_run():
    r = fuzz(get_suite("lost-response").members[0], examples=300, steps=SMALL_STEPS)
    assert r.ok and r.property is None and r.trace == []
    assert {"lost_response_recoverable", "retry_does_not_duplicate"} <= set(r.limitations)
    assert all(BY_ID[k].expect in ("known_limitation", "open_question") for k in r.limitations)
    assert all(r.limitations.values())


@pytest.mark.slow
def test_the_correct_model_runs_clean_on_fuzz_3_clients_for_500_examples_and_fires_every_action(request):
    _slow_only(request)
    r = fuzz(FUZZ, examples=500)
    assert r.ok, "\n".join(r.lines())
    assert r.actions == set(ACTION_KINDS) and not r.unterminated


# ---------------------------------------------------------------------------
# Failures: the assertion, the shrunk trace, the seeded bugs
# ---------------------------------------------------------------------------


def test_a_machine_run_directly_fails_with_an_assertion_that_starts_with_the_property_id():
    machine = make_machine(TINY, BUGS["answer-at-receipt"].rules)
    quiet = settings(
        max_examples=5, database=None, deadline=None, verbosity=Verbosity.quiet, phases=[Phase.generate],
        suppress_health_check=list(HealthCheck), stateful_step_count=SMALL_STEPS,
    )
    with pytest.raises(AssertionError, match=r"^success_only_after_insertion: client 0's session/prompt 1") as e:
        run_state_machine_as_test(machine, settings=quiet)
    assert isinstance(e.value, PropertyViolation) and e.value.prop == "success_only_after_insertion"


def test_each_machine_is_a_module_level_subclass_with_its_own_record_and_an_invariant_per_always_property():
    a, b = make_machine(TINY), make_machine(TINY, BUGS["answer-at-receipt"].rules)
    assert issubclass(a, ModelMachine) and issubclass(b, ModelMachine) and a.record is not b.record
    invariants = sorted(name for name in vars(a) if name.startswith("always_"))
    always = [p.id for p in BY_ID.values() if p.kind == "always" and p.expectation(RFD_RULES)]
    assert [name.split("_", 2)[2] for name in invariants] == always
    # one rule per action kind of the machine's model, on the machine's own class
    assert a.model.action_kinds == ACTION_KINDS and all(callable(vars(a)[kind]) for kind in ACTION_KINDS)
    assert not any(hasattr(ModelMachine, kind) for kind in ACTION_KINDS)


def test_the_shrunk_trace_prints_as_numbered_steps_with_json_rpc_messages():
    r = fuzz(TINY, BUGS["answer-at-receipt"].rules, examples=1, steps=SMALL_STEPS)
    lines = r.lines()
    assert lines[0] == "  1. ClientSubmitPrompt(0, 'a')"
    assert "client 0 -> agent" in lines[1] and '"method":"session/prompt"' in lines[1]
    assert any(line.startswith("  2. AgentReceive(0, 'prompt')") for line in lines)
    assert lines[-1].startswith("     => success_only_after_insertion: ")


def test_most_bugs_run_in_the_suite():
    assert set(SLOW_BUGS) <= set(BUGS)
    assert len(QUICK_BUGS) >= len(BUGS) * 2 // 3  # the suite's test covers most bugs; the rest are slow


@functools.cache
def _shortest(name: str, prop_id: str) -> int:
    """The length of the explorer's shortest run of the bug's member that breaks ``prop_id``
    (0 when the explorer finds none); for the bug's own property, test_bugs pins it."""
    from test_bugs import PINNED_LENGTHS

    bug = BUGS[name]
    if prop_id == bug.breaks:
        return PINNED_LENGTHS[name]
    v = explore(get_suite(bug.member).members[0], bug.rules).verdicts[prop_id]
    return len(v.trace) if v.status == "violated" else 0


def _caught(name: str, seed: int, examples: int = BUDGET):
    """Fuzz a seeded bug; assert what it found, if anything: a real run of the bug's member that
    ends in a violation of one of the rules the bug is known to break (``Bug.catches``: its own
    property, or another the same fault may break first), within SLACK steps of the explorer's
    shortest run breaking that rule."""
    bug = BUGS[name]
    cfg = get_suite(bug.member).members[0]
    r = fuzz(cfg, bug.rules, examples=examples, steps=SMALL_STEPS, seed=seed)
    if r.property is None:
        return None
    assert r.property in bug.catches, f"{name}, seed {seed}: {r.property} after {r.examples} examples"
    assert r.message and not r.ok and r.examples <= examples
    assert 0 < _shortest(name, r.property) <= len(r.trace) <= _shortest(name, r.property) + SLACK
    assert r.hypothesis_steps >= len(r.trace)
    _assert_real_run_ending_in_violation(r.trace, cfg, bug.rules, r.property)
    return r


@pytest.mark.parametrize("name", sorted(QUICK_BUGS))
def test_fuzz_catches_each_quick_seeded_bug_with_a_short_real_run(name):
    assert _caught(name, seed=0) is not None, f"{name}: not caught in {BUDGET} examples"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUGS))
def test_fuzz_catches_each_seeded_bug_with_some_of_four_seeds(name, request):
    """Every bug, the rare ones too: each of seeds 0-3 finds the bug or nothing (never another
    property), at least one finds it, and a quick bug is found by every seed."""
    _slow_only(request)
    found = [_caught(name, seed) is not None for seed in range(4)]
    assert any(found) and (all(found) or name not in QUICK_BUGS), (name, found)


def test_shorten_deletes_the_detours_hypothesis_leaves_and_keeps_a_real_failing_run():
    # On fuzz-3-clients with 60 steps, Hypothesis's own shrunk run can still take detours
    # through agent work and faults before the client takes an idle for its prompt's end;
    # whatever it leaves, shorten leaves a run no single deletion can shorten.
    from test_bugs import PINNED_LENGTHS

    bug = BUGS["client-idle-completes-prompt"]
    r = fuzz(FUZZ, bug.rules, examples=200, steps=60)
    assert r.property == bug.breaks and r.hypothesis_steps >= len(r.trace)
    assert len(r.trace) <= PINNED_LENGTHS[bug.name] + SLACK
    assert shorten(r.trace, FUZZ, bug.rules, bug.breaks) == (r.trace, None)  # nothing left to delete
    _assert_real_run_ending_in_violation(r.trace, FUZZ, bug.rules, bug.breaks)


def test_shorten_deletes_steps_only_while_the_same_property_still_fails():
    bug = BUGS["answer-at-receipt"]
    r = fuzz(TINY, bug.rules, examples=1, steps=SMALL_STEPS)
    assert shorten(r.trace, TINY, bug.rules, bug.breaks) == (r.trace, None)  # already the shortest
    # under the correct rules the same actions break nothing: the run is kept as it is
    assert shorten(r.trace, TINY, RFD_RULES, bug.breaks) == (r.trace, None)
    # a run with a detour (a lost connection and the resume) before the violation loses the detour
    cfg = get_suite("lost-response").members[0]
    s, detour = initial_state(cfg), []
    while not detour or detour[-1][1].action != ("AgentReceive", 0, "prompt"):
        # the lost connection and the resume first, then the first enabled step of the rest
        steps = successors(s, cfg, bug.rules)
        step = next((x for x in steps if x.action[0] in ("ConnectionLost", "ClientResume", "AgentResume")), steps[0])
        if step.action[0] == "ClientSubmitPrompt" or any(a[1].action[0] == "ClientSubmitPrompt" for a in detour):
            step = next((x for x in steps if x.action in (("ClientSubmitPrompt", 0, "a"), ("AgentReceive", 0, "prompt"))), step)
        detour.append((s, step))
        s = step.state
    trace, message = shorten(detour, cfg, bug.rules, bug.breaks)
    assert len(detour) > 2 and [st.action for _, st in trace] == [("ClientSubmitPrompt", 0, "a"), ("AgentReceive", 0, "prompt")]
    assert message.startswith("client 0's session/prompt 1")


#: Seeded bugs the suite runs through the command line (the others with -m slow;
#: test_fuzz_catches_each_quick_seeded_bug_with_a_short_real_run covers the quick ones in the suite).
CLI_BUGS = {"answer-at-receipt", "never-echo", "same-id-for-same-content"}


@pytest.mark.parametrize(
    "name", [n if n in CLI_BUGS else pytest.param(n, marks=pytest.mark.slow) for n in sorted(BUGS)]
)
def test_the_fuzz_command_prints_each_seeded_bug_within_two_steps_of_the_explorer(name, capsys, request):
    """`acp-lifecycle fuzz --bug NAME` with its defaults (the bug's member, 1000 examples, 20 steps; the seed of SEEDS)."""
    from acp_lifecycle.sims.cli import main

    if name not in CLI_BUGS:
        _slow_only(request)
    seed = ["--seed", str(SEEDS[name])] if name in SEEDS else []
    assert main(["fuzz", "--bug", name, "--json", *seed]) == 1
    (member,) = json.loads(capsys.readouterr().out)["members"]
    bug = BUGS[name]
    assert member["name"] == bug.member and member["property"] in bug.catches
    assert len(member["trace"]) <= _shortest(name, member["property"]) + SLACK


def test_a_clean_fuzz_says_it_is_no_proof_and_how_to_draw_more(capsys):
    from acp_lifecycle.sims.cli import main

    assert main(["fuzz", "--config", "tiny", "--examples", "5"]) == 0
    out = capsys.readouterr().out
    assert "tiny: clean after 5 run(s)" in out
    assert out.rstrip().endswith("(random runs: a clean result is no proof; --examples N or --seed N draws more)")
