"""The conformance corpus (tests/corpus): traffic of the official TypeScript SDK, judged offline.

Conforming transcripts come from an agent and clients written on
`@agentclientprotocol/sdk@2.4.0` (tests/corpus/gen); violating ones are one deliberate
mutation each (tests/corpus/mutations.py), with the line of the first violation worked out
from the edit. `python tests/corpus/regenerate.py` rebuilds all of it (node needed then only).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acp_lifecycle.model.monitor import RULES
from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.wire.schema import SchemaError, Validator, locate
from acp_lifecycle.sims.wire.transcript import check_transcript, parse

CORPUS = Path(__file__).resolve().parent / "corpus"
CONFORMING = sorted((CORPUS / "conforming").glob("*.jsonl"))
MANIFEST = json.loads((CORPUS / "violating" / "manifest.json").read_text())
GEN = CORPUS / "gen"


def _schema() -> Validator | None:
    try:
        return Validator(locate(os.environ.get("ACP_LIFECYCLE_SCHEMA") or None))
    except SchemaError:
        return None


SCHEMA = _schema()
needs_schema = pytest.mark.skipif(SCHEMA is None, reason="no v2 schema: run `acp-lifecycle schema pull` (or set $ACP_LIFECYCLE_SCHEMA)")


def test_the_corpus_is_big_and_varied_enough():
    assert len(CONFORMING) >= 30 and len(MANIFEST) >= 30
    texts = {p.stem: p.read_text() for p in CONFORMING}
    lengths = sorted(len(t.splitlines()) for t in texts.values())
    assert lengths[-1] >= 300 and lengths[-2] >= 200  # long transcripts
    entries = [json.loads(line) for t in texts.values() for line in t.splitlines()]
    msgs = [e["msg"] for e in entries if "msg" in e]
    ids = [m["id"] for m in msgs if "id" in m]
    assert any(isinstance(i, str) for i in ids)  # string ids
    assert any(isinstance(i, int) and i > 2**53 for i in ids)  # ids beyond 2^53
    assert any(isinstance(i, int) and i < 0 for i in ids)
    assert {"1", 1} <= {i for i in ids if i in ("1", 1)}  # "1" and 1 both used
    methods = {m.get("method") for m in msgs}
    for method in ("initialize", "session/new", "session/prompt", "session/cancel", "session/resume", "session/close",
                   "session/request_permission", "elicitation/create", "$/cancel_request"):
        assert method in methods, method
    multi = [name for name, t in texts.items() if len({json.loads(line)["conn"] for line in t.splitlines()}) >= 3]
    assert multi  # three connections in one transcript
    kinds = {m["params"]["update"]["sessionUpdate"] for m in msgs if m.get("method") == "session/update"}
    assert {"user_message", "user_message_chunk", "agent_message", "agent_message_chunk", "state_update",
            "tool_call_update", "notice", "available_commands_update"} <= kinds
    assert any('"background":[{' in t for t in texts.values())
    assert any('"stopReason":"error"' in t for t in texts.values())


@pytest.mark.parametrize("path", CONFORMING, ids=lambda p: p.stem)
@pytest.mark.parametrize("rules", ["rfd+2.4.0", "rfd"])
def test_every_conforming_transcript_has_no_finding(path, rules):
    findings = check_transcript(parse(path), rules=rules)
    assert [(f.line, f.severity, f.property, f.message) for f in findings] == []


def test_the_trace_command_passes_the_whole_conforming_corpus(capsys):
    assert main(["trace", "--no-schema", *map(str, CONFORMING)]) == 0
    assert f"{len(CONFORMING)} file(s), 0 violation(s), 0 warning(s)" in capsys.readouterr().out


@needs_schema
@pytest.mark.parametrize("path", CONFORMING, ids=lambda p: p.stem)
def test_every_conforming_message_is_valid_against_the_pinned_schema_for_its_method(path):
    pending: dict = {}
    problems = []
    for n, entry in parse(path):
        if "msg" not in entry:
            continue
        msg, sender = entry["msg"], entry["from"]
        other = "agent" if sender == "client" else "client"
        method = None
        if "method" in msg and "id" in msg:
            pending[(entry["conn"], sender, json.dumps(msg["id"]))] = msg["method"]
        elif "method" not in msg:
            method = pending.pop((entry["conn"], other, json.dumps(msg.get("id"))))
        problems += [f"{n}: {p}" for p in SCHEMA.check(msg, sender, method)]
    assert problems == []
    assert check_transcript(parse(path), validator=SCHEMA) == []


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_violating_transcript_fails_first_on_its_expected_line(name):
    m = MANIFEST[name]
    if m["needs_schema"] and SCHEMA is None:
        pytest.skip("this mutation breaks the schema only: run `acp-lifecycle schema pull`")
    path = CORPUS / "violating" / f"{name}.jsonl"
    findings = check_transcript(parse(path), rules=m["rules"], validator=SCHEMA if m["needs_schema"] else None)
    violations = [f for f in findings if f.severity == "violation"]
    assert violations, f"{name}: no violation"
    first = min(f.line for f in violations)
    at_first = {f.property for f in violations if f.line == first}
    assert (first, m["rule"] in at_first) == (m["line"], True), [(f.line, f.property, f.message) for f in violations[:3]]
    # the source transcript it mutates is clean
    assert check_transcript(parse(CORPUS / "conforming" / f"{m['source']}.jsonl"), rules=m["rules"]) == []


def test_the_trace_command_fails_every_violating_transcript():
    for name, m in MANIFEST.items():
        if m["needs_schema"]:
            continue
        assert main(["trace", "--no-schema", "--rules", m["rules"], str(CORPUS / "violating" / f"{name}.jsonl")]) == 1, name


def test_the_violating_corpus_covers_the_rules():
    covered = {m["rule"] for m in MANIFEST.values()}
    assert set(RULES) >= covered
    # Rules no mutation of an SDK transcript can isolate are unit-tested in test_transcript.py
    # (UNIT_ONLY there): together they cover every rule that can be a violation.
    from test_transcript import UNIT_ONLY

    # the core's rules (a proposal's faults and transcripts are its own: tests/test_proposals.py)
    must = {r.id for r in RULES.values() if not r.level.startswith("SHOULD") and not r.proposal}
    assert must - covered == set(UNIT_ONLY), must - covered
    assert len(MANIFEST) == len({(CORPUS / "violating" / f"{n}.jsonl").read_bytes() for n in MANIFEST})


def test_the_readme_lists_every_transcript():
    readme = (CORPUS / "README.md").read_text()
    for p in CONFORMING:
        assert f"| `{p.stem}` |" in readme
    for name in MANIFEST:
        assert f"| `{name}` |" in readme


def test_the_generator_pins_the_sdk_whose_schema_the_project_pins():
    from acp_lifecycle.sims.wire.schema import PACKAGE_INTEGRITY, VERSION

    lock = json.loads((GEN / "package-lock.json").read_text())
    sdk = lock["packages"]["node_modules/@agentclientprotocol/sdk"]
    assert sdk["version"] == VERSION and sdk["integrity"] == PACKAGE_INTEGRITY
    assert json.loads((GEN / "package.json").read_text())["dependencies"]["@agentclientprotocol/sdk"] == VERSION


def _node_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (GEN / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        return "the SDK is not installed: .ci/setup (or cd tests/corpus/gen && npm ci)"
    return None


@pytest.mark.skipif(_node_missing() is not None, reason=_node_missing() or "")
def test_the_generator_reproduces_the_committed_corpus_byte_for_byte(tmp_path):
    proc = subprocess.run(["node", "generate.mjs", "--out", str(tmp_path)], cwd=GEN, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    fresh = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.glob("*.jsonl")}
    committed = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in CONFORMING}
    assert fresh == committed


def test_the_mutations_reproduce_the_violating_corpus():
    sys.path.insert(0, str(CORPUS))
    try:
        import mutations
    finally:
        sys.path.remove(str(CORPUS))
    for m in mutations.MUTATIONS:
        t = mutations.Transcript((CORPUS / "conforming" / f"{m.source}.jsonl").read_text())
        line = m.apply(t)
        assert (line, t.text()) == (MANIFEST[m.name]["line"], (CORPUS / "violating" / f"{m.name}.jsonl").read_text())
