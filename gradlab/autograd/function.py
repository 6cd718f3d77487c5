"""How an op is defined and run: ``Function``, its backward ``Node``, and the dispatcher.

Every differentiable op in gradlab, built-in or yours, is a ``Function``
subclass with two static methods side by side::

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b):            # compute the output
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):           # d(a*b)/da = b, d(a*b)/db = a
            a, b = ctx.saved_tensors
            return grad * b, grad * a

``Mul.apply(x, y)`` runs ``forward`` and, if any input requires grad and
grad mode is on, records a :class:`Node` (PyTorch's ``grad_fn``) that the
backward engine later calls. ``ctx`` *is* that node.

One difference from PyTorch is a speed switch: built-in ops set
``raw = True`` and their ``forward`` receives and returns raw NumPy/CuPy
arrays, so a forward pass spends its time in NumPy rather than in tensor
bookkeeping. ``backward`` always works on Tensors, written with tensor ops,
so ``create_graph=True`` differentiates through it for higher derivatives.

``apply`` is the one place an op is dispatched, so it is also where the
``OpForward`` event is emitted.
"""

from __future__ import annotations

import itertools
import time
import weakref

import ml_dtypes
import numpy as np

from .. import events
from ..dtypes import ALL_DTYPES, from_numpy_dtype
from ..storage import Storage
from .grad_mode import state

__all__ = ["Function", "Node", "AccumulateGrad", "SavedTensor", "once_differentiable"]

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

    __slots__ = ("tensor", "data", "storage", "version", "output_nr")

    def __init__(self, tensor, data, storage, output_nr):
        self.tensor = tensor
        self.data = data
        self.storage = storage
        self.output_nr = output_nr
        if storage is not None:
            self.version = storage.version
            storage.retain_for_backward()

    def release(self) -> None:
        if self.storage is not None:
            self.storage.release_for_backward()
        self.tensor = self.data = self.storage = None

    def unpack(self, node):
        storage = self.storage
        if storage is not None and storage.version != self.version:
            shape = tuple(self.data.shape if self.data is not None else self.tensor.shape)
            which = "an input" if self.output_nr is None else f"output {self.output_nr}"
            raise RuntimeError(
                f"one of the tensors needed for gradient computation was modified by an in-place "
                f"operation: {which} of '{node.op}' (node {node.id}), shape {shape}, was saved "
                f"at version {self.version} and is now at version {storage.version}. "
                f"Fix: use the out-of-place form (x = x * 2 instead of x.mul_(2)), or change a "
                f".clone() of the tensor instead."
            )
        if self.tensor is not None:
            return self.tensor
        if self.output_nr is not None:
            return Tensor._make(self.data, storage, node, self.output_nr, True)
        if self.data is None or isinstance(self.data, (int, float, bool, np.generic)):
            return self.data
        return Tensor._make(self.data, None, None, 0, False)


class Node:
    """A recorded op call: the unit of the backward graph (PyTorch's ``grad_fn``).

    ``next_functions[i]`` is ``(node, output_nr)`` for the i-th forward
    argument when it requires grad, else ``None``: following these edges
    from the loss walks the whole graph back to the leaves. A node refers to
    its inputs' nodes but never to its own outputs, so dropping the last
    output frees the graph.
    """

    __slots__ = ("fn", "id", "next_functions", "input_meta", "needs_input_grad", "module",
                 "num_outputs", "output_meta", "_saved", "__dict__", "__weakref__")

    # Rarely set, so class-level defaults rather than per-node slots: the dispatcher
    # builds nodes without calling __init__ and sets only the slots above.
    _pre_hooks = None  # output_nr -> {id: hook}, from register_hook on a non-leaf output
    _retain_hooks = None  # output_nr -> weakref of an output that called retain_grad()
    _post_hooks = None
    _non_differentiable = None
    materialize_grads = True

    def __init__(self, fn) -> None:
        self.fn = fn
        self.id = next(_node_ids)
        self._saved = None
        self.module = state.module

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

    # --- what the engine and the views use -------------------------------------------------
    @property
    def input_shapes(self) -> tuple:
        """Shape of each forward argument that needs a gradient (None for the others)."""
        return tuple(None if m is None else m[0] for m in self.input_meta)

    @property
    def op(self) -> str:
        """The op's PyTorch name: ``mul``, ``matmul``, ``sum``..."""
        return self.fn.name

    def name(self) -> str:
        """PyTorch's class-style name, e.g. ``MulBackward0``."""
        return self.fn.node_name

    def __del__(self) -> None:
        # A graph dropped without backward: its saved buffers stop counting as activations.
        if self._saved:
            self.release_saved()

    def release_saved(self) -> None:
        """Free the saved tensors (after a backward without ``retain_graph``)."""
        saved = self._saved
        if saved:
            for s in saved:
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

    A leaf keeps a weak reference to its accumulator so that all graphs using
    the leaf share one node while any of them is alive.
    """

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        # Made afresh whenever a leaf enters a new graph, so kept minimal: the
        # fixed facts (no inputs, one output) are class attributes below.
        self.fn = AccumulateGradFn
        self.id = next(_node_ids)
        self._saved = None
        self.module = None
        self.variable = variable

    next_functions = ()
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
    ref = tensor._accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(acc)
    return acc


def gradient_edge(tensor):
    """Where a gradient for ``tensor`` must be sent: ``(node, output_nr)``."""
    fn = tensor.grad_fn
    if fn is not None:
        return (fn, tensor._out_index)
    return (_grad_accumulator(tensor), 0)


class _NoGradContext:
    """The ``ctx`` an op sees when no graph is recorded: saving is free and forgotten."""

    __slots__ = ()
    needs_input_grad = ()
    materialize_grads = True

    def save_for_backward(self, *items) -> None:
        pass

    def mark_non_differentiable(self, *outputs) -> None:
        pass

    def set_materialize_grads(self, value) -> None:
        pass

    def __setattr__(self, name, value) -> None:
        pass


_NO_GRAD_CTX = _NoGradContext()


class _FunctionMeta(type):
    """Gives each Function subclass its op ``name`` and PyTorch-style ``node_name``."""

    def __init__(cls, clsname, bases, ns):
        super().__init__(clsname, bases, ns)
        if "name" not in ns:
            cls.name = clsname[0].lower() + clsname[1:]
        cls.node_name = ns.get("node_name") or f"{clsname}Backward0"


class Function(metaclass=_FunctionMeta):
    """Base class of every op (PyTorch's ``torch.autograd.Function``).

    Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``
    and call ``YourOp.apply(*args)``. ``backward`` returns one gradient per
    forward argument (``None`` where there is none).

    Class attributes:
    ``name``  the op name shown in graphs and events (default: class name, lower-cased)
    ``raw``   built-in speed path: forward sees raw arrays, not Tensors
    ``differentiable``  False for ops with no gradient (comparisons): no node is recorded
    """

    name = "function"
    raw = False
    differentiable = True
    returns_input = False  # in-place forms write into and return their first input
    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a Function must define a static forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(
            "this Function defines no backward, so it cannot be differentiated"
        )

    @classmethod
    def apply(cls, *args):
        return _dispatch(cls, args)


def once_differentiable(backward):
    """Mark a backward as not differentiable itself (accepted for PyTorch compatibility)."""
    return backward


Tensor = None  # gradlab.tensor.Tensor, bound by that module (it imports this one)
_listeners = events.listeners  # the bus's list itself: truthy exactly when someone listens


def _dispatch(fn, args):
    """Run ``fn`` on ``args``: compute, wrap outputs, record a node, emit ``OpForward``.

    Every op in gradlab passes through here, so it is written for speed: one
    pass over the arguments, a node only when a gradient will be needed,
    and no event work unless someone listens.
    """
    # 1. Which arguments are tensors, on which device, and does any need a gradient?
    device = None
    requires_grad = False
    raw = fn.raw
    fargs = list(args) if raw else args
    n = len(args)
    for i in range(n):
        a = args[i]
        if isinstance(a, Tensor):
            if raw:
                fargs[i] = a._data
            if a._requires_grad:
                requires_grad = True
            if device is None:
                device = a._device
            elif a._device is not device:
                _raise_mixed_devices(fn, args)
    record = requires_grad and fn.differentiable and state.enabled
    if record:
        ctx = _new_node(Node)
        ctx.fn = fn
        ctx.id = next(_node_ids)
        ctx._saved = None
        ctx.module = state.module
        ctx.needs_input_grad = tuple([isinstance(a, Tensor) and a._requires_grad
                                      for a in args])
    else:
        ctx = _NO_GRAD_CTX

    # 2. Compute.
    listening = _listeners
    start = time.perf_counter() if listening else 0.0
    if raw:
        if device is not None and device.index is not None:
            with device.backend.use_device(device.index):
                result = fn.forward(ctx, *fargs)
        else:
            result = fn.forward(ctx, *fargs)
    else:  # custom Functions see tensors, with recording off, as in PyTorch
        prev = state.enabled
        state.enabled = False
        try:
            result = fn.forward(ctx, *fargs)
        finally:
            state.enabled = prev
    duration = time.perf_counter() - start if listening else 0.0

    # 3. Wrap the results as tensors; 4. connect the node to its inputs.
    if type(result) is _ndarray and result.base is None and device is not None and \
            not fn.returns_input:
        # The common case, inlined: one freshly allocated NumPy array.
        out = _new_tensor(Tensor)
        out._data = result
        out._storage = Storage(result.nbytes, device)
        out._device = device
        np_dtype = result.dtype
        out.dtype = _BY_NUMPY.get(np_dtype) or _from_numpy_dtype(np_dtype)
        out._out_index = 0
        if record and out.dtype.is_floating_point and ctx._non_differentiable is None:
            out._requires_grad = True
            out.grad_fn = ctx
            _connect(ctx, args, (out,))
        else:
            out._requires_grad = False
            out.grad_fn = None
            if record:
                _connect(ctx, args, (out,))
        if listening:
            _emit_forward(fn, ctx if record else None, args, (out,), duration)
        return out
    if type(result) is not _ndarray and (type(result) is tuple or
                                          isinstance(result, _np_generic)):
        result = _arrays_not_scalars(result, ctx if record else None)
    if type(result) is tuple:
        outputs = tuple(_wrap(r, k, fn, args, device, ctx if record else None)
                        for k, r in enumerate(result))
    else:
        outputs = (_wrap(result, 0, fn, args, device, ctx if record else None),)
    if record:
        _connect(ctx, args, outputs)
    if listening:
        _emit_forward(fn, ctx if record else None, args, outputs, duration)
    return outputs if type(result) is tuple else outputs[0]


_new_node = object.__new__


def _wrap(r, k, fn, args, device, node):
    """Output ``k`` of an op as a Tensor, sharing storage where it is a view of an input."""
    if r is None:
        return None
    viewed = None
    if isinstance(r, Tensor):  # a Function with raw=False returns tensors
        data, storage = r._data, r._storage
    else:
        data = r
        if r.base is None and not fn.returns_input:
            storage = Storage(r.nbytes, device if device is not None else _device_of(r))
        else:
            viewed = _viewed_input(r, args)
            storage = viewed._storage if viewed is not None else Storage(
                (r if r.base is None else r.base).nbytes,
                device if device is not None else _device_of(r))
    diff = node is not None and (data.dtype.kind == "f" or data.dtype == _bfloat16)
    if diff and node._non_differentiable is not None and id(r) in node._non_differentiable:
        diff = False
    t = _new_tensor(Tensor)
    t._init(data, storage, node if diff else None, k, diff)
    if viewed is not None and not fn.returns_input:
        # Remember how to make this view from its base, so that an in-place
        # change of the view can be replayed onto the base's history.
        base = viewed._view_base
        t._view_base = base if base is not None else viewed
        t._view_steps = viewed._view_steps + ((fn, args[1:], k),)
    return t


_new_tensor = object.__new__
_ndarray, _np_generic, _np_asarray = np.ndarray, np.generic, np.asarray
_BY_NUMPY = {d.np: d for d in ALL_DTYPES}
_from_numpy_dtype = from_numpy_dtype
_bfloat16 = np.dtype(ml_dtypes.bfloat16)  # a float whose NumPy kind is 'V', not 'f'


def _arrays_not_scalars(result, node):
    """NumPy returns scalars for 0-d results; tensors hold arrays, so convert them.

    What forward saved refers to the scalar objects, so the saved list is
    updated too (outputs are recognised by identity when the node connects).
    """
    items = result if type(result) is tuple else (result,)
    if not any(isinstance(r, _np_generic) for r in items):
        return result
    converted = tuple(_np_asarray(r) if isinstance(r, _np_generic) else r for r in items)
    if node is not None and node._saved is not None:
        swap = {id(old): new for old, new in zip(items, converted) if old is not new}
        node._saved = tuple(swap.get(id(item), item) for item in node._saved)
    return converted if type(result) is tuple else converted[0]


def _viewed_input(array, args):
    """The input tensor whose memory ``array`` aliases, if any.

    NumPy and CuPy point a view's ``base`` at the array that owns the memory,
    so comparing bases finds which input an output aliases.
    """
    base = array.base
    for a in args:
        if isinstance(a, Tensor):
            d = a._data
            if d is array or (base is not None and (d is base or d.base is base)):
                return a
    return None


def _device_of(array):
    from ..backends import backend_for_array

    return backend_for_array(array)[0]


def _connect(node, args, outputs):
    """Give ``node`` its edges to the inputs' nodes, and resolve what forward saved."""
    edges = []
    metas = []
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            fn_ = a.grad_fn
            if fn_ is not None:
                edges.append((fn_, a._out_index))
            else:
                ref = a._accumulator
                acc = ref() if ref is not None else None
                edges.append((acc if acc is not None else _grad_accumulator(a), 0))
            metas.append((a._data.shape, a.dtype, a._device))
        else:
            edges.append(None)
            metas.append(None)
    node.next_functions = tuple(edges)
    node.input_meta = tuple(metas)
    node.num_outputs = len(outputs)
    node.output_meta = tuple([None if o is None else (o._data.shape, o.dtype, o._device)
                              for o in outputs])
    saved = node._saved
    if saved is not None:
        node._saved = tuple([_resolve_saved(item, args, outputs) for item in saved])


def _resolve_saved(item, args, outputs):
    """Find out what a saved item is: an input, an output or a private value."""
    for a in args:
        if isinstance(a, Tensor) and (item is a._data or item is a):
            return SavedTensor(a, None, a._storage, None)
    for k, o in enumerate(outputs):
        if o is not None and (item is o._data or item is o):
            if o.grad_fn is None:  # not differentiable: no need for a node reference
                return SavedTensor(o, None, o._storage, None)
            return SavedTensor(None, o._data, o._storage, k)
    if item is None or isinstance(item, (int, float, bool, _np_generic)):
        return SavedTensor(None, item, None, None)  # a number: unpacks as itself
    if isinstance(item, Tensor):
        return SavedTensor(item, None, item._storage, None)
    return SavedTensor(None, item, None, None)


def _emit_forward(fn, node, args, outputs, duration):
    ref = events.tensor_ref
    events.emit(events.OpForward(
        events.next_seq(), fn.name, None if node is None else node.id,
        tuple(ref(a) for a in args if isinstance(a, Tensor)),
        tuple(ref(o) for o in outputs if o is not None),
        state.module, duration))


def _raise_mixed_devices(fn, args):
    found = ", ".join(f"{tuple(a.shape)} on {a.device}" for a in args if isinstance(a, Tensor))
    first = next(a.device for a in args if isinstance(a, Tensor))
    raise RuntimeError(
        f"{fn.name}: expected all tensors on the same device, got {found}. "
        f"Fix: move them to one device first, e.g. other.to('{first}')."
    )
