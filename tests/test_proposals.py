"""Proposals (model/proposals): a protocol change is one file, which the core composes and never names.

Every test here runs over the registry, so a proposal added or removed is tested or not, and no
test names one: each proposal's witnesses happen on the members it brings, each of its rules holds
under each reading of its flags and has a fault that breaks it with a short counterexample, its
clauses are cited where they are in scope, no file of the core names it, removing it (with the
variants that compose it) leaves the core as it was, and the review of its variant shows what it
brings and says whether it is a conservative extension. (The same rules judge check and trace
alike: tests/test_judges.py runs their runs through both.)
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from acp_lifecycle.model import Lifecycle
from acp_lifecycle.model.proposals import get_proposal, registry
from acp_lifecycle.model.variants import VARIANTS
from acp_lifecycle.sims.search.explore import explore

ROOT = Path(__file__).resolve().parents[1]
PROPOSALS = sorted(registry())
FAULTS = [(p, f.name) for p in PROPOSALS for f in registry()[p].faults]
#: the proposals that change a spec (a feature of the spec's own text, ``Proposal.spec``, is no addition to it)
ADDITIONS = [p for p in PROPOSALS if not registry()[p].spec]
#: the longest counterexample a fault may have (they are written to be caught at once)
SHORT = 10


class _Text(NamedTuple):
    """A rule set, in the place of a variant: a proposal of the spec's own text (``Proposal.spec``) comes with
    the rule set that follows that text."""

    name: str
    base: str
    rules: object


def _variant(name: str):
    """The first variant that composes proposal ``name`` (each proposal comes with one), or for a feature of a
    spec's text (``Proposal.spec``) the rule set following that text."""
    from acp_lifecycle.model import RULE_SETS

    if get_proposal(name).spec:
        return _Text(get_proposal(name).spec, "", RULE_SETS[get_proposal(name).spec])
    found = [v for v in VARIANTS.values() if name in v.rules.proposals]
    assert found, f"no variant composes the proposal {name!r}: add one to model/variants/"
    return found[0]


def _members(name: str) -> list:
    members = [cfg.validate() for _, cfg in get_proposal(name).members]
    assert members, f"proposal {name!r} brings no member to a named configuration"
    return members


def _readings(name: str):
    """The variant's rules under each value of each flag of the proposal."""
    rules = _variant(name).rules
    yield rules
    for f in get_proposal(name).flags:
        for value in f.values:
            if value != rules.flag(f.name, f.default):
                flags = {**dict(rules.flags), f.name: value}
                yield rules.with_(flags=tuple(sorted((k, v) for k, v in flags.items()
                                                     if not (k == f.name and v == f.default))))


@pytest.fixture(scope="module")
def checked() -> dict:
    """Per proposal: per reading of its flags, the results on each member it brings."""
    return {name: [(rules, [explore(cfg, rules) for cfg in _members(name)]) for rules in _readings(name)]
            for name in PROPOSALS}


@pytest.mark.parametrize("name", PROPOSALS)
def test_every_witness_of_a_proposal_is_reached_on_the_members_it_brings(name, checked):
    rules, results = checked[name][0]
    for prop in get_proposal(name).properties:
        if prop.kind == "sometimes":
            assert any(r.verdicts[prop.id].status == "reached" for r in results), prop.id


@pytest.mark.parametrize("name", PROPOSALS)
def test_every_rule_of_a_proposal_holds_under_each_reading_of_its_flags(name, checked):
    seen = set()
    for rules, results in checked[name]:
        for r in results:
            for pid, v in r.verdicts.items():
                if v.prop.proposal == name and v.expect == "must_hold":
                    seen.add(pid)
                    assert v.status == "holds", (rules.flags, r.config.name, pid, v.message)
    rules_of = {p.id for p in get_proposal(name).properties if p.kind != "sometimes"}
    assert seen == rules_of  # each rule is a rule under some reading of the flags


@pytest.mark.parametrize("name", PROPOSALS)
def test_every_rule_of_a_proposal_has_a_fault_that_breaks_it(name):
    p = get_proposal(name)
    rules = {prop.id for prop in p.properties if prop.kind != "sometimes"}
    assert rules <= {f.breaks for f in p.faults}, rules - {f.breaks for f in p.faults}
    witnesses = {prop.id for prop in p.properties if prop.kind == "sometimes"}
    for prop in p.properties:
        assert set(prop.witnesses) <= witnesses, (prop.id, set(prop.witnesses) - witnesses)


@pytest.mark.parametrize("name, fault", FAULTS)
def test_each_fault_of_a_proposal_is_caught_with_a_short_counterexample(name, fault):
    f = next(x for x in get_proposal(name).faults if x.name == fault)
    rules = _variant(name).rules
    rules = rules.with_(proposals=tuple(sorted(set(rules.proposals) - {name} | {f"{name}!{fault}"})),
                        flags=tuple(sorted({**dict(rules.flags), **dict(f.flags)}.items())))
    cfg = _members(name)[0].with_(**dict(f.bounds))
    v = explore(cfg, rules).verdicts[f.breaks]
    assert v.status == "violated" and 0 < len(v.trace) <= SHORT, (fault, v.status, len(v.trace or ()))
    # the counterexample is a real run of the faulty model
    model = Lifecycle(cfg, rules)
    state = model.init_states()[0]
    for pre, step in v.trace:
        assert pre == state and step in model.next_steps(pre)
        state = step.state


@pytest.mark.parametrize("name", PROPOSALS)
def test_a_clause_of_a_proposal_is_in_scope_exactly_when_a_rule_or_witness_cites_it(name):
    p = get_proposal(name)
    cited = {c for prop in p.properties for c in prop.clauses}
    for c in p.clauses:
        assert c.source == name and c.text == c.text.strip(), c.id
        assert (c.id in cited) == c.in_scope, (c.id, c.out_of_scope)
    for f in p.flags:
        assert f.default in f.values and f.clauses, f.name


# --- the core never names a proposal --------------------------------------------------------------


def _names_of(name: str) -> set[str]:
    """What would name the proposal in code: its name and module, its methods, message kinds, flags, rules,
    witnesses and action names (its bounds: ``_bounds_of``)."""
    p = get_proposal(name)
    out = {p.name, *(m.method for m in p.messages if m.method), *(m.kind for m in p.messages),
           *(f.name for f in p.flags), *(prop.id for prop in p.properties), *p.action_kinds}
    return {n for n in out if n}


def _bounds_of(name: str) -> set[str]:
    """Its bounds, as code names them: a string or a keyword (``"closes"``, ``closes=``; a bound's name may be a
    word of prose, "the recorder closes stdin")."""
    return {b.name for b in get_proposal(name).bounds}


#: the parts that speak the wire: a feature of a spec's own text (``Proposal.spec``) is a method of the schema they
#: read and write, which they may name (a bridge translates it, the agent answers it); the model never does
WIRE = ("sims/wire", "sims/bridge", "sims/agent", "sims/probe", "sims/provider")


def _own_files(name: str) -> set[Path]:
    """The module that defines the proposal ``name`` (``PROPOSAL = Proposal(...)``)."""
    return {Path(m.__file__).resolve() for key, m in list(sys.modules.items())
            if key.startswith("acp_lifecycle.model.proposals.") and getattr(m, "PROPOSAL", None) is registry()[name]}


@pytest.mark.parametrize("name", PROPOSALS)
def test_no_file_of_the_core_names_a_proposal(name):
    own = _own_files(name)
    assert own, name
    names = _names_of(name)
    # a name is found as a whole word (a message kind such as "inject" inside "inject-survives-cancel" is no mention)
    words = [rf"(?<![\w/-]){re.escape(n)}(?![\w/-])" for n in sorted(names, key=len, reverse=True)]
    words += [rf"[\"']{re.escape(n)}[\"']|(?<![\w/-]){re.escape(n)}=" for n in _bounds_of(name)]
    pattern = re.compile("|".join(words))
    wire = get_proposal(name).spec
    found = []
    for folder in ("model", "sims"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.resolve() in own or wire and str(path.relative_to(ROOT)).startswith(WIRE):
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


# --- removing a proposal leaves the core as it was ----------------------------------------------------


_CORE_RESULTS = """
import json, sys
from acp_lifecycle.model import RULE_SETS
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.search.check import check_suite
out = {}
for name, rules in sorted(RULE_SETS.items()):
    r = check_suite(get_suite("default"), rules)
    out[name] = {"states": {m.config.name: m.states for m in r.members},
                 "verdicts": {pid: v.status for pid, v in sorted(r.verdicts.items())}}
json.dump(out, sys.stdout)
"""

#: the core's tests run in the copy: its structure, its clauses, the wire rules' tables, the matrix of variants
CORE_TESTS = ["tests/test_structure.py", "tests/test_clauses.py", "tests/test_transcript.py",
              "tests/test_variants.py::test_the_matrix_covers_every_variant_and_property"]


def _copy_without(tmp: Path, name: str) -> Path:
    """The checkout in ``tmp`` (the import package as ``acp_lifecycle`` finds it through two links, its tests
    and the docs they read) without the proposal's file, the variants that compose it and its pinned verdicts."""
    skip = shutil.ignore_patterns("__pycache__", "node_modules", ".pytest_cache")
    for folder in ("acp_lifecycle", "model", "sims", "tests", "docs"):
        shutil.copytree(ROOT / folder, tmp / folder, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    for folder in ("model", "sims"):
        (tmp / "acp_lifecycle" / folder).symlink_to(tmp / folder, target_is_directory=True)
    for path in _own_files(name):
        (tmp / "model" / "proposals" / path.name).unlink()
    for v in VARIANTS.values():
        if name in {p.split("!")[0] for p in v.rules.proposals}:
            (tmp / "model" / "variants" / f"{v.name}.toml").unlink()
    # and its rows of the agreed matrix (a feature of the 2.4.0 text has them in every column on rfd+2.4.0)
    mine = {prop.id for prop in get_proposal(name).properties}
    agreed = json.loads((tmp / "docs" / "verdicts.json").read_text())
    for cells in agreed["variants"].values():
        for pid in mine & set(cells):
            del cells[pid]
    (tmp / "docs" / "verdicts.json").write_text(json.dumps(agreed, indent=2) + "\n")
    return tmp


def _run(copy: Path, *argv: str, timeout: int = 600) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "PYTHONPATH": str(copy)}
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=timeout, env=env, cwd=copy)


@pytest.mark.parametrize("name", PROPOSALS)
def test_removing_a_proposal_leaves_the_core_s_verdicts_state_counts_and_tests_as_they_were(name, tmp_path):
    from acp_lifecycle.model import RULE_SETS
    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.search.check import check_suite

    copy = _copy_without(tmp_path, name)
    got = _run(copy, "-c", "from acp_lifecycle.model.proposals import registry; print(sorted(registry()))")
    assert got.returncode == 0 and name not in got.stdout, got.stderr[-2000:]
    got = _run(copy, "-c", _CORE_RESULTS)
    assert got.returncode == 0, got.stderr[-2000:]
    # here, what the proposal brings aside (a feature of a spec's text is composed by its rule set)
    mine = {prop.id for prop in get_proposal(name).properties}
    members = {cfg.name for _, cfg in get_proposal(name).members}
    here = {}
    for rs, rules in sorted(RULE_SETS.items()):
        r = check_suite(get_suite("default"), rules)
        here[rs] = {"states": {m.config.name: m.states for m in r.members if m.config.name not in members},
                    "verdicts": {pid: v.status for pid, v in sorted(r.verdicts.items()) if pid not in mine}}
    assert json.loads(got.stdout) == here
    got = _run(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CORE_TESTS)
    assert got.returncode == 0, got.stdout[-3000:]


# --- the review of an addition --------------------------------------------------------------------


@pytest.mark.parametrize("name", ADDITIONS)
def test_the_review_of_a_proposal_s_variant_shows_what_it_brings_and_its_conservativity(name):
    from acp_lifecycle.sims.review import build
    from acp_lifecycle.sims.review.markdown import markdown

    v = _variant(name)
    base = VARIANTS[v.base].rules
    member = _members(name)[0].name
    r = build(member, base, v.rules, robust=False, names=(v.base, v.name))
    a = r.addition
    assert a is not None and a.proposals == (name,)
    assert a.conservative, [w.kind for w in r.runs()]  # its messages aside, the variant is its base
    witnesses = [p for p in get_proposal(name).properties if p.kind == "sometimes"]
    assert {b.prop.id for b in a.behaviours} == {p.id for p in witnesses}
    assert all(b.run for b in a.behaviours)  # each outcome of its races, by a run
    text = markdown(r)
    assert "conservative extension" in text
    for b in a.behaviours:
        assert b.prop.summary.rstrip(".") in text and "```mermaid" in text


# --- trace judges a proposal's messages: its rules under its variant, a warning elsewhere ------------------


def _fault_transcript(name: str, fault: str, tmp_path: Path):
    """(the rule, the transcript file of the fault's counterexample, the variant composing the proposal)."""
    from acp_lifecycle.sims.wire.transcript import dumps, export

    f = next(x for x in get_proposal(name).faults if x.name == fault)
    v = _variant(name)
    rules = v.rules.with_(proposals=tuple(sorted(set(v.rules.proposals) - {name} | {f"{name}!{fault}"})),
                          flags=tuple(sorted({**dict(v.rules.flags), **dict(f.flags)}.items())))
    trace = explore(_members(name)[0].with_(**dict(f.bounds)), rules).verdicts[f.breaks].trace
    path = tmp_path / f"{fault}.jsonl"
    path.write_text(dumps(export(trace)))
    return f.breaks, path, v


#: the faults whose rule is a judge (a rule about messages), which trace can report on a transcript
JUDGED_FAULTS = [(p, f) for p, f in FAULTS
                 if next(x for x in get_proposal(p).faults if x.name == f).breaks in {j.id for j in get_proposal(p).judges}
                 and not next(x for x in get_proposal(p).faults if x.name == f).flags]


@pytest.mark.parametrize("name, fault", JUDGED_FAULTS)
def test_trace_reports_a_fault_under_the_proposal_s_variant_and_warns_under_a_rule_set(name, fault, tmp_path, capsys):
    from acp_lifecycle.sims.cli import main
    from conftest import committed_schema

    rule, path, v = _fault_transcript(name, fault, tmp_path)
    schema = ["--schema", str(committed_schema())]
    text = bool(get_proposal(name).spec)  # a feature of the 2.4.0 text: its rule set judges by it, rfd does not
    assert main(["trace", "--json", "--rules" if text else "--variant", v.name, *schema, str(path)]) == 1
    found = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(f["property"], f["severity"]) for f in found if f.get("property") == rule] == [(rule, "violation")]
    # its methods are methods here, each validated with its own schema
    assert not [f for f in found if f.get("property") == "schema_valid" and "not a method" in f["message"]]
    # a rule set that does not compose the proposal: its rule is a warning (and a proposal's methods are no
    # method of the schema; a feature of the 2.4.0 text is one of it)
    other = "rfd" if text else v.base if v.base in ("rfd", "rfd+2.4.0") else "rfd+2.4.0"
    main(["trace", "--json", "--rules", other, *schema, str(path)])
    found = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [f["severity"] for f in found if f.get("property") == rule] == ["warning"]
    assert bool([f for f in found if f.get("property") == "schema_valid" and "not a method" in f["message"]]) != text
