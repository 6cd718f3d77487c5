"""Snapshot an autograd graph as plain data, from the public API and events only.

:func:`capture` walks ``tensor.grad_fn`` / ``node.next_functions`` from the
outputs (with a stack, never recursion) and writes down what a picture
needs: each op (name, module path, output shapes, saved tensors), each leaf
(parameter or input, by name), and the edges. Nothing in it refers to the
engine afterwards except weak handles used to read gradients later, so a
capture taken when backward begins survives backward freeing the graph.

A :class:`Trace` adds what the graph itself does not keep: the tensors an
op used that need no gradient (the data ``x``, the targets), small values
of intermediate tensors, and the gradients each backward node received. It
listens to ``OpForward`` and ``BackwardNode`` events while it is active::

    with gradlab.viz.trace() as tape:
        loss = model(x).sum()
        loss.backward()
    gradlab.viz.draw_graph(loss, trace=tape, show_values=True, show_grads=True)
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from .. import events

__all__ = ["Trace", "trace", "Capture", "OpInfo", "LeafInfo", "capture"]


def _small_value(t, limit: int):
    """A host copy of a small tensor's values (None for big or freed tensors)."""
    if t is None or t.numel() > limit:
        return None
    return np.array(t, copy=True)


def _small_tangent(t, limit: int):
    """The forward-mode tangent a small tensor carries, as values (None if none)."""
    if t is None:
        return None
    return _small_value(t.__dict__.get("_tangent"), limit)


def _dtype_name(dtype) -> str:
    return str(dtype).removeprefix("gradlab.")


@dataclass
class _OpRecord:
    inputs: tuple  # TensorRefs of every tensor argument
    outputs: tuple  # TensorRefs of the outputs
    input_values: tuple
    output_values: tuple
    output_tangents: tuple = ()  # forward mode: what each output's tangent was


class Trace:
    """Records, per backward node id, what events said: data inputs, values, gradients.

    ``max_values`` bounds the size of the tensors whose values are copied.
    """

    def __init__(self, max_values: int = 16) -> None:
        self.max_values = max_values
        self.ops: dict[int, _OpRecord] = {}
        self.grads: dict[int, tuple] = {}
        self.last_output = None  # TensorRef of the last recorded op's first output
        self._subscription = None

    def start(self) -> Trace:
        if self._subscription is None:
            self._subscription = events.subscribe(self.record)
        return self

    def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.remove()
            self._subscription = None

    def clear(self) -> None:
        self.ops.clear()
        self.grads.clear()
        self.last_output = None

    def __enter__(self) -> Trace:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def record(self, event) -> None:
        """The listener: keep what ``OpForward`` and ``BackwardNode`` say about graph nodes."""
        limit = self.max_values
        if isinstance(event, events.OpForward):
            if event.node_id is None:
                return
            self.ops[event.node_id] = _OpRecord(
                event.inputs, event.outputs,
                tuple(_small_value(r.tensor, limit) for r in event.inputs),
                tuple(_small_value(r.tensor, limit) for r in event.outputs),
                tuple(_small_tangent(r.tensor, limit) for r in event.outputs))
            if event.outputs:
                self.last_output = event.outputs[0]
        elif isinstance(event, events.BackwardNode):
            self.grads[event.node_id] = tuple(
                None if r is None else _small_value(r.tensor, limit)
                for r in event.grad_outputs)


def trace(max_values: int = 16) -> Trace:
    """A :class:`Trace`, to use as ``with gradlab.viz.trace() as tape: ...``."""
    return Trace(max_values)


@dataclass
class TensorMeta:
    """What a picture shows of one tensor (op output, saved tensor, data input)."""

    shape: tuple
    dtype: str
    name: str | None = None
    value: np.ndarray | None = None
    grad: np.ndarray | None = None
    tangent: np.ndarray | None = None  # forward mode (gradlab.autograd.forward_ad)


@dataclass
class LeafInfo:
    """A leaf tensor: a parameter, an input that requires grad, or a data input."""

    index: int
    meta: TensorMeta
    is_parameter: bool
    requires_grad: bool
    node_id: int | None  # its AccumulateGrad node's id (None for data inputs)
    ref: object = field(default=None, repr=False)  # weak handle, to read .grad later
    is_buffer: bool = False  # a module's state that is not learned (BatchNorm's running mean)


@dataclass
class OpInfo:
    """A recorded op call, i.e. one backward node."""

    index: int
    op: str  # "mul"
    node_name: str  # "MulBackward0"
    module: str | None
    node_id: int
    # per forward argument that needs a gradient: ("op", op index, output nr) or ("leaf", i)
    inputs: list[tuple] = field(default_factory=list)
    input_shapes: list[tuple] = field(default_factory=list)
    data_inputs: list[int] = field(default_factory=list)  # leaf indices, from a trace
    outputs: list[TensorMeta] = field(default_factory=list)
    saved: list[TensorMeta] | None = field(default_factory=list)  # None once freed
    grads: tuple | None = None  # gradients w.r.t. the outputs, from a trace


@dataclass
class Capture:
    """The whole graph as plain data: ops in topological order, leaves, and the outputs."""

    ops: list[OpInfo]
    leaves: list[LeafInfo]
    outputs: list[tuple]  # (source, TensorMeta): source is ("op", i, k) or ("leaf", i)
    trace: Trace | None = None
    module_types: dict = field(default_factory=dict)  # module path -> class name, if known
    _outputs_refs: list = field(default_factory=list, repr=False)

    def update_grads(self) -> None:
        """Read the gradients again (leaf ``.grad`` and the trace): after backward ran."""
        for leaf in self.leaves:
            t = leaf.ref() if leaf.ref is not None else None
            if t is not None and t.grad is not None and leaf.requires_grad:
                leaf.meta.grad = _small_value(t.grad, self._limit)
        if self.trace is not None:
            for op in self.ops:
                grads = self.trace.grads.get(op.node_id)
                if grads is not None:
                    op.grads = grads
                    for meta, g in zip(op.outputs, grads):
                        meta.grad = g
        for (source, meta), ref in zip(self.outputs, self._outputs_refs):
            t = ref()
            if t is not None and t.grad is not None:
                meta.grad = _small_value(t.grad, self._limit)
            elif source[0] == "op" and self.ops[source[1]].outputs[source[2]].grad is not None:
                meta.grad = self.ops[source[1]].outputs[source[2]].grad  # what backward began with

    @property
    def _limit(self) -> int:
        return self.trace.max_values if self.trace is not None else 16


def _as_tensors(outputs) -> list:
    from ..tensor import Tensor

    items = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    for t in items:
        if not isinstance(t, Tensor):
            raise TypeError(f"draw_graph: expected a Tensor or a list of Tensors, got "
                            f"{type(t).__name__}")
    return items


def _output_nr(t, node, trace) -> int:
    """Which output of ``node`` tensor ``t`` is (a trace knows; else the first with its shape)."""
    if node.num_outputs == 1:
        return 0
    record = trace.ops.get(node.id) if trace is not None else None
    if record is not None:
        for k, ref in enumerate(record.outputs):
            if ref.tensor is t:
                return k
    for k, meta in enumerate(node.output_meta):
        if meta is not None and tuple(meta[0]) == tuple(t.shape):
            return k
    return 0


def _meta(shape, dtype, name=None, value=None) -> TensorMeta:
    return TensorMeta(tuple(shape), _dtype_name(dtype), name, value)


def capture(outputs, *, params: dict | None = None, buffers: dict | None = None,
            trace: Trace | None = None, max_values: int | None = None) -> Capture:
    """Walk the graph behind ``outputs`` and return it as a :class:`Capture`.

    ``params`` and ``buffers`` name tensors (``dict(model.named_parameters())``).
    """
    from ..autograd.node import AccumulateGrad
    from ..nn.parameter import Parameter

    tensors = _as_tensors(outputs)
    limit = max_values if max_values is not None else (
        trace.max_values if trace is not None else 16)
    names = {id(t): name for name, t in (params or {}).items()}
    buffer_ids = {id(t) for t in (buffers or {}).values()}
    names.update({id(t): name for name, t in (buffers or {}).items() if id(t) not in names})
    op_index: dict = {}  # engine node -> OpInfo
    leaf_index: dict = {}  # id(live leaf tensor) -> LeafInfo
    ops: list[OpInfo] = []
    leaves: list[LeafInfo] = []
    keep = []  # strong references while walking, so id() stays unique

    def leaf_of(t, node_id, ref=None, value=None) -> int:
        if t is None:  # a data input freed since the op ran: what its event said
            info = LeafInfo(len(leaves), _meta(ref.shape, ref.dtype, ref.name, value),
                            False, False, None, None)
            leaves.append(info)
            return info.index
        info = leaf_index.get(id(t))
        if info is None:
            keep.append(t)
            name = names.get(id(t)) or t.name
            meta = _meta(t.shape, t.dtype, name, _small_value(t, limit))
            meta.tangent = _small_tangent(t, limit)
            info = LeafInfo(len(leaves), meta,
                            isinstance(t, Parameter) or (id(t) in names and
                                                         id(t) not in buffer_ids),
                            t.requires_grad, node_id, weakref.ref(t), id(t) in buffer_ids)
            leaf_index[id(t)] = info
            leaves.append(info)
        return info.index

    # Iterative post-order DFS: every op is numbered after the ops that feed it.
    roots = [t.grad_fn for t in tensors if t.grad_fn is not None]
    stack = [(n, 0) for n in reversed(roots)]
    visiting = set()
    while stack:
        node, i = stack.pop()
        if node in op_index or type(node) is AccumulateGrad:
            continue
        edges = node.edges
        if i == 0:
            visiting.add(node)
        while i < len(edges):
            edge = edges[i]
            i += 1
            if edge is not None and edge[0] not in op_index and \
                    type(edge[0]) is not AccumulateGrad and edge[0] not in visiting:
                stack.append((node, i))
                stack.append((edge[0], 0))
                break
        else:
            visiting.discard(node)
            op_index[node] = _op_info(node, len(ops), op_index, leaf_of, trace, names)
            ops.append(op_index[node])

    outs = []
    for t in tensors:
        name = t.name
        value = _small_value(t, limit)
        if t.grad_fn is None:
            source = ("leaf", leaf_of(t, None))
        else:
            op = op_index[t.grad_fn]
            source = ("op", op.index, _output_nr(t, t.grad_fn, trace))
        meta = _meta(t.shape, t.dtype, name, value)
        meta.tangent = _small_tangent(t, limit)
        outs.append((source, meta))
    result = Capture(ops, leaves, outs, trace, _outputs_refs=[weakref.ref(t) for t in tensors])
    result.update_grads()
    return result


def _op_info(node, index, op_index, leaf_of, trace, names) -> OpInfo:
    from ..autograd.node import AccumulateGrad

    info = OpInfo(index, node.op, node.name(), node.module, node.id)
    for edge, shape in zip(node.edges, node.input_shapes):
        if edge is None:
            continue
        target, nr = edge
        if type(target) is AccumulateGrad:
            leaf = target.variable
            if leaf is None:
                continue
            info.inputs.append(("leaf", leaf_of(leaf, target.id)))
        else:
            info.inputs.append(("op", op_index[target].index, nr))
        info.input_shapes.append(tuple(shape))
    record = trace.ops.get(node.id) if trace is not None else None
    for k, meta in enumerate(node.output_meta):
        if meta is None:
            info.outputs.append(TensorMeta((), "?"))
            continue
        m = _meta(meta[0], meta[1])
        if record is not None and k < len(record.outputs):
            live = record.outputs[k].tensor
            m.name = live.name if live is not None else record.outputs[k].name
            m.value = record.output_values[k]
            if k < len(record.output_tangents):
                m.tangent = record.output_tangents[k]
        info.outputs.append(m)
    if record is not None:  # inputs that need no gradient: the data, the targets
        for ref, value in zip(record.inputs, record.input_values):
            if ref.requires_grad:
                continue
            i = leaf_of(ref.tensor, None, ref, value)
            if i not in info.data_inputs:
                info.data_inputs.append(i)
    try:
        saved = node.saved_tensors
    except RuntimeError:  # backward already freed them
        info.saved = None
    else:
        info.saved = [_meta(s.shape, s.dtype, names.get(id(s)) or s.name) for s in saved
                      if s is not None and hasattr(s, "shape")]
    return info
