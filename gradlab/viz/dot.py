"""Graphviz output: a :class:`~gradlab.viz.graph.Graph` as a ``graphviz.Digraph``, and files.

Labels are Graphviz HTML-like tables: the name in bold, then shape and
dtype, then ``data | grad`` rows when values or gradients are shown. Every
statement is written in the graph's own order, so the DOT text is the same
byte for byte each time the same program runs.
"""

from __future__ import annotations

import os
import shutil
from html import escape

from .._atomic_files import write_bytes_atomically
from .graph import Cluster, Graph, GraphNode, format_shape
from .theme import THEME, Theme

__all__ = ["to_digraph", "write", "GraphvizNotFound", "IMAGE_FORMATS"]

IMAGE_FORMATS = ("svg", "png", "pdf")
EDGE_LABELS_UP_TO = 300

_INSTALL_HINT = (
    "Graphviz's `dot` program is not installed (or not on PATH), so gradlab can write the "
    "graph only as DOT text (a .dot file). To make images, install Graphviz: "
    "`sudo apt install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
    "`conda install -c conda-forge graphviz`, or https://graphviz.org/download/ (Windows); "
    "then check that `dot -V` runs."
)


class GraphvizNotFound(RuntimeError):
    """Image output was asked for, but Graphviz's ``dot`` program is missing."""


def _lines(text: str) -> str:
    return "<BR/>".join(escape(line) for line in text.split("\n"))


def _label(node: GraphNode, theme: Theme) -> str:
    muted = theme.muted_text
    rows = [f"<B>{escape(node.label)}</B>" if node.label else ""]
    if node.detail:
        rows.append(f'<FONT POINT-SIZE="{theme.font_size - 2}" COLOR="{muted}">'
                    f"{escape(node.detail)}</FONT>")
    if node.shape is not None:
        meta = format_shape(node.shape) + (f" {node.dtype}" if node.dtype else "")
        rows.append(f'<FONT POINT-SIZE="{theme.font_size - 2}" COLOR="{muted}">'
                    f"{escape(meta)}</FONT>")
    rows = [r for r in rows if r] or [" "]
    cells = "".join(f"<TR><TD>{r}</TD></TR>" for r in rows)
    numbers = []
    if node.value is not None:
        numbers.append(f"<TD>data {_lines(node.value)}</TD>")
    if node.grad is not None:
        numbers.append(f"<TD>grad {_lines(node.grad)}</TD>")
    if node.tangent is not None:  # forward mode: the tangent, x-dot
        numbers.append(f"<TD>\u1e8b {_lines(node.tangent)}</TD>")
    if numbers:
        # The lecture diagram's record: name | data | grad, side by side.
        cells = (f'<TR><TD>{"<BR/>".join(rows)}</TD>'
                 + "".join(f'<TD BORDER="1" SIDES="L">{c[4:-5]}</TD>' for c in numbers)
                 + "</TR>")
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{cells}</TABLE>>'


def _node_attrs(node: GraphNode, theme: Theme) -> dict[str, str]:
    style = theme.highlight if node.highlighted else theme.style(node.kind)
    shape = theme.style(node.kind).shape
    words = ["filled"]
    if shape == "box":
        words.append("rounded")
    if style.line != "solid":
        words.append(style.line)
    attrs = {
        "label": _label(node, theme),
        "shape": shape,
        "style": ",".join(words),
        "fillcolor": style.fill,
        "color": style.border,
        "fontcolor": style.text,
        "penwidth": f"{style.penwidth:g}",
    }
    if theme.style(node.kind).peripheries != 1:
        attrs["peripheries"] = str(theme.style(node.kind).peripheries)
    return attrs


def _add_cluster(parent, cluster: Cluster, nodes: dict, theme: Theme, counter: list) -> None:
    name = f"cluster_{counter[0]}"
    counter[0] += 1
    with parent.subgraph(name=name) as sub:
        sub.attr(label=cluster.label, labeljust="l", style="rounded,filled",
                 fillcolor=theme.cluster_fill(cluster.depth), color=theme.cluster_border,
                 fontcolor=theme.muted_text, fontname=theme.font,
                 fontsize=str(theme.font_size))
        for node_id in cluster.nodes:
            _add_node(sub, nodes[node_id], theme)
        for child in cluster.children:
            _add_cluster(sub, child, nodes, theme, counter)


def _add_node(dg, node: GraphNode, theme: Theme) -> None:
    dg.node(node.id, **_node_attrs(node, theme))


def to_digraph(graph: Graph, *, theme: Theme = THEME, rankdir: str | None = None,
               title: str | None = None):
    """The ``graphviz.Digraph`` of ``graph`` (forward: left to right when small)."""
    import graphviz

    if rankdir is None:
        rankdir = "LR" if graph.view == "forward" and len(graph.nodes) <= 40 else "TB"
    dg = graphviz.Digraph(name=f"gradlab_{graph.view}", format="svg")
    dg.attr(rankdir=rankdir, bgcolor=theme.background, fontname=theme.font,
            fontsize=str(theme.font_size), nodesep="0.25", ranksep="0.35")
    if title:
        dg.attr(label=title, labelloc="t")
    dg.attr("node", fontname=theme.font, fontsize=str(theme.font_size), margin="0.08,0.04",
            height="0.3")
    dg.attr("edge", fontname=theme.font, fontsize=str(theme.font_size - 2),
            color=theme.edges["data"], fontcolor=theme.muted_text, arrowsize="0.7")
    nodes = {n.id: n for n in graph.nodes}
    in_cluster = set()

    def collect(c: Cluster) -> None:
        in_cluster.update(c.nodes)
        for child in c.children:
            collect(child)

    for c in graph.clusters:
        collect(c)
    for node in graph.nodes:
        if node.id not in in_cluster:
            _add_node(dg, node, theme)
    counter = [0]
    for c in graph.clusters:
        _add_cluster(dg, c, nodes, theme, counter)
    # An edge label is a node of its own to dot's layout: with thousands it takes
    # minutes. Past a few hundred edges they become xlabels, placed after the layout.
    label_key = "label" if len(graph.edges) <= EDGE_LABELS_UP_TO else "xlabel"
    for e in graph.edges:
        attrs = {"color": theme.edges[e.kind]}
        if e.label:
            attrs[label_key] = e.label
        if e.kind == "saved":
            attrs.update(style="dashed", arrowhead="odot")
        dg.edge(e.source, e.target, **attrs)
    return dg


def write(digraph, path: str | os.PathLike) -> str:
    """Write ``digraph`` to ``path`` as .dot, .svg, .png or .pdf (by extension)."""
    import graphviz

    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext in ("dot", "gv"):
        write_bytes_atomically(path, digraph.source.encode("utf-8"))
        return path
    if ext not in IMAGE_FORMATS:
        raise ValueError(f"render: can't tell the format of {path!r}: use a file name ending "
                         "in .svg, .png, .pdf or .dot")
    if shutil.which("dot") is None:
        raise GraphvizNotFound(_INSTALL_HINT)
    try:
        data = digraph.pipe(format=ext)
    except graphviz.ExecutableNotFound as error:
        raise GraphvizNotFound(_INSTALL_HINT) from error
    write_bytes_atomically(path, data)
    return path
