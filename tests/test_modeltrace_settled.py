"""`trace --model` forgets settled history (sims/wire/settled.py) and its verdicts do not change.

Soundness: every transcript of the corpus (tests/corpus/, tests/agents/) gets the same
explanation with and without forgetting (all but the node count); and a fault that lies in
the forgotten history (a messageId reused, an old message echoed again, a request id reused,
long after the message or request was settled) is still found, at the same line.
"""

import copy
import importlib.util
from pathlib import Path

import pytest

from acp_lifecycle.model import RULE_SETS, Config, Lifecycle
from acp_lifecycle.sims.wire import modeltrace, settled
from acp_lifecycle.sims.wire.modeltrace import explain
from acp_lifecycle.sims.wire.transcript import export, parse_text

TESTS = Path(__file__).parent
TRANSCRIPTS = sorted((TESTS / "corpus").rglob("*.jsonl")) + sorted((TESTS / "agents").rglob("*.jsonl"))

_spec = importlib.util.spec_from_file_location("bench_modeltrace", TESTS.parent / "bench" / "modeltrace.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.fixture
def remembering(monkeypatch):
    """Explain without forgetting anything (the search as it was before sims/wire/settled.py)."""
    def off():
        monkeypatch.setattr(modeltrace, "compacts", lambda model, retain: False)
        monkeypatch.setattr(modeltrace, "forget_seen", lambda s, model: s)
    return off


def _verdict(r) -> dict:
    d = r.data()
    d.pop("nodes")
    return d


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: str(p.relative_to(TESTS)))
def test_the_corpus_gets_the_same_explanation_with_and_without_forgetting(path, remembering):
    entries = parse_text(path.read_text(), str(path))
    rules = RULE_SETS["rfd+2.4.0"]
    forgetting = explain(entries, rules=rules, max_nodes=50_000, complete=True)
    remembering()
    whole = explain(entries, rules=rules, max_nodes=50_000, complete=True)
    assert _verdict(forgetting) == _verdict(whole)
    assert forgetting.nodes <= whole.nodes or forgetting.exhausted == whole.exhausted


# --- faults in the forgotten history ------------------------------------------------------


@pytest.fixture(scope="module")
def long_log() -> list[dict]:
    """A conforming log of about 150 lines, one client: settled many times over."""
    cut = bench.quiet_prefix(export(bench.conforming_run(30, 1, 7)), 150)
    assert len(cut) > 100
    return cut


def _results(log: list[dict]) -> list[int]:
    """The indexes of the session/prompt results that carry a messageId, in order."""
    return [i for i, e in enumerate(log) if e.get("from") == "agent" and "messageId" in ((e["msg"].get("result") or {}))]


def _echoes_of(log: list[dict], mid) -> list[int]:
    return [i for i, e in enumerate(log)
            if ((e["msg"].get("params") or {}).get("update") or {}).get("messageId") == mid]


def _both_ways(log: list[dict], remembering) -> tuple:
    entries = list(enumerate(log, 1))
    forgetting = explain(entries, complete=True)
    remembering()
    return forgetting, explain(entries, complete=True)


def test_the_long_log_is_settled_and_forgotten_many_times(long_log, monkeypatch):
    calls = []
    real = modeltrace.forget_settled
    monkeypatch.setattr(modeltrace, "forget_settled", lambda s, model: calls.append(1) or real(s, model))
    r = explain(list(enumerate(long_log, 1)), complete=True)
    assert r.explained, r.text()
    assert len(calls) > 10


def test_a_message_id_reused_long_after_is_still_found(long_log, remembering):
    log = copy.deepcopy(long_log)
    results = _results(log)
    old = log[results[0]]["msg"]["result"]["messageId"]
    late = results[-5]
    new = log[late]["msg"]["result"]["messageId"]
    for i in [late] + _echoes_of(log, new):
        msg = log[i]["msg"]
        if "result" in msg:
            msg["result"]["messageId"] = old
        else:
            msg["params"]["update"]["messageId"] = old
    forgetting, whole = _both_ways(log, remembering)
    assert not forgetting.explained
    assert _verdict(forgetting) == _verdict(whole)
    assert forgetting.first_unexplained_line == late + 1


def test_an_echo_of_a_message_answered_long_ago_gets_the_same_verdict_either_way(long_log, remembering):
    log = copy.deepcopy(long_log)
    results = _results(log)
    old = log[results[0]]["msg"]["result"]["messageId"]
    echo = copy.deepcopy(log[_echoes_of(log, old)[0]])
    at = results[-3] + 1
    log.insert(at, echo)
    forgetting, whole = _both_ways(log, remembering)
    # (whether the model explains a repeated echo is the model's business: the verdict is the same)
    assert _verdict(forgetting) == _verdict(whole)


def test_a_request_id_reused_long_after_is_still_found(long_log, remembering):
    log = copy.deepcopy(long_log)
    prompts = [i for i, e in enumerate(log) if e["msg"].get("method") == "session/prompt"]
    old = log[prompts[0]]["msg"]["id"]
    late = prompts[-4]
    rid = log[late]["msg"]["id"]
    for e in log[late:]:
        if e["msg"].get("id") == rid:
            e["msg"]["id"] = old
    forgetting, whole = _both_ways(log, remembering)
    assert not forgetting.explained
    assert _verdict(forgetting) == _verdict(whole)
    assert forgetting.first_unexplained_line == late + 1


def test_only_the_named_rule_sets_forget():
    def searched(rules):  # the model object ``explain`` searches under ``rules``
        return Lifecycle(Config(name="log"), settled.explain_rules(rules))

    for rules in RULE_SETS.values():
        assert settled.compacts(searched(rules), retain=True)
        assert not settled.compacts(searched(rules), retain=False)
    assert not settled.compacts(searched(RULE_SETS["rfd"].with_(id_scheme="content")), retain=True)
    assert not settled.compacts(searched(RULE_SETS["rfd"].with_(respond_late=True)), retain=True)


def test_line_ids_name_what_unify_binds(monkeypatch):
    """``settled.line_ids`` lists every (namespace, raw id) ``_unify`` binds for a line."""
    real_unify, real_bind = modeltrace._unify, modeltrace._bind
    current, wrong, binds = [None], [], []

    def unify(c, sender, mm, line, mp, bound=None):
        current[0] = line
        return real_unify(c, sender, mm, line, mp, bound)

    def bind(mp, ns, raw, model, bound=None):
        binds.append(1)
        if (ns, raw) not in settled.line_ids(current[0]):
            wrong.append((current[0], ns, raw))
        return real_bind(mp, ns, raw, model, bound)

    monkeypatch.setattr(modeltrace, "_unify", unify)
    monkeypatch.setattr(modeltrace, "_bind", bind)
    for path in TRANSCRIPTS:
        explain(parse_text(path.read_text(), str(path)), max_nodes=20_000, complete=True)
    assert not wrong, wrong[:3]
    assert len(binds) > 1000


def test_forgetting_the_judges_memory_brings_it_back_to_where_the_model_starts():
    model = Lifecycle(Config(name="two", clients=2))
    (s,) = model.init_states()
    start = s.seen
    assert model.seen_at_start(2) == start
    for _ in range(50):  # first steps until the judges remember something
        if s.seen != start:
            break
        s = model.next_steps(s)[0].state
    assert s.seen != start
    assert settled.forget_seen(s, model).seen == start
