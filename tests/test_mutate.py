"""The mutation harness: every mutant is well formed, every credited clause is earned.

The full run (every mutant against every member of ``default``) takes about a
minute: it is in bench/mutate.py and in the slow test below. The suite runs each
mutant on its own member only, once, for the per-clause test.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.clauses import CITATIONS, CLAUSES
from acp_lifecycle.model.config import RULE_SETS
from acp_lifecycle.model.properties import BY_ID
from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.configs import SUITES, get_suite
from acp_lifecycle.sims.mutate import KINDS, all_mutants, get_mutant, run_mutant

MUTANTS = all_mutants()
CITED_BY: dict[str, set[str]] = {}
for _pid, _ids in CITATIONS.items():
    for _cid in _ids:
        CITED_BY.setdefault(_cid, set()).add(_pid)


@lru_cache(maxsize=None)
def on_own_member(name: str):
    m = MUTANTS[name]
    return run_mutant(m, get_suite(m.member))


def test_there_are_at_least_40_fault_mutants_and_the_seeded_bugs_are_among_them():
    faults = [m for m in MUTANTS.values() if m.kind == "fault" and not m.equivalent]
    assert len(faults) >= 40
    assert set(BUGS) <= {m.name for m in faults if m.seeded}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_is_well_formed(name):
    m = MUTANTS[name]
    assert m.kind in KINDS and m.summary and m.clauses, name
    assert all(c in CLAUSES for c in m.clauses), name
    assert m.kills in BY_ID and m.rules in RULE_SETS, name
    get_suite(m.member)
    assert not (m.equivalent and m.kind != "fault"), name
    if m.kind == "choice":
        assert BY_ID[m.kills].kind == "sometimes", name


def test_every_clause_checked_by_a_property_has_a_mutant():
    covered = {c for m in MUTANTS.values() for c in m.clauses}
    assert [c.id for c in CLAUSES.values() if c.in_scope and c.id not in covered] == []


@pytest.mark.parametrize("cid", [c.id for c in CLAUSES.values() if c.in_scope])
def test_each_credited_clause_is_earned(cid):
    # Removing the behaviour the clause guards (a mutant that names it) changes a
    # verdict of `check`, and a property that cites the clause is among the changed.
    names = [m.name for m in MUTANTS.values() if cid in m.clauses and not m.equivalent]
    assert names, f"no mutant for {cid}"
    r = on_own_member(names[0])
    assert r.killed, f"{names[0]} survives on {MUTANTS[names[0]].member}"
    assert set(r.changed) & CITED_BY[cid], (cid, names[0], sorted(r.changed))


@pytest.mark.parametrize("name", sorted(n for n, m in MUTANTS.items() if not m.equivalent))
def test_each_mutant_is_caught_by_its_expected_property_on_its_member(name):
    r = on_own_member(name)
    assert r.killed and MUTANTS[name].kills in r.changed, (name, r.status, sorted(r.changed))


def test_a_mutant_is_undone_after_its_run():
    from acp_lifecycle.model import agent, system

    before = (agent.echo, system.successors)
    run_mutant(get_mutant("echo-only-to-submitter"), get_suite("tiny"))
    run_mutant(get_mutant("never-queues"), get_suite("tiny"))
    assert (agent.echo, system.successors) == before


def test_mutate_lists_and_runs_one_mutant_as_json(capsys):
    assert main(["mutate", "--list", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]  # one record per line
    assert {m["name"] for m in listed} == set(MUTANTS)
    assert main(["mutate", "--mutant", "never-echo", "--config", "tiny", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["mutants"]
    assert row["status"] == "killed" and row["caught_by"] == "every_inserted_message_echoed" and row["steps"] == 9
    assert data["score"] == 1.0


def test_mutate_refuses_unknown_mutants_in_one_line(capsys):
    assert main(["mutate", "--mutant", "nope"]) == 2
    assert "unknown mutant 'nope'" in capsys.readouterr().err


@pytest.mark.slow
def test_the_full_run_on_default_kills_every_fault_that_is_not_equivalent_each_in_under_5_s():
    from acp_lifecycle.sims.mutate.core import run_all

    report = run_all(config="default", jobs=2)
    assert report.problems == []
    assert report.score >= 0.95
    assert all(r.seconds < 5 for r in report.runs if r.killed)
    assert SUITES["default"]
