"""Tests of the clause registry (``model/clauses/``).

The sources are not read here (the project never reads ``../shared``): these
tests check the registry's own consistency, and a few facts about the sources
that were true when the quotes were taken (noted where used).
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from acp_lifecycle.model.clauses import (
    CLAUSES,
    IMPLIED_LEVEL,
    LEVELS,
    CITATIONS,
    SOURCES,
    Clause,
    clause,
)

ID_PATTERN = re.compile(r"^(RFD|S240)(-[A-Z0-9]+){2,}$|^JSONRPC(-[A-Z0-9]+)+$")
PREFIX = {"RFD": "RFD-", "2.4.0": "S240-", "JSON-RPC 2.0": "JSONRPC-"}

#: A capitalised RFC 2119 keyword; "MUST" inside "MUST NOT" counts as "MUST NOT".
KEYWORD = {
    "MUST": re.compile(r"\bMUST\b(?! NOT\b)"),
    "MUST NOT": re.compile(r"\bMUST NOT\b"),
    "SHOULD": re.compile(r"\bSHOULD\b(?! NOT\b)"),
    "SHOULD NOT": re.compile(r"\bSHOULD NOT\b"),
    "NOT REQUIRED": re.compile(r"\bNOT REQUIRED\b"),
    "MAY": re.compile(r"\bMAY\b"),
}
ANY_KEYWORD = re.compile(r"\b(MUST|SHOULD|REQUIRED|MAY|SHALL|RECOMMENDED|OPTIONAL)\b")

#: Sentences of the quoted RFD revision that hold MUST, MUST NOT, SHOULD,
#: SHOULD NOT or NOT REQUIRED (counted when the quotes were taken).
RFD_KEYWORD_SENTENCES = 16

ALL = list(CLAUSES.values())


def by_id(c: Clause) -> str:
    return c.id


def test_every_clause_id_is_unique_and_well_formed():
    assert ALL, "the registry is empty"
    for key, c in CLAUSES.items():
        assert key == c.id
        assert ID_PATTERN.match(c.id), c.id
        assert c.id.startswith(PREFIX[c.source]), f"{c.id} is not named after its source {c.source}"
    assert len({c.id for c in ALL}) == len(ALL)


def test_every_clause_has_a_known_source_and_level():
    for c in ALL:
        assert c.source in SOURCES, c.id
        assert c.level in LEVELS, c.id


@pytest.mark.parametrize("c", [c for c in ALL if c.id not in IMPLIED_LEVEL], ids=by_id)
def test_the_level_keyword_appears_capitalised_in_the_clause_text(c):
    assert KEYWORD[c.level].search(c.text), f"{c.id}: {c.level!r} not in {c.text!r}"


def test_implied_levels_are_exactly_the_sentences_without_a_capitalised_keyword():
    without_keyword = {c.id for c in ALL if not ANY_KEYWORD.search(c.text)}
    assert IMPLIED_LEVEL == without_keyword


def test_every_rfd_keyword_sentence_of_the_quoted_revision_is_registered():
    texts = {c.text for c in ALL if c.source == "RFD" and ANY_KEYWORD.search(c.text)}
    assert len(texts) == RFD_KEYWORD_SENTENCES


def test_a_sentence_holding_two_rules_gives_clauses_with_different_ids_and_one_section():
    by_text: dict[str, list[Clause]] = {}
    for c in ALL:
        by_text.setdefault(c.text, []).append(c)
    shared = [cs for cs in by_text.values() if len(cs) > 1]
    assert shared, "no sentence is split into two rules"
    for cs in shared:
        assert len({c.source for c in cs}) == 1
        assert len({c.section for c in cs}) == 1
        # two rules of one sentence are registered next to each other
        positions = [ALL.index(c) for c in cs]
        assert positions == list(range(positions[0], positions[0] + len(cs)))


def test_clause_texts_are_trimmed_and_rfd_texts_are_single_lines():
    for c in ALL:
        assert c.text and c.text == c.text.strip(), c.id
        if c.source == "RFD":
            # every RFD paragraph is one line; a newline means a bad copy
            assert "\n" not in c.text, c.id


def test_quotes_keep_the_apostrophes_of_their_source():
    # When the quotes were taken, RFD prose used only typographic apostrophes
    # (’) and the 2.4.0 schema was pure ASCII: a straight apostrophe in an RFD
    # quote, or any non-ASCII character in a 2.4.0 quote, was retyped.
    for c in ALL:
        if c.source == "RFD":
            assert "'" not in c.text, c.id
        else:
            assert c.text.isascii(), c.id
    assert any("’" in c.text for c in ALL if c.source == "RFD")


def test_clauses_are_in_source_order_rfd_first():
    sources = [c.source for c in ALL]
    assert sources == sorted(sources, key=SOURCES.index)


def test_sections_name_an_rfd_heading_or_a_schema_definition():
    for c in ALL:
        assert c.section and c.section == c.section.strip(), c.id
        if c.source == "2.4.0":
            assert re.fullmatch(r"[A-Z][A-Za-z]+( / [A-Za-z_]+)?", c.section), c.id
        else:
            assert not c.section.endswith((".", ":")), c.id


def test_out_of_scope_is_empty_or_one_sentence():
    for c in ALL:
        reason = c.out_of_scope
        assert c.in_scope == (reason == "")
        if reason:
            assert reason == reason.strip() and "\n" not in reason, c.id
            assert reason[0].isupper() and reason.endswith("."), c.id
            assert ". " not in reason, f"{c.id}: more than one sentence"


def test_every_citation_names_a_registered_clause():
    for prop, ids in CITATIONS.items():
        assert re.fullmatch(r"[a-z]+(_[a-z]+)+", prop), prop
        assert ids, f"{prop} cites nothing"
        for cid in ids:
            assert cid in CLAUSES, f"{prop} cites unknown {cid}"
        assert len(set(ids)) == len(ids), f"{prop} cites a clause twice"


def test_a_clause_is_in_scope_exactly_when_a_property_cites_it():
    cited = {cid for ids in CITATIONS.values() for cid in ids}
    assert {c.id for c in ALL if c.in_scope} == cited


def test_clause_returns_the_registered_clause():
    for c in ALL:
        assert clause(c.id) is c


@pytest.mark.parametrize("bad", ["RFD-NO-SUCH-RULE", "", "rfd-insert-respond", "S240-CANCEL-SCOP"])
def test_clause_raises_key_error_naming_the_id(bad):
    with pytest.raises(KeyError) as info:
        clause(bad)
    assert repr(bad) in str(info.value)


def test_clause_suggests_near_ids_for_a_misspelt_id():
    with pytest.raises(KeyError) as info:
        clause("rfd_insert_respond")
    message = str(info.value)
    assert "did you mean: RFD-INSERT-RESPOND" in message
    with pytest.raises(KeyError) as info:
        clause("S240-CANCEL-SCOP")
    assert "S240-CANCEL-SCOPE" in str(info.value)


def test_clause_says_when_no_id_is_near():
    with pytest.raises(KeyError, match="no similar id"):
        clause("ZZZ")


def test_clauses_are_frozen_values():
    c = clause("RFD-INSERT-RESPOND")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.text = "changed"  # type: ignore[misc]
    assert hash(c) == hash(dataclasses.replace(c))
