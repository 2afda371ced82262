"""Running a set of judges: over the events of a model step (``observer``), or one record at a time.

A ``JudgeSet`` is the judges of one rule set in a fixed order: the judges with a state in that
order make ``System.seen`` (per judge, per connection), the history variable the explored state
carries. Its lookups by record type are built once; what it answers for a memory and a step's
events is remembered (a search meets the same pair again and again: wide-failures made 79,091
calls with 1,121 distinct pairs).
"""

from __future__ import annotations

from ..observed import Sent

__all__ = ["JudgeSet"]

#: memories remembered per judge set before they are all forgotten
MEMO_SIZE = 50_000
#: memories remembered by identity (``observer``)
BY_ID_SIZE = 4096


class JudgeSet:
    """The judges of one rule set, in order (see the module docstring)."""

    def __init__(self, judges):
        self.judges = tuple(judges)
        self.by_id = {j.id: j for j in self.judges}
        if len(self.by_id) != len(self.judges):
            raise ValueError("two judges have one id")
        #: the judges with a state, in the order of ``System.seen``
        self.stateful = tuple(j for j in self.judges if j.step is not None)
        self.by_type: dict[type, list] = {}
        for j in self.judges:
            if j.step is None:
                for t in j.types:
                    self.by_type.setdefault(t, []).append(j)
        self.stateful_by_type: dict[type, list] = {}
        for k, j in enumerate(self.stateful):
            for t in j.types:
                self.stateful_by_type.setdefault(t, []).append((k, j))
        self._memo: dict = {}
        #: id(memory) -> (memory, its answers): the memories met last, looked up without hashing them
        self._by_id: dict = {}
        #: whether a judge reads ``Sent`` (every update or request the agent sends): only then is it made
        self.reads_sent = Sent in self.by_type or Sent in self.stateful_by_type

    def start(self, clients: int) -> tuple:
        """``System.seen`` of a new session: each stateful judge's start, per connection."""
        return tuple((j.start,) * clients for j in self.stateful)

    def judge(self, record) -> list[tuple[str, str]]:
        """(judge id, what is wrong) for every judge without a state that reads ``record`` and finds it wrong."""
        out = []
        for j in self.by_type.get(type(record), ()):
            why = j.judge(record)
            if why:
                out.append((j.id, why))
        return out

    def observe(self, seen: tuple, events: list) -> tuple[tuple, tuple]:
        """``System.seen`` after ``events`` (``(connection, record)`` pairs), and what the judges
        found wrong: ((judge id, message), ...)."""
        return self.observer(seen)(events)

    def observer(self, seen: tuple):
        """``observe`` for the memory ``seen``, which the steps of one state share: hashed once for
        them all (answers remembered per memory, up to ``MEMO_SIZE`` memories, then all forgotten)."""
        # the memory object met last (a state's memory is often the very object another state has:
        # ``judged`` below hands out the one it made) by identity, before hashing it
        by_id = self._by_id
        got = by_id.get(id(seen))
        if got is not None and got[0] is seen:
            answers = got[1]
        else:
            memo = self._memo
            answers = memo.get(seen)
            if answers is None:
                if len(memo) >= MEMO_SIZE:
                    memo.clear()
                answers = memo[seen] = {}
            if len(by_id) >= BY_ID_SIZE:
                by_id.clear()
            by_id[id(seen)] = (seen, answers)
        compute = self._observe

        def judged(events: list) -> tuple[tuple, tuple]:
            if not events:
                return seen, ()
            # NamedTuple records are equal across types (``Closed() == SessionCancel()``): the key names each type
            key = tuple([(c, type(r), r) for c, r in events])
            got = answers.get(key)
            if got is None:
                got = answers[key] = compute(seen, events)
            return got

        return judged

    def _observe(self, seen: tuple, events: list) -> tuple[tuple, tuple]:
        out = list(seen)
        found = []
        by_type, stateful_by_type = self.by_type, self.stateful_by_type
        for c, rec in events:
            for j in by_type.get(type(rec), ()):
                why = j.judge(rec)
                if why:
                    found.append((j.id, why))
            for k, j in stateful_by_type.get(type(rec), ()):
                per = out[k]
                if j.per == "session":  # every connection's state reads the record; its own says what is wrong
                    states = []
                    for d, old in enumerate(per):
                        state, why = j.step(old, rec, d == c)
                        states.append(state)
                        if why:
                            found.append((j.id, f"on client {c}'s connection: {why}"))
                    out[k] = tuple(states)
                    continue
                state, why = j.step(per[c], rec)
                if state != per[c]:
                    out[k] = per[:c] + (state,) + per[c + 1 :]
                if why:
                    found.append((j.id, f"on client {c}'s connection: {why}"))
        return tuple(out), tuple(found)
