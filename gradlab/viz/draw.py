"""``draw_graph`` and ``render``: the two calls most users need.

``draw_graph(loss)`` walks the graph behind ``loss`` (see
:mod:`gradlab.viz.capture`), lays it out as data for one view
(:mod:`gradlab.viz.graph`) and writes it as a ``graphviz.Digraph``
(:mod:`gradlab.viz.dot`), which a notebook shows inline. ``render`` writes
the same picture to a file.
"""

from __future__ import annotations

import os

from .capture import Capture, Trace, capture
from .dot import to_digraph, write
from .graph import Graph, build

__all__ = ["draw_graph", "render", "graph_model"]


def _highlight_ids(highlight, cap: Capture) -> list[tuple]:
    """Turn tensors, graph nodes or node ids into ("op", id) / ("leaf", i) keys."""
    from ..autograd.node import AccumulateGrad, Node
    from ..tensor import Tensor

    if highlight is None:
        return []
    items = list(highlight) if isinstance(highlight, (list, tuple, set, frozenset)) else \
        [highlight]
    keys = []
    for item in items:
        if isinstance(item, AccumulateGrad):
            item = item.variable
        if isinstance(item, Tensor):
            if item.grad_fn is not None:
                keys.append(("op", item.grad_fn.id))
            else:
                keys.extend(("leaf", leaf.index) for leaf in cap.leaves
                            if leaf.ref is not None and leaf.ref() is item)
        elif isinstance(item, Node):
            keys.append(("op", item.id))
        elif isinstance(item, int) and not isinstance(item, bool):
            keys.append(("op", item))
        elif item is not None:
            raise TypeError(f"draw_graph: highlight takes tensors, graph nodes (grad_fn) or "
                            f"node ids, got {type(item).__name__}")
    return keys


def graph_model(outputs, *, view: str = "forward", show_values: bool = False,
                show_grads: bool = False, depth: int | None = None, highlight=None,
                params: dict | None = None, model=None, trace: Trace | None = None,
                collapse_repeats: int | None = 3, show_tangents: bool = False) -> Graph:
    """The picture as plain data (:class:`~gradlab.viz.graph.Graph`), before any drawing.

    ``outputs`` may also be a :class:`~gradlab.viz.capture.Capture` taken earlier.
    """
    if params is None and model is not None:
        params = dict(model.named_parameters())
    buffers = None if model is None else dict(model.named_buffers())
    cap = outputs if isinstance(outputs, Capture) else capture(outputs, params=params,
                                                                buffers=buffers, trace=trace)
    types = None if model is None else {p: type(m).__name__ for p, m in model.named_modules()}
    return build(cap, view=view, show_values=show_values, show_grads=show_grads, depth=depth,
                 highlight_ids=_highlight_ids(highlight, cap),
                 collapse_repeats=collapse_repeats, model_types=types,
                 show_tangents=show_tangents)


def draw_graph(outputs, *, view: str = "forward", show_values: bool = False,
               show_grads: bool = False, depth: int | None = None, highlight=None,
               params: dict | None = None, model=None, trace: Trace | None = None,
               collapse_repeats: int | None = 3, rankdir: str | None = None,
               title: str | None = None, show_tangents: bool = False):
    """Draw the graph that computed ``outputs`` (a tensor or a list): a ``graphviz.Digraph``.

    view             "forward" (inputs, parameters, ops, outputs) or "backward" (the
                     grad_fn nodes autograd walks, with the tensors they saved)
    show_values      print the values of small tensors (up to 16 elements)
    show_grads       print their gradients (leaves' .grad; intermediate ones need a trace)
    depth            draw each module ``depth`` levels down as one box (0: the whole
                     model as one box; 1: each of its children); None draws everything
    highlight        tensors, grad_fn nodes or node ids to mark
    params           names for parameters, e.g. ``dict(model.named_parameters())``
    model            the nn.Module: names its parameters and labels clusters by class
    trace            a :func:`gradlab.viz.trace` recording: adds data inputs that need
                     no grad, intermediate values and gradients
    collapse_repeats runs of at least this many identical sibling modules become
                     one box after the first (None: never)
    show_tangents    forward mode: print the tangent (ẋ) each small value carried
                     (inputs made with forward_ad.make_dual; op outputs need a trace)
    """
    graph = graph_model(outputs, view=view, show_values=show_values, show_grads=show_grads,
                        depth=depth, highlight=highlight, params=params, model=model,
                        trace=trace, collapse_repeats=collapse_repeats,
                        show_tangents=show_tangents)
    return to_digraph(graph, rankdir=rankdir, title=title)


def render(outputs, path: str | os.PathLike, **options) -> str:
    """Draw the graph of ``outputs`` into ``path``: .svg, .png, .pdf or .dot by extension.

    ``options`` are :func:`draw_graph`'s. The file is written atomically; without
    Graphviz's ``dot`` program only .dot works (images raise ``GraphvizNotFound``).
    """
    return write(draw_graph(outputs, **options), path)
