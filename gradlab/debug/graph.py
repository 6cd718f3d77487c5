"""The graph of one training iteration, built live from events.

An :class:`IterationGraph` grows as the run goes: each ``OpForward`` that
recorded an autograd node adds an op box and edges from where its inputs
came from (the op that made them, a parameter, a data input), each
``BackwardNode`` marks its box as done backward, each ``GradAccumulated``
marks a leaf. Ops made before the debugger attached are found when backward
begins, by walking ``grad_fn`` / ``edges`` back from the roots
(with a stack, never recursion); they show as ``created``, and the graph is
``partial``: ops ran that it did not see (the debugger attached, or listened
only lightly, after the iteration began).

Keys follow :mod:`gradlab.debug.snapshot`: ``op<k>`` for the k-th op recorded
(from 0), ``param:<name>`` for a parameter (``param:<id>`` when no module names
it), ``in<k>`` for the k-th other leaf or data input. :meth:`IterationGraph.freeze`
returns the frozen :class:`~gradlab.debug.snapshot.GraphSnapshot`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from .derivatives import derivative_rule
from .snapshot import EdgeSnapshot, GraphSnapshot, NodeSnapshot
from .summary import summarize

__all__ = ["IterationGraph", "shape_label", "op_label"]

_labels: dict[tuple, str] = {}


def shape_label(shape) -> str:
    """``(64, 32)``: how an edge shows the shape of the tensor it carries."""
    shape = tuple(shape)
    label = _labels.get(shape)
    if label is None:
        if len(_labels) > 4096:
            _labels.clear()
        label = _labels[shape] = "(" + ", ".join(str(s) for s in shape) + ")"
    return label


def op_label(op: str, dtype) -> str:
    """What an op's box says: its name; a cast also says what it casts to ("to float16"),
    so where mixed precision changes dtype can be read off the graph. ``dtype`` is the
    output's (a gradlab dtype or its name; None when unknown)."""
    if op == "to" and dtype is not None:
        return f"to {str(dtype).rsplit('.', 1)[-1]}"
    return op


def _summary(ref):
    t = None if ref is None else ref.tensor
    return None if t is None else summarize(t)


def _dtype_name(dtype) -> str | None:
    return None if dtype is None else getattr(dtype, "name", None) or str(dtype)


class _Node:
    """A box of the graph while the iteration runs (mutable; frozen on demand)."""

    __slots__ = ("key", "kind", "label", "state", "order", "module", "backward_name", "node_id",
                 "input_shapes", "output_shapes", "dtype", "device", "value", "grad",
                 "grad_inputs", "derivative", "duration", "backward_duration", "tangent",
                 "frozen")

    def __init__(self, key: str, kind: str, label: str, state: str, order: int) -> None:
        self.key, self.kind, self.label, self.state, self.order = key, kind, label, state, order
        self.module = self.backward_name = self.node_id = None
        self.input_shapes = self.output_shapes = self.grad_inputs = ()
        self.dtype = self.device = self.value = self.grad = self.derivative = None
        self.duration = self.backward_duration = self.tangent = None
        self.frozen = None

    def freeze(self) -> NodeSnapshot:
        frozen = self.frozen
        if frozen is None:
            frozen = self.frozen = NodeSnapshot(
                self.key, self.kind, self.label, self.state, self.order, self.module,
                self.backward_name, self.node_id, self.input_shapes, self.output_shapes,
                self.dtype, self.device, self.value, self.grad, self.grad_inputs,
                self.derivative, self.duration, self.tangent, self.backward_duration)
        return frozen


class IterationGraph:
    """The live graph of one iteration (see the module docstring).

    ``name_of(tensor)`` gives a parameter's name (``"fc1.weight"``) or None;
    ``summaries`` turns value and gradient summaries on; beyond ``max_nodes``
    boxes new ones are left out and counted in ``truncated``.
    """

    def __init__(self, iteration: int, *, max_nodes: int = 5000, summaries: bool = True,
                 name_of: Callable | None = None) -> None:
        self.iteration = iteration
        self.max_nodes = max_nodes
        self.summaries = summaries
        self.name_of = name_of or (lambda t: None)
        self.nodes: dict[str, _Node] = {}
        self.edges: list[tuple[str, str, str]] = []
        self._edge_set: set = set()
        self.by_node_id: dict[int, str] = {}  # autograd node id -> op key
        self._tensors: dict[int, tuple] = {}  # id(leaf or data tensor) -> (weakref, key)
        self._ops = 0
        self._inputs = 0
        self._left_out: set[int] = set()  # node ids and tensor ids with no box (over the limit)
        self._lost = 0  # freed data inputs left out (they cannot be told apart)
        self.loss: float | None = None
        self.partial = False  # ops of this iteration ran unseen (see the module docstring)
        self._frozen_nodes: tuple | None = None
        self._frozen_edges: tuple | None = None
        self._shape_key: int | None = None

    # --- what events add -------------------------------------------------------------------
    def key_for_node(self, node_id: int) -> str | None:
        return self.by_node_id.get(node_id)

    def key_for_tensor(self, tensor) -> str | None:
        """The key of a leaf or data input tensor seen in this iteration (None if not seen)."""
        entry = self._tensors.get(id(tensor))
        return entry[1] if entry is not None and entry[0]() is tensor else None

    def add_op(self, event) -> str | None:
        """An ``OpForward`` with a node id, or one whose outputs carry forward-mode tangents
        (no backward node: nothing requires grad): a new op box and its input edges."""
        node = self._new_node(f"op{self._ops}", "op", event.op, "forward", event.node_id)
        if node is None:
            return None
        self._ops += 1
        key = node.key
        node.module = event.module
        node.node_id = event.node_id
        node.duration = event.duration
        node.derivative = derivative_rule(event.op)
        if event.node_id is not None:
            self.by_node_id[event.node_id] = key
        else:  # forward mode only: later ops find this box through its output tensors
            for ref in event.outputs:
                live = ref.tensor
                if live is not None:
                    self._tensors[id(live)] = (weakref.ref(live), key)
        node.input_shapes = tuple([tuple(r.shape) for r in event.inputs])
        outputs = event.outputs
        node.output_shapes = tuple([tuple(r.shape) for r in outputs])
        if outputs:
            first = outputs[0]
            node.dtype = _dtype_name(first.dtype)
            node.device = str(first.device)
            live = first.tensor
            if live is not None:
                fn = live.grad_fn
                if fn is not None and fn.id == event.node_id:
                    node.backward_name = fn.name()
                    if not fn.fn.__module__.startswith("gradlab."):  # the user's own op
                        node.derivative = _custom_rule(fn.fn)
                if self.summaries:
                    node.value = summarize(live)
                    tangent = live.__dict__.get("_tangent")  # forward mode (forward_ad)
                    if tangent is not None:
                        node.tangent = summarize(tangent)
        for ref in event.inputs:
            source = self._source(ref)
            if source is not None:
                self._edge(source, key, shape_label(ref.shape))
        return key

    def mark_backward(self, event) -> str | None:
        """A ``BackwardNode`` ran: its box turns ``backward``, with the gradients it saw."""
        key = self.by_node_id.get(event.node_id)
        if key is None:  # made before we attached and not reachable from a root we saw
            if event.node_id in self._left_out:
                return None
            self.partial = True
            node = self._new_node(f"op{self._ops}", "op", event.op, "created", event.node_id)
            if node is None:
                return None
            self._ops += 1
            key = node.key
            node.node_id, node.module = event.node_id, event.module
            node.derivative = derivative_rule(event.op)
            self.by_node_id[event.node_id] = key
        node = self.nodes[key]
        node.state = "backward"
        node.backward_duration = event.duration
        if self.summaries:
            node.grad = _summary(event.grad_outputs[0]) if event.grad_outputs else None
            node.grad_inputs = tuple([_summary(r) for r in event.grad_inputs])
        self._changed(node)
        return key

    def grad_accumulated(self, event) -> str | None:
        """A leaf's ``.grad`` changed: its box turns ``backward``, with the new gradient."""
        leaf = event.tensor.tensor
        if leaf is None:
            return None
        key = self._leaf_key(leaf, "created")
        if key is None:
            return None
        node = self.nodes[key]
        node.state = "backward"
        if self.summaries:
            node.grad = _summary(event.grad)
            if node.value is None:
                node.value = summarize(leaf)
        self._changed(node)
        return key

    def add_roots(self, roots) -> None:
        """Backward begins at ``roots`` (TensorRefs): add the ops made before we attached."""
        for ref in roots:
            t = ref.tensor
            fn = None if t is None else t.grad_fn
            if fn is not None and fn.id not in self.by_node_id and fn.id not in self._left_out:
                self._add_created(fn)

    # --- building blocks -------------------------------------------------------------------
    @property
    def truncated(self) -> int:
        """How many boxes were left out because the graph reached ``max_nodes``."""
        return len(self._left_out) + self._lost

    def _new_node(self, key: str, kind: str, label: str, state: str,
                  ident: int | None = None) -> _Node | None:
        """A new box, or None past ``max_nodes`` (``ident`` remembers what was left out)."""
        if len(self.nodes) >= self.max_nodes:
            if ident is None:
                self._lost += 1
            else:
                self._left_out.add(ident)
            return None
        node = self.nodes[key] = _Node(key, kind, label, state, len(self.nodes))
        self._frozen_nodes = None
        self._shape_key = None
        return node

    def _changed(self, node: _Node) -> None:
        node.frozen = None
        self._frozen_nodes = None

    def _edge(self, source: str, target: str, label: str) -> None:
        edge = (source, target, label)
        if edge not in self._edge_set:
            self._edge_set.add(edge)
            self.edges.append(edge)
            self._frozen_edges = None
            self._shape_key = None

    def _source(self, ref) -> str | None:
        """The key of the box an op input came from (made on first sight)."""
        t = ref.tensor
        if t is None:  # freed already: a data input we can no longer tell apart
            node = self._new_node(f"in{self._inputs}", "input", ref.name or "input", "forward")
            if node is None:
                return None
            self._inputs += 1
            node.output_shapes = (tuple(ref.shape),)
            node.dtype, node.device = _dtype_name(ref.dtype), str(ref.device)
            return node.key
        fn = t.grad_fn
        if fn is not None:
            key = self.by_node_id.get(fn.id)
            if key is not None or fn.id in self._left_out:
                return key
            return self._add_created(fn)
        return self._leaf_key(t, "forward")

    def _leaf_key(self, t, state: str) -> str | None:
        """The box of leaf or data tensor ``t``: a parameter, a leaf needing grad, an input."""
        entry = self._tensors.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        if id(t) in self._left_out:
            return None
        from ..nn.parameter import Parameter

        name = self.name_of(t) if t.requires_grad else None
        if name is not None or isinstance(t, Parameter):
            kind = "parameter"
            key = f"param:{name}" if name is not None else f"param:{id(t)}"
            if key in self.nodes:  # two parameters with one name (two models)
                key = f"param:{id(t)}"
            label = name or t.name or "param " + shape_label(t.shape)
            node = self._new_node(key, kind, label, state, id(t))
        else:
            kind = "leaf" if t.requires_grad else "input"
            node = self._new_node(f"in{self._inputs}", kind, t.name or kind, state, id(t))
            if node is not None:
                self._inputs += 1
        if node is None:
            return None
        node.output_shapes = (tuple(t.shape),)
        node.dtype, node.device = _dtype_name(t.dtype), str(t.device)
        if self.summaries:
            node.value = summarize(t)
        self._tensors[id(t)] = (weakref.ref(t), node.key)
        return node.key

    def _add_created(self, root) -> str | None:
        """Add the ops behind autograd node ``root`` not seen yet (post-order, iterative)."""
        from ..autograd.node import AccumulateGrad

        known = self.by_node_id
        done = self._left_out  # left out for good: never walked again
        walked: set = set()
        stack = [(root, 0)]
        while stack:
            node, i = stack.pop()
            if node.id in known or node.id in done or node.id in walked:
                continue
            edges = node.edges
            while i < len(edges):
                edge = edges[i]
                i += 1
                if edge is not None and type(edge[0]) is not AccumulateGrad and \
                        edge[0].id not in known and edge[0].id not in done and \
                        edge[0].id not in walked:
                    stack.append((node, i))
                    stack.append((edge[0], 0))
                    break
            else:
                walked.add(node.id)
                self._created_op(node)
        return known.get(root.id)

    def _created_op(self, fn) -> None:
        from ..autograd.node import AccumulateGrad

        self.partial = True
        node = self._new_node(f"op{self._ops}", "op", fn.op, "created", fn.id)
        if node is None:
            return
        self._ops += 1
        self.by_node_id[fn.id] = node.key
        node.node_id, node.module = fn.id, fn.module
        node.backward_name = fn.name()
        node.derivative = derivative_rule(fn.op)
        shapes = fn.input_shapes
        node.input_shapes = tuple([tuple(s) for s in shapes if s is not None])
        metas = fn.output_meta
        node.output_shapes = tuple([tuple(m[0]) for m in metas if m is not None])
        if metas and metas[0] is not None:
            node.dtype, node.device = _dtype_name(metas[0][1]), str(metas[0][2])
        for edge, shape in zip(fn.edges, shapes):
            if edge is None:
                continue
            source = edge[0]
            if type(source) is AccumulateGrad:
                leaf = source.variable
                key = None if leaf is None else self._leaf_key(leaf, "created")
            else:
                key = self.by_node_id.get(source.id)
            if key is not None:
                self._edge(key, node.key, shape_label(shape if shape is not None else ()))

    # --- freezing --------------------------------------------------------------------------
    @property
    def shape_key(self) -> int:
        """Equal for two graphs with the same boxes and edges (keys, kinds, labels)."""
        if self._shape_key is None:
            self._shape_key = hash((tuple([(n.key, n.kind, n.label)
                                           for n in self.nodes.values()]),
                                    tuple(self.edges)))
        return self._shape_key

    def freeze(self, current: str | None = None) -> GraphSnapshot:
        """The graph as it is now, frozen (cheap when nothing changed since the last call)."""
        if self._frozen_nodes is None:
            self._frozen_nodes = tuple([n.freeze() for n in self.nodes.values()])
        if self._frozen_edges is None:
            self._frozen_edges = tuple([EdgeSnapshot(*e) for e in self.edges])
        return GraphSnapshot(self.iteration, self._frozen_nodes, self._frozen_edges,
                             self.shape_key, current, self.loss, self.truncated, self.partial)

    def __len__(self) -> int:
        return len(self.nodes)


def _custom_rule(function) -> str:
    """The derivative of a Function the user wrote is their own backward, whatever its
    name (a student's Mean is not gradlab's mean)."""
    return (f"{function.__qualname__} is your own Function: its derivative is what its "
            f"backward returns (a tangent rule, if it has one, is its jvp)")
