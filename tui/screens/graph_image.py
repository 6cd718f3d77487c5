"""Save the graph a snapshot shows as an image, through gradlab.viz (Graphviz)."""

from __future__ import annotations

import os

from gradlab.debug.graph import op_label
from gradlab.debug.snapshot import GraphSnapshot

__all__ = ["to_viz_graph", "save_graph_image", "image_path"]

_KINDS = {"op": "op", "parameter": "parameter", "input": "input", "leaf": "tensor"}


def to_viz_graph(graph: GraphSnapshot):
    """The :class:`gradlab.viz.graph.Graph` of ``graph``: same nodes and edges, modules as
    clusters, the current node highlighted."""
    from gradlab.viz.graph import Cluster, Graph, GraphEdge, GraphNode

    ids = {node.key: f"n{i}" for i, node in enumerate(graph.nodes)}
    nodes, clusters, top = [], {}, []

    def cluster(path: str) -> Cluster:
        if path not in clusters:
            parent = path.rpartition(".")[0]
            made = Cluster(path=path, label=path, depth=path.count(".") + 1)
            clusters[path] = made
            (cluster(parent).children if parent else top).append(made)
        return clusters[path]

    for node in graph.nodes:
        shape = node.output_shapes[0] if node.output_shapes else \
            (node.value.shape if node.value is not None else None)
        detail = node.backward_name if node.kind == "op" else None
        if node.state == "backward":
            detail = f"{detail}, backward done" if detail else "gradient arrived"
        label = op_label(node.label, node.dtype) if node.kind == "op" else node.label
        made = GraphNode(id=ids[node.key], kind=_KINDS.get(node.kind, "op"), label=label,
                         shape=shape, dtype=node.dtype, module=node.module, detail=detail,
                         highlighted=node.key == graph.current)
        nodes.append(made)
        if node.module:
            cluster(node.module).nodes.append(made.id)
    edges = [GraphEdge(ids[e.source], ids[e.target], e.label) for e in graph.edges
             if e.source in ids and e.target in ids]
    return Graph(view="forward", nodes=nodes, edges=edges, clusters=top)


def image_path(graph: GraphSnapshot, folder: str | os.PathLike = ".") -> str:
    return os.path.join(os.fspath(folder), f"gradlab-graph-{graph.iteration}.svg")


def save_graph_image(graph: GraphSnapshot, folder: str | os.PathLike = ".") -> str:
    """Write ``graph`` to ``folder/gradlab-graph-<iteration>.svg``; returns the path.

    Raises gradlab.viz's GraphvizNotFound when Graphviz's ``dot`` is missing.
    """
    from gradlab.viz.dot import to_digraph, write

    title = f"iteration {graph.iteration}"
    if graph.loss is not None:
        title += f", loss {graph.loss:.4g}"
    return write(to_digraph(to_viz_graph(graph), title=title), image_path(graph, folder))
