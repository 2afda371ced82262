"""Where a clause names a value, the rule checks that value (issue 34).

``sims/mutate/mutants/value_family.py`` lists, from the clause texts, each value a participant sends that a clause
names; its family sends every other value of the field in its place. Every in-scope clause whose text
names a value of one of those fields is listed there (or says why no participant sends it), and a
rule citing the clause catches each mutant of its family on the member where the value is sent.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pytest

from acp_lifecycle.model.clauses import CITATIONS, CLAUSES
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.mutate import all_mutants, run_mutant
from acp_lifecycle.sims.mutate.mutants.value_family import FIELDS, NAMED, NOT_SENT, value_mutants

MUTANTS = value_mutants()
#: the values of the fields, as a clause may name them: `cancelled`, "cancelled"
VALUES = {v for f in FIELDS.values() for v in f.values if v}
NAMES = re.compile(r'`([a-z_]+)`|"([a-z_]+)"|\b(failed)\b(?= for calls)')


def _named_in(text: str) -> set[str]:
    return {next(g for g in m.groups() if g) for m in NAMES.finditer(text)} & VALUES


def test_every_clause_naming_a_value_of_a_field_has_its_family_or_says_why_not():
    listed = {c for n in NAMED for c in n.clauses}
    missing = [c.id for c in CLAUSES.values() if c.in_scope and _named_in(c.text) and c.id not in listed | set(NOT_SENT)]
    assert missing == []
    assert set(NOT_SENT) <= set(CLAUSES) and not set(NOT_SENT) & listed


def test_each_named_value_is_in_its_clause_s_text():
    for n in NAMED:
        assert any(str(n.value) in CLAUSES[c].text for c in n.clauses), (n.field, n.value)


def test_the_families_are_mutants_of_the_harness():
    assert set(MUTANTS) <= set(all_mutants())
    assert len(MUTANTS) == sum(len(n.others()) for n in NAMED)


@lru_cache(maxsize=None)
def _run(name: str):
    m = MUTANTS[name]
    return run_mutant(m, get_suite(m.member))


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_rule_citing_the_clause_catches_every_other_value(name):
    m = MUTANTS[name]
    citing = {p for p, cs in CITATIONS.items() if set(cs) & set(m.clauses)}
    r = _run(name)
    assert r.killed and m.kills in r.changed and m.kills in citing, (name, r.status, sorted(r.changed))
