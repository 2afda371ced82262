"""`trace --model` forgets dead requests between settled points (``settled.forget_dead``).

Two clients seldom settle together: between settled points runs that passed through a quiet
moment of their own and runs that did not differ in history only (answered requests, echoed
messages, the bindings of their ids and of ended tool calls). ``forget_dead`` drops that
history request by request, so those runs meet. Tested here: the nodes are fewer and the
verdicts the same on a two-client log; a fault in the forgotten history (an id reused while
the other client's prompt is in flight) is found at the same line with and without
forgetting; and what the model can do next from a state is what it can do from the state
without its dead requests.
"""

import copy
import importlib.util
import random
from collections import Counter
from pathlib import Path

import pytest

from acp_lifecycle.model.config import RFD_RULES, Config
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.sims.wire import modeltrace, settled
from acp_lifecycle.sims.wire.modeltrace import explain
from acp_lifecycle.sims.wire.transcript import export

_spec = importlib.util.spec_from_file_location("bench_modeltrace", Path(__file__).parents[1] / "bench" / "modeltrace.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _overlapping_run(turns: int, seed: int):
    """A run of the correct model where two clients often prompt while the other's prompt is in flight."""
    cfg = Config(name="overlap", clients=2, prompts=turns, tool_calls=turns, failures=turns // 10,
                 down_latency=False, hook=False)
    rng = random.Random(seed)
    s, trace = initial_state(cfg), []
    while succ := successors(s, cfg, RFD_RULES):
        busy = s.agent.work is not None or any(s.up)
        weights = [0.2 if step.action[0] == "ClientSubmitPrompt" and busy else
                   0.05 if step.action[0] in ("AgentRejectPrompt", "AgentFailWork", "AgentFailAndRetry",
                                              "AgentFailInBackground") else 1.0 for step in succ]
        step = rng.choices(succ, weights=weights)[0]
        trace.append((s, step))
        s = step.state
    return trace


@pytest.fixture(scope="module")
def two_clients() -> list[dict]:
    """A conforming log of about 300 lines, two clients prompting over each other."""
    cut = bench.quiet_prefix(export(_overlapping_run(40, 1)), 300)
    assert len(cut) > 200
    return cut


def _without_dead(monkeypatch):
    monkeypatch.setattr(modeltrace, "forget_dead", lambda s, fmap: (s, fmap))


def _verdict(r) -> dict:
    d = r.data()
    d.pop("nodes")
    return d


def _both_ways(log, monkeypatch):
    entries = list(enumerate(log, 1))
    forgetting = explain(entries, complete=True)
    _without_dead(monkeypatch)
    return forgetting, explain(entries, complete=True)


def test_two_clients_meet_sooner_and_get_the_same_verdict(two_clients, monkeypatch):
    forgetting, keeping = _both_ways(two_clients, monkeypatch)
    assert forgetting.explained, forgetting.text()
    assert _verdict(forgetting) == _verdict(keeping)
    assert forgetting.nodes < keeping.nodes * 0.95, (forgetting.nodes, keeping.nodes)


# --- faults in the forgotten history ------------------------------------------------------


@pytest.fixture
def quick_only(monkeypatch):
    """Search a faulty log under the quick bounds only (``bounds.config_and_clamps``): the full
    bounds, tried after an unexplained quick search, let silent work start at every line."""
    real = modeltrace.config_and_clamps

    def quick(prep, clamp=True):
        _, clamped, q = real(prep, clamp)
        return q, clamped, q

    monkeypatch.setattr(modeltrace, "config_and_clamps", quick)


def _unsettled(log: list[dict], i: int) -> bool:
    """Is a prompt of the other client in flight at line index i (no settled point there)?"""
    me = log[i]["conn"]
    asked = set()
    for e in log[:i]:
        m = e["msg"]
        if e["from"] == "client" and m.get("method") == "session/prompt":
            asked.add((e["conn"], m["id"]))
        elif e["from"] == "agent" and ("result" in m or "error" in m):
            asked.discard((e["conn"], m.get("id")))
    return any(c != me for c, _ in asked)


def _update(e: dict) -> dict:
    return (e["msg"].get("params") or {}).get("update") or {}


def test_a_message_id_reused_while_the_other_client_waits_is_still_found(two_clients, quick_only, monkeypatch):
    log = copy.deepcopy(two_clients)
    results = [i for i, e in enumerate(log) if "messageId" in (e["msg"].get("result") or {})]
    k = next(k for k in range(1, len(results)) if _unsettled(log, results[k]))
    late = results[k]
    old = log[results[k - 1]]["msg"]["result"]["messageId"]  # answered in the same unsettled stretch
    new = log[late]["msg"]["result"]["messageId"]
    for e in log[late:]:
        if (e["msg"].get("result") or {}).get("messageId") == new:
            e["msg"]["result"]["messageId"] = old
        elif _update(e).get("messageId") == new:
            _update(e)["messageId"] = old
    _found_at_the_same_line_either_way(log, monkeypatch, late + 1)


def _found_at_the_same_line_either_way(log, monkeypatch, line: int) -> None:
    """The log is unexplained at ``line``, with the same verdict with and without forgetting."""
    forgetting, keeping = _both_ways(log, monkeypatch)
    assert not forgetting.explained and not forgetting.exhausted
    assert _verdict(forgetting) == _verdict(keeping)
    assert forgetting.first_unexplained_line == line


def test_a_tool_call_id_reused_while_the_other_client_waits_is_still_found(two_clients, quick_only, monkeypatch):
    log = copy.deepcopy(two_clients)
    tools = [i for i, e in enumerate(log) if _update(e).get("toolCallId")]
    last = {_update(log[i])["toolCallId"]: i for i in tools}
    # a new call, while the other client waits, named as a call that ended before it
    late, old = next((i, t) for i in tools if _unsettled(log, i) and i == min(
        j for j in tools if _update(log[j])["toolCallId"] == _update(log[i])["toolCallId"])
        for t, j in last.items() if j < i)
    new = _update(log[late])["toolCallId"]
    for e in log[late:]:
        if _update(e).get("toolCallId") == new:
            _update(e)["toolCallId"] = old
    _found_at_the_same_line_either_way(log, monkeypatch, late + 1)


def _shape(step) -> tuple:
    """What a step does, without the ids a renumbering changes."""
    return step.action[0], tuple((c, m[0]) for c, m in step.emitted)


def _slimmed_walk(cfg, seed: int, steps: int, slim) -> int:
    """A random walk of the model; where ``slim(state)`` is another state, it must take the same
    kinds of steps as the state itself. Returns how many states were slimmed."""
    rules = settled.explain_rules(RFD_RULES)
    rng = random.Random(seed)
    s, slimmed = initial_state(cfg), 0
    for _ in range(steps):
        succ = successors(s, cfg, rules)
        if not succ:
            break
        thin = slim(s)
        if thin is not s:
            slimmed += 1
            assert Counter(map(_shape, successors(thin, cfg, rules))) == Counter(map(_shape, succ))
        s = rng.choice(succ).state
    return slimmed


def test_a_state_without_its_dead_requests_can_do_what_it_could():
    cfg = Config(name="long", clients=2, prompts=30, tool_calls=30, failures=3, down_latency=False, hook=False)
    assert _slimmed_walk(cfg, 3, 400, lambda s: settled.forget_dead(s, frozenset())[0]) > 20


def test_ended_tool_calls_are_forgotten_and_change_no_step():
    """``Agent.ended_tools`` is a ghost nothing reads: a node forgets it (``modeltrace._forget``),
    so that runs that passed through a settled point (which forgets it) and runs that did not meet."""
    cfg = Config(name="tools", clients=1, prompts=4, tool_calls=4, down_latency=False, hook=False)

    def slim(s):
        if not s.agent.ended_tools:
            return s
        thin = modeltrace._forget(s)
        assert not thin.agent.ended_tools
        return thin

    assert _slimmed_walk(cfg, 5, 200, slim) > 5
