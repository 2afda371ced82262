"""The fingerprint of a state in one process (``"local"``): compiled with the model (setup.py).

It is Python's ``hash`` of the state with the judges' memory (``System.seen``, about half of a
state's items) replaced by its own hash, which is remembered for the last ``KEPT`` memories by
identity: the judges' observer hands the same memory object to every state whose memory and step
are equal, and a representative keeps its memory object, so two states in three of
``wide-lost-response`` carry a memory met before (docs/performance.md, "A compiled model"). A
value's fingerprint depends on the value alone (the memory's hash is of its value, kept with the
object it was computed from so that the object's identity stays its own). Python's ``hash`` is
seeded per process: forked workers share the seed, a Dask cluster's do not (``storage.py``'s
portable fingerprint).
"""

from __future__ import annotations

from typing import Final

from ...model import System

__all__ = ["local_fingerprint"]

#: memories whose hash is remembered (then all forgotten: the search meets a state's neighbours' soon)
KEPT: Final = 4096
#: the index of ``System.seen``
_SEEN: Final = System._fields.index("seen")
#: id(memory) -> (memory, its hash)
_HASHES: Final[dict[int, tuple]] = {}


def local_fingerprint(s: object) -> int:
    """``hash`` of ``s`` with its judges' memory hashed once per memory object (a state that is no
    ``System`` is hashed as it is)."""
    if type(s) is not System:
        return hash(s)
    state: tuple = s  # type: ignore[assignment]
    seen = state[_SEEN]
    got = _HASHES.get(id(seen))
    if got is None or got[0] is not seen:
        if len(_HASHES) >= KEPT:
            _HASHES.clear()
        got = _HASHES[id(seen)] = (seen, hash(seen))
    return hash((state[:_SEEN], got[1], state[_SEEN + 1:]))
