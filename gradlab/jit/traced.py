"""``gradlab.jit.trace``: run a function or module once, keep the graph, replay it.

A traced graph is specialised, as PyTorch's traces are, to what the example
run did: the input shapes, dtypes and devices, the branches Python took, the
module's train/eval mode. Called with inputs of another shape (or after
``train()``/``eval()``), a traced function or module traces itself again
from the Python code it keeps and caches that graph too, so its results are
always the eager ones. A graph loaded from a file has no Python code: it
accepts only inputs like its example and says so otherwise.

Replaying skips the Python between the ops (module calls, argument checks,
the user's own code) but runs the very same ops, so gradients, hooks on
tensors, events and the debugger work on a traced model as on the eager one.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..autograd.grad_mode import no_grad, state
from ..nn.modules.module import Module
from ..random import get_generator
from ..tensor import Tensor
from .graph import Graph, leaves
from .tracer import Tracer, TracingError

__all__ = ["trace", "TracedFunction", "TracedModule", "TracingCheckError"]


class TracingCheckError(TracingError):
    """The traced graph and the Python code disagree on an input (``check_trace``)."""


def trace(func, example_inputs=None, *, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-5, strict: bool = True):
    """Trace ``func`` (a function or an ``nn.Module``) on ``example_inputs`` (a tensor or a
    tuple of tensors) into a graph; returns a :class:`TracedModule` or :class:`TracedFunction`
    that replays it.

    ``check_trace`` runs the graph and the Python code once more on the example (or on each
    tuple in ``check_inputs``, which should have the example's shapes but other values) and
    raises :class:`TracingCheckError` if they disagree beyond ``check_tolerance``: the sign
    of value-dependent control flow that a trace cannot capture. ``strict`` is accepted for
    PyTorch's signature (gradlab traces lists and dicts of tensors as outputs either way).
    """
    inputs = _as_inputs(example_inputs, "example_inputs")
    if isinstance(func, Module):
        traced = TracedModule(func, inputs)
    elif callable(func):
        traced = TracedFunction(func, inputs)
    else:
        raise TypeError(f"trace: expected a function or an nn.Module, got "
                        f"{type(func).__name__}")
    if check_trace:
        checks = [inputs] if check_inputs is None else \
            [_as_inputs(c, "check_inputs entry") for c in check_inputs]
        _check(traced, checks, check_tolerance)
    return traced


def _as_inputs(example, what: str) -> tuple:
    if isinstance(example, Tensor):
        return (example,)
    if not isinstance(example, (tuple, list)) or not example:
        raise TypeError(f"trace: {what} must be a tensor or a tuple of tensors (the positional "
                        f"arguments of one call), got {type(example).__name__}. Fix: "
                        "trace(model, (x,)) or trace(model, x)")
    for i, t in enumerate(example):
        if not isinstance(t, Tensor):
            raise TypeError(f"trace: {what}[{i}] is a {type(t).__name__}, but a traced "
                            "function takes tensors only (other values would be frozen "
                            "into the graph). Fix: bind the others first, e.g. with "
                            "functools.partial or a small wrapper module")
    return tuple(example)


class _Traced:
    """What traced functions and modules share: graphs per input signature, and replay."""

    def _setup(self, func, inputs, names_from: Module | None) -> None:
        # (through __dict__: on a TracedModule, assigning a Module would file it as a child)
        self.__dict__.update(_func=func, _names_from=names_from, _graphs={},
                             _input_names=_parameter_names(func, len(inputs)),
                             _modules_list=list(names_from.modules()) if names_from else [])
        self.__dict__["_example_key"] = key = self._key(inputs)
        self._graphs[key] = self._record(inputs)

    @property
    def graph(self) -> Graph:
        """The graph of the example run (``print(traced.graph)`` shows it)."""
        return self._graphs[self._example_key][0]

    def _key(self, inputs) -> tuple:
        shapes = tuple((t._data.shape, t.dtype, t._device) for t in inputs)
        modes = tuple(m.training for m in self._modules_list) if self._modules_list else ()
        autocast = tuple(sorted(state.autocast.items())) if state.autocast else None
        return shapes, modes, autocast

    def _record(self, inputs, keep_result: bool = False) -> tuple:
        """Run the Python code once under a tracer; the graph and how to find its constants."""
        if state.tracer is not None:
            raise TracingError("trace: already tracing on this thread (jit.trace was called "
                               "inside a traced function); trace the outer one only: a traced "
                               "function called inside it is recorded inline")
        names = {}
        if self._names_from is not None:
            for name, p in self._names_from.named_parameters():
                names[id(p)] = (name, "parameter")
            for name, b in self._names_from.named_buffers():
                names[id(b)] = (name, "buffer")
        tracer = Tracer(names)
        for t, name in zip(inputs, self._input_names):
            tracer.add_input(t, name)
        state.tracer = tracer
        try:
            returned = self._func(*inputs)
        finally:
            state.tracer = None
        tracer.set_outputs(returned)
        found = tracer.graph, self._constant_getters(tracer.graph)
        return found + (returned,) if keep_result else found

    def _constant_getters(self, graph: Graph) -> list:
        """For each constant, how to fetch it on a run: a parameter or buffer by its name (so
        a replaced parameter is seen), anything else as the tensor the trace saw."""
        getters = []
        for value, t, kind in graph.constants:
            if kind == "constant":
                getters.append(lambda t=t: t)
            else:
                *path, attr = value.name.split(".")
                owner = self._names_from.get_submodule(".".join(path))
                registry = owner._parameters if kind == "parameter" else owner._buffers
                getters.append(lambda registry=registry, attr=attr: registry[attr])
        return getters

    def _replay(self, inputs):
        if len(inputs) != len(self._input_names):
            raise TypeError(f"{self._what()}: traced with {len(self._input_names)} input(s) "
                            f"({', '.join(self._input_names)}), called with {len(inputs)}")
        for i, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"{self._what()}: input {i} ({self._input_names[i]}) must be a "
                                f"Tensor, got {type(t).__name__}")
        key = self._key(inputs)
        entry = self._graphs.get(key)
        if entry is None:
            if state.tracer is not None:  # inside another trace: its tracer records the ops
                return self._func(*inputs)
            # A new signature: trace again. That run computed this call's result already
            # (and drew its random numbers), so it is the answer, not a replay after it.
            graph, getters, returned = self._record(inputs, keep_result=True)
            self._graphs[key] = graph, getters
            return returned
        graph, getters = entry
        return graph.run(inputs, [get() for get in getters])

    def _what(self) -> str:
        return type(self).__name__


def _parameter_names(func, count: int) -> list:
    """The inputs' names in the printout: the parameters of ``forward`` or the function."""
    target = func.forward if isinstance(func, Module) else func
    try:
        params = [p.name for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = params[:count] if len(params) >= count else []
    return names or [f"input{i}" for i in range(count)]


class TracedFunction(_Traced):
    """A traced function: call it like the function (tensors only) to replay its graph."""

    def __init__(self, func, example_inputs: tuple) -> None:
        owner = getattr(func, "__self__", None)  # a module's bound method: name its weights
        self.__name__ = getattr(func, "__name__", type(func).__name__)
        self._setup(func, example_inputs, owner if isinstance(owner, Module) else None)

    def __call__(self, *inputs):
        return self._replay(inputs)

    def __repr__(self) -> str:
        return f"TracedFunction({self.__name__})"


class TracedModule(_Traced, Module):
    """A traced ``nn.Module``: the same parameters, buffers and submodules (shared with the
    original, so ``state_dict``, optimizers and ``train()``/``eval()`` work as before), with
    ``forward`` replaying the graph."""

    def __init__(self, module: Module, example_inputs: tuple) -> None:
        super().__init__()
        d = self.__dict__
        for shared in ("_parameters", "_buffers", "_modules", "_non_persistent_buffers_set"):
            d[shared] = module.__dict__[shared]
        d["training"] = module.training
        d["_original"] = module
        self._setup(module, example_inputs, module)

    def forward(self, *inputs):
        return self._replay(inputs)

    def train(self, mode: bool = True) -> TracedModule:
        super().train(mode)
        self._original.train(mode)  # its own flag too: its forward may read self.training
        return self

    @property
    def original_name(self) -> str:
        """The traced module's class name (PyTorch's ``original_name``)."""
        return type(self._original).__name__

    def extra_repr(self) -> str:
        return f"original={self.original_name}"


def _check(traced, input_sets: list, tolerance: float) -> None:
    """Compare the graph with the Python code on each input set, leaving no trace of the runs:
    the module's buffers (BatchNorm's running stats) and the random streams are put back."""
    owner = traced._names_from
    buffers = [b for b in owner.buffers()] if owner is not None else []
    for k, inputs in enumerate(input_sets):
        if len(inputs) != len(traced._input_names):
            raise TypeError(f"trace: check_inputs[{k}] has {len(inputs)} tensors, the example "
                            f"{len(traced._input_names)}")
        generators = [get_generator(d) for d in {t.device for t in inputs} | {"cpu"}]
        saved = ([b.detach().clone() for b in buffers], [g.get_state() for g in generators])
        # (grad mode as the caller's, and inputs that require grad as theirs: the function
        # may differentiate inside, e.g. autograd.grad)
        expected = leaves(traced._func(*_fresh(inputs)), Tensor)
        _restore(buffers, generators, saved)
        got = leaves(traced._replay(_fresh(inputs)), Tensor)
        _restore(buffers, generators, saved)
        if len(got) != len(expected):
            raise TracingCheckError(
                f"trace: the traced graph returns {len(got)} tensors and the Python code "
                f"{len(expected)} on check input set {k}")
        for i, (a, b) in enumerate(zip(got, expected)):
            if a.shape != b.shape or not _close(a, b, tolerance):
                raise TracingCheckError(
                    f"trace: output {i} of the traced graph differs from the Python code's on "
                    f"check input set {k} (shapes {tuple(a.shape)} and {tuple(b.shape)}). The "
                    "code does something a trace freezes: it branches on tensor values, reads "
                    "them into Python (see the TracerWarnings), or uses randomness outside "
                    "gradlab. Fix: express it in tensor ops (e.g. torch.where), or run that "
                    "part eagerly")


def _fresh(inputs) -> list:
    """Copies of the inputs for one check run (so in-place changes don't carry over)."""
    return [t.detach().clone().requires_grad_(t.requires_grad) for t in inputs]


def _close(a: Tensor, b: Tensor, tolerance: float) -> bool:
    """Equal within ``tolerance`` (relative, or absolute near 0), NaN where both are NaN."""
    a, b = a.detach().cpu().numpy().astype("float64"), b.detach().cpu().numpy().astype("float64")
    with np.errstate(invalid="ignore"):
        same = (a == b) | (np.isnan(a) & np.isnan(b)) | \
            (np.abs(a - b) <= tolerance * (1 + np.abs(b)))
    return bool(same.all())


def _restore(buffers, generators, saved) -> None:
    values, states = saved
    with no_grad():
        for b, v in zip(buffers, values):
            b.copy_(v)
    for g, s in zip(generators, states):
        g.set_state(s)
