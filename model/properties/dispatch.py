"""Which step and sometimes properties a step can make true, derived from the properties' own code.

A step is known to the dispatch by its *key*: its action's name and the kinds of the messages
it sent, in order (``key_of``; the name alone for a step that sends nothing). Each property is run once per key on a view of a step that
shows only that key (``_StepView``): the action's name, the sent messages' kinds, nothing of
the states before and after, of the messages' contents or of where they went. A property that
reads anything else raises ``Unread`` there and is kept for every step of that key; a
property that comes to a verdict reading the key alone has that verdict on every step with
the key (it is a pure function of what it reads), so where that verdict is "nothing" it is
skipped. Nobody lists which steps a property is about: a list written by hand could leave out
a step the property should judge.

A judged property (``model/judges/``) reports what its judge found as the step was made
(``Step.found``), so it is dispatched from the step's findings, never run to find nothing.

Assumption (checked over every step of the ``default`` members and the seeded bugs by
``tests/test_dispatch.py``): a property reads its arguments through attributes, indexing,
iteration, comparison, hashing and arithmetic, all of which the view intercepts, and not by
their identity or type (``is``, ``isinstance``), which no view can.
"""

from __future__ import annotations

from ..state import Step
from .keys import key_of

__all__ = ["Dispatch", "key_of", "may_fire", "Unread"]


class Unread(BaseException):
    """A property read what a step's key does not show (a BaseException: no ``except Exception``
    in a property can take it for a verdict)."""


def _unread(self, *args, **kwargs):
    raise Unread


def _unread_attribute(self, name: str):
    if name.startswith("__"):  # the interpreter's and the tools' own questions (doctest asks for __wrapped__)
        raise AttributeError(name)
    raise Unread


class _Opaque(tuple):
    """Something the key does not show: every use of it raises ``Unread``.

    An empty tuple underneath: a compiled property (setup.py) checks that a record it is given is a
    tuple and reads a record's field by its index, which on this fails with an ``IndexError`` (an
    exception: the property is not decided by the key, as with ``Unread``)."""

    __slots__ = ()
    __getattr__ = _unread_attribute
    __getitem__ = __iter__ = __len__ = __contains__ = __reversed__ = _unread
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = __bool__ = _unread
    __int__ = __index__ = __float__ = __str__ = __repr__ = __format__ = __call__ = _unread
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __mod__ = __rmod__ = _unread
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __neg__ = __invert__ = _unread
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __abs__ = __round__ = _unread


_OPAQUE = _Opaque()


class _Head(_Opaque):
    """An action or a message of which only the first item (its name, its kind) is shown: the tuple
    ``(name,)`` underneath, so compiled code reading its item 0 reads the name and any other fails."""

    __slots__ = ()

    def __new__(cls, head: str):
        return tuple.__new__(cls, (head,))

    def __getitem__(self, i):
        if type(i) is int and i == 0:
            return tuple.__getitem__(self, 0)
        raise Unread


class _StepView(Step, _Opaque):
    """A step as its key shows it: ``action[0]`` and each sent message's ``[0]``; every other field
    is opaque (a ``Step`` underneath, so that a compiled property takes it and reads its fields)."""

    __slots__ = ()


def _step_view(key) -> _StepView:
    name, kinds = (key, ()) if type(key) is str else (key[0], key[1:])
    shown = {"action": _Head(name), "emitted": tuple((_OPAQUE, _Head(k)) for k in kinds)}
    return tuple.__new__(_StepView, tuple(shown.get(f, _OPAQUE) for f in Step._fields))


def _decided(check, key) -> tuple[bool, object]:
    """(True, verdict) where ``check`` comes to a verdict reading the key alone; (False, None) if not."""
    try:
        return True, check(_OPAQUE, _step_view(key))
    except Unread:
        return False, None
    except Exception:  # an operation the view does not carry (say, a comparison it cannot order)
        return False, None


_MAY: dict[tuple, bool] = {}


def may_fire(p, step: Step) -> bool:
    """Whether the step or sometimes property ``p`` can say anything of ``step`` (False only where
    the step's key alone decides that it says nothing, or, for a judged property, where its judge
    found nothing in the step)."""
    if p.judged:
        return any(j == p.id for j, _ in step.found)
    return _may(p, key_of(step))


def _may(p, key) -> bool:
    got = _MAY.get((p.check, key))
    if got is None:
        decided, verdict = _decided(p.check, key)
        got = _MAY[p.check, key] = not decided or bool(verdict)
    return got


class Dispatch:
    """The step and sometimes properties to run on a step, in the order given, by key (cached),
    the judged ones from the step's findings; ``settle`` drops properties whose verdict is known."""

    #: a step's key (``keys.py``, compiled with the model)
    key_of = staticmethod(key_of)

    def __init__(self, props):
        self.props = [p for p in props if p.kind in ("step", "sometimes")]
        self._order = {p.id: k for k, p in enumerate(self.props)}
        self.settled: set[str] = set()
        self._judged = {p.id: p for p in self.props if p.judged}
        #: the properties to run on a step with no findings, by its key (``key_of``), as found so far:
        #: the search's inner loop reads it first (``sims/search/expand.py``), and asks ``for_step`` on a miss
        self.by_key: dict = {}

    def settle(self, pids) -> None:
        new = set(pids) - self.settled
        if new:
            self.settled |= new
            self.by_key.clear()

    def for_step(self, step: Step) -> tuple:
        key = key_of(step)
        ps = self.by_key.get(key)
        if ps is None:
            ps = self.by_key[key] = tuple(
                p for p in self.props
                if not p.judged and p.id not in self.settled and _may(p, key)
            )
        if step.found:
            js = [self._judged[j] for j, _ in step.found if j in self._judged and j not in self.settled]
            if js:
                order = self._order
                ps = tuple(sorted({*ps, *js}, key=lambda p: order[p.id]))
        return ps

