"""Graph algorithms of the search on integer edge arrays (numpy): edge positions, CSR
adjacency, bottom strongly connected components (for ``eventually``), and the
cyclic core (states on or after a cycle)."""

from __future__ import annotations

import numpy as np

__all__ = ["cyclic_core", "cyclic_core_csr"]


def edge_positions(edges: np.ndarray, fps: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``pos[index of each edge's fingerprint in fps]``, written over the edges'
    own buffer when it is writable (the int32 results fill its first half:
    each chunk is read before its results land, on bytes already read)."""
    if not edges.flags.writeable:
        edges = edges.copy()
    res = edges.view(np.uint8).view(pos.dtype)[: len(edges)] if pos.itemsize <= 8 else None
    chunk = 1 << 16
    for i in range(0, len(edges), chunk):
        res[i : i + chunk] = pos[np.searchsorted(fps, edges[i : i + chunk])]
    return res


def _csr(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An edge list as offsets per source and targets grouped by source."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    out = dst[np.argsort(src, kind="stable")]
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=start[1:])
    return start, out


def _out_edges(start: np.ndarray, out: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges leaving ``nodes``: sources and targets."""
    lo, hi = start[nodes].astype(np.int64), start[nodes + 1].astype(np.int64)
    cnt = hi - lo
    total = int(cnt.sum())
    idx = np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(total)
    return np.repeat(nodes, cnt), out[idx]


def _targets(start: np.ndarray, out: np.ndarray, nodes: np.ndarray, most: int = 1 << 16):
    """The targets of the edges leaving ``nodes``, in pieces of about ``most`` edges."""
    cnt = (start[nodes + 1] - start[nodes]).astype(np.int64)
    ends = np.cumsum(cnt)
    a = 0
    while a < len(nodes):
        b = max(a + 1, int(np.searchsorted(ends, (ends[a - 1] if a else 0) + most, "right")))
        yield _out_edges(start, out, nodes[a:b])[1]
        a = b


def _bottom_cycles(n: int, src: np.ndarray, dst: np.ndarray):
    """The bottom strongly connected components that are not single terminal states."""
    return bottom_cycles_csr(n, *_csr(n, src, dst))


def bottom_cycles_csr(n: int, start: np.ndarray, out: np.ndarray):
    core = cyclic_core_csr(n, start, out)
    if not len(core):
        return []
    import networkx as nx

    src, dst = _out_edges(start, out, core)  # the core is closed under successors
    g = nx.DiGraph()
    g.add_nodes_from(core.tolist())
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    comps = []
    for comp in nx.attracting_components(g):
        if len(comp) == 1:
            (v,) = comp
            if not g.has_edge(v, v):
                continue  # a terminal state
        comps.append(np.array(sorted(comp), dtype=np.int64))
    comps.sort(key=lambda c: int(c[0]))
    return comps


def cyclic_core(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The states Kahn's algorithm cannot remove: those on or after a cycle (sorted ids).

    The set is closed under successors, so the bottom SCCs of the whole graph
    that are not terminal states are exactly its attracting components.
    """
    return cyclic_core_csr(n, *_csr(n, src, dst))


def _unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` without its test for masked arrays (which loads numpy.ma)."""
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if len(a) else a


def cyclic_core_csr(n: int, start: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``cyclic_core`` on a graph as offsets and targets grouped by source.

    Vectorised: one numpy pass per layer of the acyclic part.
    """
    indeg = np.zeros(n, dtype=np.int32)
    for i in range(0, len(out), 1 << 18):  # np.bincount would copy out as int64
        np.add.at(indeg, out[i : i + (1 << 18)], 1)
    layer = np.nonzero(indeg == 0)[0]
    removed = np.zeros(n, dtype=bool)
    while len(layer):
        removed[layer] = True
        nxt = []
        for targets in _targets(start, out, layer):
            np.subtract.at(indeg, targets, 1)
            nxt.append(targets[indeg[targets] == 0])
        layer = _unique(np.concatenate(nxt)) if nxt else nxt
    return np.nonzero(~removed)[0]
