"""A faster ``_replace`` for the model's records (``NamedTuple``), the model's most frequent call."""

from __future__ import annotations

__all__ = ["compile_replace"]

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
