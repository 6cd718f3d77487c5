"""How an op is defined and run: ``Function`` and the dispatcher.

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
grad mode is on, records a :class:`~gradlab.autograd.node.Node` (PyTorch's
``grad_fn``) that the backward engine later calls. ``ctx`` *is* that node.

One difference from PyTorch is a speed switch: built-in ops set
``raw = True`` and their ``forward`` receives and returns raw NumPy/CuPy
arrays, so a forward pass spends its time in NumPy rather than in tensor
bookkeeping. ``backward`` always works on Tensors, written with tensor ops,
so ``create_graph=True`` differentiates through it for higher derivatives.

``apply`` is the one place an op is dispatched, so it is also where the
``OpForward`` event is emitted.
"""

from __future__ import annotations

import time

import ml_dtypes
import numpy as np

from .. import events
from ..storage import Storage
from . import forward_ad as _forward_ad
from .anomaly_mode import anomaly, record_forward_trace
from .grad_mode import state
from .graph import PackedSavedTensor
from .node import Node, SavedTensor, _grad_accumulator, _node_ids
from .raw_results import arrays_not_scalars, device_of, in_c_order

__all__ = ["Function", "once_differentiable"]


class _ForwardOnlyContext:
    """The ``ctx`` a custom Function sees when no graph is recorded: saving is a no-op."""

    needs_input_grad = ()
    materialize_grads = True

    def save_for_backward(self, *items) -> None:
        pass

    def mark_non_differentiable(self, *outputs) -> None:
        pass

    def set_materialize_grads(self, value) -> None:
        pass


class _NoGradContext(_ForwardOnlyContext):
    """The one shared ``ctx`` of built-in ops when no graph is recorded.

    Writes to it are dropped, so a built-in forward must not read back what it
    set on ``ctx`` (custom Functions get a fresh context and may).
    """

    __slots__ = ()

    def __setattr__(self, name, value) -> None:
        pass


_NO_GRAD_CTX = _NoGradContext()


class _DualContext(_ForwardOnlyContext):
    """The ``ctx`` of an op on tensors that carry tangents but record no node: it keeps
    what forward saved and set, for the op's tangent rule (``jvp``)."""

    def __init__(self, args) -> None:
        self._saved = ()
        self.needs_input_grad = tuple(isinstance(a, Tensor) for a in args)
        self.input_shapes = tuple(tuple(a.shape) if isinstance(a, Tensor) else None
                                  for a in args)

    def save_for_backward(self, *items) -> None:
        self._saved = items

    @property
    def saved_tensors(self) -> tuple:
        return tuple(item if item is None or isinstance(item, Tensor) or
                     not hasattr(item, "shape") else Tensor._make(item, None, None, 0, False)
                     for item in self._saved)


class _FunctionMeta(type):
    """Gives each Function subclass its op ``name``, PyTorch-style ``node_name``, and the
    class of its nodes.

    The node class is an empty subclass of :class:`Node` named like PyTorch's
    (``MulBackward0``), so ``type(y.grad_fn).__name__`` reads as it does there.
    """

    def __init__(cls, clsname, bases, ns):
        super().__init__(clsname, bases, ns)
        if "name" not in ns:
            cls.name = clsname[0].lower() + clsname[1:]
        cls.node_name = ns.get("node_name") or f"{clsname}Backward0"
        # Complex support is a promise about this class's own backward, so a subclass
        # makes it again (a raw op that does not refuses complex tensors).
        cls.supports_complex = ns.get("supports_complex", False)
        cls.node_class = type(cls.node_name, (Node,), {
            "__slots__": (), "__module__": cls.__module__,
            "__doc__": f"The backward node of {cls.__qualname__}."})
        # By name, for saved graphs (gradlab.jit); None where two classes share a name
        key = f"{cls.__module__}:{cls.__qualname__}"
        _BY_NAME[key] = cls if key not in _BY_NAME else None


_BY_NAME: dict = {}


def function_named(ref: str):
    """The Function subclass called ``module:qualname`` (its module imported already), or
    None: ops made by a factory (``type(...)``) are found too, which an attribute path can't."""
    return _BY_NAME.get(ref)


class Function(metaclass=_FunctionMeta):
    """Base class of every op (PyTorch's ``torch.autograd.Function``).

    Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``
    and call ``YourOp.apply(*args)``. ``backward`` returns one gradient per
    forward argument (``None`` where there is none).

    Class attributes:
    ``name``  the op name shown in graphs and events (default: class name, lower-cased)
    ``raw``   built-in speed path: forward sees raw arrays, not Tensors
    ``differentiable``  False for ops with no gradient (comparisons): no node is recorded
    ``supports_complex``  True where forward and backward are right for complex numbers
                      (gradients as PyTorch's: ∂L/∂Re z + i·∂L/∂Im z; see
                      ops/complex_parts.py); raw ops without it refuse complex tensors.
                      Not inherited.
    ``tangent_rule``  how forward mode gets a tangent when the op writes no ``jvp``:
                      ``"elementwise"`` (one input, each output element from the same input
                      element: the tangent is backward applied to the input's tangent),
                      ``"linear"`` (linear in its one tensor input: the op applied to the
                      tangent) or ``"multilinear"`` (linear in each tensor input: the sum over
                      inputs of the op with that input replaced by its tangent)
    """

    name = "function"
    raw = False
    differentiable = True
    returns_input = False  # in-place forms write into and return their first input
    tangent_rule = None
    supports_complex = False  # set per class (not inherited): see _FunctionMeta

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a Function must define a static forward(ctx, *args)")

    @classmethod
    def jvp(cls, ctx, *tangents):
        """Forward mode: the outputs' tangents from the inputs' (``tangents[i]`` for
        argument i, None where it has none). ``ctx.primals`` are the arguments and
        ``ctx.results`` the outputs; see :mod:`gradlab.autograd.forward_ad`."""
        rule = cls.tangent_rule
        if rule == "elementwise":
            (t,) = [t for t in tangents if t is not None]
            if t.dtype.is_complex:
                # Backward multiplies by conj(f'); a tangent needs f' itself, so conjugate
                # on the way in and out. (abs, whose result is real: its real part.)
                grads = cls.backward(ctx, t.conj())
                tangent = (grads[0] if isinstance(grads, tuple) else grads).conj()
                return tangent if ctx.results[0].dtype.is_complex else tangent.real
            grads = cls.backward(ctx, t)
            return grads[0] if isinstance(grads, tuple) else grads
        if rule in ("linear", "multilinear"):
            total = None
            for i, t in enumerate(tangents):
                if t is None:
                    continue
                args = list(ctx.primals)
                args[i] = t
                term = cls.apply(*args)
                total = term if total is None else total + term
            return total
        raise NotImplementedError(
            f"forward-mode AD: the op '{cls.name}' has no tangent rule yet, so a dual tensor "
            f"can't pass through it. Fix: compute this part with reverse mode "
            f"(backward/gradlab.func.vjp), or give {cls.__name__} a jvp(ctx, *tangents)")

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
_autocast_args = None  # gradlab.amp.autocast_mode.cast_args, bound by that module
_autocast_by_name = None  # gradlab.amp.autocast_mode.cast_for, bound by that module
_listeners = events.listeners  # the bus's list itself: truthy exactly when someone listens


def _dispatch(fn, args):
    """Run ``fn`` on ``args``: compute, wrap outputs, record a node, emit ``OpForward``.

    Every op in gradlab passes through here, so it is written for speed: one
    pass over the arguments, a node only when a gradient will be needed,
    and no event work unless someone listens.
    """
    if state.autocast is not None:  # inside gradlab.autocast: cast per the op's rule
        args = _autocast_args(fn, args)
    if state.tracer is not None:  # inside gradlab.jit.trace: write the call down, then run it
        return state.tracer.record("op", fn, args)
    # 1. Which arguments are tensors, on which device, and does any need a gradient?
    #    (``fargs``: the arguments as a raw forward sees them, arrays for tensors.)
    device = None
    requires_grad = False
    fargs = []
    for a in args:
        if isinstance(a, Tensor):
            if a._view_base is not None and a._storage.version != a._history_version:
                refresh_view_history(a)  # Tensor._catch_up, inlined: this loop is hot
            fargs.append(a._data)
            if a._requires_grad:
                requires_grad = True
            if device is None:
                device = a._device
            elif a._device is not device:
                _raise_mixed_devices(fn, args)
        else:
            fargs.append(a)
    raw = fn.raw
    record = requires_grad and fn.differentiable and state.enabled
    tangents = None
    if state.dual is not None and fn.differentiable:  # forward mode: any tangents coming in?
        tangents = _forward_ad.tangents_of(args)
    if record:
        ctx = _record_node(fn, args)
    elif tangents is not None:
        ctx = _DualContext(args)
    else:
        ctx = _NO_GRAD_CTX if raw else _ForwardOnlyContext()

    # 2. Compute.
    listening = _listeners and not state.in_tangent_rule
    start = time.perf_counter() if listening else 0.0
    if raw:
        try:
            if device is not None and device.index is not None:
                with device.backend.use_device(device.index):
                    result = fn.forward(ctx, *fargs)
            else:
                result = fn.forward(ctx, *fargs)
        except ValueError as error:  # NumPy's shape complaints, said in the op's terms
            raise _explain_shape_error(fn, args, error) from error
    else:  # custom Functions see tensors, with recording (and forward mode) off, as in PyTorch
        prev, level = state.enabled, state.dual
        state.enabled, state.dual = False, None
        try:
            result = fn.forward(ctx, *args)
        finally:
            state.enabled, state.dual = prev, level
    duration = time.perf_counter() - start if listening else 0.0

    # 3. Wrap the results as tensors; 4. connect the node to its inputs.
    node = ctx if record else None
    if type(result) is _ndarray and result.base is None and device is not None and \
            not fn.returns_input:
        # The common case, kept short: one freshly allocated NumPy array
        # (what _output does, inlined).
        if result.ndim > 1 and not result.flags.c_contiguous:
            result = in_c_order(result, node)
        kind = result.dtype.kind
        if kind == "c" and raw and not fn.supports_complex:
            _refuse_complex(fn, args)
        diff = record and (kind == "f" or kind == "c" or result.dtype == _bfloat16) and (
            ctx._non_differentiable is None or id(result) not in ctx._non_differentiable)
        out = _new_tensor(Tensor)
        out._init(result, Storage(result.nbytes, device), ctx if diff else None, 0, diff)
        if record:
            ctx.num_outputs = 1
            ctx.output_meta = ((result.shape, out.dtype, out._device),)
            if ctx._saved is not None:
                _resolve_all_saved(ctx, args, (out,))
        if tangents is not None:
            _forward_ad.propagate(fn, ctx, args, (out,), tangents)
        if listening:
            _emit_forward(fn, node, args, (out,), start, duration)
        return out
    if type(result) is not _ndarray and (type(result) is tuple or
                                          isinstance(result, _np_generic)):
        result = arrays_not_scalars(result, node)
    if type(result) is tuple:
        outputs = tuple(_wrap(r, k, fn, args, device, node) for k, r in enumerate(result))
    else:
        outputs = (_wrap(result, 0, fn, args, device, node),)
    if record:
        _connect_outputs(ctx, args, outputs)
    if tangents is not None:
        _forward_ad.propagate(fn, ctx, args, outputs, tangents)
    if listening:
        _emit_forward(fn, node, args, outputs, start, duration)
    return outputs if type(result) is tuple else outputs[0]


def _record_node(fn, args):
    """A new node for a call of ``fn``, with an edge to where each input's gradient goes
    (``node.edges``: one per argument, None where no gradient flows).

    Made before forward runs (forward may read ``ctx.needs_input_grad``); the
    outputs are described by ``_connect_outputs`` once they exist.
    """
    node = _new_node(fn.node_class)  # no __init__: every field is set right here
    node.fn = fn
    node.id = next(_node_ids)
    node._saved = None
    node.module = state.module
    if anomaly.enabled:  # detect_anomaly(): remember where in the user's code this op ran
        node._forward_trace = record_forward_trace()
    edges = []
    metas = []
    no_grad_tensors = 0  # bit i: argument i is a tensor that needs no gradient
    i = 0
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                grad_fn = a.grad_fn
                if grad_fn is not None:
                    edges.append((grad_fn, a._out_index))
                else:
                    acc = a._accumulator
                    edges.append((acc if acc is not None else _grad_accumulator(a), 0))
                d = a.dtype
                if d.is_complex and not fn.supports_complex and fn.raw:
                    _refuse_complex(fn, args)
                metas.append((a._data.shape, d, a._device))
                i += 1
                continue
            no_grad_tensors |= 1 << i
        edges.append(None)
        metas.append(None)
        i += 1
    node.edges = tuple(edges)
    node.no_grad_tensors = no_grad_tensors
    node.input_meta = tuple(metas)
    return node


_new_node = object.__new__


def _wrap(r, k, fn, args, device, node):
    """Output ``k`` of an op as a Tensor, sharing storage where it is a view of an input."""
    if r is None:
        return None
    viewed = None
    if isinstance(r, Tensor):  # a Function with raw=False returns tensors
        data, storage = r._data, r._storage
    else:
        if r.dtype.kind == "c" and fn.raw and not fn.supports_complex:
            _refuse_complex(fn, args)
        data = r
        if r.base is not None or fn.returns_input:
            viewed = _viewed_input(r, args)
        if viewed is None:  # a new array (of its own, or a view of a temporary)
            if not fn.returns_input and r.ndim > 1 and not r.flags.c_contiguous:
                data = r = in_c_order(r, node)
            storage = Storage((r if r.base is None else r.base).nbytes,
                              device if device is not None else device_of(r))
        else:
            storage = viewed._storage
    t = _output(data, storage, node, k, r)
    if viewed is not None and not fn.returns_input:
        # Remember how to make this view from its base, so that an in-place
        # change of the view can be replayed onto the base's history.
        base = viewed._view_base
        t._view_base = base if base is not None else viewed
        t._view_steps = viewed._view_steps + ((fn, args[1:], k),)
        t._history_version = storage.version
        if not state.enabled:  # made under no_grad: it keeps no history (views.refresh...)
            t._view_no_grad = True
        layout = viewed._view_layout if base is not None else len(viewed._layout_changes)
        if layout:  # the base changed shape in place before (rare): see views.steps_from_base
            t._view_layout = layout
    return t


def _output(data, storage, node, k, result=None):
    """A tensor for output ``k``: part of the graph if recorded and floating point."""
    kind = data.dtype.kind
    diff = node is not None and (kind == "f" or kind == "c" or data.dtype == _bfloat16) and (
        node._non_differentiable is None or id(result) not in node._non_differentiable)
    t = _new_tensor(Tensor)
    t._init(data, storage, node if diff else None, k, diff)
    return t


_bfloat16 = np.dtype(ml_dtypes.bfloat16)  # a float whose NumPy kind is 'V', not 'f'
_new_tensor = object.__new__
_ndarray, _np_generic = np.ndarray, np.generic


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


def _connect_outputs(node, args, outputs):
    """Describe ``node``'s outputs (for zero gradients), and resolve what forward saved."""
    node.num_outputs = len(outputs)
    node.output_meta = tuple([None if o is None else (o._data.shape, o.dtype, o._device)
                              for o in outputs])
    if node._saved is not None:
        _resolve_all_saved(node, args, outputs)


def _resolve_all_saved(node, args, outputs):
    # Inside autograd.graph.saved_tensors_hooks, each is kept as its pack hook's result.
    kept = SavedTensor if state.saved_hooks is None else PackedSavedTensor
    node._saved = tuple([_resolve_saved(item, args, outputs, kept) for item in node._saved])


def _resolve_saved(item, args, outputs, kept):
    """Find out what a saved item is: an input, an output or a private value (``kept``:
    the class that keeps it, ``SavedTensor`` or ``PackedSavedTensor``)."""
    for a in args:
        if isinstance(a, Tensor) and (item is a._data or item is a):
            return kept(a, None, a._storage, None)
    for k, o in enumerate(outputs):
        # A Function that is not raw saves the tensor its forward returned, which the
        # dispatcher then wrapped as the output: the same data, so the same output.
        if o is not None and (item is o._data or item is o or
                              (isinstance(item, Tensor) and item._data is o._data)):
            if o.grad_fn is None:  # not differentiable: no need for a node reference
                return kept(o, None, o._storage, None)
            return kept(None, o._data, o._storage, k)
    if item is None or isinstance(item, (int, float, complex, bool, _np_generic)):
        return kept(None, item, None, None)  # a number: unpacks as itself
    if isinstance(item, Tensor):
        return kept(item, None, item._storage, None)
    return kept(None, item, _private_storage(item, args, outputs), None)


def _private_storage(array, args, outputs):
    """A Storage that counts a private saved array (a mask, im2col's columns, softmax's
    exponentials) as an activation while backward may need it: without one, the memory
    figures would miss what such ops keep alive. None for what is already counted: a
    view of an input or output, or something that is not an array."""
    nbytes = getattr(array, "nbytes", None)
    if not nbytes or not hasattr(array, "shape"):
        return None
    base = array.base
    if base is not None:
        for t in (*args, *outputs):
            if isinstance(t, Tensor) and (base is t._data or base is t._data.base):
                return None
    device = next((t._device for t in (*outputs, *args) if isinstance(t, Tensor)), None)
    if device is None:
        return None
    return Storage(nbytes, device)


def _emit_forward(fn, node, args, outputs, start, duration):
    ref = events.tensor_ref
    events.emit(events.OpForward(
        events.next_seq(), fn.name, None if node is None else node.id,
        tuple(ref(a) for a in args if isinstance(a, Tensor)),
        tuple(ref(o) for o in outputs if o is not None),
        state.module, duration, start))


def _explain_shape_error(fn, args, error):
    shapes = " and ".join(str(tuple(a.shape)) for a in args if isinstance(a, Tensor))
    if "broadcast" in str(error):
        return RuntimeError(
            f"{fn.name}: shapes {shapes} can't be broadcast together: compared from the "
            "right, each pair of dims must be equal or one of them 1. Fix: reshape or "
            f"unsqueeze one operand so the dims line up (NumPy said: {error})")
    return RuntimeError(f"{fn.name}: {error} (input shapes {shapes})")


def _refuse_complex(fn, args):
    """An op whose derivative (or values) is not written for complex numbers refuses
    them, rather than give a silently wrong gradient."""
    shapes = ", ".join(f"{tuple(a.shape)} {a.dtype}" for a in args if isinstance(a, Tensor))
    raise TypeError(
        f"{fn.name}: complex tensors are not supported by this op yet (inputs: {shapes}). "
        "The README's 'Complex numbers' section lists the ops that take them (arithmetic, "
        "exp/log, sin/cos/tan/tanh/sigmoid, matmul and linear, sums and norms, shape ops, "
        "indexing, gradlab.linalg, gradlab.fft). Fix: work on the parts, e.g. x.real and x.imag, "
        "or gradlab.view_as_real(x)")


def _raise_mixed_devices(fn, args):
    tensors = [a for a in args if isinstance(a, Tensor)]
    found = ", ".join(f"{tuple(a.shape)} on {a.device}" for a in tensors)
    # Move towards the tensors that require grad (a model's parameters, usually): the
    # common mistake is a batch left on the CPU beside a model on the GPU.
    learned = [a for a in tensors if a._requires_grad]
    target = (learned or tensors)[0].device
    movers = " and ".join(str(tuple(a.shape)) for a in tensors if a.device != target)
    why = " where the tensors that require grad (the model's parameters) are" if learned \
        and len(learned) < len(tensors) else ""
    raise RuntimeError(
        f"{fn.name}: expected all tensors on the same device, got {found}. "
        f"Fix: move the {movers} to {target}{why}, e.g. x.to('{target}')."
    )


# views builds on Function (above); the dispatcher calls back into it for stale views.
from .views import refresh_view_history  # noqa: E402
