"""Compact storage for the search: 64-bit fingerprints of states, the visited set as
sorted numpy arrays checked in batches, the frontier of a level in (pickled,
compressed) blocks, and giving memory back to the system between levels.

``COMPRESS_AT`` is read when a frontier is filled: ``sims.search.check`` raises
it for members run side by side (``storage.COMPRESS_AT``).
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import pickle
import sys
import zlib
from itertools import chain
from contextlib import contextmanager
from typing import Callable

import numpy as np

from acp_lifecycle.model import System

from .fingerprint import local_fingerprint

__all__ = ["BLOCK", "CHECK_EVERY", "COMPRESS_AT", "FINGERPRINTS", "no_gc", "portable_fingerprint"]


# --- fingerprints ----------------------------------------------------------------


def _plain(x):
    """Nested NamedTuples as plain tuples, frozensets as sorted tuples, and a value that stands for a
    sorted tuple (``sorted()``: what the judges remember, ``Items`` and ``Pairs``) as that tuple (what
    marshal takes)."""
    return tuple(
        [
            _plain(v) if isinstance(v, tuple) else tuple(sorted(v)) if isinstance(v, frozenset) else
            _plain(v.sorted()) if hasattr(v, "sorted") else v
            for v in x
        ]
    )


def portable_fingerprint(key) -> int:
    """A 64-bit fingerprint that is the same in every process and on every machine.

    Python's ``hash`` (the local fingerprint) is seeded per process: forked
    workers share the seed, the workers of a Dask cluster do not.
    """
    d = hashlib.blake2b(marshal.dumps(_plain(key), 2), digest_size=8).digest()
    return int.from_bytes(d, "little", signed=True)


#: "local": Python's ``hash``, the judges' memory hashed once per object (``fingerprint.py``), for one
#: process and the processes forked from it; "portable": the same everywhere
FINGERPRINTS: dict[str, Callable] = {"local": local_fingerprint, "portable": portable_fingerprint}


@contextmanager
def no_gc():
    """No garbage collection while exploring: the states hold no cycles, and the
    collector would walk the whole heap again and again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if not gc.get_freeze_count():
                # what the search made goes to the oldest generation unwalked (freeze, then unfreeze):
                # left young, the first collection after it walked all of it (0.35 s after
                # wide-lost-response); the oldest is walked only once it grows by a quarter
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _share(s: System, parts: dict) -> System:
    """``s`` built from parts equal to ones already stored this level (the
    frontier is most of the memory; new states share most of their parts)."""
    a = s.agent
    a = a._replace(reqs=parts.setdefault(a.reqs, a.reqs), conv=parts.setdefault(a.conv, a.conv))
    return tuple.__new__(System, (
        parts.setdefault(a, a),
        tuple([parts.setdefault(c, c) for c in s.clients]),
        parts.setdefault(s.up, s.up),
        parts.setdefault(s.down, s.down),
        parts.setdefault(s.used, s.used),
        parts.setdefault(s.seen, s.seen),
        parts.setdefault(s.ext, s.ext),
    ))


#: frontier states per block; a level past COMPRESS_AT states keeps its further blocks
#: pickled (equal parts stored once per block: about a tenth of the size). Packing
#: costs a fifth of the CPU (wide-lost-response: 72.0 -> 56.6 CPU-s without it, peak
#: 131 -> 162 MB), so only a level past 65,536 states pays it: ``wide``'s stay whole,
#: ``huge``'s are packed
BLOCK = 256
COMPRESS_AT = 1 << 16
#: candidates checked against the visited fingerprints at once (vectorised)
CHECK_EVERY = 256


def _in_sorted(old: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which ``keys`` are in the sorted array ``old``."""
    if not len(old) or not len(keys):
        return np.zeros(len(keys), dtype=bool)
    i = old.searchsorted(keys)
    i[i == len(old)] = 0
    return old[i] == keys


def _merge(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The sorted union of the sorted ``old`` and the sorted (disjoint) ``new``."""
    return np.insert(old, old.searchsorted(new), new)


#: a run of visited fingerprints below this length takes the next level in
#: (merging copies the run: a copy of every visited fingerprint at each level
#: would double their memory for a moment)
MERGE_BELOW = 1 << 16


class Visited:
    """Visited fingerprints: sorted int64 runs, about one per level once levels are large."""

    def __init__(self):
        self.runs: list[np.ndarray] = []
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def add(self, fps: np.ndarray) -> None:
        if not len(fps):
            return
        fps = np.sort(fps)
        self.n += len(fps)
        if self.runs and len(self.runs[-1]) < MERGE_BELOW:
            self.runs[-1] = _merge(self.runs[-1], fps)
        else:
            self.runs.append(fps)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        hit = np.zeros(len(keys), dtype=bool)
        for run in self.runs:
            hit |= _in_sorted(run, keys)
        return hit


class Frontier:
    """The states of one BFS level with their fingerprints, in blocks.

    Once a level passes COMPRESS_AT states its blocks are pickled (equal
    parts of the block's states made one object first, so that the pickle
    stores them once) and compressed (zlib, fastest): about 30 bytes a state
    where the objects take about 300. ``drain`` gives the states back block
    by block and lets each go once read."""

    def __init__(self):
        self.blocks: list = []  # lists of (state, fp), or their pickles
        self.sizes: list[int] = []
        self.blk: list = []
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def add(self, s: System, f: int) -> None:
        self.blk.append((s, f))
        self.n += 1
        if len(self.blk) >= BLOCK:
            self.seal()

    def take(self, items: list) -> None:
        """``add`` each (state, fp) pair of ``items`` in order (the list is the frontier's now): one call
        for a batch of new states (``expand.py``)."""
        self.n += len(items)
        rest = self.blk + items if self.blk else items
        while len(rest) >= BLOCK:
            self.blk, rest = rest[:BLOCK], rest[BLOCK:]
            self.seal()
        self.blk = rest

    def seal(self) -> None:
        if self.blk:
            self.blocks.append(self.blk)
            self.sizes.append(len(self.blk))
            self.blk = []
            if self.n >= COMPRESS_AT:
                b = self.blocks
                for i in range(len(b) - 1, -1, -1):
                    if not isinstance(b[i], list):
                        break
                    parts: dict = {}
                    b[i] = zlib.compress(pickle.dumps([(_share(x, parts), f) for x, f in b[i]],
                                                      pickle.HIGHEST_PROTOCOL), 1)

    def drain(self):
        """Every (state, fp), in order; the frontier is empty afterwards (an iterator in C over the
        blocks, each let go once read: the search takes a state at a time from it)."""
        self.seal()
        blocks = self.blocks
        blocks.reverse()
        self.blocks, self.sizes, self.n = [], [], 0
        return chain.from_iterable(_unpacked(blocks))

    def extend(self, items) -> None:
        self.take(list(items))


def _unpacked(blocks: list):
    """The blocks (``blocks`` reversed), each a list of (state, fp), unpacked if packed, popped as given."""
    while blocks:
        b = blocks.pop()
        yield b if isinstance(b, list) else pickle.loads(zlib.decompress(b))


def trim_heap() -> None:
    """Give the memory malloc holds free back to the system (glibc; elsewhere nothing).

    A level frees the previous one's blocks and a merged copy of ``old``:
    glibc keeps such holes in its heap, and the resident set would grow by
    them level after level."""
    if _TRIM is not None:
        _TRIM(0)


def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return None


_TRIM = _malloc_trim()


def mask_typecode(n: int) -> str:
    return "B" if n <= 8 else "H" if n <= 16 else "I" if n <= 32 else "Q"
