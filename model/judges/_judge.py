"""The ``Judge`` record (one rule about messages, with its single definition) and what judges keep
their memory with: ``Items`` (a set) and ``Pairs`` (a map), values that hash, compare in one total
order and rename as a state of the explored model must, and that change by one item in O(log n),
as a connection held for hours needs (``trace``); and the helpers ``with_item``, ``put_pair``,
``sorted_tuple``, which also keep memories that are sorted tuples (a proposal's, until it moves)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import immutables

__all__ = ["NO_ITEMS", "NO_PAIRS", "Items", "Judge", "Pairs", "put_pair", "sorted_tuple", "with_item"]


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


class _Sorted:
    """What ``Items`` and ``Pairs`` share: a persistent map (a hash array mapped trie, in C:
    ``immutables.Map``) seen as the sorted tuple of its content.

    Adding or removing one item costs O(log n) and leaves the old value whole (the checker keeps
    both states); a sorted tuple was copied and sorted again at each step, which made ``trace``
    quadratic on one long connection (issue 35). As a value it is that sorted tuple in all the
    explored state asks of it: equal for equal content, whatever the order of the steps that
    made it (and its hash with it, computed once); ordered as that tuple (``<``: the symmetry
    reduction sorts clients by what the judges remember of them); its ``repr`` that tuple's (the
    reduction's fallback order compares reprs); iterated in that order, and pickled as it. The
    sorted tuple is built only when asked for (never by ``trace`` before the end of a log) and
    kept. It is never equal to a tuple: a memory is one type or the other."""

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

    def __lt__(self, other):
        return self.sorted() < other.sorted() if other.__class__ is self.__class__ else NotImplemented

    def __le__(self, other):
        return self.sorted() <= other.sorted() if other.__class__ is self.__class__ else NotImplemented

    def __gt__(self, other):
        return self.sorted() > other.sorted() if other.__class__ is self.__class__ else NotImplemented

    def __ge__(self, other):
        return self.sorted() >= other.sorted() if other.__class__ is self.__class__ else NotImplemented

    def __repr__(self) -> str:
        return repr(self.sorted())

    def __reduce__(self):
        return self.__class__, (self.sorted(),)


class Items(_Sorted):
    """A set of hashable items as a memory of the judges (see ``_Sorted``): ``x in items``,
    ``add``, ``discard``, ``union``, ``rename``; iterated in sorted order."""

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
        return Items(map(f, self._map)) if self._map else self


class Pairs(_Sorted):
    """A map as a memory of the judges (see ``_Sorted``), standing for the sorted tuple of its
    ``(key, value)`` pairs: ``key in pairs`` and ``get`` look a key up, ``set`` and ``keep``
    change it; iterated as those sorted pairs."""

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
        if key in m and m[key] == value and type(m[key]) is type(value):
            return self
        return Pairs._of(m.set(key, value))

    def keep(self, test) -> Pairs:
        """The map with only the pairs ``(key, value)`` for which ``test(value)`` is true."""
        drop = [k for k, v in self._map.items() if not test(v)]
        if not drop:
            return self
        with self._map.mutate() as m:
            for k in drop:
                del m[k]
            return Pairs._of(m.finish())


#: the empty memories (a memory that starts empty starts with these)
NO_ITEMS = Items()
NO_PAIRS = Pairs()


def with_item(state, item):
    """A set of items with one more: ``Items.add`` for ``Items``, else a sorted tuple with one more
    item (sorted tuples compare in one total order, unlike sets; each step copies them)."""
    if state.__class__ is Items:
        return state.add(item)
    if item in state:
        return state
    try:
        return tuple(sorted(state + (item,)))
    except TypeError:  # ids of different JSON types in one transcript
        return tuple(sorted(state + (item,), key=repr))


def put_pair(pairs, key, value):
    """The (key, value) pairs with ``key`` set to ``value``: ``Pairs.set`` for ``Pairs``, else sorted pairs."""
    if pairs.__class__ is Pairs:
        return pairs.set(key, value)
    return sorted_tuple(tuple(p for p in pairs if p[0] != key) + ((key, value),))


def sorted_tuple(items: tuple) -> tuple:
    """``items`` sorted (by their text where values of different types cannot be compared)."""
    try:
        return tuple(sorted(items))
    except TypeError:
        return tuple(sorted(items, key=repr))
