"""A faster ``_replace`` for the model's records (``NamedTuple``), the model's most frequent call."""

from __future__ import annotations

from typing import Final

__all__ = ["compile_replace", "replace_fields"]

_UNSET = object()


def compile_replace(cls) -> None:
    """Give a NamedTuple a ``_replace`` with one keyword per field.

    ``NamedTuple._replace`` goes through ``_make`` and ``map()``; a generated
    function that names every field is about three times as fast, and
    ``_replace`` is the model's most frequent call.
    """
    fields = cls._fields
    params = ", ".join(f"{f}=_UNSET" for f in fields)
    items = ", ".join(f"self[{i}] if {f} is _UNSET else {f}" for i, f in enumerate(fields))
    src = f"def _replace(self, *, {params}):\n    return _new(_cls, ({items},))\n"
    env = {"_UNSET": _UNSET, "_new": tuple.__new__, "_cls": cls}
    exec(src, env)  # noqa: S102 - generated from the field names above
    cls._replace = env["_replace"]


#: the records' fields by name: record class -> {field: index}
_INDEX: dict[type, dict[str, int]] = {}
#: ``tuple.__new__``, looked up once (compiled, a call of ``tuple.__new__`` looks the method up each time)
_TUPLE_NEW: Final = tuple.__new__


def _replaced():
    """``model/_tuples.c``'s ``replaced`` where the build made it (setup.py), else None."""
    try:
        from ._tuples import replaced  # type: ignore[import-not-found]
    except ImportError:
        return None
    return replaced


#: the record made in one allocation, the lookups in C (``model/_tuples.c``); None: made here
_REPLACED: Final = _replaced()


def replace_fields(record: object, names: tuple[str, ...], values: tuple) -> object:
    """``record._replace(**dict(zip(names, values)))``: what a compiled module calls instead (setup.py,
    ``rewrite``), compiled itself, so that no interpreted frame makes the record. Anything but a
    record with those fields goes to its own ``_replace``, with its errors. (Annotated for mypyc:
    typed, the lookups and the list are C calls.)"""
    cls = type(record)
    index = _INDEX.get(cls)
    if index is None:
        fields = getattr(cls, "_fields", None)
        if type(fields) is not tuple or not isinstance(record, tuple):
            return record._replace(**dict(zip(names, values)))  # type: ignore[attr-defined]
        index = _INDEX[cls] = {f: i for i, f in enumerate(fields)}
    if _REPLACED is not None:
        made = _REPLACED(record, index, names, values)
        if made is not None:
            return made
        return record._replace(**dict(zip(names, values)))  # type: ignore[attr-defined]
    n = len(names)
    # one field (most calls): two slices and the value, no list (the isinstance lets mypyc slice a tuple)
    if n == 1 and isinstance(record, tuple):
        i = index.get(names[0], -1)
        if i >= 0:
            return _TUPLE_NEW(cls, record[:i] + values + record[i + 1:])
    out: list = list(record)  # type: ignore[call-overload]
    k = 0
    while k < n:
        i = index.get(names[k], -1)
        if i < 0:
            return record._replace(**dict(zip(names, values)))  # type: ignore[attr-defined]
        out[i] = values[k]
        k += 1
    return _TUPLE_NEW(cls, out)
