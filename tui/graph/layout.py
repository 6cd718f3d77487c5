"""Where each box of a graph goes, in character cells: Graphviz for small graphs, our own above.

A :class:`Layout` places one box per node (or per collapsed module) on a
grid of terminal cells, top to bottom in forward order: inputs and
parameters at the top, the loss at the bottom. Boxes sit in *bands* (ranks):
every box of a band starts on the band's first row, bands are
:data:`GAP_ROWS` rows apart (room for the edges that
:mod:`tui.graph.canvas` routes between them) and boxes in a band are at
least :data:`GAP_COLS` columns apart.

Two engines compute the positions:

``dot``      Graphviz (``dot -Tplain``) on a DOT text we write, boxes sized in
             cells (1 column = 0.1 inch, fixed size), op-to-op edges heavier
             than a leaf's so the main chain runs straight. No ``cluster``
             subgraphs: on a chain of modules dot draws them as a staircase
             (a 40-node MLP became 350 columns wide instead of 90). Only its
             ranks and x positions are used: the edges are routed by
             :mod:`~tui.graph.canvas`, so ``splines=false``; ``nslimit``,
             ``mclimit`` and ``searchsize`` bound its network-simplex and
             crossing-minimisation work.
``layered``  our own Sugiyama-style layout: longest-path layers (sources pulled
             down next to their first consumer), dummy nodes on long edges,
             barycentre ordering sweeps, then x positions pulled towards the
             neighbours' centres. No Graphviz needed.

Why both (measured on this project's 2-core machine, ``bench/tui_graph.py``):
dot lays out 300 nodes in ~0.08 s but 2,000 in ~5 s even with the limits
above (crossing minimisation and x placement grow much faster than
linearly), and on long chains of blocks it drifts sideways into a staircase
(2,000 nodes: 2,083 columns wide); ``layered`` lays out, routes and paints
the same 2,000 nodes in ~0.3 s, 91 columns wide. So ``engine="auto"`` uses
dot up to :data:`DOT_MAX_NODES` boxes and ``layered`` above (and whenever
dot is missing, fails or runs past :data:`DOT_TIMEOUT`; :attr:`Layout.note`
then says why, with the install hint).

Layouts are cached by ``(shape_key, collapsed modules, focus, radius,
engine)``: stepping through an iteration changes only node states, so nodes
never move.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gradlab.debug.graph import op_label

from . import layered

if TYPE_CHECKING:
    from gradlab.debug.snapshot import GraphSnapshot, NodeSnapshot

__all__ = ["Box", "Frame", "Layout", "GraphvizMissing", "layout_graph", "node_module",
           "box_lines", "INSTALL_HINT", "DOT_MAX_NODES", "GAP_ROWS", "GAP_COLS", "stats"]

GAP_ROWS = 3  # rows between two bands: two lanes for horizontal edge runs, one for arrows
GAP_COLS = 2  # columns between two boxes of a band
MAX_TEXT = 22  # widest label shown in a box (longer ones are clipped with "…")
DOT_MAX_NODES = 300
DOT_TIMEOUT = 5.0
CACHE_SIZE = 32
INCH_PER_COL = 0.1
INSTALL_HINT = ("Graphviz's `dot` program is not installed, so the graph is laid out by "
                "gradlab's simple built-in layout. For Graphviz's layout install it: "
                "`sudo apt install graphviz` (or `bash .ci/setup` in the gradlab repo; "
                "macOS: `brew install graphviz`), then check that `dot -V` runs.")


class GraphvizMissing(RuntimeError):
    """Graphviz's ``dot`` program is not on PATH."""


@dataclass(frozen=True)
class Box:
    key: str  # node key, or "module:<path>" for a collapsed module
    x: int
    y: int
    w: int
    h: int
    lines: tuple[str, ...]  # label, then shape (or "5 nodes" for a module)
    kind: str  # op, parameter, input, leaf, module
    band: int

    @property
    def center(self) -> tuple[int, int]:
        return self.x + self.w // 2, self.y + self.h // 2

    def contains(self, x: int, y: int) -> bool:
        return self.x <= x < self.x + self.w and self.y <= y < self.y + self.h


@dataclass(frozen=True)
class Frame:
    path: str  # module path, drawn as the frame's title
    x: int
    y: int
    w: int
    h: int
    depth: int


@dataclass
class Layout:
    boxes: dict[str, Box]  # by box key, in record order
    edges: tuple[tuple[str, str], ...]  # between box keys, no duplicates or self loops
    frames: tuple[Frame, ...]
    band_top: tuple[int, ...]  # first row of each band
    band_bottom: tuple[int, ...]  # last row of each band
    width: int
    height: int
    engine: str  # "dot" or "layered"
    owner: dict[str, str] = field(default_factory=dict)  # node key -> its box key
    hints: dict = field(default_factory=dict)  # (src, tgt) -> x per band in between
    note: str | None = None  # why the layered engine was used instead of dot

    def box_at(self, x: int, y: int) -> Box | None:
        for b in self.boxes.values():
            if b.contains(x, y):
                return b
        return None


stats = {"dot_runs": 0, "layouts": 0}
_cache: OrderedDict = OrderedDict()


def node_module(node: NodeSnapshot) -> str | None:
    """The module a node belongs to (a parameter: the module that owns it, from its name)."""
    if node.module:
        return node.module
    if node.kind == "parameter" and "." in node.label:
        return node.label.rsplit(".", 1)[0]
    return None


def _shape_text(node: NodeSnapshot) -> str | None:
    shape = node.output_shapes[0] if node.output_shapes else (
        node.value.shape if node.value is not None else None)
    if shape is None:
        return None
    return "×".join(str(d) for d in shape) if shape else "scalar"


TANGENT_MARK = "\u1e8b"  # ẋ: the value carries a forward-mode tangent


def box_lines(node: NodeSnapshot) -> tuple[str, ...]:
    """The text of a node's box: its label, and its (output) shape when known, marked ẋ
    when its value carries a forward-mode tangent."""
    shape = _shape_text(node)
    if node.tangent is not None:
        shape = f"{shape or ''} {TANGENT_MARK}".strip()
    # (the label stays the op's name: breakpoints match on it; a cast's box adds its dtype)
    label = op_label(node.label, node.dtype) if node.kind == "op" and node.label else \
        (node.label or node.key)
    return (label,) if shape is None else (label, shape)


def _size(lines: tuple[str, ...]) -> tuple[int, int]:
    return min(max(len(s) for s in lines), MAX_TEXT) + 4, len(lines) + 2


def _collapsed_root(module: str | None, collapsed: frozenset[str]) -> str | None:
    if not module or not collapsed:
        return None
    parts = module.split(".")
    for i in range(1, len(parts) + 1):  # the outermost collapsed ancestor wins
        path = ".".join(parts[:i])
        if path in collapsed:
            return path
    return None


def _prepare(graph: GraphSnapshot, collapsed: frozenset[str], focus: str | None, radius: int):
    """Boxes (key -> lines, kind, module), box edges and the node -> box map."""
    info: dict[str, list] = {}
    owner: dict[str, str] = {}
    counts: dict[str, int] = {}
    for n in graph.nodes:
        module = node_module(n)
        root = _collapsed_root(module, collapsed)
        if root is None:
            owner[n.key] = n.key
            info[n.key] = [box_lines(n), n.kind, module]
        else:
            key = "module:" + root
            owner[n.key] = key
            counts[key] = counts.get(key, 0) + 1
            parent = root.rsplit(".", 1)[0] if "." in root else None
            info.setdefault(key, [(), "module", parent])
    for key, c in counts.items():
        info[key][0] = (key[7:] or "model", f"{c} node{'s' if c != 1 else ''}")
    edges = list(dict.fromkeys(
        (owner[e.source], owner[e.target]) for e in graph.edges
        if e.source in owner and e.target in owner and owner[e.source] != owner[e.target]))
    if focus is not None:
        keep = _neighbourhood(owner.get(focus, focus), edges, radius)
        info = {k: v for k, v in info.items() if k in keep}
        edges = [e for e in edges if e[0] in keep and e[1] in keep]
        owner = {k: v for k, v in owner.items() if v in keep}
    return info, edges, owner


def _neighbourhood(center: str, edges, radius: int) -> set[str]:
    near: dict[str, list[str]] = {}
    for s, t in edges:
        near.setdefault(s, []).append(t)
        near.setdefault(t, []).append(s)
    seen = {center}
    todo = deque([(center, 0)])
    while todo:
        k, d = todo.popleft()
        if d < radius:
            for m in near.get(k, ()):
                if m not in seen:
                    seen.add(m)
                    todo.append((m, d + 1))
    return seen


def layout_graph(graph: GraphSnapshot, *, collapsed=frozenset(), focus: str | None = None,
                 radius: int = 2, engine: str = "auto") -> Layout:
    """The layout of ``graph``, from the cache when the same shape was laid out before.

    ``collapsed``: module paths drawn as one box each; ``focus``: a node key whose
    neighbourhood (``radius`` edges away) is all that is laid out; ``engine``: "auto",
    "dot" (raises :class:`GraphvizMissing` when dot is not installed) or "layered".
    """
    collapsed = frozenset(collapsed)
    key = (graph.shape_key, collapsed, focus, radius, engine)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    info, edges, owner = _prepare(graph, collapsed, focus, radius)
    result = _compute(info, edges, engine)
    result.owner = owner
    stats["layouts"] += 1
    _cache[key] = result
    if len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return result


def clear_cache() -> None:
    _cache.clear()


def _compute(info: dict, edges: list, engine: str) -> Layout:
    sizes = {k: _size(v[0]) for k, v in info.items()}
    note = None
    placed = None
    if engine == "dot" or (engine == "auto" and len(info) <= DOT_MAX_NODES):
        try:
            placed = _run_dot(info, edges, sizes)
            engine = "dot"
        except GraphvizMissing:
            if engine == "dot":
                raise
            note = INSTALL_HINT
        except (subprocess.SubprocessError, OSError, ValueError) as exc:
            if engine == "dot":
                raise
            note = f"Graphviz's dot failed ({exc}); using the built-in layout."
    hints: dict = {}
    if placed is None:
        engine = "layered"
        placed, hints = layered.place(list(info), edges, {k: w for k, (w, _) in sizes.items()},
                                      GAP_COLS)
    return _assemble(info, edges, sizes, placed, hints, engine, note)


def _assemble(info, edges, sizes, placed, hints, engine, note) -> Layout:
    """Bands -> rows, overlap removal in each band, frames, then a shift to (0, 0)."""
    bands: dict[int, list[str]] = {}
    for k, (band, _) in placed.items():
        bands.setdefault(band, []).append(k)
    order = sorted(bands)
    renumber = {b: i for i, b in enumerate(order)}
    tops, bottoms, y = [], [], 0
    xs: dict[str, int] = {}
    for b in order:
        members = sorted(bands[b], key=lambda k: placed[k][1])
        h = max(sizes[k][1] for k in members)
        tops.append(y)
        bottoms.append(y + h - 1)
        y += h + GAP_ROWS
        right = None
        for k in members:  # keep the engine's order, at least GAP_COLS apart
            x = placed[k][1] if right is None else max(placed[k][1], right + GAP_COLS)
            xs[k] = x
            right = x + sizes[k][0]
    boxes = {k: Box(k, xs[k], tops[renumber[placed[k][0]]], sizes[k][0], sizes[k][1],
                    tuple(info[k][0]), info[k][1], renumber[placed[k][0]]) for k in info}
    frames = _frames(info, boxes)
    min_x = min([b.x for b in boxes.values()] + [f.x for f in frames], default=0)
    min_y = min([f.y for f in frames], default=0)
    dx, dy = -min_x, -min(min_y, 0)
    if dx or dy:
        boxes = {k: Box(k, b.x + dx, b.y + dy, b.w, b.h, b.lines, b.kind, b.band)
                 for k, b in boxes.items()}
        frames = [Frame(f.path, f.x + dx, f.y + dy, f.w, f.h, f.depth) for f in frames]
        hints = {e: tuple(x + dx for x in v) for e, v in hints.items()}
    width = max([b.x + b.w for b in boxes.values()] + [f.x + f.w for f in frames], default=0)
    height = max([b.y + b.h for b in boxes.values()] + [f.y + f.h for f in frames], default=0)
    return Layout(boxes, tuple(edges), tuple(frames), tuple(t + dy for t in tops),
                  tuple(b + dy for b in bottoms), width, height, engine, hints=hints, note=note)


def _frames(info: dict, boxes: dict[str, Box]) -> list[Frame]:
    """One frame per module around its boxes and inner frames, when that frame would
    not cover a box of another module (clusters the layout split are not framed)."""
    members: dict[str, list[str]] = {}
    for k, (_, _, module) in info.items():
        while module:
            members.setdefault(module, []).append(k)
            module = module.rsplit(".", 1)[0] if "." in module else None
    by_band: dict[int, list[Box]] = {}
    for b in boxes.values():
        by_band.setdefault(b.band, []).append(b)
    frames = []
    extent: dict[str, tuple[int, int, int, int]] = {}
    for path in sorted(members, key=lambda p: -p.count(".")):  # innermost first
        bs = [boxes[k] for k in members[path]]
        x0, y0 = min(b.x for b in bs) - 1, min(b.y for b in bs) - 1
        x1, y1 = max(b.x + b.w for b in bs), max(b.y + b.h for b in bs)
        for child, (cx0, cy0, cx1, cy1) in extent.items():
            if child.startswith(path + "."):
                x0, y0 = min(x0, cx0 - 1), min(y0, cy0 - 1)
                x1, y1 = max(x1, cx1 + 1), max(y1, cy1 + 1)
        own = set(members[path])
        lo, hi = min(b.band for b in bs), max(b.band for b in bs)
        if any(b.key not in own and b.x <= x1 and x0 < b.x + b.w and b.y <= y1
               and y0 < b.y + b.h for band in range(lo - 1, hi + 2)
               for b in by_band.get(band, ())):
            continue
        extent[path] = (x0, y0, x1, y1)
        frames.append(Frame(path, x0, y0, x1 - x0 + 1, y1 - y0 + 1, path.count(".")))
    frames.sort(key=lambda f: f.depth)
    return frames


# --- Graphviz ------------------------------------------------------------------------------

def dot_text(info: dict, edges: list, sizes: dict) -> tuple[str, list[str]]:
    """The DOT text we hand to Graphviz, and the node keys by their DOT id (``n<i>``)."""
    keys = list(info)
    ids = {k: f"n{i}" for i, k in enumerate(keys)}
    out = ["digraph G {",
           "  graph [rankdir=TB, splines=false, nodesep=0.2, ranksep=0.3, nslimit=2, "
           "nslimit1=2, mclimit=0.5, searchsize=30, remincross=false];",
           '  node [shape=box, fixedsize=true, label=""];', "  edge [weight=8];"]
    for k in keys:
        w, h = sizes[k]
        # Rows are ~2x as tall as columns are wide (ranks are ours anyway).
        out.append(f"  {ids[k]} [width={w * INCH_PER_COL:g}, height={h * 2 * INCH_PER_COL:g}];")
    # Heavy op-to-op edges keep the main chain straight; leaves sit beside it.
    out += [f"  {ids[s]} -> {ids[t]}" + ("" if info[s][1] == "op" else " [weight=1]") + ";"
            for s, t in edges]
    out.append("}")
    return "\n".join(out) + "\n", keys


def _dot_program() -> str | None:
    return shutil.which("dot")


def _run_dot(info: dict, edges: list, sizes: dict) -> dict[str, tuple[int, int]]:
    """(band id, x column) for each box, from ``dot -Tplain``."""
    program = _dot_program()
    if program is None:
        raise GraphvizMissing(INSTALL_HINT)
    text, keys = dot_text(info, edges, sizes)
    stats["dot_runs"] += 1
    proc = subprocess.run([program, "-Tplain"], input=text, capture_output=True, text=True,
                          timeout=DOT_TIMEOUT, check=False)
    if proc.returncode != 0:
        raise ValueError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                         else f"exit status {proc.returncode}")
    placed: dict[str, tuple[int, int]] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("node "):
            parts = line.split()
            k = keys[int(parts[1][1:])]
            x = float(parts[2]) / INCH_PER_COL - sizes[k][0] / 2
            # Same rank <=> same centre y; y grows upwards in plain output.
            placed[k] = (-round(float(parts[3]) * 100), round(x))
    if len(placed) != len(keys):
        raise ValueError("dot's output lacks some nodes")
    return placed
