"""The clause registry: every rule of the v2 prompt lifecycle the model cites, quoted.

A *clause* is one normative rule, its source's sentence quoted, under a stable id
(``RFD-INSERT-NO-EARLY-SUCCESS``): properties, counterexamples and the docs name rules by id,
so that a reader sees the exact words a verdict rests on. Three sources: ``"RFD"``, the v2 Prompt Lifecycle RFD (revision
"2026-10-01: Report failures after insertion ..."), ``"2.4.0"``, the descriptions in
``schema/v2/schema.json`` of ``@agentclientprotocol/sdk@2.4.0``, which agree with the RFD and
add rules it leaves open, and ``"JSON-RPC 2.0"`` for a rule of calls and replies in general
(``jsonrpc.py``). ``docs/clauses.md`` lists every clause and what checks it.

``_clause.py`` holds the record and the rules every clause follows (verbatim text, sources
never read at run time, stable ids); ``rfd.py`` and ``s240.py`` the sentences of each source;
``citations.py`` which clauses each property cites; ``wire_reasons.py`` why no wire rule
judges a clause. This module assembles ``CLAUSES``::

    >>> clause("RFD-INSERT-NO-EARLY-SUCCESS").level
    'MUST NOT'
"""

from __future__ import annotations

import difflib
from dataclasses import replace

from ..proposals import PROPOSALS
from ._clause import LEVELS, SOURCES, Clause
from .citations import CITATIONS
from .jsonrpc import JSONRPC
from .rfd import RFD
from .s240 import S240, WIRE_ONLY, WIRE_ONLY_IMPLIED
from .wire_reasons import WIRE_REASONS

__all__ = [
    "Clause",
    "CLAUSES",
    "IMPLIED_LEVEL",
    "LEVELS",
    "CITATIONS",
    "SOURCES",
    "WIRE_REASONS",
    "clause",
    "lookup",
]

_ALL: tuple[Clause, ...] = RFD + S240

#: All clauses by id, in source order: the RFD first, then the 2.4.0 clauses in
#: the order their text occurs in ``schema.json``.
CLAUSES: dict[str, Clause] = {c.id: c for c in _ALL}
assert len(CLAUSES) == len(_ALL), "duplicate clause id"

#: Clauses whose sentence has no capitalised keyword: their level is the force
#: the model gives the sentence (a definition, a table row, a lower-case
#: "must not"/"should not", or an open question read as NOT REQUIRED).
IMPLIED_LEVEL: frozenset[str] = frozenset({
    "RFD-INSERT-NOT-ACCEPTANCE",
    "RFD-INSERT-REJECT-ERROR",
    "RFD-INSERT-LOCAL-COMMAND",
    "RFD-CLIENT-RECONCILE",
    "RFD-CLIENT-NO-INFER-SENDER",
    "RFD-INSERT-ADVANCE-ID",
    "RFD-QUEUE-UNSPECIFIED",
    "RFD-REPLAY-ONLY-WITH-REPLAY-FROM",
    "RFD-LOST-RESPONSE-AMBIGUOUS",
    "RFD-LOST-NO-GUESS",
    "RFD-RETRY-NOT-ASSUMED-SAFE",
    "RFD-ID-IMPORTED",
    "RFD-METADATA-NO-CLEAR",
    "RFD-METADATA-NOT-RESET",
    "RFD-CLIENT-NO-APPEND-OPTIMISTIC",
    "RFD-FAIL-ERROR-IDLE",
    "RFD-ERROR-MEANING",
    "RFD-FAIL-ANY-WORK",
    "RFD-ERROR-OPTIONAL",
    "RFD-ERROR-FIELD-ONLY",
    "RFD-FAIL-STILL-SUCCEEDS",
    "RFD-ERROR-MEANS-NOT-INSERTED",
    "RFD-CANCELREQ-ONLY-BEFORE-INSERTION",
    "RFD-CANCELREQ-AFTER-INSERTION-SUCCEEDS",
    "RFD-IDLE-AFTER-ALL-UPDATES",
    "RFD-FAIL-NO-UNDO",
    "RFD-RETRY-NEW-MESSAGE",
    "RFD-ERROR-ONLY-ENDING-FAILURES",
    "RFD-FAIL-CONTINUES-NO-STATE",
    "RFD-CANCEL-EVEN-IF-ABORT-FAILS",
    "RFD-BACKGROUND-FAILURE-NO-STOP",
    "RFD-PROCESS-EXIT-UNREPORTED",
    "RFD-CLIENT-UNKNOWN-STOP-ENDS",
    "RFD-OPEN-CANCEL-RACES",
    "RFD-OPEN-RESUME-STATE",
    "RFD-OPEN-RETRIES-OUTSIDE",
    "RFD-STATE-SESSION-SCOPED",
    "RFD-RETRY-DISTINCT",
    "RFD-COMMAND-REPLAY-SAME-ID",
    "RFD-COMMAND-REPLAY-NO-EXEC",
    "RFD-NOTICE-NOT-FATAL",
    "RFD-NOTICE-NO-STATE",
    "S240-CANCELREQ-RESULT",
    "S240-PERM-CLIENT-ANSWERS-CANCELLED",
    "S240-RESUME-RESPONSE-NOT-IDLE",
    "S240-RESPONSE-ECHO-LIVE",
    "S240-RESPONSE-REPLAY-KEEPS-ID",
    "S240-MESSAGEID-PER-TYPE",
    "S240-UPSERT-OMITTED-UNCHANGED",
    "S240-UPSERT-CONTENT-REPLACES",
    "S240-STOP-OMITTED-NOT-REPORTED",
    "S240-STOP-CANCELLED-ONLY-WHEN-CANCELLED",
    "S240-STOP-ERROR-PRE-INSERTION",
    "S240-STOP-CUSTOM-UNDERSCORE",
    "S240-STOP-UNKNOWN-RESERVED",
    "S240-STATE-RUNNING-BEFORE-INSERTION",
    "S240-STATE-REJECT-NOT-END",
    "S240-STATE-BACKGROUND-NO-CHANGE",
    "S240-STATE-NEW-IDLE",
    "S240-STATE-LOCAL-COMMANDS",
    "S240-NOTICE-NOT-RELIED-ON",
    "S240-PROMPT-ACCEPTANCE",
    "S240-PROMPT-NEITHER-PRECEDES",
    "S240-PROMPT-FAILURE-ERROR-STOP",
    "S240-PROMPT-REJECTED-NO-ECHO",
    "S240-PROMPT-REJECT-NOT-IDLE",
    "S240-CANCEL-SCOPE",
    "S240-CANCEL-NOT-BACKGROUND",
    "S240-CANCEL-NO-WORK-NO-UPDATE",
})

for _c in WIRE_ONLY + JSONRPC:
    assert _c.id not in CLAUSES, f"duplicate clause id {_c.id}"
    CLAUSES[_c.id] = _c
IMPLIED_LEVEL = IMPLIED_LEVEL | WIRE_ONLY_IMPLIED

for _cid, _why in WIRE_REASONS.items():
    CLAUSES[_cid] = replace(CLAUSES[_cid], wire=_why)


def lookup(cid: str) -> Clause | None:
    """The clause with id ``cid``: the core's, or a proposal's (``model/proposals``); None if none."""
    c = CLAUSES.get(cid)
    if c is None:
        for p in PROPOSALS.values():
            for pc in p.clauses:
                if pc.id == cid:
                    return pc
    return c


def clause(cid: str) -> Clause:
    """The clause with id ``cid``; ``KeyError`` naming it and near ids if none.

    Near ids are close spellings (case and underscores ignored), else ids of
    the same source and topic: ``clause("rfd_insert_respond")`` suggests
    ``RFD-INSERT-RESPOND`` first.

    >>> clause("NOPE")
    Traceback (most recent call last):
    ...
    KeyError: "no clause 'NOPE'; no similar id"
    """
    try:
        found = lookup(cid)
    except TypeError:
        found = None
    if found is not None:
        return found
    key = str(cid).strip().upper().replace("_", "-")
    near = difflib.get_close_matches(key, CLAUSES, n=5, cutoff=0.6)
    if key in CLAUSES and key not in near:
        near.insert(0, key)
    if not near:
        # Same source and topic, e.g. every "RFD-REPLAY-..." for "RFD-REPLAY-X".
        prefix = "-".join(key.split("-")[:2]) + "-"
        near = [i for i in CLAUSES if i.startswith(prefix)][:5]
    hint = f"; did you mean: {', '.join(near)}" if near else "; no similar id"
    raise KeyError(f"no clause {cid!r}{hint}") from None
