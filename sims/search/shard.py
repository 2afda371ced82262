"""One shard of the breadth-first search: the frontier states it holds, the fingerprints it owns.

``engine.py`` runs one shard in this process, or one per worker process
(forked, or Dask actors: ``dask.py``), and exchanges fingerprints between them
level by level. A shard expands its part of a level, checks the properties on
every state and step (``_Checks``: a step only with the properties that can say
anything of it, ``model/properties/dispatch.py``), keeps a record (fingerprint, parent, depth, open obligations,
successors) of every state it owns, and reports what it found (``Found``) for
the coordinator to rebuild as a real run. With ``por`` it expands an ample set
where ``por.py`` finds one (off by default: it saves little, docs/performance.md).
"""

from __future__ import annotations

import pickle
from array import array
from dataclasses import dataclass

import numpy as np

from acp_lifecycle.model import Lifecycle, Property, SymmetryBroken, System

from .expand import expand_states
from .por import SAMPLE, Reduction
from .storage import FINGERPRINTS, Frontier, mask_typecode, trim_heap, Visited

__all__ = ["Found", "RECORDS", "Shard"]


# --- property dispatch -------------------------------------------------------------


class _Checks:
    """Which properties to check on a state or a step: the step and sometimes properties by
    ``Dispatch`` (derived from their code), the state properties until their verdict is known."""

    def __init__(self, model: Lifecycle, props: list[Property]):
        self.always = [p for p in props if p.kind == "always"]
        self.eventually = [p for p in props if p.kind == "eventually"]
        self.dispatch = model.dispatch(props)
        self.stepwise = self.dispatch.props
        self.for_step = self.dispatch.for_step
        self.settled = self.dispatch.settled

    def settle(self, pids) -> None:
        if not set(pids) <= self.settled:
            self.dispatch.settle(pids)
            self.always = [p for p in self.always if p.id not in self.settled]


@dataclass
class Found:
    """A violation (or a sometimes witness) as the search saw it, before its trace is rebuilt."""

    pid: str
    #: the trace's length: the depth of the state, or of the step's target
    length: int
    #: the state (always) or the step's source (step, sometimes)
    fp: int
    action: tuple | None = None



# --- one shard of the search -----------------------------------------------------------


class Shard:
    """One partition of the search: the frontier states it holds, the fingerprints it owns.

    The visited fingerprints of the levels so far (every shard's: 8 bytes
    each) are one sorted numpy array, ``old``; candidates are checked against
    it in batches, and the fingerprints of the level being built are a set
    until it ends."""

    def __init__(self, model: Lifecycle, props: list[Property], *, symmetry: bool,
                 fingerprint: str = "local", graph: bool | None = None, por: bool = False, por_sample: int = 0):
        self.model = model
        self.checks = _Checks(model, props)
        #: the partial-order reduction (``por.py``), None when off
        self.por = Reduction(self.checks, model.next_steps, por_sample or SAMPLE) if por else None
        self.symmetry = symmetry
        self.canon = model.canonicalizer() if symmetry else None
        #: where message IDs are renamed, check what that assumes on every
        #: concrete successor (``model/symmetry.py``): IDs fresh, and each state
        #: whose IDs the representative renames simulated by it
        self.fresh = symmetry and self.canon is not None and model.ids_renamed
        #: the concrete states whose representative was found to simulate them (``_guard``)
        self._commutes: set = set()
        self.fpname = fingerprint
        self.graph = bool(self.checks.eventually) if graph is None else graph
        self.index, self.count = 0, 1
        self.old = Visited()
        self._new: set[int] = set()
        # own records: every fingerprint this shard owns, its parent's, its depth
        self.own_fp, self.own_parent, self.own_depth = array("q"), array("q"), array("H")
        # expansion records: every state this shard expanded, its open
        # obligations, how many distinct successors and which
        self.exp_fp, self.exp_deg, self.edges = array("q"), array("I"), array("q")
        self.exp_mask = array(mask_typecode(len(self.checks.eventually)))
        self.frontier = Frontier()
        self.depth = 0
        self.transitions = 0
        self.found: dict[str, Found] = {}
        # candidates owned by other shards, until they decide: the states
        # (blocks, as the frontier) and their fingerprints
        self._cands = Frontier()
        self._cand_fps: set[int] = set()
        self._next = Frontier()

    def fingerprint(self, s: System) -> int:
        return FINGERPRINTS[self.fpname](self.canon(s) if self.canon else s)

    # Pickled for a Dask worker: properties by id (their functions are the
    # model's), the canonicaliser made again.
    def __getstate__(self):
        state = dict(self.__dict__)
        state["checks"] = ([p.id for p in self.checks.always + self.checks.eventually + self.checks.stepwise],
                           sorted(self.checks.settled))
        state["canon"] = None
        state["por"] = self.por.sample if self.por is not None else None
        state["_commutes"] = set()  # a cache: not worth sending
        return state

    def __setstate__(self, state):
        ids, settled = state["checks"]
        self.__dict__.update(state)
        self.checks = _Checks(self.model, [self.model.property_by_id(i) for i in ids])
        self.checks.settle(settled)
        self.canon = self.model.canonicalizer() if self.symmetry else None
        if self.por is not None:
            self.por = Reduction(self.checks, self.model.next_steps, self.por)

    def _guard(self, s: System, step, post: System) -> None:
        """Raise ``SymmetryBroken`` where the step breaks what the reduction assumes."""
        model = self.model
        why = model.check_fresh_ids(s, step)
        concrete = step.state
        if not why and post is not concrete and model.renumbers(concrete) and concrete not in self._commutes:
            why = model.check_commutes(concrete, post, self.canon, FINGERPRINTS[self.fpname], model.next_steps)
            if not why:
                # a state reached again by another step is simulated by its representative as before
                # (wide-lost-response: 12,490 checks of 9,306 distinct states)
                if len(self._commutes) >= 100_000:
                    self._commutes.clear()
                self._commutes.add(concrete)
        if why:
            raise SymmetryBroken(why)

    # -- levels --

    def start(self) -> None:
        (s0,) = self.model.init_states()
        f = self.fingerprint(s0)
        self.old.add(np.array([f], dtype=np.int64))
        self._own(f, f, 0)
        self.frontier.add(s0, f)

    def _own(self, f: int, parent: int, depth: int) -> None:
        self.own_fp.append(f)
        self.own_parent.append(parent)
        self.own_depth.append(depth)

    def expand(self, settled=(), others: bytes = b"") -> list[bytes]:
        """Expand the frontier; return, per other shard, the (fingerprint, parent) pairs it owns.

        ``others``: the fingerprints the other shards took in the last level."""
        if others:
            self.old.add(np.frombuffer(others, dtype=np.int64))
        self.checks.settle(settled)
        claims = [array("q") for _ in range(self.count)]
        transitions = expand_states(self, self.frontier.drain(), claims, Found)
        self.transitions += transitions
        return [c.tobytes() for c in claims]

    def _deeper(self, f: int, steps, cached: dict) -> bool:
        """The cycle proviso: every step leads to a state deeper than this level (and
        ``cached`` keeps each one's representative and fingerprint for the expansion)."""
        canon, fpf = self.canon, FINGERPRINTS[self.fpname]
        gs = []
        for st in steps:
            post = st.state if canon is None else canon(st.state)
            g = fpf(post)
            if g == f:
                return False
            cached[id(st)] = (post, g)
            gs.append(g)
        return not self.old.contains(np.array(gs, dtype=np.int64)).any()

    def decide(self, claims: list[bytes], first: int = 0) -> list[bytes]:
        """As owner: accept each claimed fingerprint not seen yet (one claimant each)."""
        new, old = self._new, self.old
        d = self.depth + 1
        out = [array("q") for _ in claims]
        n = len(claims)
        for k in range(n):
            w = (first + k) % n  # claimants take turns at winning ties, level by level
            arr = np.frombuffer(claims[w], dtype=np.int64)
            gs, ps = arr[0::2], arr[1::2]
            acc = out[w]
            for g, p, v in zip(gs.tolist(), ps.tolist(), old.contains(gs).tolist()):
                if not v and g not in new:
                    new.add(g)
                    self._own(g, p, d)
                    acc.append(g)
        return [a.tobytes() for a in out]

    def accept(self, accepted: list[bytes] = ()) -> tuple[int, int, list[str], int, bytes]:
        """Take the accepted candidates into the next frontier; move to the next level.

        Returns the next frontier's size, the states this shard owns, the
        properties found so far, the transitions, and the fingerprints this
        shard took in the level (for the others' ``old``)."""
        nxt = self._next
        if self._cand_fps:
            won = set()
            for data in accepted:
                won.update(np.frombuffer(data, dtype=np.int64).tolist())
            for s, g in self._cands.drain():
                if g in won:
                    nxt.add(s, g)
            self._cand_fps = set()
        mine = np.fromiter(self._new, dtype=np.int64, count=len(self._new))
        self._new = set()
        self.old.add(mine)
        nxt.seal()
        self.frontier, self._next = nxt, Frontier()
        self.depth += 1
        trim_heap()
        return len(self.frontier), len(self.own_fp), sorted(self.found), self.transitions, mine.tobytes()

    # -- moving work --

    def split(self, index: int, count: int) -> None:
        """Keep this shard's part of a search run so far by one shard (after a fork).

        ``old`` stays whole: every shard checks its candidates against every
        visited fingerprint."""
        if self.graph:
            self.exp_fp = self.own_fp[: len(self.exp_deg)]  # one process so far: the same order
        keep = [f % count == index for f in self.own_fp]
        for name in ("own_fp", "own_parent", "own_depth"):
            old = getattr(self, name)
            setattr(self, name, array(old.typecode, (x for x, k in zip(old, keep) if k)))
        if self.graph:
            fp, mask, deg, edges = array("q"), array(self.exp_mask.typecode), array("I"), array("q")
            pos = 0
            for f, m, n in zip(self.exp_fp, self.exp_mask, self.exp_deg):
                if f % count == index:
                    fp.append(f)
                    mask.append(m)
                    deg.append(n)
                    edges.extend(self.edges[pos : pos + n])
                pos += n
            self.exp_fp, self.exp_mask, self.exp_deg, self.edges = fp, mask, deg, edges
        mine = list(self.frontier.drain())[index::count]
        self.frontier.extend(mine)
        self.frontier.seal()
        if index:
            self.found = {}  # shard 0 keeps what the run found so far
            self.transitions = 0
        self.index, self.count = index, count

    def give(self, k: int) -> bytes:
        """Hand k frontier states to another shard (load balancing; rare)."""
        every = list(self.frontier.drain())
        k = min(k, len(every))
        self.frontier.extend(every[: len(every) - k])
        self.frontier.seal()
        return pickle.dumps(every[len(every) - k :], pickle.HIGHEST_PROTOCOL)

    def take(self, data: bytes) -> int:
        self.frontier.extend(pickle.loads(data))
        self.frontier.seal()
        return len(self.frontier)

    def finish(self) -> dict:
        """The records (arrays), what was found; the frontier and ``old`` are let go."""
        self.old = Visited()
        self.frontier = Frontier()
        return {
            "arrays": {k: getattr(self, k) for k in RECORDS},
            "found": self.found,
            "transitions": self.transitions,
            # expanded in the order of the own records (exp_fp is not kept)
            "exp_is_own": self.count == 1,
            "por": (self.por.reduced, self.por.full, self.por.skipped) if self.por is not None else None,
        }


#: the arrays a shard hands back at the end
RECORDS = ("own_fp", "own_parent", "own_depth", "exp_fp", "exp_mask", "exp_deg", "edges")
