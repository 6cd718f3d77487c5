"""Activation checkpointing: spend compute to save memory (PyTorch's ``torch.utils.checkpoint``).

Backward needs values that forward computed: relu's mask, the input of each
matmul. Normally each op keeps them alive from its forward until its
backward, so a deep network holds every layer's activations at once (watch
``gradlab.memory_stats()["activation_bytes"]`` grow with depth).
``checkpoint(f, x)`` keeps none of f's: only its inputs are saved. When
backward reaches f, it runs f again, this time recording a graph, and
backpropagates through that. One extra forward pass of f buys the memory of
all the activations inside it. ``checkpoint_sequential(model, segments, x)``
cuts a sequential model into segments and checkpoints all but the last, so
memory goes with segments + layers/segments instead of layers.

The recomputation is ordinary ops through the dispatcher: it shows up in
events and the debugger, during the backward pass. With
``preserve_rng_state=True`` (the default) it sees the same random numbers as
forward did, so a dropout inside draws the same mask.

Two variants, as in PyTorch (2.13 still defaults to the first, with a warning,
when ``use_reentrant`` is not passed):

* ``use_reentrant=True``: forward runs under ``no_grad``; backward re-runs f
  and calls ``backward()`` on it: a backward inside the backward. Gradients
  of parameters f uses go straight into their ``.grad``, so this suits
  ``loss.backward()`` but not ``autograd.grad`` (which raises, as in
  PyTorch). An output requires grad only if an input does.
* ``use_reentrant=False``: f's gradients flow through the outer backward like
  any op's, so ``autograd.grad``, keyword arguments and inputs that need no
  gradient all work. PyTorch builds this variant on saved-tensor hooks
  (``autograd.graph.saved_tensors_hooks``); gradlab instead learns which
  tensors f reads (its parameters) by recording f's graph once during
  forward and dropping it at once: f's activations exist while f runs, but
  none is kept for backward, and f stays one node in the graph views.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable

from .. import random
from ..amp.autocast_mode import autocast_as, autocast_state
from ..autograd import forward_ad
from ..autograd.engine import backward as autograd_backward
from ..autograd.engine import grad as autograd_grad
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.grad_mode import state as grad_state
from ..autograd.node import AccumulateGrad, _node_ids
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]

_PASS_IT = ("{who}: the use_reentrant parameter should be passed explicitly. PyTorch will "
            "raise an exception when it is not passed; use_reentrant=False is recommended "
            "(it works with autograd.grad and keyword arguments), use_reentrant=True keeps "
            "today's default behavior. See gradlab/utils/checkpoint.py for the difference.")


def noop_context_fn():
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


# --- the same random numbers twice ------------------------------------------------------------

def _rng_states() -> dict:
    """Where every device's default generator stands now: those whose position can be
    written down (NumPy's; CuPy's only while it has drawn nothing, as ``get_state`` then
    holds just the seed). A stream left out is not replayed, and not rewound either."""
    states = {}
    for device, gen in random.default_generators().items():
        state = gen.get_state()
        if state["state"] is not None or gen._rng is None:
            states[device] = state
    return states


@contextlib.contextmanager
def _rng_as_in_forward(states):
    """Run the body with the generators where forward found them, then put them back where
    they are now (the recomputation must not shift the random numbers that come after)."""
    if states is None:
        yield
        return
    now = _rng_states()
    generators = random.default_generators()
    for device, state in states.items():
        generators[device].set_state(state)
    try:
        yield
    finally:
        for device, state in now.items():
            generators[device].set_state(state)


# --- what a checkpointed function may return -------------------------------------------------

def _as_outputs(result, who: str) -> tuple[bool, tuple]:
    is_tuple = isinstance(result, tuple)
    outputs = result if is_tuple else (result,)
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(
                f"{who}: the checkpointed function must return a Tensor or a tuple of Tensors, "
                f"but {'output ' + str(i) if is_tuple else 'it'} is a {type(out).__name__}. "
                "Fix: return the tensors, and keep other values outside the checkpoint")
    return is_tuple, outputs


def _fresh_copies(args) -> list:
    """The arguments, each tensor cut from the graph (still requiring grad if it did), so
    that the recomputed graph starts at leaves of its own."""
    return [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
            for a in args]


def _tangents_by_running_again(function, args, kwargs, rng_states) -> tuple:
    """Forward mode through a checkpoint: run the function once more, in a forward-mode level
    of its own. Each argument (and each parameter it reads) still carries the tangent the
    caller's level gave it, so the function's ops push the tangents through as usual.
    (Checkpointing saves reverse mode's memory; forward mode keeps nothing anyway.)"""
    with _rng_as_in_forward(rng_states), forward_ad.dual_level():
        _, outputs = _as_outputs(function(*args, **kwargs), "checkpoint")
        return tuple(forward_ad.unpack_dual(o).tangent for o in outputs)


# --- use_reentrant=True ------------------------------------------------------------------------

class CheckpointFunction(Function):
    """Forward without a graph; backward = forward again with one, then backward through it."""

    name = "checkpoint"
    node_name = "CheckpointFunctionBackward"

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        # A Function's forward runs with recording off: run_function's ops keep nothing.
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None "
                          "(with use_reentrant=True the output requires grad only if an input "
                          "does; use_reentrant=False has no such limit)", stacklevel=5)
        ctx.run_function = run_function
        ctx.rng_states = _rng_states() if preserve_rng_state else None
        ctx.autocast = autocast_state()  # the recomputation runs under the same autocast
        ctx.non_tensors = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        is_tuple, outputs = _as_outputs(run_function(*args), "checkpoint")
        return outputs if is_tuple else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        if grad_state.backward_inputs:
            raise RuntimeError(
                "checkpoint(use_reentrant=True) is incompatible with autograd.grad() and with "
                "backward(inputs=...): its backward puts gradients straight into .grad. Fix: "
                "use checkpoint(..., use_reentrant=False)")
        saved = iter(ctx.saved_tensors)
        args = [next(saved) if a is None else a for a in ctx.non_tensors]
        with _rng_as_in_forward(ctx.rng_states), autocast_as(ctx.autocast):
            copies = _fresh_copies(args)
            with enable_grad():
                _, outputs = _as_outputs(ctx.run_function(*copies), "checkpoint")
        pairs = [(o, g) for o, g in zip(outputs, grads) if o.requires_grad]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary: "
                "nothing computed inside it depends on a tensor that requires grad")
        autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *[c.grad if isinstance(c, Tensor) else None for c in copies])

    @staticmethod
    def jvp(ctx, *tangents):
        return _tangents_by_running_again(ctx.run_function, ctx.primals[2:], {},
                                          ctx.rng_states)


# --- use_reentrant=False -----------------------------------------------------------------------

class _Segment:
    """What the non-reentrant backward needs to run the function again."""

    def __init__(self, function, args, kwargs, rng_states, recompute_context,
                 determinism_check, is_tuple, outputs, parameters) -> None:
        self.function = function
        self.non_tensors = [None if isinstance(a, Tensor) else a for a in args]
        self.kwargs = kwargs
        self.rng_states = rng_states
        self.autocast = autocast_state()  # the recomputation runs under the same autocast
        self.recompute_context = recompute_context
        self.determinism_check = determinism_check
        self.is_tuple = is_tuple
        self.outputs = outputs  # forward's results (detached): what the node hands out
        self.metadata = [(tuple(o.shape), o.dtype) for o in outputs]
        self.parameters = parameters  # leaves f reads that are not arguments


class _NonReentrantCheckpoint(Function):
    """An op whose inputs are the arguments and the parameters f reads, whose outputs are f's,
    and whose backward runs f again and differentiates it."""

    name = "checkpoint"
    node_name = "CheckpointBackward"

    @staticmethod
    def forward(ctx, segment, *tensors):
        ctx.segment = segment
        ctx.save_for_backward(*tensors[:len(tensors) - len(segment.parameters)])
        outputs = segment.outputs
        segment.outputs = None  # the node's outputs hold them now
        return outputs if segment.is_tuple else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        segment = ctx.segment
        create_graph = is_grad_enabled()  # the outer backward's create_graph
        saved = iter(ctx.saved_tensors)
        args = [next(saved) if a is None else a for a in segment.non_tensors]
        with _rng_as_in_forward(segment.rng_states), autocast_as(segment.autocast), \
                segment.recompute_context:
            # Under create_graph the gradients must stay functions of the real inputs (for a
            # second derivative); otherwise the recompute starts at leaves of its own.
            copies = args if create_graph else _fresh_copies(args)
            with enable_grad():
                _, outputs = _as_outputs(segment.function(*copies, **segment.kwargs),
                                         "checkpoint")
        if segment.determinism_check == "default":
            _check_same(segment.metadata, outputs)
        wrt = [c for c in copies if isinstance(c, Tensor)] + list(segment.parameters)
        needed = [t for t in wrt if t.requires_grad]
        pairs = [(o, g) for o, g in zip(outputs, grads) if o.requires_grad]
        found = iter(autograd_grad([o for o, _ in pairs], needed, [g for _, g in pairs],
                                   create_graph=create_graph, allow_unused=True)
                     if pairs and needed else [None] * len(needed))
        return (None, *[next(found) if t.requires_grad else None for t in wrt])

    @staticmethod
    def jvp(ctx, *tangents):
        segment = ctx.segment
        tensors = iter(ctx.primals[1:])
        args = [next(tensors) if a is None else a for a in segment.non_tensors]
        return _tangents_by_running_again(segment.function, args, segment.kwargs,
                                          segment.rng_states)


def _check_same(metadata, outputs) -> None:
    again = [(tuple(o.shape), o.dtype) for o in outputs]
    if again != metadata:
        raise RuntimeError(
            "checkpoint: recomputed values have different metadata than during the forward "
            f"pass: forward returned (shape, dtype) {metadata}, the recomputation {again}. The "
            "function must compute the same thing both times (does it depend on global state, "
            "or on random numbers with preserve_rng_state=False?). determinism_check='none' "
            "skips this check")


def _parameters_read(outputs, arguments, start: int) -> list:
    """The leaves that require grad behind ``outputs`` other than ``arguments``: the weights
    the function reads. Walks the graph just recorded (an explicit stack, like the engine);
    a node older than ``start`` means the function read a non-leaf tensor from outside."""
    found, seen = [], set()
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            leaf = node.variable
            if leaf is not None and not any(leaf is a for a in arguments):
                found.append(leaf)
            continue
        if node.id < start:
            raise RuntimeError(
                f"checkpoint(use_reentrant=False): the function reads a tensor that requires "
                f"grad, is not one of its arguments and is not a leaf (it was made by "
                f"'{node.op}' before the checkpoint). gradlab can only route gradients to "
                "arguments and leaves (parameters) here. Fix: pass that tensor as an argument, "
                "or use use_reentrant=True")
        stack.extend(edge[0] for edge in node.edges if edge is not None)
    for o in outputs:  # a leaf returned as it is
        if o.grad_fn is None and o.requires_grad and not any(o is a for a in arguments):
            found.append(o)
    return found


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check,
                                  args, kwargs):
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check!r}")
    forward_context, recompute_context = context_fn()
    rng_states = _rng_states() if preserve_rng_state else None
    copies = _fresh_copies(args)
    start = next(_node_ids)  # the nodes f records are numbered from here on
    with forward_context, enable_grad():
        is_tuple, outputs = _as_outputs(function(*copies, **kwargs), "checkpoint")
    arguments = [c for c in copies if isinstance(c, Tensor)]
    parameters = _parameters_read(outputs, arguments, start)
    segment = _Segment(function, args, kwargs, rng_states, recompute_context, determinism_check,
                       is_tuple, tuple(o.detach() for o in outputs), parameters)
    del outputs, copies, arguments  # the recorded graph, and all it saved, goes here
    tensors = [a for a in args if isinstance(a, Tensor)]
    return _NonReentrantCheckpoint.apply(segment, *tensors, *parameters)


# --- the public functions -----------------------------------------------------------------------

def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, preserve_rng_state: bool = True,
               **kwargs):
    """``function(*args, **kwargs)``, keeping only its inputs for backward, which runs it again.

    ``use_reentrant``: pass it (see the module docstring); left out, it warns and
    means True, as in PyTorch 2.13. ``preserve_rng_state``: the recomputation
    draws the same random numbers. ``context_fn`` (non-reentrant only): returns
    two context managers, one around the forward and one around the
    recomputation. ``determinism_check="default"`` checks that the recomputation
    returns the same shapes and dtypes; ``"none"`` skips it. ``debug`` and
    ``early_stop`` are accepted for PyTorch's signature (gradlab recomputes the
    whole function and has no op trace to print).
    """
    if use_reentrant is None:
        warnings.warn(_PASS_IT.format(who="gradlab.utils.checkpoint"), stacklevel=2)
        use_reentrant = True
    if not callable(function):
        raise TypeError(f"checkpoint: expected a function (or module) to run, got "
                        f"{type(function).__name__}. Fix: checkpoint(layer, x), not "
                        "checkpoint(layer(x))")
    if use_reentrant:
        if kwargs:
            raise ValueError(f"Unexpected keyword arguments: {','.join(kwargs)}. With "
                             "use_reentrant=True the function gets positional arguments only; "
                             "use use_reentrant=False to pass keyword arguments")
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, preserve_rng_state, context_fn,
                                         determinism_check, args, kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules/functions) one after the
    other on ``input``, checkpointing each of ``segments`` chunks but the last (whose
    activations backward needs first anyway)."""
    if use_reentrant is None:
        warnings.warn(_PASS_IT.format(who="gradlab.utils.checkpoint.checkpoint_sequential"),
                      stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError(f"Unexpected keyword arguments: {','.join(kwargs)}. "
                         "checkpoint_sequential takes preserve_rng_state and use_reentrant")
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)
    if not 1 <= segments <= len(functions):
        raise ValueError(f"checkpoint_sequential: segments must be between 1 and the number "
                         f"of functions ({len(functions)}), got {segments}")

    def run(start: int, end: int) -> Callable:
        def forward(x):
            for f in functions[start:end + 1]:
                x = f(x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
