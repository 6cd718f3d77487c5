"""Pictures of what the engine did: Graphviz graphs and matplotlib plots.

    gradlab.viz.draw_graph(loss)                 # a graphviz.Digraph (inline in Jupyter)
    gradlab.viz.render(loss, "graph.svg", view="backward", show_grads=True)

Importing this package imports neither graphviz nor matplotlib: they load on the
first drawing call, so ``import gradlab`` stays fast.
"""

from __future__ import annotations

from .capture import Capture, Trace, capture, trace
from .dot import GraphvizNotFound
from .draw import draw_graph, graph_model, render
from .graph import Graph, build
from .theme import THEME

__all__ = ["draw_graph", "render", "trace", "Trace", "capture", "Capture", "graph_model",
           "Graph", "build", "GraphvizNotFound", "THEME"]


def __getattr__(name: str):
    # The plots (gradlab.viz.plots) import matplotlib: load them on first use only.
    if name.startswith("_") or name == "plots":
        raise AttributeError(f"module 'gradlab.viz' has no attribute {name!r}")
    import importlib

    plots = importlib.import_module(".plots", __name__)
    if name in getattr(plots, "__all__", ()):
        return getattr(plots, name)
    raise AttributeError(f"module 'gradlab.viz' has no attribute {name!r}")
