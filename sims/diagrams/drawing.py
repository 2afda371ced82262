"""Drawing graphs with matplotlib on a small layered layout (no Graphviz binary here).

Sugiyama style: ranks from the initial state, dummy points for edges that
skip a rank, barycentre ordering, labels placed where they overlap nothing;
ranks left to right, or top to bottom when that would be a long strip
(``_choose_layout``); edge ends that meet on a box side are spread apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from statemachine import StateMachine

from .lifecycle import Lifecycle
from .machines import doc_line, machine_edges

# ---------------------------------------------------------------------------
# Drawing graphs with matplotlib: a small layered layout
# ---------------------------------------------------------------------------

FONT = "DejaVu Sans"
_NODE_PT = 11.0
_EDGE_PT = 9.5
LINE_HEIGHT = 1.25  # line height, in font sizes
_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#ff7f0e", "#7f7f7f")


@lru_cache(maxsize=None)
def _renderer():
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(10, 10, 72)  # 72 dpi: one pixel per point


@lru_cache(maxsize=4096)
def text_size(text: str, size: float, weight: str = "normal") -> tuple[float, float]:
    """(width, height) of a possibly multi-line text, in inches."""
    from matplotlib.font_manager import FontProperties

    prop = FontProperties(family=FONT, size=size, weight=weight)
    lines = text.split("\n")
    w = max(_renderer().get_text_width_height_descent(line or " ", prop, ismath=False)[0] for line in lines)
    return w / 72.0, len(lines) * size * LINE_HEIGHT / 72.0


@dataclass
class _Graph:
    title: str
    subtitle: str
    nodes: list[str]  # ids, in the layout's starting order (discovery order)
    labels: dict[str, str]
    initial: str
    finals: set[str]
    edges: list[tuple[str, str, str]]  # (u, v, label), one per ordered pair
    bad: dict[str, str] = field(default_factory=dict)  # node -> text of the violation


def _ranks(g: _Graph) -> dict[str, int]:
    """Ranks: BFS depth from the initial node, then pushed right along one-way edges.

    An edge u -> v that is not a DFS back edge and has no reverse edge v -> u
    puts v at least one rank right of u; a pair of opposite edges may share a
    rank (drawn one above the other) or be adjacent (drawn as two arcs).
    """
    succ: dict[str, list[str]] = {n: [] for n in g.nodes}
    pairs = set()
    for u, v, _ in g.edges:
        if u != v:
            succ[u].append(v)
            pairs.add((u, v))
    depth = {g.initial: 0}
    queue = [g.initial]
    for n in queue:
        for m in succ[n]:
            if m not in depth:
                depth[m] = depth[n] + 1
                queue.append(m)
    for n in g.nodes:
        depth.setdefault(n, 0)
    back: set[tuple[str, str]] = set()
    mark: dict[str, int] = {}

    def dfs(n: str) -> None:
        mark[n] = 1
        for m in succ[n]:
            if mark.get(m) == 1:
                back.add((n, m))
            elif m not in mark:
                dfs(m)
        mark[n] = 2

    for n in [g.initial] + g.nodes:
        if n not in mark:
            dfs(n)
    cons = [(u, v) for u, v, _ in g.edges if u != v and (u, v) not in back and (v, u) not in pairs]
    for _ in range(len(g.nodes) + 1):  # the constraints form a DAG: at most n rounds
        changed = False
        for u, v in cons:
            if depth[v] < depth[u] + 1:
                depth[v] = depth[u] + 1
                changed = True
        if not changed:
            break
    used = sorted(set(depth.values()))
    return {n: used.index(d) for n, d in depth.items()}


@dataclass
class _Layout:
    pos: dict[str, tuple[float, float]]  # node/dummy -> centre (inches; y grows downwards)
    size: dict[str, tuple[float, float]]  # node -> (w, h)
    routes: list[list[str]]  # per edge: node, dummies..., node
    vertical: bool = False  # ranks go down the page (else left to right)


def _crossings(layers: list[list[str]], segs: set[tuple[str, str]], rank: dict[str, int]) -> int:
    total = 0
    for r in range(len(layers) - 1):
        idx = {n: i for i, n in enumerate(layers[r])}
        idx2 = {n: i for i, n in enumerate(layers[r + 1])}
        pairs = []
        for a, b in segs:
            if rank[a] == r and rank[b] == r + 1:
                pairs.append((idx[a], idx2[b]))
            elif rank[b] == r and rank[a] == r + 1:
                pairs.append((idx[b], idx2[a]))
        for i in range(len(pairs)):
            for j in range(i + 1, len(pairs)):
                (a1, b1), (a2, b2) = pairs[i], pairs[j]
                if (a1 - a2) * (b1 - b2) < 0:
                    total += 1
    return total


def _keep_together(layer: list[str], same: list[tuple[str, str]]) -> list[str]:
    """Move the second end of each same-rank edge next to the first."""
    layer = list(layer)
    for a, b in same:
        if a in layer and b in layer:
            i, j = layer.index(a), layer.index(b)
            if abs(i - j) > 1:
                layer.remove(b)
                i = layer.index(a)
                layer.insert(i + 1 if j > i else i, b)
    return layer


def _layout(g: _Graph, vertical: bool = False) -> _Layout:
    rank = _ranks(g)
    size = {}
    for n in g.nodes:
        text = g.labels[n] + ("\n" + g.bad[n] if n in g.bad else "")
        w, h = text_size(text, _NODE_PT)
        size[n] = (max(w + 0.36, 1.0), h + 0.26)
    routes: list[list[str]] = []
    for k, (u, v, _) in enumerate(g.edges):
        ru, rv = rank[u], rank[v]
        route = [u]
        if abs(ru - rv) > 1:
            step = 1 if rv > ru else -1
            for i, r in enumerate(range(ru + step, rv, step)):
                d = f"\0d{k}.{i}"
                rank[d] = r
                route.append(d)
        route.append(v)
        routes.append(route)
    nlayers = max(rank.values()) + 1
    layers: list[list[str]] = [[] for _ in range(nlayers)]
    for n in g.nodes:
        layers[rank[n]].append(n)
    for route in routes:
        for d in route[1:-1]:
            layers[rank[d]].append(d)
    segs = {(a, b) for route in routes for a, b in zip(route, route[1:]) if abs(rank[a] - rank[b]) == 1}
    # Edges within a rank: their ends are kept next to each other.
    same = sorted({tuple(sorted((u, v))) for u, v, _ in g.edges if u != v and rank[u] == rank[v]})
    layers = [_keep_together(layer, same) for layer in layers]
    nbrs: dict[str, list[str]] = {n: [] for layer in layers for n in layer}
    for a, b in segs:
        nbrs[a].append(b)
        nbrs[b].append(a)
    best = [list(layer) for layer in layers]
    best_x = _crossings(best, segs, rank)
    for it in range(8):
        down = it % 2 == 0
        order = range(1, nlayers) if down else range(nlayers - 2, -1, -1)
        for r in order:
            ref = {n: i for i, n in enumerate(layers[r - 1 if down else r + 1])}
            cur = {n: i for i, n in enumerate(layers[r])}

            def key(n: str) -> float:
                ps = [ref[m] for m in nbrs[n] if m in ref]
                return sum(ps) / len(ps) if ps else cur[n]

            layers[r] = _keep_together(sorted(layers[r], key=lambda n: (key(n), cur[n])), same)
        x = _crossings(layers, segs, rank)
        if x < best_x:
            best, best_x = [list(layer) for layer in layers], x
    layers = best
    return _place(g, layers, rank, size, routes, same, vertical)


def _place(g: _Graph, layers, rank, size, routes, same, vertical: bool) -> _Layout:
    """Coordinates: ranks left to right (or top to bottom when ``vertical``), each gap between
    ranks wide enough for the widest (or tallest) label of an edge crossing it."""
    along = 1 if vertical else 0  # the axis ranks follow
    nlayers = len(layers)
    widths = [max((size[n][along] for n in layer if n in size), default=0.3) for layer in layers]
    gap = [0.75 if vertical else 1.0] * max(nlayers - 1, 0)
    for (u, v, label), route in zip(g.edges, routes):
        lw = text_size(label, _EDGE_PT)[along] + (0.5 if vertical else 0.9)
        for a, b in zip(route, route[1:]):
            lo = min(rank[a], rank[b])
            if rank[a] != rank[b]:
                gap[lo] = max(gap[lo], lw)
    xs = [0.0]
    for r in range(1, nlayers):
        xs.append(xs[-1] + widths[r - 1] / 2 + gap[r - 1] + widths[r] / 2)
    pos: dict[str, tuple[float, float]] = {}
    across = 0 if vertical else 1
    for r, layer in enumerate(layers):
        hs = [size[n][across] if n in size else 0.2 for n in layer]
        if vertical:  # side by side: room for the labels of the edges that pass between
            gaps = [1.6 if (min(a, b), max(a, b)) in same else 1.1 if (a in size or b in size) else 0.45
                    for a, b in zip(layer, layer[1:])]
        else:
            gaps = [1.05 if (min(a, b), max(a, b)) in same else 0.75 if (a in size or b in size) else 0.35
                    for a, b in zip(layer, layer[1:])]
        total = sum(hs) + sum(gaps)
        y = -total / 2
        for i, n in enumerate(layer):
            pos[n] = (y + hs[i] / 2, xs[r]) if vertical else (xs[r], y + hs[i] / 2)
            y += hs[i] + (gaps[i] if i < len(gaps) else 0)
    return _Layout(pos, size, routes, vertical)


def _clip(c: tuple[float, float], toward: tuple[float, float], half: tuple[float, float], pad: float = 0.04):
    """Where the ray from box centre c toward a point leaves the box (with padding)."""
    dx, dy = toward[0] - c[0], toward[1] - c[1]
    if dx == 0 and dy == 0:
        return c
    hw, hh = half[0] + pad, half[1] + pad
    t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return (c[0] + dx * t, c[1] + dy * t)


def _bezier(p0, p1, p2, p3, n=24) -> list[tuple[float, float]]:
    out = []
    for i in range(n + 1):
        t = i / n
        a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t**2, t**3
        out.append((a * p0[0] + b * p1[0] + c * p2[0] + d * p3[0], a * p0[1] + b * p1[1] + c * p2[1] + d * p3[1]))
    return out


def _edge_curve(g: _Graph, lay: _Layout, k: int, reverse: set[tuple[str, str]], rank_y_same: bool):
    """Control polygon of edge k as cubic Bezier segments [(p0, p1, p2, p3), ...]."""
    u, v, _ = g.edges[k]
    route = lay.routes[k]
    pos, size = lay.pos, lay.size
    half = lambda n: (size[n][0] / 2, size[n][1] / 2)  # noqa: E731
    if u == v:  # a self-loop above the node
        (x, y), (hw, hh) = pos[u], half(u)
        a, b = (x - hw * 0.35, y - hh - 0.02), (x + hw * 0.35, y - hh - 0.02)
        return [(a, (a[0] - 0.3, a[1] - 0.75), (b[0] + 0.3, b[1] - 0.75), b)]
    pts = [pos[n] for n in route]
    if len(pts) == 2:
        (x0, y0), (x1, y1) = pts
        dist = math.hypot(x1 - x0, y1 - y0)
        bend = 0.0
        if (v, u) in reverse:
            bend = 0.18  # two opposite edges: two arcs, one on each side
        if rank_y_same and abs((y1 - y0) if lay.vertical else (x1 - x0)) < 1e-9:  # within one rank
            bend = 0.28 if (v, u) in reverse else 0.22
        nx, ny = (-(y1 - y0) / dist, (x1 - x0) / dist) if dist else (0, 0)
        mid = ((x0 + x1) / 2 + nx * bend * dist, (y0 + y1) / 2 + ny * bend * dist)
        a = _clip(pts[0], mid if bend else pts[1], half(u))
        b = _clip(pts[1], mid if bend else pts[0], half(v))
        if not bend:
            return [(a, (a[0] * 2 / 3 + b[0] / 3, a[1] * 2 / 3 + b[1] / 3), (a[0] / 3 + b[0] * 2 / 3, a[1] / 3 + b[1] * 2 / 3), b)]
        # quadratic (a, mid', b) as cubic, with mid' the control giving the arc
        c = (2 * mid[0] - (a[0] + b[0]) / 2, 2 * mid[1] - (a[1] + b[1]) / 2)
        return [(a, (a[0] + 2 / 3 * (c[0] - a[0]), a[1] + 2 / 3 * (c[1] - a[1])),
                 (b[0] + 2 / 3 * (c[0] - b[0]), b[1] + 2 / 3 * (c[1] - b[1])), b)]
    # Through dummy points: a Catmull-Rom spline, clipped at both boxes.
    pts[0] = _clip(pts[0], pts[1], half(u))
    pts[-1] = _clip(pts[-1], pts[-2], half(v))
    segs = []
    ext = [pts[0]] + pts + [pts[-1]]
    for i in range(len(pts) - 1):
        p0, p1, p2, p3 = ext[i], ext[i + 1], ext[i + 2], ext[i + 3]
        c1 = (p1[0] + (p2[0] - p0[0]) / 6, p1[1] + (p2[1] - p0[1]) / 6)
        c2 = (p2[0] - (p3[0] - p1[0]) / 6, p2[1] - (p3[1] - p1[1]) / 6)
        segs.append((p1, c1, c2, p2))
    return segs


def _overlap(a, b) -> float:
    """Overlap area of two boxes (x0, y0, x1, y1)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


#: A drawing wider than this many times its height is laid out top to bottom instead
#: (read at page width, a long strip's labels would be tiny).
_MAX_ASPECT = 2.6
#: Edge ends closer than this on one side of a box are spread along it (inches).
_MIN_PORT = 0.22


def _extent(lay: _Layout, g: _Graph) -> tuple[float, float]:
    xs = [lay.pos[n][0] + d * lay.size[n][0] / 2 for n in g.nodes for d in (-1, 1)]
    ys = [lay.pos[n][1] + d * lay.size[n][1] / 2 for n in g.nodes for d in (-1, 1)]
    return max(xs) - min(xs), max(ys) - min(ys)


def _choose_layout(g: _Graph) -> _Layout:
    """Left to right, unless that is a strip more than ``_MAX_ASPECT`` times wider than tall
    and top to bottom is less lopsided."""
    lay = _layout(g)
    w, h = _extent(lay, g)
    if w > _MAX_ASPECT * max(h, 0.1):
        tall = _layout(g, vertical=True)
        tw, th = _extent(tall, g)
        if max(tw / th, th / tw) < w / max(h, 0.1):
            return tall
    return lay


def _wrap_to(text: str, size: float, width: float) -> str:
    """``text`` broken between words into lines at most ``width`` inches wide (a word wider stays whole)."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_size(f"{lines[-1]} {word}", size)[0] <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines)


def _spread_ends(curves: list[list], g: _Graph, lay: _Layout) -> None:
    """Edge ends that meet one side of a box at nearly one point (two arrowheads on top of
    each other) are spread evenly along that side; each end's neighbouring control point moves
    with it, so the curve keeps its direction."""
    ends: dict[tuple[str, str], list[list]] = {}
    for k, segs in enumerate(curves):
        u, v, _ = g.edges[k]
        if u == v:
            continue
        for node, si, which in ((u, 0, 0), (v, len(segs) - 1, 3)):
            px, py = segs[si][which]
            (cx, cy), (w, h) = lay.pos[node], lay.size[node]
            if abs(px - cx) / w >= abs(py - cy) / h:  # on the left or right side
                side, along, lo, hi = ("R" if px > cx else "L"), py, cy - h / 2, cy + h / 2
            else:
                side, along, lo, hi = ("B" if py > cy else "T"), px, cx - w / 2, cx + w / 2
            ends.setdefault((node, side), []).append([along, k, si, which, lo, hi, side in "LR"])
    for items in ends.values():
        items.sort(key=lambda e: (e[0], e[1]))
        if len(items) < 2 or all(b[0] - a[0] >= _MIN_PORT for a, b in zip(items, items[1:])):
            continue
        lo, hi, vertical_side = items[0][4] + 0.08, items[0][5] - 0.08, items[0][6]
        step = min(_MIN_PORT, (hi - lo) / (len(items) - 1))
        first = sum(e[0] for e in items) / len(items) - step * (len(items) - 1) / 2
        first = min(max(first, lo), hi - step * (len(items) - 1))
        for i, (along, k, si, which, *_) in enumerate(items):
            delta = first + i * step - along
            move = (0.0, delta) if vertical_side else (delta, 0.0)
            seg = list(curves[k][si])
            near = 1 if which == 0 else 2
            for j in (which, near):
                seg[j] = (seg[j][0] + move[0], seg[j][1] + move[1])
            curves[k][si] = tuple(seg)


def _place_labels(g: _Graph, lay: _Layout, curves: list[list], boxes: list) -> tuple[list, list]:
    """Label placement: along each edge, the first spot overlapping nothing placed (else the
    least overlap). Returns the label boxes and ``(edge index, centre)`` of each label."""
    placed: list[tuple[float, float, float, float]] = []
    spots = []
    samples = [[p for seg in segs for p in _bezier(*seg, n=40)] for segs in curves]
    order = sorted(range(len(g.edges)), key=lambda k: (len(lay.routes[k]), k))
    tries = (0.5, 0.42, 0.58, 0.34, 0.66, 0.27, 0.73, 0.2, 0.8, 0.14, 0.86)
    for k in order:
        label = g.edges[k][2]
        w, h = text_size(label, _EDGE_PT)
        w, h = w + 0.12, h + 0.06
        poly = [p for seg in curves[k] for p in _bezier(*seg)]
        cum = [0.0]
        for a, b in zip(poly, poly[1:]):
            cum.append(cum[-1] + math.hypot(b[0] - a[0], b[1] - a[1]))
        best = None
        for t in tries:
            target = t * cum[-1]
            i = next((i for i, c in enumerate(cum) if c >= target), len(cum) - 1)
            x, y = poly[i]
            box = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
            cost = sum(_overlap(box, o) for o in boxes) * 4 + sum(_overlap(box, o) for o in placed) * 2
            cost += 0.004 * sum(
                1 for j, pts in enumerate(samples) if j != k for px, py in pts
                if box[0] <= px <= box[2] and box[1] <= py <= box[3]
            )
            if best is None or cost < best[0] - 1e-9:
                best = (cost, box, (x, y))
            if cost == 0:
                break
        placed.append(best[1])
        spots.append((k, best[2]))

    return placed, spots


def _draw_nodes(ax, g: _Graph, pos: dict, size: dict) -> None:
    """Each node as a rounded box (red with its violation when it breaks a property, a double
    border when final) with its label."""
    from matplotlib.patches import FancyBboxPatch

    for n in g.nodes:
        (x, y), (w, h) = pos[n], size[n]
        bad = n in g.bad
        fc, ec, lw = ("#fde0e0", "#c00000", 2.6) if bad else ("#eef3fb", "#2b4a7a", 1.4)
        ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.12",
                                    fc=fc, ec=ec, lw=lw, zorder=3))
        if n in g.finals:  # a double border
            ax.add_patch(FancyBboxPatch((x - w / 2 + 0.06, y - h / 2 + 0.06), w - 0.12, h - 0.12,
                                        boxstyle="round,pad=0,rounding_size=0.08", fc="none", ec=ec, lw=1.0, zorder=3))
        text = g.labels[n]
        if bad:
            ax.text(x, y - h / 2 + 0.13, text, fontsize=_NODE_PT, ha="center", va="top", family=FONT, zorder=5,
                    linespacing=LINE_HEIGHT, parse_math=False)
            ax.text(x, y + h / 2 - 0.13, g.bad[n], fontsize=_NODE_PT, ha="center", va="bottom", color="#b00000",
                    weight="bold", family=FONT, zorder=5, linespacing=LINE_HEIGHT, parse_math=False)
        else:
            ax.text(x, y, text, fontsize=_NODE_PT, ha="center", va="center", family=FONT, zorder=5,
                    linespacing=LINE_HEIGHT, parse_math=False)


def _draw_graph(g: _Graph, path: Path) -> Path:
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle, FancyArrowPatch
    from matplotlib.path import Path as MPath

    lay = _choose_layout(g)
    pos, size = lay.pos, lay.size
    pairs = {(u, v) for u, v, _ in g.edges}
    curves = [list(_edge_curve(g, lay, k, pairs, True)) for k in range(len(g.edges))]
    _spread_ends(curves, g, lay)
    labels = sorted({label for _, _, label in g.edges})
    color = {label: _PALETTE[i % len(_PALETTE)] for i, label in enumerate(labels)}

    # Obstacles for labels: node boxes (with a margin).
    boxes = []
    for n in g.nodes:
        (x, y), (w, h) = pos[n], size[n]
        boxes.append((x - w / 2 - 0.06, y - h / 2 - 0.06, x + w / 2 + 0.06, y + h / 2 + 0.06))
    ix, iy = pos[g.initial]
    if lay.vertical:  # the initial arrow comes from above (else from the left)
        start, entry = (ix, iy - size[g.initial][1] / 2 - 0.55), (ix, iy - size[g.initial][1] / 2 - 0.04)
    else:
        start, entry = (ix - size[g.initial][0] / 2 - 0.55, iy), (ix - size[g.initial][0] / 2 - 0.04, iy)
    boxes.append((start[0] - 0.1, start[1] - 0.1, start[0] + 0.1, start[1] + 0.1))
    placed, spots = _place_labels(g, lay, curves, boxes)

    # Extent of the drawing, in inches.
    xs = [b[0] for b in boxes + placed] + [b[2] for b in boxes + placed]
    ys = [b[1] for b in boxes + placed] + [b[3] for b in boxes + placed]
    for segs in curves:
        for seg in segs:
            for p in _bezier(*seg, n=8):
                xs.append(p[0])
                ys.append(p[1])
    title_w, title_h = text_size(g.title, 13, "bold")
    margin = 0.3
    x0, x1 = min(xs) - margin, max(xs) + margin
    subtitle = _wrap_to(g.subtitle, 9.5, max(x1 - x0, title_w + 2 * margin) - 2 * margin)
    sub_w, sub_h = text_size(subtitle, 9.5) if subtitle else (0, 0)
    width = max(x1 - x0, title_w + 2 * margin, sub_w + 2 * margin)
    x1 = x0 + width
    top = title_h + sub_h + 0.25
    y0, y1 = min(ys) - margin - top, max(ys) + margin
    fig = Figure(figsize=(width, y1 - y0))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(x0, x1)
    ax.set_ylim(y1, y0)
    ax.set_axis_off()
    ax.text(x0 + margin, y0 + 0.15, g.title, fontsize=13, weight="bold", va="top", ha="left", family=FONT, parse_math=False)
    if subtitle:
        ax.text(x0 + margin, y0 + 0.2 + title_h, subtitle, fontsize=9.5, va="top", ha="left", color="#444444",
                family=FONT, parse_math=False)

    # Edges.
    for k, segs in enumerate(curves):
        verts = [segs[0][0]]
        codes = [MPath.MOVETO]
        for _, c1, c2, p in segs:
            verts += [c1, c2, p]
            codes += [MPath.CURVE4] * 3
        col = color[g.edges[k][2]]
        ax.add_patch(FancyArrowPatch(path=MPath(verts, codes), arrowstyle="-|>,head_length=0.5,head_width=0.25",
                                     mutation_scale=14, color=col, lw=1.4, zorder=2))
    for k, (x, y) in spots:
        label = g.edges[k][2]
        ax.text(x, y, label, fontsize=_EDGE_PT, ha="center", va="center", color=color[label], family=FONT, zorder=4,
                linespacing=LINE_HEIGHT, parse_math=False,
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec=color[label], lw=0.6, alpha=0.95))
    _draw_nodes(ax, g, pos, size)
    # The initial state: a filled dot with an arrow into it.
    ax.add_patch(Circle(start, 0.08, color="black", zorder=3))
    ax.add_patch(FancyArrowPatch(start, entry, arrowstyle="-|>,head_length=0.5,head_width=0.25",
                                 mutation_scale=14, color="black", lw=1.4, shrinkA=5, shrinkB=0, zorder=2))
    return save_figure(fig, path)


def save_figure(fig, path: Path) -> Path:
    """Write the figure as .png or .svg, byte for byte the same on every run (no dates, fixed salt)."""
    import matplotlib

    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise ValueError(f"cannot draw {path}: choose a .png or .svg file name")
    with matplotlib.rc_context({"svg.hashsalt": "acp-lifecycle", "svg.fonttype": "path", "path.simplify": True}):
        if fmt == "svg":
            fig.savefig(path, format="svg", metadata={"Date": None, "Creator": None})
        else:
            fig.savefig(path, format="png", dpi=150, metadata={"Software": None})
    return path


def _machine_graph(machine: type[StateMachine]) -> _Graph:
    by_pair: dict[tuple[str, str], list[str]] = {}
    for src, dst, event in machine_edges(machine):
        by_pair.setdefault((src, dst), []).append(event)
    nodes = [s.id for s in machine.states]
    return _Graph(
        title=machine.__name__,
        subtitle=doc_line(machine),
        nodes=nodes,
        labels={n: n for n in nodes},
        initial=next(s.id for s in machine.states if s.initial),
        finals={s.id for s in machine.states if s.final},
        edges=[(u, v, "\n".join(ev)) for (u, v), ev in by_pair.items()],
    )


def draw_machine(machine: type[StateMachine], path: str | Path) -> Path:
    """Draw a machine class as PNG or SVG (by the suffix of ``path``)."""
    return _draw_graph(_machine_graph(machine), Path(path))


def _lifecycle_graph(lc: Lifecycle) -> _Graph:
    ids = {n: "/".join(n) for n in lc.nodes}
    return _Graph(
        title=lc.title,
        subtitle=f"{lc.states} states of the composed model, projected: each box is the foreground state (top) "
        "and the first prompt's phase (bottom)",
        nodes=[ids[n] for n in lc.discovered],
        labels={ids[n]: "\n".join(n) for n in lc.nodes},
        initial=ids[lc.initial],
        finals=set(),
        edges=[(ids[u], ids[v], "\n".join(a)) for (u, v), a in lc.edges.items()],
        bad={ids[n]: "violates:\n" + "\n".join(p) for n, p in lc.violations.items()},
    )


def draw_lifecycle(lc: Lifecycle, path: str | Path) -> Path:
    """Draw a lifecycle projection as PNG or SVG; failing nodes are red."""
    return _draw_graph(_lifecycle_graph(lc), Path(path))


