"""The ``Judge`` record (one rule about messages, with its single definition) and the helpers judges
keep their memory with.

A judge's memory is part of the explored state: it hashes, compares in one total order (the symmetry
reduction sorts clients by it) and renames. A set of items (``with_item``, ``without_item``,
``union_items``, ``rename_items``) or of (key, value) pairs (``put_pair``, ``pair_value``,
``without_pair``) is a sorted tuple while it holds at most ``SMALL`` items, as every memory of the
checker does, and an ``Items`` or ``Pairs`` beyond: a persistent map that one message changes in
O(log n), where a sorted tuple is copied and sorted again (on a connection held for hours ``trace``
was quadratic: issue 35). Which one depends only on the size, so equal content is an equal value;
and an ``Items`` is the sorted tuple it stands for in everything else the state asks of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

import immutables

# The module is compiled (setup.py) for its helpers, which the judges call at every step (issue 37); its
# classes stay Python classes (``native_class=False``): a ``str`` subclass, a dataclass the proposals
# make, and the memories past ``SMALL`` items, all made rarely.
try:
    from mypy_extensions import mypyc_attr
except ImportError:  # no mypy: the pure-Python package, where the decorator says nothing

    def mypyc_attr(**_attrs):
        return lambda cls: cls

__all__ = ["SMALL", "Cite", "Items", "Judge", "Memory", "Pairs", "clause_of", "pair_value", "put_pair", "rename_items", "restate",
           "sorted_tuple", "union_items", "with_item", "without_item", "without_pair"]


@mypyc_attr(native_class=False)
class Cite(str):
    """What a judge found, naming the clause about its case when that is not the judge's first: a second
    response is JSON-RPC's one reply to a call, or, after ``$/cancel_request``, 2.4.0's sentence about that."""

    clause: str

    def __new__(cls, text: str, clause: str) -> "Cite":
        self = str.__new__(cls, text)
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


@mypyc_attr(native_class=False)
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
    #: the record type it reads, or a tuple of them
    reads: Any
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
    start: Any = None
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
    #: a judge of a whole session whose findings need the session's history from its start (what was
    #: cancelled before): ``trace`` does not report them on a log that did not see the session created
    #: (another connection, outside the log, may have sent what it lacks). A model run always has it.
    from_creation: bool = False

    @property
    def types(self) -> tuple:
        return self.reads if isinstance(self.reads, tuple) else (self.reads,)


#: a set or map of the judges' memory with at most this many items is a sorted tuple, a larger one an
#: ``Items`` or ``Pairs`` (the checker's memories are smaller: it explores what it did before issue 35)
SMALL = 16


@mypyc_attr(native_class=False)
class _Sorted:
    """What ``Items`` and ``Pairs`` share: a persistent map (a hash array mapped trie, in C:
    ``immutables.Map``) seen as the sorted tuple of its content.

    Adding or removing one item costs O(log n) and leaves the old value whole (the checker keeps
    both states). As a value it is that sorted tuple in all the explored state asks of it: equal
    for equal content, whatever the order of the steps that made it (and its hash with it,
    computed once); ordered as that tuple, against another one or against a sorted tuple (``<``:
    the symmetry reduction sorts clients by what the judges remember of them); its ``repr`` that
    tuple's (the reduction's fallback order compares reprs); iterated in that order, pickled and
    fingerprinted as it (``sorted()``). The sorted tuple is built only when asked for (never by
    ``trace`` before the end of a log) and kept. It is never equal to a tuple: the helpers below
    keep a memory of more than ``SMALL`` items in this form and a smaller one a tuple."""

    __slots__ = ("_map", "_hash", "_sorted")

    def __init__(self, content=()):
        self._map = immutables.Map(self._pairs(content))
        self._hash = None
        self._sorted = None

    @classmethod
    def _of(cls, m: immutables.Map):
        out = cls.__new__(cls)
        out._map, out._hash, out._sorted = m, None, None
        return out

    def sorted(self) -> tuple:
        """The content as the sorted tuple it stands for (``sorted_tuple``'s order)."""
        if self._sorted is None:
            self._sorted = sorted_tuple(self._content())
        return self._sorted

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self):
        return iter(self.sorted())

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        # no hash first: a value a transcript gave (a tool call's status) may be unhashable
        return self._map is other._map or self._map == other._map

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._map)
        return self._hash

    def _other(self, other):
        return other.sorted() if other.__class__ is self.__class__ else other if other.__class__ is tuple else None

    def __lt__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self.sorted() < o

    def __le__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self.sorted() <= o

    def __gt__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self.sorted() > o

    def __ge__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self.sorted() >= o

    def __repr__(self) -> str:
        return repr(self.sorted())

    def __reduce__(self):
        return self.__class__, (self.sorted(),)


@mypyc_attr(native_class=False)
class Items(_Sorted):
    """A set of hashable items (see ``_Sorted``): ``x in items``, ``add``, ``discard``, ``union``,
    ``rename``; iterated in sorted order."""

    __slots__ = ()

    @staticmethod
    def _pairs(content):
        return dict.fromkeys(content)

    def _content(self) -> tuple:
        return tuple(self._map)

    def __contains__(self, item) -> bool:
        return item in self._map

    def add(self, item) -> Items:
        """The set with ``item`` (itself when it has it)."""
        return self if item in self._map else Items._of(self._map.set(item, None))

    def discard(self, item) -> Items:
        """The set without ``item`` (itself when it has not)."""
        return Items._of(self._map.delete(item)) if item in self._map else self

    def union(self, items) -> Items:
        """The set with every one of ``items`` too."""
        with self._map.mutate() as m:
            for x in items:
                m[x] = None
            got = m.finish()
        return self if len(got) == len(self._map) else Items._of(got)

    def rename(self, f) -> Items:
        """The set of ``f(x)`` for its items (the symmetry reduction's renaming of message IDs)."""
        return Items(map(f, self._map))


@mypyc_attr(native_class=False)
class Pairs(_Sorted):
    """A map (see ``_Sorted``), standing for the sorted tuple of its ``(key, value)`` pairs: ``key in
    pairs`` and ``get`` look a key up, ``set`` and ``discard`` change it; iterated as those sorted pairs."""

    __slots__ = ()

    @staticmethod
    def _pairs(content):
        return dict(content)

    def _content(self) -> tuple:
        return tuple(self._map.items())

    def __contains__(self, key) -> bool:
        return key in self._map

    def get(self, key, default=None):
        return self._map.get(key, default)

    def set(self, key, value) -> Pairs:
        """The map with ``key`` set to ``value``."""
        m = self._map
        old = m.get(key, _ABSENT)
        if old is value or (old is not _ABSENT and type(old) is type(value) and old == value):
            return self
        return Pairs._of(m.set(key, value))

    def discard(self, key) -> Pairs:
        """The map without ``key`` (itself when it has not)."""
        return Pairs._of(self._map.delete(key)) if key in self._map else self


#: a judge's memory as its records annotate it: a sorted tuple up to ``SMALL`` items, an ``Items`` or
#: ``Pairs`` past them (the annotation a compiled judge checks at run time: setup.py)
Memory = Union[tuple, Items, Pairs]

_ABSENT = object()


# --- sets of items ------------------------------------------------------------------------------


def with_item(state, item):
    """The set of items with one more (a sorted tuple, or an ``Items`` past ``SMALL`` items)."""
    if state.__class__ is Items:
        return state.add(item)
    if item in state:
        return state
    if len(state) >= SMALL:
        return Items(state + (item,))
    return sorted_tuple(state + (item,))  # ids of different JSON types in one transcript sort by their text


def without_item(state, item):
    """The set of items without ``item``."""
    if state.__class__ is Items:
        if item not in state:
            return state
        return _small_again(state.discard(item))
    return tuple(x for x in state if x != item) if item in state else state


def union_items(state, items):
    """The set of items with every one of ``items`` too."""
    if state.__class__ is Items:
        return state.union(items)
    out = sorted_tuple(tuple(set(state) | set(items)))
    return Items(out) if len(out) > SMALL else out


def rename_items(state, f):
    """The set of ``f(x)`` for the items of ``state`` (``f`` one-to-one: the symmetry reduction's renaming)."""
    if state.__class__ is Items:
        return state.rename(f)
    return tuple(sorted(f(m) for m in state))


# --- sets of (key, value) pairs -----------------------------------------------------------------


def put_pair(pairs, key, value):
    """The (key, value) pairs with ``key`` set to ``value`` (sorted pairs, or a ``Pairs`` past ``SMALL``)."""
    if pairs.__class__ is Pairs:
        return pairs.set(key, value)
    out = sorted_tuple(tuple(p for p in pairs if p[0] != key) + ((key, value),))
    return Pairs(out) if len(out) > SMALL else out


def pair_value(pairs, key, default=None):
    """The value of ``key`` among the pairs (``default`` when none)."""
    if pairs.__class__ is Pairs:
        return pairs.get(key, default)
    for k, v in pairs:
        if k == key:
            return v
    return default


def without_pair(pairs, key):
    """The pairs without the one of ``key``."""
    if pairs.__class__ is Pairs:
        if key not in pairs:
            return pairs
        return _small_again(pairs.discard(key))
    return tuple(p for p in pairs if p[0] != key)


def _small_again(out):
    """An ``Items`` or ``Pairs`` that shrank to ``SMALL`` items is the sorted tuple again (the form depends on
    the size alone, so equal content is an equal value)."""
    return out.sorted() if len(out) <= SMALL else out


def sorted_tuple(items: tuple) -> tuple:
    """``items`` sorted (by their text where values of different types cannot be compared)."""
    try:
        return tuple(sorted(items))
    except TypeError:
        return tuple(sorted(items, key=repr))
