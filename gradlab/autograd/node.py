"""The backward graph: ``Node`` (PyTorch's ``grad_fn``) and what it keeps.

Each recorded op call becomes one :class:`Node`. It knows its op, the
edges to the nodes that made its inputs (``next_functions``), the shapes
of its inputs and outputs, and the tensors it saved for backward
(:class:`SavedTensor`, checked against in-place changes). A leaf that
requires grad gets an :class:`AccumulateGrad` node, where gradients end.

Nodes are made by the dispatcher in :mod:`gradlab.autograd.function` and run
by the engine in :mod:`gradlab.autograd.engine`.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np

from .grad_mode import state

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "gradient_edge", "version_error"]

Tensor = None  # gradlab.tensor.Tensor, bound by that module (it imports this one)

_node_ids = itertools.count(1)


class _Released(tuple):
    """The saved-tensors slot of a node whose buffers backward already freed."""


_RELEASED = _Released()


class SavedTensor:
    """One tensor a node keeps for backward, with the version it had when saved.

    Three kinds: an input tensor (kept as the tensor itself, so a second-order
    graph can flow through it), an output of the node (kept as its data only;
    a reference to the output tensor would be a cycle node -> tensor -> node),
    or a private array the forward computed (a mask, indices).
    """

    __slots__ = ("tensor", "data", "storage", "version", "output_nr", "tangent")

    def __init__(self, tensor, data, storage, output_nr):
        self.tensor = tensor
        self.data = data
        self.storage = storage
        self.output_nr = output_nr
        self.tangent = None  # forward mode: a saved output's tangent, given back on unpack
        if storage is not None:
            self.version = storage.version
            storage.retain_for_backward()

    def release(self) -> None:
        """Stop counting the buffer as kept for backward (only for one with a storage)."""
        self.storage.release_for_backward()
        self.tensor = self.data = self.storage = None

    def unpack(self, node):
        storage = self.storage
        if storage is not None and storage.version != self.version:
            shape = self.data.shape if self.data is not None else self.tensor.shape
            raise version_error(node, self.output_nr, shape, self.version, storage.version)
        if self.tensor is not None:
            return self.tensor
        if self.output_nr is not None:
            out = Tensor._make(self.data, storage, node, self.output_nr, True)
            tangent = self.tangent  # (level, tangent) while that level lasts
            if tangent is not None and state.dual is tangent[0]:
                # Forward-over-reverse: a backward formula that reads this output must see
                # it move as the output moved (exp's gradient is grad·e^x, and its tangent).
                state.dual.set(out, tangent[1])
            return out
        if self.data is None or isinstance(self.data, (int, float, complex, bool, np.generic)):
            return self.data
        return Tensor._make(self.data, None, None, 0, False)


def version_error(node, output_nr, shape, saved: int, now: int) -> RuntimeError:
    """The error for a saved tensor changed in place between forward and backward."""
    which = "an input" if output_nr is None else f"output {output_nr}"
    return RuntimeError(
        f"one of the tensors needed for gradient computation was modified by an in-place "
        f"operation: {which} of '{node.op}' (node {node.id}), shape {tuple(shape)}, was saved "
        f"at version {saved} and is now at version {now}. Fix: use the out-of-place form "
        f"(x = x * 2 instead of x.mul_(2)), or change a .clone() of the tensor instead.")


class Node:
    """A recorded op call: the unit of the backward graph (PyTorch's ``grad_fn``).

    ``edges[i]`` is ``(node, output_nr)`` for the i-th forward argument when
    it requires grad, else ``None``: following these edges from the loss
    walks the whole graph back to the leaves (the engine does). A node
    refers to its inputs' nodes but never to its own outputs, so dropping
    the last output frees the graph. ``next_functions`` is the same edges as
    PyTorch shows them: tensor arguments only, ``(None, 0)`` for one that
    needs no gradient.
    """

    __slots__ = ("fn", "id", "edges", "no_grad_tensors", "input_meta",
                 "module", "num_outputs", "output_meta", "_saved", "__dict__", "__weakref__")

    # Rarely set, so class-level defaults rather than per-node slots: the dispatcher
    # builds nodes without calling __init__ and sets only the slots above.
    _pre_hooks = None  # output_nr -> {id: hook}, from register_hook on a non-leaf output
    _forward_trace = None  # where its op ran in the user's code (anomaly detection only)
    _retain_hooks = None  # output_nr -> weakref of an output that called retain_grad()
    _post_hooks = None
    _non_differentiable = None
    materialize_grads = True

    def __init__(self, fn) -> None:
        self.fn = fn
        self.id = next(_node_ids)
        self._saved = None
        self.module = state.module
        self.edges = ()
        self.no_grad_tensors = 0

    @property
    def next_functions(self) -> tuple:
        """``(node, output_nr)`` per tensor argument, ``(None, 0)`` where it needs no
        gradient: PyTorch's view of :attr:`edges` (numbers and other arguments left out)."""
        mask = self.no_grad_tensors
        return tuple([edge if edge is not None else (None, 0)
                      for i, edge in enumerate(self.edges)
                      if edge is not None or mask >> i & 1])

    # --- what users of ctx see (PyTorch's names) ------------------------------------------
    def save_for_backward(self, *items) -> None:
        """Keep tensors (or, in raw ops, arrays) for ``backward``; see ``saved_tensors``."""
        self._saved = items

    @property
    def saved_tensors(self) -> tuple:
        """The saved tensors, checked against in-place changes since they were saved."""
        saved = self._saved
        if not saved:
            if saved is _RELEASED:
                raise RuntimeError(
                    f"trying to backward through the graph a second time: '{self.op}' (node "
                    f"{self.id}) already freed the tensors it saved for backward. Fix: pass "
                    f"retain_graph=True to the first backward() (or autograd.grad()) if you "
                    f"need to backward through the same graph again."
                )
            return ()
        return tuple([s.unpack(self) for s in saved])

    def mark_non_differentiable(self, *outputs) -> None:
        """Outputs (arrays or tensors) that never get a gradient, like argmax indices."""
        self._non_differentiable = tuple(id(o) for o in outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """If False, backward may receive None for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    @property
    def needs_input_grad(self) -> tuple:
        """Per forward argument, whether it needs a gradient (read from :attr:`edges`, so
        recording an op builds one tuple fewer)."""
        return tuple([edge is not None for edge in self.edges])

    # --- what the engine and the views use -------------------------------------------------
    @property
    def input_shapes(self) -> tuple:
        """Shape of each forward argument that needs a gradient (None for the others)."""
        return tuple([None if m is None else m[0] for m in self.input_meta])

    @property
    def op(self) -> str:
        """The op's PyTorch name: ``mul``, ``matmul``, ``sum``..."""
        return self.fn.name

    def name(self) -> str:
        """PyTorch's class-style name, e.g. ``MulBackward0``.

        PyTorch names a node after the overload that ran (``SumBackward0`` for a full
        sum, ``SumBackward1`` over dims); an op that covers several sets
        ``ctx.node_name`` in its forward, else its Function's ``node_name`` holds.
        """
        return self.__dict__.get("node_name") or self.fn.node_name

    def __del__(self) -> None:
        # A graph dropped without backward: its saved buffers stop counting as activations.
        if self._saved:
            self.release_saved()

    def release_saved(self) -> None:
        """Free the saved tensors (after a backward without ``retain_graph``)."""
        saved = self._saved
        if saved:
            for s in saved:
                # A forward that raised after save_for_backward leaves raw, unresolved
                # items here; they hold no accounting to undo.
                if isinstance(s, SavedTensor) and s.storage is not None:
                    s.release()
        self._saved = _RELEASED

    @property
    def saved_bytes(self) -> int:
        """Bytes of the buffers this node keeps alive for backward."""
        total = 0
        for s in self._saved or ():
            data = s.data if s.data is not None else getattr(s.tensor, "_data", None)
            total += 0 if data is None else data.nbytes
        return total

    def register_hook(self, hook):
        """``hook(grad_inputs, grad_outputs)`` after this node's backward; may replace grads."""
        from ..utils.hooks import RemovableHandle

        if self._post_hooks is None:
            self._post_hooks = {}
        return RemovableHandle(self._post_hooks, hook)

    def apply_backward(self, grads):
        return self.fn.backward(self, *grads)

    def __call__(self, *grads):
        """Run this node's backward directly (as ``y.grad_fn(g)`` does in PyTorch)."""
        return self.apply_backward(grads)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The node at a leaf that requires grad: adds what arrives into ``leaf.grad``.

    The leaf holds its accumulator for life, and the accumulator holds the
    leaf weakly (no reference cycle): every graph that uses the leaf, in
    every training step, ends in this same node.
    """

    __slots__ = ("_variable",)

    def __init__(self, variable) -> None:
        # The fixed facts (no inputs, one output) are class attributes below.
        self.fn = AccumulateGradFn
        self.id = next(_node_ids)
        self._saved = None
        self.module = None
        self._variable = weakref.ref(variable)

    @property
    def variable(self):
        """The leaf, or None once it was freed (its gradient then has nowhere to go)."""
        return self._variable()

    edges = ()
    no_grad_tensors = 0
    input_meta = ()
    needs_input_grad = ()
    num_outputs = 1

    @property
    def output_meta(self):
        v = self.variable
        return ((v._data.shape, v.dtype, v._device),)

    def name(self) -> str:
        return "AccumulateGrad"


class _AccumulateGradFn:
    name = "accumulate_grad"
    node_name = "AccumulateGrad"


AccumulateGradFn = _AccumulateGradFn


def _grad_accumulator(tensor) -> AccumulateGrad:
    acc = tensor._accumulator
    if acc is None:
        acc = tensor._accumulator = AccumulateGrad(tensor)
    return acc


def gradient_edge(tensor):
    """Where a gradient for ``tensor`` must be sent: ``(node, output_nr)``."""
    tensor._catch_up()
    fn = tensor.grad_fn
    if fn is not None:
        return (fn, tensor._out_index)
    return (_grad_accumulator(tensor), 0)
