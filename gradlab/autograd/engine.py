"""The backward engine: walk the graph from the outputs back to the leaves.

Reverse mode in three steps, none of them recursive (a 100,000-op chain is
just a long loop):

1. **Discover.** Starting at the output's node, follow its ``edges``
   with an explicit stack and count, for every node, how many edges point
   at it (its *dependencies*).
2. **Run in order.** A node may run once every node that feeds it a
   gradient has run, i.e. its dependency count drops to zero. Among ready
   nodes the most recently created runs first (a heap on node id), which is
   a valid topological order and the order PyTorch uses.
3. **Deliver.** A node's ``backward`` turns the gradients of its outputs
   into gradients of its inputs; each is added into the buffer of the node
   it flows to. At a leaf, ``AccumulateGrad`` adds it into ``leaf.grad``.

This module is also the one place a backward node runs, so it emits the
``BackwardNode`` event, and where ``detect_anomaly()`` checks each node's
gradients (see :mod:`gradlab.autograd.anomaly_mode`).
"""

from __future__ import annotations

import heapq
import sys
import time

from .. import events
from ..storage import Storage
from ..tensor import Tensor
from . import anomaly_mode
from .anomaly_mode import anomaly
from .grad_mode import state
from .node import AccumulateGrad, gradient_edge

__all__ = ["backward", "grad", "run_backward", "queue_callback"]


def queue_callback(callback) -> None:
    """Run ``callback()`` once the backward pass under way has run every node, before it
    returns (PyTorch's ``Variable._execution_engine.queue_callback``). A hook calls this
    to act on the whole pass: DistributedDataParallel averages gradients there when some
    parameters may get none."""
    callbacks = state.backward_callbacks
    if callbacks is None:
        raise RuntimeError("queue_callback: final callbacks can only be installed during a "
                           "backward pass (from a hook that backward runs)")
    callbacks.append(callback)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             inputs=None) -> None:
    """Accumulate d(tensors)/d(leaves) into the leaves' ``.grad`` (``torch.autograd.backward``)."""
    tensors = _as_list(tensors)
    if inputs is not None:
        inputs = _as_list(inputs)
        if not inputs:
            raise RuntimeError(
                "backward: 'inputs' was given but is empty; pass None for all leaves")
    run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching any ``.grad`` (``torch.autograd.grad``)."""
    single = not isinstance(inputs, (list, tuple))
    inputs = _as_list(inputs)
    outputs = _as_list(outputs)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(
                f"autograd.grad: input {i} (shape {tuple(t.shape)}) does not require grad, so "
                "it has no gradient. Fix: create it with requires_grad=True."
            )
    grads = run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs,
                         accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs, grads)):
        if g is None:
            if materialize_grads:
                from ..ops.creation import zeros_like
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"autograd.grad: input {i} (shape {tuple(t.shape)}) was not used to compute "
                    "the outputs, so it has no gradient. Fix: pass allow_unused=True to get "
                    "None for it (or materialize_grads=True for zeros)."
                )
        result.append(g)
    return tuple(result) if not single else (result[0],)


def _as_list(x) -> list:
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _root_gradients(tensors, grad_tensors, create_graph):
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    else:
        grad_tensors = _as_list(grad_tensors) if not isinstance(grad_tensors, (list, tuple)) \
            else list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"backward: got {len(tensors)} tensors but {len(grad_tensors)} "
                           "gradients; give one gradient per tensor")
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        t._catch_up()  # a view whose base changed in place: its current history
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and has no grad_fn: nothing in "
                f"its computation requires grad (shape {tuple(t.shape)}). Fix: create the "
                "parameters with requires_grad=True, and check no_grad() is not active."
            )
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs, but this tensor "
                    f"has shape {tuple(t.shape)}. Fix: reduce it first (y.sum().backward()) or "
                    "pass the gradient of something w.r.t. it: y.backward(gradient=...)."
                )
            if t.dtype.is_complex:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs, but this "
                    f"one is {t.dtype}: a complex number has no single direction of steepest "
                    "descent. Fix: make a real loss of it, e.g. z.abs() ** 2 or z.real, "
                    "or pass gradient=... (as PyTorch asks too)")
            g = _ones_like(t)
        elif not isinstance(g, Tensor):
            raise TypeError(f"backward: gradient must be a Tensor, got {type(g).__name__}")
        elif g._data.shape != t._data.shape:
            raise RuntimeError(
                f"backward: gradient has shape {tuple(g.shape)} but the tensor has shape "
                f"{tuple(t.shape)}; they must match")
        elif not (create_graph and g.requires_grad):
            g = g.detach()  # a new handle: the engine never adopts the caller's tensor
        roots.append((gradient_edge(t), g))
    return roots


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, accumulate):
    """The engine proper; returns the gradients of ``inputs`` (captured at their edges)."""
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_gradients(tensors, grad_tensors, create_graph)

    # With ``inputs``, gradients are captured where each input's gradient arrives.
    capture: dict = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            if not t.requires_grad:
                raise RuntimeError(f"backward: input {i} (shape {tuple(t.shape)}) does not "
                                   "require grad, so no gradient can flow to it")
            node, nr = gradient_edge(t)
            capture.setdefault(node, []).append((nr, i))
    captured = [None] * (len(inputs) if inputs is not None else 0)

    root_nodes = list(dict.fromkeys([edge[0] for edge, _ in roots]))
    dependencies, parents = _discover(root_nodes, want_parents=bool(capture))
    must_run = _ancestors(capture, parents) if capture else None

    buffers: dict = {}
    for (node, nr), g in roots:
        _add_to_buffer(buffers, node, nr, g)
    ready = [(-n.id, n) for n in root_nodes if dependencies[n] == 0]
    heapq.heapify(ready)

    call_node = _call_node_detecting_anomaly if anomaly.enabled else _call_node
    prev_enabled, prev_autocast, prev_inputs, prev_callbacks = state.enabled, state.autocast, \
        state.backward_inputs, state.backward_callbacks
    # Backward runs each op in the dtypes forward saved, never under autocast (as in PyTorch).
    state.enabled, state.autocast, state.backward_inputs = create_graph, None, inputs is not None
    state.backward_callbacks = callbacks = []
    if events.listeners or events.light_listeners:
        events.emit(events.Phase(events.next_seq(), "backward_begin",
                                 roots=tuple(events.tensor_ref(t) for t in tensors)))
    try:
        heappop, heappush = heapq.heappop, heapq.heappush
        while ready:
            node = heappop(ready)[1]
            grads = buffers.pop(node, None) or [None] * node.num_outputs
            at_leaf = type(node) is AccumulateGrad
            if at_leaf:
                leaf = node._variable()  # None once the leaf was freed
                if leaf is not None and leaf._hooks:
                    grads = [_apply_hooks(leaf._hooks, grads[0])]
            elif node._pre_hooks is not None or node._retain_hooks is not None:
                grads = _run_tensor_hooks(node, grads)
            if capture and node in capture:  # autograd.grad / backward(inputs=...)
                for nr, i in capture[node]:
                    captured[i] = grads[nr]
            if must_run is not None and node not in must_run:
                continue
            if at_leaf:
                if leaf is not None:
                    _accumulate(leaf, grads[0], create_graph)
                continue
            grads = call_node(node, grads, retain_graph)
            for edge, g in zip(node.edges, grads):
                if edge is None:
                    continue
                target = edge[0]
                if must_run is not None and target not in must_run and target not in capture:
                    continue
                if g is not None:
                    _add_to_buffer(buffers, target, edge[1], g)
                remaining = dependencies[target] - 1
                dependencies[target] = remaining
                if remaining == 0:
                    heappush(ready, (-target.id, target))
        if accumulate and inputs is not None:
            for t, g in zip(inputs, captured):
                if g is not None:
                    _accumulate(t, g, create_graph)
        for callback in callbacks:  # queue_callback's, in order (one may queue another)
            callback()
    finally:
        state.enabled, state.autocast, state.backward_inputs = prev_enabled, prev_autocast, \
            prev_inputs
        state.backward_callbacks = prev_callbacks
        if events.listeners or events.light_listeners:
            events.emit(events.Phase(events.next_seq(), "backward_end"))
    return captured


def _discover(root_nodes, want_parents):
    """Count the edges reaching each node from the roots (iterative DFS, no recursion).

    A node is in ``dependencies`` once found (roots start at zero), so that dict
    is also the visited set. With ``want_parents`` also return, for each node,
    the nodes with an edge to it.
    """
    dependencies = dict.fromkeys(root_nodes, 0)
    parents: dict = {}
    stack = list(root_nodes)
    while stack:
        node = stack.pop()
        for edge in node.edges:
            if edge is None:
                continue
            target = edge[0]
            if target in dependencies:
                dependencies[target] += 1
            else:
                dependencies[target] = 1
                stack.append(target)
            if want_parents:
                parents.setdefault(target, []).append(node)
    return dependencies, parents


def _ancestors(capture, parents):
    """The nodes whose backward must run for gradients to reach the captured edges."""
    must_run = set()
    stack = [p for node in capture for p in parents.get(node, ())]
    while stack:
        node = stack.pop()
        if node not in must_run:
            must_run.add(node)
            stack.extend(parents.get(node, ()))
    return must_run


def _add_to_buffer(buffers, node, nr, g):
    """Sum gradient ``g`` into ``node``'s buffer for its output ``nr`` (several uses add up)."""
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * node.num_outputs
    old = slots[nr]
    slots[nr] = g if old is None else old + g


def _run_tensor_hooks(node, grads):
    """Hooks registered on a non-leaf's outputs, then ``retain_grad`` (leaf hooks run inline)."""
    grads = list(grads)
    for nr, g in enumerate(grads):
        if g is None:
            continue
        if node._pre_hooks is not None and nr in node._pre_hooks:
            g = grads[nr] = _apply_hooks(node._pre_hooks[nr], g)
        retain = node._retain_hooks
        if retain is not None and nr in retain:
            t = retain[nr]()
            if t is not None:
                t._grad = g.detach() if t._grad is None else (t._grad + g).detach()
    return grads


def _apply_hooks(hooks, g):
    if hooks and g is not None:
        for hook in tuple(hooks.values()):
            out = hook(g)
            if out is not None:
                g = out
    return g


def _call_node(node, grads, retain_graph):
    """Run one node's backward, check what it returns, and emit ``BackwardNode``."""
    if node.materialize_grads:
        for g in grads:
            if g is None:  # an output got no gradient: backward sees zeros there
                _materialize(node, grads)
                break
    start = time.perf_counter() if events.listeners else 0.0
    results = node.fn.backward(node, *grads)
    if type(results) is not tuple:
        results = (results,)
    results = _validate(node, results)
    if node._post_hooks:
        for hook in tuple(node._post_hooks.values()):
            out = hook(results, tuple(grads))
            if out is not None:
                results = _validate(node, tuple(out))
    if events.listeners:
        duration = time.perf_counter() - start if start else 0.0
        ref = events.tensor_ref
        events.emit(events.BackwardNode(events.next_seq(), node.op, node.id,
                                        tuple(ref(g) for g in grads),
                                        tuple(ref(g) for g in results), node.module,
                                        start, duration, node.name()))
    if not retain_graph and node._saved is not None:
        node.release_saved()
    return results


def _materialize(node, grads):
    """Zeros in place of the missing gradients of ``node``'s (non-None) outputs."""
    from ..ops.creation import zeros_from_meta

    for nr, g in enumerate(grads):
        if g is None and node.output_meta[nr] is not None:
            grads[nr] = zeros_from_meta(node.output_meta[nr])


def _call_node_detecting_anomaly(node, grads, retain_graph):
    """``_call_node`` inside ``detect_anomaly()``: an error raised in the node gets a note
    saying where its op ran forward, a NaN gradient raises (with ``check_nan``), and
    nodes recorded meanwhile (``create_graph=True``) remember this node as their origin."""
    outer = anomaly.running
    anomaly.running = (node.name(), anomaly_mode.forward_trace_of(node))
    try:
        results = _call_node(node, grads, retain_graph)
    except Exception as error:
        anomaly_mode.note_forward(error, node)
        raise
    finally:
        anomaly.running = outer
    if anomaly.check_nan:
        anomaly_mode.check_nan(node, results)
    return results


def _validate(node, results):
    """Check a backward's gradients against its inputs: count, shape, dtype, device."""
    metas = node.input_meta
    n_args = len(metas)
    if len(results) != n_args and (len(results) > n_args or any(
            node.needs_input_grad[len(results):])):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {n_args}, one per forward argument, got {len(results)})"
        )
    # The common case, checked first: each gradient is a Tensor that fits its input
    # exactly (or None where the input needs no gradient), so nothing is rebuilt.
    for g, meta in zip(results, metas):
        if g is None:
            continue
        if meta is None or type(g) is not Tensor or g._data.shape != meta[0] or \
                g.dtype is not meta[1] or g._device is not meta[2]:
            break
    else:
        return results
    out = []
    for i, g in enumerate(results):
        meta = metas[i]
        if g is None or meta is None:
            out.append(None if meta is None else g)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(
                f"function {node.name()} returned a {type(g).__name__} as the gradient of "
                f"input {i}; backward must return Tensors (or None). Fix: build it with "
                "tensor ops, e.g. grad * 2 rather than a NumPy array or a number.")
        shape, dtype, device = meta
        if g._data.shape != shape:
            g = _sum_to_shape(node, i, g, shape)
        if g.dtype is not dtype:
            # A real input of an op with a complex result (x * 1j) gets the real part of
            # its gradient: the imaginary part says how L moves with an imaginary step of
            # x, which a real x cannot take (PyTorch does the same).
            g = (g.real if g.dtype.is_complex and not dtype.is_complex else g).to(dtype)
        if g._device is not device:
            raise RuntimeError(
                f"function {node.name()} returned a gradient on {g.device} for input {i}, "
                f"which is on {device}")
        out.append(g)
    return tuple(out)


def _sum_to_shape(node, i, g, shape):
    """Reduce a broadcast gradient to its input's shape, or explain why it can't be."""
    gshape = g._data.shape
    lead = len(gshape) - len(shape)
    ok = lead >= 0 and all(s == 1 or s == gs for s, gs in zip(shape, gshape[lead:]))
    if not ok:
        raise RuntimeError(
            f"function {node.name()} returned a gradient of shape {tuple(gshape)} for input "
            f"{i}, which has shape {tuple(shape)}; a gradient must have its input's shape"
        )
    dims = tuple(range(lead)) + tuple(lead + k for k, s in enumerate(shape)
                                      if s == 1 and gshape[lead + k] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g.reshape(shape)


def _accumulate(leaf, g, create_graph):
    """Add ``g`` into ``leaf.grad`` (PyTorch's AccumulateGrad); hooks have already run."""
    if g is None:
        return
    old = leaf._grad
    if old is None:
        if create_graph and g.requires_grad:
            # A differentiable copy: .grad stays in the graph but owns its memory,
            # so a later accumulation never writes into a tensor someone else holds.
            new = g.clone()
        elif g.grad_fn is None and g._data.base is None and not leaf._hooks and \
                sys.getrefcount(g._data) <= 2:
            # Nobody else holds this array (a hook might have kept it): adopt it
            # instead of copying, as PyTorch steals a buffer whose use count is one.
            new = Tensor._make(g._data, g._storage, None, 0, False)
        else:
            new = _private_copy(g)
        # Shapes, dtypes and devices were checked per node, so skip the .grad setter's checks.
        new._storage.set_category("gradient")
        leaf._grad = new
    elif create_graph or old.grad_fn is not None:
        leaf.grad = old + g
    else:
        xp = old._device.backend.xp
        xp.add(old._data, g._data, out=old._data)
        old._storage.version += 1
    if events.listeners:
        events.emit(events.GradAccumulated(events.next_seq(), events.tensor_ref(leaf),
                                           events.tensor_ref(leaf._grad)))
    if leaf._post_accumulate_hooks:
        for hook in tuple(leaf._post_accumulate_hooks.values()):
            if hook(leaf) is not None:
                raise RuntimeError(
                    "a post accumulate grad hook returned a value; it must return None (it "
                    "runs after .grad is written: change leaf.grad in place if needed)")


def _private_copy(g):
    """A detached copy of ``g`` in fresh memory on ``g``'s device."""
    dev = g._device
    if dev.index is None:
        data = g._data.copy()
    else:  # CuPy copies onto the current device: make it g's
        with dev.backend.use_device(dev.index):
            data = g._data.copy()
    return Tensor._make(data, Storage(data.nbytes, dev), None, 0, False)


def _ones_like(t):
    """The implicit gradient of a scalar output: d(out)/d(out) = 1."""
    dev = t._device
    if dev.index is None:
        ones = dev.backend.xp.ones_like(t._data)
    else:
        with dev.backend.use_device(dev.index):
            ones = dev.backend.xp.ones_like(t._data)
    return Tensor._make(ones, Storage(ones.nbytes, dev), None, 0, False)


# Tensor.backward() calls backward() above through this binding: the tensor module cannot
# import the engine (the engine imports it), and an import inside the method costs µs per call.
sys.modules[Tensor.__module__]._engine = sys.modules[__name__]
