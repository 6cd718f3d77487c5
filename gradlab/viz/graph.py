"""The picture as data: nodes, edges and module clusters, for one view of a graph.

:func:`build` turns a :class:`~gradlab.viz.capture.Capture` into a
:class:`Graph` for one of two views:

``forward``   tensors and ops as lectures draw them: inputs and parameters
              (by name) flow through ops into the outputs; an edge between
              two ops is the tensor passed, labelled with its shape.
``backward``  the graph autograd walks: from the output's ``grad_fn`` to
              each ``AccumulateGrad``, with the tensors each node saved.

Then two simplifications keep big graphs readable: ``depth=N`` turns every
module N levels down (the model itself is level 0) into one box, and runs
of identical sibling modules (``layers.1`` ... ``layers.11`` built like
``layers.0``) become one box each. Both only *map* fine nodes onto boxes;
edges are then merged. Node ids (``n0``, ``n1``...) follow the walk order,
so the same program gives the same graph, and the same DOT text.

Nothing here draws: :mod:`gradlab.viz.dot` writes Graphviz, the terminal
app its own widgets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..debug.graph import op_label
from .capture import Capture, TensorMeta

__all__ = ["GraphNode", "GraphEdge", "Cluster", "Graph", "build", "format_values"]


@dataclass
class GraphNode:
    id: str
    # input, parameter, buffer, tensor, output, op, backward, accumulate, saved, module, repeat
    kind: str
    label: str
    shape: tuple | None = None
    dtype: str | None = None
    module: str | None = None  # path of the module cluster it sits in (None: outside)
    value: str | None = None  # formatted values (show_values, small tensors only)
    grad: str | None = None  # formatted gradient (show_grads)
    tangent: str | None = None  # formatted forward-mode tangent (show_tangents)
    detail: str | None = None  # a second line: "12 ops", "MulBackward0"...
    highlighted: bool = False


@dataclass
class GraphEdge:
    source: str
    target: str
    label: str = ""
    kind: str = "data"  # data, grad, saved


@dataclass
class Cluster:
    path: str  # module path ("" for the model itself)
    label: str
    depth: int
    nodes: list[str] = field(default_factory=list)
    children: list[Cluster] = field(default_factory=list)


@dataclass
class Graph:
    view: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    clusters: list[Cluster]  # top-level clusters; nodes outside every module are in no cluster

    def node(self, node_id: str) -> GraphNode:
        return next(n for n in self.nodes if n.id == node_id)


# --- formatting -----------------------------------------------------------------------------
def format_shape(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def format_values(value) -> str | None:
    """Small values as text: ``2.0000`` for a scalar, one line per row for a matrix."""
    if value is None:
        return None
    a = np.asarray(value)
    if a.dtype.kind not in "fcV":
        return str(a.tolist())
    a = a.astype(np.float64)
    if a.ndim == 0:
        return f"{a.item():.4f}"
    rows = a.reshape(-1, a.shape[-1]) if a.ndim > 1 else a.reshape(-1, 4) if \
        a.size > 4 and a.size % 4 == 0 else a[None]  # long vectors: 4 numbers a line
    lines = ["[" + ", ".join(f"{v:.3g}" for v in row) + "]" for row in rows]
    return "\n".join(lines)


def _module_label(path: str, model_types: dict) -> str:
    name = path if path else "model"
    kind = model_types.get(path)
    return f"{name} : {kind}" if kind else name


def _level(path: str) -> int:
    return 0 if path == "" else path.count(".") + 1


def _prefix(path: str, level: int) -> str:
    return "" if level == 0 else ".".join(path.split(".")[:level])


# --- the two views ---------------------------------------------------------------------------
class _Builder:
    def __init__(self, cap: Capture, show_values: bool, show_grads: bool,
                 show_tangents: bool = False) -> None:
        self.cap = cap
        self.show_values = show_values
        self.show_grads = show_grads
        self.show_tangents = show_tangents
        self.saved_nodes = len(cap.ops) <= SAVED_NODES_UP_TO
        self.nodes: list[GraphNode] = []
        self.edges: list[GraphEdge] = []
        self.origin: dict[str, tuple] = {}  # node id -> ("op", engine node id) / ("leaf", i)

    def add(self, kind, label, meta: TensorMeta | None = None, module=None, detail=None):
        node = GraphNode(f"n{len(self.nodes)}", kind, label, module=module, detail=detail)
        if meta is not None:
            node.shape, node.dtype = meta.shape, meta.dtype
            if self.show_values:
                node.value = format_values(meta.value)
            if self.show_grads:
                node.grad = format_values(meta.grad)
            if self.show_tangents:
                node.tangent = format_values(meta.tangent)
        self.nodes.append(node)
        return node

    def leaf_module(self) -> dict[int, str | None]:
        """A leaf sits in the module of the ops that use it, when they all agree."""
        used: dict[int, set] = {}
        for op in self.cap.ops:
            for src in op.inputs:
                if src[0] == "leaf":
                    used.setdefault(src[1], set()).add(op.module)
            for i in op.data_inputs:
                used.setdefault(i, set()).add(op.module)
        out = {}
        for leaf in self.cap.leaves:
            modules = used.get(leaf.index, set())
            out[leaf.index] = next(iter(modules)) if len(modules) == 1 and \
                (leaf.is_parameter or leaf.is_buffer) else None
        return out

    def uses(self) -> dict[int, int]:
        count: dict[int, int] = {}
        for op in self.cap.ops:
            for src in op.inputs:
                if src[0] == "leaf":
                    count[src[1]] = count.get(src[1], 0) + 1
            for i in op.data_inputs:
                count[i] = count.get(i, 0) + 1
        return count

    def leaves(self) -> dict[int, GraphNode]:
        """One node per leaf; a leaf used by many ops gets a copy beside each (see below)."""
        where = self.leaf_module()
        uses = self.uses()
        made = {}
        for leaf in self.cap.leaves:
            kind = "parameter" if leaf.is_parameter else "buffer" if leaf.is_buffer else "input"
            if uses.get(leaf.index, 0) > SHARED_LEAF_COPIES_OVER:
                made[leaf.index] = _Copies(self, kind, leaf, where[leaf.index])
                continue
            made[leaf.index] = self.add(kind, leaf.meta.name or kind, leaf.meta,
                                        module=where[leaf.index])
            self.origin[made[leaf.index].id] = ("leaf", leaf.index)
        return made

    def edge(self, source, target, label="", kind="data"):
        if isinstance(source, _Copies):
            source = source.make()
        if isinstance(target, _Copies):
            target = target.make()
        self.edges.append(GraphEdge(source.id, target.id, label, kind))

    def forward(self) -> None:
        cap = self.cap
        leaf_nodes = self.leaves()
        op_nodes = {}
        # Tensor node between an op and its users: when it has a name or shows numbers.
        tensor_nodes: dict[tuple, GraphNode] = {}
        out_sources = {src for src, _ in cap.outputs}
        for op in cap.ops:
            node = self.add("op", op_label(op.op, op.outputs[0].dtype if op.outputs else None),
                            module=op.module)
            self.origin[node.id] = ("op", op.node_id)
            op_nodes[op.index] = node
            for k, meta in enumerate(op.outputs):
                if ("op", op.index, k) in out_sources:
                    continue
                if meta.name or (self.show_values and meta.value is not None) or \
                        (self.show_grads and meta.grad is not None) or \
                        (self.show_tangents and meta.tangent is not None):
                    t = self.add("tensor", meta.name or "", meta, module=op.module)
                    self.edge(node, t)
                    tensor_nodes[(op.index, k)] = t
            for i in op.data_inputs:  # a leaf's shape is on its node, not on its edges
                self.edge(leaf_nodes[i], node)
            for src, shape in zip(op.inputs, op.input_shapes):
                if src[0] == "leaf":
                    self.edge(leaf_nodes[src[1]], node)
                elif (src[1], src[2]) in tensor_nodes:
                    self.edge(tensor_nodes[(src[1], src[2])], node)
                else:
                    self.edge(op_nodes[src[1]], node, format_shape(shape))
        for source, meta in cap.outputs:
            out = self.add("output", meta.name or "output", meta)
            if source[0] == "leaf":
                self.edge(leaf_nodes[source[1]], out)
            else:
                self.edge(op_nodes[source[1]], out)

    def backward(self) -> None:
        cap = self.cap
        where = self.leaf_module()
        # Top-down, as autograd walks: the outputs first, then the nodes, last op first.
        outs = [self.add("output", meta.name or "output", meta) for _, meta in cap.outputs]
        op_nodes = {}
        for op in reversed(cap.ops):
            grad_meta = TensorMeta((), "", value=None,
                                   grad=op.grads[0] if op.grads and len(op.grads) == 1 else None)
            node = self.add("backward", op.node_name, grad_meta if op.grads else None,
                            module=op.module)
            node.shape = node.dtype = None
            self.origin[node.id] = ("op", op.node_id)
            op_nodes[op.index] = node
            if op.saved is None:
                node.detail = "saved tensors freed"
            elif op.saved and not self.saved_nodes:  # big graphs: listed inside the node
                node.detail = "saved " + ", ".join(
                    (f"{m.name} " if m.name else "") + format_shape(m.shape) for m in op.saved)
            for meta in (op.saved or ()) if self.saved_nodes else ():
                saved = self.add("saved", meta.name or "saved", meta, module=op.module)
                saved.value = None
                self.edge(saved, node, kind="saved")
        acc_nodes = {}
        uses = self.uses()
        for leaf in cap.leaves:
            if not leaf.requires_grad:
                continue
            if uses.get(leaf.index, 0) > SHARED_LEAF_COPIES_OVER:
                acc_nodes[leaf.index] = _Copies(self, "accumulate", leaf, where[leaf.index])
                continue
            acc_nodes[leaf.index] = self.add("accumulate", "AccumulateGrad", leaf.meta,
                                             module=where[leaf.index],
                                             detail=leaf.meta.name)
            acc_nodes[leaf.index].value = None
            self.origin[acc_nodes[leaf.index].id] = ("leaf", leaf.index)
        for (source, _), out in zip(cap.outputs, outs):
            target = op_nodes.get(source[1]) if source[0] == "op" else acc_nodes.get(source[1])
            if target is not None:
                self.edge(out, target, kind="grad")
        for op in reversed(cap.ops):
            for src, shape in zip(op.inputs, op.input_shapes):
                target = op_nodes[src[1]] if src[0] == "op" else acc_nodes.get(src[1])
                if target is not None:
                    self.edge(op_nodes[op.index], target, format_shape(shape), "grad")


class _Copies:
    """A leaf drawn once per use: one node with hundreds of edges (an RNN's weights,
    unrolled) makes a graph unreadable, and dot's layout of it takes minutes."""

    def __init__(self, builder: _Builder, kind: str, leaf, module) -> None:
        self.builder, self.kind, self.leaf, self.module = builder, kind, leaf, module

    def make(self) -> GraphNode:
        b, leaf = self.builder, self.leaf
        if self.kind == "accumulate":
            node = b.add("accumulate", "AccumulateGrad", leaf.meta, module=self.module,
                         detail=(leaf.meta.name + " " if leaf.meta.name else "") + "(shared)")
            node.value = None
        else:
            node = b.add(self.kind, leaf.meta.name or self.kind, leaf.meta, module=self.module,
                         detail="(shared)")
        b.origin[node.id] = ("leaf", leaf.index)
        return node


# --- collapsing ------------------------------------------------------------------------------
SAVED_NODES_UP_TO = 200  # backward view: bigger graphs list saved tensors inside their node
SHARED_LEAF_COPIES_OVER = 8  # a leaf used by more ops than this is drawn beside each one

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _signature(graph_nodes, path) -> tuple:
    inside = [(n.kind, n.label if n.kind not in ("parameter", "accumulate", "input") else "",
               n.shape) for n in graph_nodes
              if n.module is not None and (n.module == path or n.module.startswith(path + "."))]
    return tuple(inside)


def _repeat_runs(paths: list[str], nodes: list[GraphNode], min_run: int) -> dict[str, tuple]:
    """Sibling modules ``<stem><i>``, consecutive i, built alike: member -> (label, first).

    The first of a run stays drawn in full; the others become one box.
    """
    by_parent: dict[tuple, list] = {}
    for p in paths:
        parent, _, last = p.rpartition(".")
        m = _NUMBERED.match(last)
        if m:
            by_parent.setdefault((parent, m.group(1)), []).append((int(m.group(2)), p))
    runs = {}
    for members in by_parent.values():
        members.sort()
        run = [members[0]]
        for item in members[1:] + [(None, None)]:
            prev = run[-1]
            if item[0] is not None and item[0] == prev[0] + 1 and \
                    _signature(nodes, item[1]) == _signature(nodes, run[0][1]):
                run.append(item)
                continue
            if len(run) >= min_run:
                label = f"{run[1][1]} \u2026 {run[-1][1]}  (\u00d7{len(run) - 1})"
                for _, p in run[1:]:
                    runs[p] = (label, run[0][1])
            run = [item]
    return runs


def _collapse(graph: Graph, depth: int | None, repeats: int | None, model_types: dict) -> None:
    """Map nodes in deep modules and in repeated siblings onto boxes; merge their edges."""
    nodes = graph.nodes
    paths = sorted({n.module for n in nodes if n.module is not None})
    all_paths = sorted({_prefix(p, k) for p in paths for k in range(_level(p) + 1)})
    runs = _repeat_runs(all_paths, nodes, repeats) if repeats else {}
    boxes: dict[str, GraphNode] = {}
    rep: dict[str, str] = {}
    kept: list[GraphNode] = []
    counts: dict[str, list[int]] = {}
    repeats_of: dict[str, tuple] = {}
    for n in nodes:
        key = None
        if n.module is not None:
            if depth is not None and _level(n.module) >= depth:
                key = _prefix(n.module, depth)
            for k in range(1, _level(n.module) + 1):  # the outermost repeated ancestor wins
                anc = _prefix(n.module, k)
                if anc in runs and (key is None or k <= _level(key)):
                    key = "\u2026" + runs[anc][0]
                    repeats_of[key] = (anc.rpartition(".")[0], runs[anc][1])
                    break
        if key is None:
            rep[n.id] = n.id
            kept.append(n)
            continue
        box = boxes.get(key)
        if box is None:
            if key in repeats_of:
                parent, first = repeats_of[key]
                box = GraphNode(n.id, "repeat", key[1:], module=parent,
                                detail=f"same as {first}")
            else:
                box = GraphNode(n.id, "module", _module_label(key, model_types),
                                module=key.rpartition(".")[0] if key else None)
            boxes[key] = box
            counts[key] = [0, 0]
            kept.append(box)
        counts[key][0] += n.kind in ("op", "backward")
        counts[key][1] += n.kind in ("parameter", "accumulate")
        box.highlighted = box.highlighted or n.highlighted
        rep[n.id] = box.id
    for key, box in boxes.items():
        ops, params = counts[key]
        parts = [box.detail] if box.detail else []
        parts.append(f"{ops} op" + ("s" if ops != 1 else ""))
        if params:
            parts.append(f"{params} param" + ("s" if params != 1 else ""))
        box.detail = " \u00b7 ".join(parts)
    edges, seen = [], set()
    for e in graph.edges:
        s, t = rep[e.source], rep[e.target]
        if s == t or (s, t) in seen:
            continue
        seen.add((s, t))
        edges.append(GraphEdge(s, t, e.label, e.kind))
    graph.nodes, graph.edges = kept, edges


def _clusters(graph: Graph, model_types: dict) -> list[Cluster]:
    by_path: dict[str, Cluster] = {}

    def cluster(path: str) -> Cluster:
        c = by_path.get(path)
        if c is None:
            c = Cluster(path, _module_label(path, model_types), _level(path))
            by_path[path] = c
            if path != "":
                parent = path.rpartition(".")[0]
                cluster(parent).children.append(c)
        return c

    for n in graph.nodes:
        if n.module is not None:
            cluster(n.module).nodes.append(n.id)
    for c in by_path.values():
        c.children.sort(key=lambda child: _natural(child.path))
    return [by_path[""]] if "" in by_path else []


def _natural(path: str) -> tuple:
    """Sort key: ``layers.2`` before ``layers.10``."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.split("."))


def build(cap: Capture, *, view: str = "forward", show_values: bool = False,
          show_grads: bool = False, depth: int | None = None, highlight_ids=(),
          collapse_repeats: int | None = 3, model_types: dict | None = None,
          show_tangents: bool = False) -> Graph:
    """The :class:`Graph` of one view of a captured graph (see the module docstring)."""
    if view not in ("forward", "backward"):
        raise ValueError(f"draw_graph: view must be 'forward' or 'backward', got {view!r}")
    if depth is not None and (not isinstance(depth, int) or depth < 0):
        raise ValueError(f"draw_graph: depth must be None or an int >= 0, got {depth!r}")
    b = _Builder(cap, show_values, show_grads, show_tangents)
    b.forward() if view == "forward" else b.backward()
    graph = Graph(view, b.nodes, b.edges, [])
    _mark(graph, b.origin, highlight_ids)
    types = model_types or cap.module_types
    if depth is not None or collapse_repeats:
        _collapse(graph, depth, collapse_repeats, types)
    graph.clusters = _clusters(graph, types)
    return graph


def _mark(graph: Graph, origin: dict, highlight_ids) -> None:
    """Highlight the nodes made from the engine nodes / leaves in ``highlight_ids``."""
    wanted = set(highlight_ids)
    for n in graph.nodes:
        if origin.get(n.id) in wanted:
            n.highlighted = True
