"""The expansion of one level's states: the search's innermost loop, compiled with the model where
the compiled build is there (setup.py; docs/performance.md, "A compiled model").

It is ``Shard.expand``'s loop, a function of its own so that mypyc compiles it without the
``Shard`` class (pickled for Dask, with a ``__dict__``): it reads and writes the shard's fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .storage import CHECK_EVERY, FINGERPRINTS

if TYPE_CHECKING:  # compiled, a step's fields are read by their index
    from ...model import Property, Step

__all__ = ["expand_states", "flush"]


def expand_states(shard, states, claims: list, found_type) -> int:
    """Expand ``states`` ((state, fingerprint) pairs) for ``shard``: check the properties on each
    state and step, record the expansions, and keep the new candidates (``flush``); return
    the transitions. ``found_type``: ``shard.Found``."""
    checks = shard.checks
    next_steps = shard.model.next_steps
    canon, fpf = shard.canon, FINGERPRINTS[shard.fpname]
    found = shard.found
    graph, eventually = shard.graph, checks.eventually
    # the symmetry guard (``Shard._guard``), its common case here: the fresh-ID check, and whether the
    # step's target is a renamed state not yet checked to commute (then ``_guard`` decides, raising)
    guard, fresh, renumbers, commutes = None, None, None, shard._commutes
    if shard.fresh:
        guard = shard._guard
        fresh, renumbers = shard.model.guards()
    by_key, key_of, for_step = checks.dispatch.by_key, checks.dispatch.key_of, checks.for_step
    count = shard.count
    new, cands = shard._new, shard._cand_fps
    d = shard.depth
    exp_fp, exp_mask, exp_deg, edges = shard.exp_fp, shard.exp_mask, shard.exp_deg, shard.edges
    Found = found_type
    transitions = 0
    pend: dict[int, tuple] = {}  # candidates not yet checked against ``old``: fp -> (state, parent)
    por = shard.por
    cached: dict[int, tuple] = {}  # the ample steps' representatives and fingerprints, by id(step)
    step: Step
    for s, f in states:
        if checks.always:
            _check(checks, checks.always, found, Found, d, f, s, None)
        if graph:
            mask = 0
            for k, p in enumerate(eventually):
                if p.check(s):
                    mask |= 1 << k
            if count > 1:  # in one process the expansion order is the records' order
                exp_fp.append(f)
            exp_mask.append(mask)
            dsts = set()
        succ = next_steps(s)
        if por is not None:
            cached.clear()
            succ = por.ample(s, succ, lambda steps: shard._deeper(f, steps, cached))
        transitions += len(succ)
        for step in succ:
            ps = None if step.found else by_key.get(key_of(step))
            if ps is None:
                ps = for_step(step)
            if ps:
                _check(checks, ps, found, Found, d + 1, f, s, step)
            # the representative goes on: its successors mostly stay
            # representatives, which canon then returns as they are
            got = cached.get(id(step)) if por is not None else None
            if got is None:
                post = step.state if canon is None else canon(step.state)
                g = fpf(post)
            else:
                post, g = got
            if fresh is not None:
                concrete = step.state
                # ``renumbers`` before the lookup: it is rarely true, and the lookup hashes a whole state
                if fresh(s, step) or (post is not concrete and renumbers(concrete) and concrete not in commutes):
                    guard(s, step, post)
            if graph:
                dsts.add(g)
            if g in pend or g in new or g in cands:
                continue
            pend[g] = (post, f)
        if graph:
            exp_deg.append(len(dsts))
            edges.extend(dsts)
        if len(pend) >= CHECK_EVERY:
            flush(shard, pend, claims)
            pend = {}
    flush(shard, pend, claims)
    return transitions


def flush(shard, pend: dict, claims: list) -> None:
    """Keep the candidates ``pend`` (fp -> (state, parent)) no earlier level visited: the shard's own go
    to its next frontier, the others are claimed from their owners."""
    if not pend:
        return
    keys = np.fromiter(pend, dtype=np.int64, count=len(pend))
    visited = shard.old.contains(keys).tolist()
    index, count, d = shard.index, shard.count, shard.depth + 1
    new, cands, cand_fps = shard._new, shard._cands, shard._cand_fps
    own_fp, own_parent, own_depth = shard.own_fp, shard.own_parent, shard.own_depth
    mine = []
    for (g, (post, f)), v in zip(pend.items(), visited):
        if v:
            continue
        if count == 1 or g % count == index:
            new.add(g)
            own_fp.append(g)
            own_parent.append(f)
            own_depth.append(d)
            mine.append((post, g))
        else:
            cands.add(post, g)
            cand_fps.add(g)
            c = claims[g % count]
            c.append(g)
            c.append(f)
    shard._next.take(mine)


def _check(checks, ps, found: dict, found_type, length: int, f: int, s, step) -> None:
    """Check the properties ``ps`` on state ``s`` (``step`` None: an always property) or on ``step``
    from ``s``; record what they find (``found``) and drop the properties now settled."""
    hit = False
    p: Property
    for p in ps:
        if (p.check(s) if step is None else p.check(s, step)):
            found[p.id] = found_type(p.id, length, f, None if step is None else step.action)
            hit = True
    if hit:
        checks.settle(found)
