"""Small text pictures for the debugger's panels, and the panel base class that shows them.

Every chart here is drawn from numbers the debug session already computed:
these helpers only choose characters (block elements, shades, braille dots)
and colours; they never compute statistics. They return plain strings or
Textual :class:`~textual.content.Content` lines, so the same chart can be
tested as text and shown in any panel.

    sparkline([1, 2, 3, 4])           -> "▁▃▆█"
    format_bytes(1536)                -> "1.5 KiB"
    line_chart([(0, 1.0), (1, 0.5)])  -> rows of braille characters
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from textual.containers import VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.widgets import Static

__all__ = ["BLOCKS", "SHADES", "NEGATIVE_STYLE", "POSITIVE_STYLE", "format_bytes",
           "format_number", "format_shape", "format_value", "sparkline", "bar", "column_chart",
           "histogram", "heatmap", "line_chart", "flow", "table", "wrap_words",
           "TextPanel"]

BLOCKS = "▁▂▃▄▅▆▇█"  # eight heights of a column, lowest first
SHADES = " ░▒▓█"  # five densities of a cell, emptiest first
_EIGHTHS = " ▏▎▍▌▋▊▉█"  # a horizontal bar's last cell, in eighths
# Braille dots by (column, row) inside one 2x4 cell: U+2800 plus these bits.
_BRAILLE_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
# Okabe & Ito blue and vermillion (gradlab.viz.theme.SERIES_COLORS): mid-tone colours that stay
# readable on Textual's dark and light backgrounds.
NEGATIVE_STYLE = "#0072B2"
POSITIVE_STYLE = "#D55E00"
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


# ---------------------------------------------------------------- numbers as text

def format_bytes(n: int | float) -> str:
    """Bytes in binary units, one decimal from KiB on: ``0 B``, ``1.5 KiB``, ``2.0 MiB``."""
    sign = "-" if n < 0 else ""
    size = float(abs(n))
    unit = 0
    while size >= 1024 and unit < len(_UNITS) - 1:
        size /= 1024
        unit += 1
    if unit == 0:
        return f"{sign}{int(size)} B"
    return f"{sign}{size:.1f} {_UNITS[unit]}"


def format_number(x: float | int | None, digits: int = 4) -> str:
    """A number in at most ``digits`` significant digits (``-`` for a missing one)."""
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def format_shape(shape: Sequence[int] | None) -> str:
    """``(64, 32)``; ``()`` for a scalar; ``?`` when unknown."""
    if shape is None:
        return "?"
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(d) for d in shape) + ")"


def format_value(value: object) -> str:
    """A hyperparameter as short text: numbers in 4 digits, tuples item by item."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return format_number(value)
    if isinstance(value, tuple | list):
        return "(" + ", ".join(format_value(v) for v in value) + ")"
    return str(value)


# ---------------------------------------------------------------- one-line charts

def _finite(values: Iterable[float]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def sparkline(values: Sequence[float], width: int | None = None) -> str:
    """One character per value (the last ``width`` values): ``▁`` the minimum, ``█`` the maximum.

    A constant series is drawn at mid height; NaN/Inf values are a space.
    """
    if width is not None:
        values = values[-width:] if width > 0 else []
    finite = _finite(values)
    if not finite:
        return " " * len(values)
    lo, hi = min(finite), max(finite)
    top = len(BLOCKS) - 1
    chars = []
    for v in values:
        if v is None or not math.isfinite(v):
            chars.append(" ")
        elif hi == lo:
            chars.append(BLOCKS[top // 2])
        else:
            chars.append(BLOCKS[round((v - lo) / (hi - lo) * top)])
    return "".join(chars)


def bar(fraction: float, width: int) -> str:
    """A horizontal bar ``fraction`` (0..1) of ``width`` cells long, in eighths of a cell."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (_EIGHTHS[part] if part else "")
    return text.ljust(width)


# ---------------------------------------------------------------- block charts

def column_chart(counts: Sequence[float], height: int, repeat: int = 1) -> list[str]:
    """Vertical columns (``repeat`` cells wide) as ``height`` rows of text, top row first.

    The tallest column fills the whole height; any non-zero column shows at least ``▁``.
    """
    top = max(counts, default=0)
    levels = height * 8
    heights = [0 if top <= 0 or c <= 0 else max(1, round(c / top * levels)) for c in counts]
    rows = []
    for row in range(height - 1, -1, -1):  # top row first
        cells = []
        for h in heights:
            filled = h - row * 8  # eighths of this row's cell that are filled
            cell = " " if filled <= 0 else "█" if filled >= 8 else BLOCKS[filled - 1]
            cells.append(cell * repeat)
        rows.append("".join(cells))
    return rows


def histogram(edges: Sequence[float], counts: Sequence[int], width: int,
              height: int = 3) -> list[str]:
    """A histogram as column rows plus an axis line ``lo ... hi`` under it.

    Each bin is as many cells wide as fits in ``width`` (at most 3).
    """
    repeat = max(1, min(3, width // max(1, len(counts))))
    rows = column_chart(counts, height, repeat)
    chart_width = len(counts) * repeat
    lo, hi = format_number(edges[0], 3), format_number(edges[-1], 3)
    gap = max(1, chart_width - len(lo) - len(hi))
    rows.append(lo + " " * gap + hi)
    return rows


def heatmap(rows: Sequence[Sequence[float]], cell: int = 1) -> list[Content]:
    """A 2-D picture in shade blocks, each value ``cell`` characters wide.

    Values of one sign are shaded from the minimum (``" "``) to the maximum (``"█"``);
    when both signs are present, the shade is the magnitude (0 blank, the largest
    magnitude ``█``) coloured blue for negative and vermillion for positive.
    NaN and Inf are a ``?`` in the error colour.
    """
    finite = _finite(v for r in rows for v in r)
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 0.0)
    signed = lo < 0 < hi
    scale = max(abs(lo), abs(hi)) if signed else hi - lo
    top = len(SHADES) - 1
    lines = []
    for r in rows:
        parts: list[tuple[str, str]] = []
        for v in r:
            if v is None or not math.isfinite(v):
                parts.append(("?" * cell, "bold $error"))
                continue
            if signed:
                shade = SHADES[round(abs(v) / scale * top)]
                style = NEGATIVE_STYLE if v < 0 else POSITIVE_STYLE
            else:
                shade = SHADES[round((v - lo) / scale * top)] if scale > 0 else SHADES[top // 2]
                style = ""
            parts.append((shade * cell, style))
        lines.append(Content.assemble(*parts))
    return lines


def line_chart(points: Sequence[tuple[float, float]], width: int, height: int) -> list[str]:
    """A line through ``(x, y)`` points in braille dots, ``width`` x ``height`` cells, top first.

    Each cell holds 2x4 dots; x and y are scaled to the points' ranges and
    consecutive points are joined. Non-finite points break the line.
    """
    dots_w, dots_h = width * 2, height * 4
    grid = [[0] * width for _ in range(height)]
    good = [(x, y) for x, y in points if math.isfinite(x) and math.isfinite(y)]
    if not good or width <= 0 or height <= 0:
        return [" " * max(width, 0) for _ in range(max(height, 0))]
    x0, x1 = min(p[0] for p in good), max(p[0] for p in good)
    y0, y1 = min(p[1] for p in good), max(p[1] for p in good)

    def to_dot(x: float, y: float) -> tuple[int, int]:
        col = 0 if x1 == x0 else round((x - x0) / (x1 - x0) * (dots_w - 1))
        row = dots_h // 2 if y1 == y0 else round((y1 - y) / (y1 - y0) * (dots_h - 1))
        return col, row

    def plot(col: int, row: int) -> None:
        grid[row // 4][col // 2] |= _BRAILLE_BITS[col % 2][row % 4]

    previous = None
    for x, y in points:
        if not (math.isfinite(x) and math.isfinite(y)):
            previous = None
            continue
        here = to_dot(x, y)
        if previous is None:
            plot(*here)
        else:  # join with the previous point, one dot per step along the longer axis
            steps = max(abs(here[0] - previous[0]), abs(here[1] - previous[1]))
            for s in range(1, steps + 1):
                plot(round(previous[0] + (here[0] - previous[0]) * s / steps),
                     round(previous[1] + (here[1] - previous[1]) * s / steps))
        previous = here
    return ["".join(chr(0x2800 + b) if b else " " for b in row) for row in grid]


# ---------------------------------------------------------------- layout of text

def flow(cells: Sequence[Content | str], width: int, indent: int = 0,
         sep: str = "  ") -> list[Content]:
    """Put short ``cells`` on lines no wider than ``width`` (as many per line as fit)."""
    lines: list[Content] = []
    line = Content(" " * indent)
    used = indent
    for cell in cells:
        cell = Content(cell) if isinstance(cell, str) else cell
        extra = cell.cell_length + (len(sep) if used > indent else 0)
        if used > indent and used + extra > width:
            lines.append(line)
            line, used = Content(" " * indent), indent
            extra = cell.cell_length
        line = line + (sep if used > indent else "") + cell
        used += extra
    if used > indent:
        lines.append(line)
    return lines


def table(header: Sequence[str], rows: Sequence[Sequence[Content | str]], width: int,
          numeric_from: int = 1) -> list[Content] | None:
    """Aligned columns (from ``numeric_from`` on right-aligned); None if wider than ``width``."""
    cells = [[Content(c) if isinstance(c, str) else c for c in row] for row in rows]
    widths = [len(h) for h in header]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], c.cell_length)
    if sum(widths) + 2 * (len(widths) - 1) > width:
        return None

    def line(row: Sequence[Content], style: str = "") -> Content:
        out = []
        for i, c in enumerate(row):
            gap = widths[i] - c.cell_length
            out.append(c.pad_left(gap) if i >= numeric_from else c.pad_right(gap))
        joined = Content("  ").join(out)
        return joined.stylize(style) if style else joined

    return [line([Content(h) for h in header], "bold")] + [line(row) for row in cells]


def wrap_words(text: str, width: int) -> list[str]:
    """Words on lines no wider than ``width`` (a longer word gets a line of its own)."""
    out: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for word in paragraph.split():
            if line and len(line) + 1 + len(word) > width:
                out.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        out.append(line)
    return out


# ---------------------------------------------------------------- the panel base class

class TextPanel(VerticalScroll):
    """A scrolling panel whose text is rebuilt from a snapshot only when what it shows changed.

    Subclasses give :meth:`key` (equal keys mean the same picture) and
    :meth:`build` (the lines for a width and height). A resize redraws.
    """

    DEFAULT_CSS = """
    TextPanel { scrollbar-size-vertical: 1; overflow-x: hidden; }
    TextPanel > .panel-body { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.body = Static("", classes="panel-body")
        self._key: object = object()
        self._drawn_size: tuple[int, int] | None = None
        self._snapshot = None
        self._selected: str | None = None
        self._lines = -1  # how many lines the body shows
        self.redraws = 0  # how many times the text was rebuilt (tests check updates stay cheap)

    def compose(self):
        yield self.body

    def show(self, snapshot, selected: str | None = None) -> None:
        """Show ``snapshot`` (``selected``: the graph view's node key); cheap if nothing changed."""
        key = self.key(snapshot, selected)
        if key == self._key and self._drawn_size == self._panel_size():
            return
        self._key, self._snapshot, self._selected = key, snapshot, selected
        self._redraw()

    @property
    def text(self) -> str:
        """The panel's text as plain characters (what a reader sees, without colours)."""
        content = self.body.content
        return content.plain if isinstance(content, Content) else str(content)

    def key(self, snapshot, selected: str | None) -> object:
        raise NotImplementedError

    def build(self, snapshot, selected: str | None, width: int, height: int) -> list[Content]:
        raise NotImplementedError

    def _panel_size(self) -> tuple[int, int]:
        # One column stays free for the scrollbar; before layout, assume the smallest panel.
        width = self.size.width - 1 if self.size.width > 1 else 37
        return width, self.size.height or 16

    def _redraw(self) -> None:
        self._drawn_size = self._panel_size()
        if self._snapshot is None:
            return
        lines = self.build(self._snapshot, self._selected, *self._drawn_size)
        self.redraws += 1
        content = Content("\n").join(lines)
        old = self.body.content
        if isinstance(old, Content) and (old.plain, old.spans) == (content.plain, content.spans):
            return  # Content's == compares the text alone
        # The body is as tall as its lines (no wrapping): the same count needs no new layout,
        # only a repaint of the panel, which keeps a running app cheap.
        self.body.update(content, layout=len(lines) != self._lines)
        self._lines = len(lines)

    def on_resize(self, event: Resize) -> None:
        if self._snapshot is not None and self._panel_size() != self._drawn_size:
            self._redraw()
