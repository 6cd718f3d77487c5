"""The one colour theme of gradlab's pictures: Graphviz images and the terminal app.

Each kind of graph node (an input, a parameter, an op, a backward node, a
saved tensor...) has a :class:`Style`: a fill, a border, a text colour and a
Graphviz shape. The fills are light and the text is near-black, so every
label stays readable on paper; and the kinds differ in *lightness* and in
*shape or border* as well as in hue, so a grayscale print still tells them
apart (``tests/viz/test_dot.py`` checks the contrast and lightness numbers).

The terminal app (``tui``) reads the same hex colours from :data:`THEME`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Style", "Theme", "THEME", "SERIES_COLORS", "MEMORY_COLORS", "luminance",
           "contrast"]


@dataclass(frozen=True)
class Style:
    """How one kind of node looks: colours as ``#rrggbb``, Graphviz shape and line style."""

    fill: str
    border: str
    text: str = "#1a1a1a"
    shape: str = "box"
    line: str = "solid"  # Graphviz style words: solid, dashed, bold (rounded is added for boxes)
    penwidth: float = 1.0
    peripheries: int = 1


@dataclass(frozen=True)
class Theme:
    """Node styles by kind, edge colours by meaning, cluster fills by nesting depth."""

    name: str
    font: str
    font_size: int
    nodes: dict[str, Style]
    edges: dict[str, str]
    clusters: tuple[str, ...]  # fill of a module cluster, by depth (cycled)
    cluster_border: str
    highlight: Style
    background: str = "#ffffff"
    muted_text: str = "#4a4a4a"  # shapes, dtypes, module paths under a label
    extra: dict[str, str] = field(default_factory=dict)

    def style(self, kind: str) -> Style:
        """The style of a node kind (unknown kinds look like an op)."""
        return self.nodes.get(kind, self.nodes["op"])

    def cluster_fill(self, depth: int) -> str:
        return self.clusters[depth % len(self.clusters)]


THEME = Theme(
    name="gradlab",
    font="Helvetica",
    font_size=11,
    nodes={
        # Tensors are boxes; ops are ellipses (the way lecture diagrams draw them).
        "input": Style(fill="#ffffff", border="#3b5b92"),
        "buffer": Style(fill="#ffffff", border="#8a5a00", line="dashed"),
        "parameter": Style(fill="#f5c76b", border="#8a5a00", line="bold", penwidth=1.6),
        "tensor": Style(fill="#eef1f6", border="#6c7a89"),
        "output": Style(fill="#9fd3a8", border="#236b34", line="bold", penwidth=1.6,
                        peripheries=2),
        "op": Style(fill="#cfe0f7", border="#3b5b92", shape="ellipse"),
        "backward": Style(fill="#f3d1d6", border="#8e2c3c"),
        "accumulate": Style(fill="#f5c76b", border="#8a5a00", line="bold", penwidth=1.6),
        "saved": Style(fill="#ffffff", border="#6c7a89", line="dashed", shape="note"),
        "module": Style(fill="#dcd3ee", border="#4b3a78", shape="box3d", penwidth=1.4),
        "repeat": Style(fill="#dcd3ee", border="#4b3a78", shape="box3d", line="dashed",
                        penwidth=1.4),
    },
    edges={
        "data": "#3d3d3d",  # forward: a tensor flowing into an op
        "grad": "#8e2c3c",  # backward: a gradient flowing to the next node
        "saved": "#7a7a7a",  # a tensor kept for backward (dashed)
    },
    clusters=("#f7f7f7", "#ececec", "#e0e0e0"),
    cluster_border="#9a9a9a",
    highlight=Style(fill="#ffe14d", border="#c00000", line="bold", penwidth=3.0),
)


def _channel(c: float) -> float:
    c /= 255
    return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4


def luminance(color: str) -> float:
    """Relative luminance (WCAG) of ``#rrggbb``: 0 is black, 1 is white."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * _channel(r) + 0.7152 * _channel(g) + 0.0722 * _channel(b)


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours (1 to 21; 4.5 is readable body text)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


# Plot colours (gradlab.viz.plots and the app's charts): Okabe & Ito's colour-blind-safe set,
# in an order whose grey levels differ; memory categories keep one colour everywhere.
SERIES_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
                 "#F0E442")
MEMORY_COLORS = {"parameter": "#0072B2", "optimizer": "#CC79A7", "gradient": "#D55E00",
                 "activation": "#009E73", "other": "#BBBBBB"}
