"""A graph layout drawn with box-drawing characters, one text row at a time.

:func:`paint` routes every edge of a :class:`~tui.graph.layout.Layout`
orthogonally and returns a :class:`Canvas`, whose :meth:`Canvas.row` gives a
row's text and its *spans*: runs of cells with a tag saying what they show,
so a view can colour them (by node state, current node, selection) without
painting again. Rows are built on demand and kept, so a big graph costs only
its visible rows; :meth:`Canvas.text` builds them all.

Pictures:

* ops are rounded boxes (``╭─╮``), inputs and leaves square (``┌─┐``),
  parameters heavy (``┏━┓``), collapsed modules double (``╔═╗``); the label
  on the first line, the shape on the second, clipped with ``…``;
* an edge leaves its source at the bottom centre (``┬`` on the border), runs
  down, across in one of the two lanes of the gap below a band, down through
  free columns of the bands it crosses, and ends in ``▼`` just above its
  target's top border; a target spreads its inputs along its top side;
  crossings and shared runs join with ``─│┌┐└┘┬┴├┤┼``;
* an edge going up (only collapsed modules make cycles) takes a lane right of
  the drawing;
* module clusters are dashed frames (``┄┆``) with their path as title.
"""

from __future__ import annotations

from itertools import groupby

from .layout import GAP_ROWS, Box, Layout

__all__ = ["Canvas", "paint", "BORDERS", "route_edges"]

U, D, L, R = 1, 2, 4, 8
LINES = {U: "│", D: "│", U | D: "│", L: "─", R: "─", L | R: "─", D | R: "┌", D | L: "┐",
         U | R: "└", U | L: "┘", U | D | R: "├", U | D | L: "┤", D | L | R: "┬",
         U | L | R: "┴", U | D | L | R: "┼"}
# top-left, top-right, bottom-left, bottom-right, horizontal, vertical
BORDERS = {"op": "╭╮╰╯─│", "input": "┌┐└┘─│", "leaf": "┌┐└┘─│", "parameter": "┏┓┗┛━┃",
           "module": "╔╗╚╝═║"}
ARROW = "▼"
EDGE = ("edge", None)
FRAME = ("frame", None)
TITLE = ("title", None)


def _ports(box: Box, n: int) -> list[int]:
    inner = box.w - 2
    if n <= 1 or inner < 2:
        return [box.x + box.w // 2] * n
    return [box.x + 1 + min(inner - 1, (2 * i + 1) * inner // (2 * n)) for i in range(n)]


def route_edges(layout: Layout) -> dict[tuple[str, str], tuple[tuple[int, int], ...]]:
    """Each edge's path: orthogonal corner points, first just below the source's bottom
    border, last (the arrowhead's cell) just above the target's top border."""
    boxes = layout.boxes
    lanes = GAP_ROWS - 1
    busy: dict[int, list[tuple[int, int]]] = {}
    index: dict[str, int] = {}
    members: dict[int, list[Box]] = {}
    for b in boxes.values():
        busy.setdefault(b.band, []).append((b.x - 1, b.x + b.w))
        members.setdefault(b.band, []).append(b)
    for bs in members.values():
        for i, b in enumerate(sorted(bs, key=lambda b: b.x)):
            index[b.key] = i
    used: dict[int, set[int]] = {}

    def free(band: int, want: int) -> int:
        spans, taken = busy.get(band, ()), used.setdefault(band, set())
        for step in range(layout.width + 2):
            for c in (want + step, want - step) if step else (want,):
                if c >= 0 and c not in taken and not any(x0 <= c <= x1 for x0, x1 in spans):
                    taken.add(c)
                    return c
        return want

    incoming: dict[str, list[str]] = {}
    for s, t in layout.edges:
        incoming.setdefault(t, []).append(s)
    port: dict[tuple[str, str], int] = {}
    for t, sources in incoming.items():
        sources.sort(key=lambda s: boxes[s].center[0])
        for s, x in zip(sources, _ports(boxes[t], len(sources))):
            port[(s, t)] = x
    routes = {}
    back = 0
    for s, t in layout.edges:
        a, b = boxes[s], boxes[t]
        lane = index[s] % lanes
        x, tx = a.center[0], port[(s, t)]
        pts = [(x, a.y + a.h)]
        if b.band > a.band:
            hints = layout.hints.get((s, t), ())
            between = range(a.band + 1, b.band)
            for k, band in enumerate(between):
                want = hints[k] if len(hints) == len(between) else round(
                    x + (tx - x) * (k + 1) / (len(between) + 1))
                nx = x if not hints and _free_now(busy, used, band, x) else free(band, want)
                used.setdefault(band, set()).add(nx)
                row = layout.band_bottom[band - 1] + 1 + lane
                pts += [(x, row), (nx, row)]
                x = nx
            row = layout.band_top[b.band] - GAP_ROWS + lane
            pts += [(x, row), (tx, row)]
        else:  # upwards: around the right of the drawing
            back += 1
            lane_x = layout.width + back
            row = layout.band_bottom[a.band] + 1 + lane
            up = layout.band_top[b.band] - GAP_ROWS + lane
            pts += [(x, row), (lane_x, row), (lane_x, up), (tx, up)]
        pts.append((tx, b.y - 1))
        routes[(s, t)] = tuple(_simplify(pts))
    return routes


def _free_now(busy, used, band, c) -> bool:
    return c not in used.get(band, ()) and not any(x0 <= c <= x1 for x0, x1 in busy.get(band, ()))


def _simplify(pts):
    out = []
    for p in pts:
        if not out or p != out[-1]:
            out.append(p)
    return out


class Canvas:
    """The drawing of a layout; rows on demand (:meth:`row`), tags for colours."""

    def __init__(self, layout: Layout, routes, top: int) -> None:
        self.layout = layout
        self.routes = routes
        self.top = top  # rows added above the layout (for edges going up into band 0)
        right = max((p[0] for r in routes.values() for p in r), default=0)
        self.width = max(layout.width, right + 1) + 1
        self.height = layout.height + top + 1
        self._rows: list = [None] * self.height
        self._edges: dict[int, dict[int, int]] = {}
        self._arrows: dict[int, dict[int, str]] = {}
        self._ports: dict[int, set[int]] = {}
        self._boxes: dict[int, list[Box]] = {}
        self._frames: dict[int, list] = {}
        for (_, t), pts in routes.items():
            self._ports.setdefault(pts[0][1] - 1 + top, set()).add(pts[0][0])
            self._mark(pts[0][0], pts[0][1], U)
            for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
                self._segment(x0, y0, x1, y1)
            ax, ay = pts[-1]
            self._arrows.setdefault(ay + top, {})[ax] = t
        for b in layout.boxes.values():
            for y in range(b.y + top, b.y + b.h + top):
                self._boxes.setdefault(y, []).append(b)
        for f in layout.frames:
            for y in range(f.y + top, f.y + f.h + top):
                self._frames.setdefault(y, []).append(f)

    def _mark(self, x: int, y: int, bits: int) -> None:
        row = self._edges.setdefault(y + self.top, {})
        row[x] = row.get(x, 0) | bits

    def _segment(self, x0: int, y0: int, x1: int, y1: int) -> None:
        if x0 == x1:
            step = 1 if y1 > y0 else -1
            for y in range(y0, y1 + step, step):
                self._mark(x0, y, (U if y > min(y0, y1) else 0) | (D if y < max(y0, y1) else 0))
        else:
            for x in range(min(x0, x1), max(x0, x1) + 1):
                self._mark(x, y0, (L if x > min(x0, x1) else 0) | (R if x < max(x0, x1) else 0))

    def row(self, y: int) -> tuple[str, tuple[tuple[int, int, tuple], ...]]:
        """Row ``y``: its text (``width`` cells) and spans ``(x0, x1, (part, key))``; part is
        "edge", "arrow", "frame", "title", "border" or "text", key a box key (or None)."""
        cached = self._rows[y]
        if cached is not None:
            return cached
        w = self.width
        chars = [" "] * w
        tags: list = [None] * w
        for f in self._frames.get(y, ()):
            self._frame_row(f, y - self.top, chars, tags)
        for x, bits in self._edges.get(y, {}).items():
            chars[x] = LINES.get(bits, "·")
            tags[x] = EDGE
        for x, key in self._arrows.get(y, {}).items():
            chars[x] = ARROW
            tags[x] = ("arrow", key)
        for b in self._boxes.get(y, ()):
            self._box_row(b, y - self.top, chars, tags, self._ports.get(y, ()))
        spans = []
        x = 0
        for tag, run in groupby(tags):
            n = sum(1 for _ in run)
            if tag is not None:
                spans.append((x, x + n, tag))
            x += n
        result = ("".join(chars), tuple(spans))
        self._rows[y] = result
        return result

    @staticmethod
    def _frame_row(f, y: int, chars: list, tags: list) -> None:
        x0, x1 = f.x, f.x + f.w - 1
        if y in (f.y, f.y + f.h - 1):
            top = y == f.y
            chars[x0] = "┌" if top else "└"
            chars[x1] = "┐" if top else "┘"
            for x in range(x0 + 1, x1):
                chars[x] = "┄"
            tags[x0:x1 + 1] = [FRAME] * (x1 - x0 + 1)
            if top:
                title = f" {f.path} "[: max(0, f.w - 4)]
                chars[x0 + 2:x0 + 2 + len(title)] = title
                tags[x0 + 2:x0 + 2 + len(title)] = [TITLE] * len(title)
        else:
            for x in (x0, x1):
                if chars[x] == " ":
                    chars[x] = "┆"
                    tags[x] = FRAME

    @staticmethod
    def _box_row(b: Box, y: int, chars: list, tags: list, ports) -> None:
        tl, tr, bl, br, hz, vt = BORDERS.get(b.kind, BORDERS["op"])
        border = ("border", b.key)
        i = y - b.y
        if i == 0 or i == b.h - 1:
            mid = [hz] * (b.w - 2)
            if i == b.h - 1:
                for x in ports:
                    if b.x < x < b.x + b.w - 1:
                        mid[x - b.x - 1] = "┬" if hz == "─" else "╥" if hz == "═" else "┳"
            chars[b.x:b.x + b.w] = [tl if i == 0 else bl, *mid, tr if i == 0 else br]
            tags[b.x:b.x + b.w] = [border] * b.w
            return
        inner = b.w - 4
        text = b.lines[i - 1] if i - 1 < len(b.lines) else ""
        if len(text) > inner:
            text = text[:inner - 1] + "…"
        text = text.center(inner)
        chars[b.x:b.x + b.w] = [vt, " ", *text, " ", vt]
        tags[b.x:b.x + b.w] = [border, *[("text", b.key)] * (b.w - 2), border]

    def text(self) -> str:
        """The whole picture, trailing spaces removed (for tests and debugging)."""
        return "\n".join(self.row(y)[0].rstrip() for y in range(self.height)).rstrip("\n")

    def paint_all(self) -> None:
        for y in range(self.height):
            self.row(y)

    def box_at(self, x: int, y: int) -> Box | None:
        for b in self._boxes.get(y, ()):
            if b.x <= x < b.x + b.w:
                return b
        return None

    def box_top(self, b: Box) -> int:
        """The canvas row of a box's top border."""
        return b.y + self.top


def paint(layout: Layout) -> Canvas:
    """Route the edges of ``layout`` and make its canvas (kept on the layout: paint once)."""
    cached = getattr(layout, "_canvas", None)
    if cached is not None:
        return cached
    routes = route_edges(layout)
    top = max((-min(p[1] for p in r) for r in routes.values()), default=0)
    canvas = Canvas(layout, routes, max(top, 0))
    layout._canvas = canvas
    return canvas
