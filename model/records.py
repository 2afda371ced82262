"""A faster ``_replace`` and ``__new__`` for the model's records (``NamedTuple``), the model's most frequent calls.

``_replace`` is a function generated from the record's field names (one keyword per field), about
three times as fast as ``NamedTuple._replace``. Compiled (setup.py lists this module), ``__new__`` is
the compiled ``_new`` below: a record made in compiled code otherwise runs the ``__new__``
``collections.namedtuple`` generates, an interpreted frame for each of the records the successor
function makes. A record is the same tuple of the same class, equal, hashed and pickled as before;
a call the fast path does not take (keywords, defaults, a wrong number of values) goes to the
namedtuple's own ``__new__``, with its errors. (``_replace`` stays interpreted: a compiled function
set on a class is not bound to the instance as a method is.)
"""

from __future__ import annotations

__all__ = ["compile_replace"]

_UNSET = object()

#: the records given a fast path: class -> its number of fields, its own ``__new__``
_SIZE: dict = {}
_NEW: dict = {}


def _generated_replace(cls) -> None:
    fields = cls._fields
    params = ", ".join(f"{f}=_UNSET" for f in fields)
    items = ", ".join(f"self[{i}] if {f} is _UNSET else {f}" for i, f in enumerate(fields))
    src = f"def _replace(self, *, {params}):\n    return _new(_cls, ({items},))\n"
    env = {"_UNSET": _UNSET, "_new": tuple.__new__, "_cls": cls}
    exec(src, env)  # noqa: S102 - generated from the field names above
    cls._replace = env["_replace"]


def _own_new(cls):
    """The namedtuple's ``__new__`` of ``cls`` or of the record it derives from."""
    for base in cls.__mro__:
        if base in _NEW:
            return _NEW[base]
    raise TypeError(f"{cls.__name__} is not a record")


def _new(cls, *args, **kwargs):
    """A record from all its values in order (the successor function's way); anything else as the
    namedtuple's own ``__new__`` does it."""
    if not kwargs and len(args) == _SIZE.get(cls, -1):
        return tuple.__new__(cls, args)
    return _own_new(cls)(cls, *args, **kwargs)


def compile_replace(cls) -> None:
    """Give a NamedTuple the generated ``_replace`` and, compiled, ``_new`` as its ``__new__``."""
    _generated_replace(cls)
    if hasattr(_new, "__code__"):  # this module runs interpreted
        return
    _SIZE[cls] = len(cls._fields)
    _NEW[cls] = cls.__new__
    cls.__new__ = staticmethod(_new)
