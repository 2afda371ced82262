"""The ``Judge`` record (one rule about messages, with its single definition) and the small
helpers judges keep their memory with: sorted tuples, which compare in one total order and hash,
as a state of the explored model must."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Cite", "Judge", "clause_of", "restate", "put_pair", "sorted_tuple", "with_item"]


class Cite(str):
    """What a judge found, naming the clause about its case when that is not the judge's first: a second
    response is JSON-RPC's one reply to a call, or, after ``$/cancel_request``, 2.4.0's sentence about that."""

    clause: str

    def __new__(cls, text: str, clause: str) -> "Cite":
        self = super().__new__(cls, text)
        self.clause = clause
        return self

    def __reduce__(self):
        return Cite, (str(self), self.clause)


def restate(why: str, text: str) -> str:
    """``text`` (a finding ``why`` put in its place) naming the clause ``why`` names, if it does."""
    return Cite(text, why.clause) if isinstance(why, Cite) else text


def clause_of(why: str, clauses: tuple[str, ...]) -> str:
    """The clause a finding quotes: its case's (``Cite``), else the rule's first."""
    return getattr(why, "clause", "") or (clauses[0] if clauses else "")


@dataclass(frozen=True, slots=True)
class Judge:
    """One rule about messages, with its single definition."""

    id: str
    #: MUST, MUST NOT, SHOULD or SHOULD NOT
    level: str
    #: "rfd" (the RFD, or JSON-RPC) or "2.4.0" (only the 2.4.0 text says it)
    since: str
    summary: str
    #: clause ids of ``model/clauses/``, the first one quoted in findings
    clauses: tuple[str, ...]
    #: the record type it reads
    reads: type
    #: record -> what is wrong ("" or None when nothing)
    judge: Callable[[tuple], str | None]
    #: the witnesses of the property built from it
    witnesses: tuple[str, ...] = ()
    #: "message" (reads one message), "connection" or "view" (keeps a state over what one
    #: connection, or one session on one connection, carried), or "session" (keeps a state per
    #: session on one connection, like "view", but reads what every connection of the session
    #: carried: ``step(state, record, mine)``, ``mine`` telling whether the record was carried on
    #: the state's own connection; it finds something wrong only in a record that is ``mine``)
    per: str = "message"
    #: the state at the start of a connection
    start: object = None
    #: ``(state, record) -> (state, what is wrong)``, for a judge with a state (``per="session"``:
    #: ``(state, record, mine)``)
    step: Callable | None = None
    #: ``(state, f) -> state`` with every message ID renamed by ``f`` (symmetry)
    rename: Callable | None = None
    #: for a rule about what must happen in the end: ``state -> [((asker, rid), what is owed), ...]``,
    #: the obligations still open (``check``: an ``eventually`` property; ``trace``: at the end of the log)
    owes: Callable | None = None
    #: for a judge of a whole session: ``state -> state``, the state of a connection that joins the
    #: session later, from the state of one already in it (the start when None)
    join: Callable | None = None
    #: the proposal that adds it (``model/proposals``); "" for the core's own
    proposal: str = ""
    #: ``rules -> bool``: whether it is a rule under ``rules`` where a proposal's flag decides (None: always)
    when: Callable | None = None

    @property
    def types(self) -> tuple:
        return self.reads if isinstance(self.reads, tuple) else (self.reads,)


def with_item(state: tuple, item) -> tuple:
    """A sorted tuple with one more item (sorted tuples compare in one total order, unlike sets)."""
    if item in state:
        return state
    try:
        return tuple(sorted(state + (item,)))
    except TypeError:  # ids of different JSON types in one transcript
        return tuple(sorted(state + (item,), key=repr))


def put_pair(pairs: tuple, key, value) -> tuple:
    """The sorted (key, value) pairs with ``key`` set to ``value``."""
    return sorted_tuple(tuple(p for p in pairs if p[0] != key) + ((key, value),))


def sorted_tuple(items: tuple) -> tuple:
    """``items`` sorted (by their text where values of different types cannot be compared)."""
    try:
        return tuple(sorted(items))
    except TypeError:
        return tuple(sorted(items, key=repr))
