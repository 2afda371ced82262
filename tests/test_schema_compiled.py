"""The compiled schema check (jsonschema-rs over the strict twin, sims/wire/schema_compiled.py)
says exactly what jsonschema and the conventions walk say, message by message.

On every message of the corpus (conforming and violating), of the test vectors and of both
sides of the recorded bridge runs (v1 messages under the v1 schema), and on mutations of
them: each value replaced by an unlisted enum value, a ``_`` custom one, a number of another
kind, each member dropped. Where jsonschema-rs cannot be imported, the Python path alone
gives the same findings.
"""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path

import pytest

from acp_lifecycle.model.monitor import Monitor, RawFloat
from acp_lifecycle.sims.wire import schema_compiled
from acp_lifecycle.sims.wire.schema import SchemaError, Validator, cache_path, locate, pull
from acp_lifecycle.sims.wire.transcript import check_transcript, parse

ROOT = Path(__file__).resolve().parent
TRANSCRIPTS = sorted([*(ROOT / "corpus" / "conforming").glob("*.jsonl"), *(ROOT / "corpus" / "violating").glob("*.jsonl"),
                      *(ROOT / "vectors").glob("*.jsonl")])
RECORDS = sorted(p for p in (ROOT / "bridge" / "fixtures").glob("*.jsonl"))

pytestmark = pytest.mark.skipif(schema_compiled.jsonschema_rs is None, reason="jsonschema-rs is not installed here")


def _path(version: str) -> Path:
    """The pinned schema: the committed copy (tests/schema/), so that the comparison runs offline."""
    from conftest import committed_schema

    return committed_schema(version)


@pytest.fixture(scope="module")
def pair() -> tuple[Validator, Validator]:
    """(compiled first, Python only), no memo: every message is judged by each."""
    path = _path("v2")
    return Validator(path, cache_size=0), Validator(path, cache_size=0, compiled=False)


@pytest.fixture(scope="module")
def pair_v1() -> tuple[Validator, Validator]:
    path = _path("v1")
    return Validator(path, cache_size=0), Validator(path, cache_size=0, compiled=False)


class _Both:
    """A validator for the monitor that asks both and keeps each verdict."""

    def __init__(self, fast: Validator, slow: Validator):
        self.fast, self.slow = fast, slow
        self.calls: list[tuple] = []

    def check(self, msg, sender, request_method=None):
        a = self.fast.check(msg, sender, request_method)
        b = self.slow.check(msg, sender, request_method)
        self.calls.append((msg, sender, request_method, a, b))
        return b


def _judge(both: _Both, entries) -> None:
    m = Monitor(validator=both)
    for n, e in entries:
        m.feed(n, e)


def test_the_compiled_check_is_used_where_it_is_installed(pair):
    fast, slow = pair
    assert fast.backend == "jsonschema-rs" and slow.backend == "jsonschema"


def test_both_validators_give_the_same_verdict_on_every_corpus_and_vector_message(pair):
    both = _Both(*pair)
    for path in TRANSCRIPTS:
        _judge(both, parse(path))
    assert len(both.calls) > 2000
    differ = [(json.dumps(msg)[:200], a, b) for msg, _, _, a, b in both.calls if a != b]
    assert not differ, differ[:3]
    assert sum(1 for *_, b in both.calls if b) >= 20  # the violating corpus breaks the schema too


def test_both_validators_agree_on_both_sides_of_the_recorded_bridge_runs(pair, pair_v1):
    from acp_lifecycle.sims.bridge.serve import record_sides

    compared = 0
    for record in RECORDS:
        sides = record_sides(record)
        for side, validators in (("v2", pair), ("v1", pair_v1)):
            both = _Both(*validators)
            _judge(both, list(enumerate(sides[side], 1)))
            assert all(a == b for *_, a, b in both.calls), (record.name, side)
            compared += len(both.calls)
    assert compared > 300


def _mutants(value):
    """Copies of ``value`` with one leaf or member changed."""
    paths = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                paths.append(path + (k,))
                walk(v, path + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                paths.append(path + (i,))
                walk(v, path + (i,))

    walk(value, ())
    for path in paths:
        for replacement in ("not_a_listed_value", "_custom", "", 10**30, -1, RawFloat("1.5"), True, None, [], {}, "drop"):
            out = copy.deepcopy(value)
            node = out
            for p in path[:-1]:
                node = node[p]
            if replacement == "drop":
                if isinstance(node, dict):
                    del node[path[-1]]
                else:
                    continue
            else:
                node[path[-1]] = copy.deepcopy(replacement)
            yield out


def test_both_validators_agree_on_mutations_of_every_validated_value(pair):
    fast, slow = pair
    seen: dict = {}
    for path in TRANSCRIPTS:
        for _, e in parse(path):
            msg = e.get("msg")
            if isinstance(msg, dict) and isinstance(msg.get("params"), dict) and isinstance(msg.get("method"), str):
                kind = "request" if "id" in msg else "notification"
                name = fast._methods[(e["from"], kind)].get(msg["method"])
                if name:
                    seen.setdefault((name, json.dumps(msg["params"], sort_keys=True)), (name, msg["params"]))
    rng = random.Random(5)
    values = list(seen.values())
    rng.shuffle(values)
    compared = problems = 0
    for name, params in values[:150]:
        mutants = list(_mutants(params))
        for m in rng.sample(mutants, min(len(mutants), 30)):
            out: list[str] = []
            slow._validate(name, m, "params", out)
            assert fast._fast_path().passes(name, m) == (not out), (name, json.dumps(m, default=str)[:300], out)
            compared += 1
            problems += bool(out)
    assert compared > 1500 and problems > 300


def test_without_jsonschema_rs_trace_gives_the_same_findings(monkeypatch, pair):
    path = pair[0].path
    monkeypatch.setattr(schema_compiled, "jsonschema_rs", None)
    slow = Validator(path, cache_size=0)
    assert slow.backend == "jsonschema"
    monkeypatch.undo()
    fast = Validator(path, cache_size=0)
    for transcript in TRANSCRIPTS[::3]:
        entries = parse(transcript)
        assert check_transcript(entries, validator=fast) == check_transcript(entries, validator=slow), transcript.name


def test_a_value_jsonschema_rs_does_not_read_takes_the_python_path(pair):
    fast, slow = pair
    # 1.0 with its literal kept is a RawFloat: the compiled path hands it to jsonschema
    msg = {"jsonrpc": "2.0", "method": "session/update",
           "params": {"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": RawFloat("1.0"), "size": 5}}}
    assert fast.check(msg, "agent") == slow.check(msg, "agent")
    assert not fast._fast_path().passes("UpdateSessionNotification", msg["params"])
