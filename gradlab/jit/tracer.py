"""The tracer: writes down each call that makes a tensor while the traced function runs.

While ``state.tracer`` is set, the dispatcher and the recorded entry points
(:mod:`gradlab.autograd.tracing`) hand each outermost call to
:meth:`Tracer.record`. It runs the call with tracing off, so the ops inside
an op are not written down twice, then files a :class:`~.graph.Node`:
tensors among the arguments become the Values they were made as, new
tensors in the result become new Values.

A tensor that no recorded call made is a *constant* of the graph: a
parameter, a buffer, or anything else from outside the function. What a
trace cannot see is refused or flagged rather than silently frozen:

* an argument that is neither a tensor nor a plain value (a number, a
  string, a dtype, a generator ...) could carry data computed from the
  inputs, so it stops the trace with an error naming the op;
* so does a tensor or NumPy array sharing memory with a computed value
  that no recorded call made;
* reading a computed tensor into Python (``item()``, ``tolist()``,
  ``bool(x)`` in an ``if``) warns with :class:`TracerWarning`: the graph
  keeps the value seen now.
"""

from __future__ import annotations

import dataclasses
import types
import warnings

import numpy as np

from ..autograd.function import _dispatch
from ..autograd.grad_mode import state
from ..backends import device as Device  # noqa: N812 - the class, as gradlab.device
from ..dtypes import dtype as Dtype  # noqa: N812 - the class, as gradlab.dtype
from ..random import Generator
from ..tensor import Tensor
from .graph import Graph, Node, Value

__all__ = ["Tracer", "TracerWarning", "TracingError"]


class TracingError(RuntimeError):
    """A trace met something it cannot record faithfully."""


class TracerWarning(UserWarning):
    """The traced graph may be right only for inputs like the example (PyTorch's name)."""


_PLAIN = (type(None), bool, int, float, complex, str, bytes, slice, type(Ellipsis), np.generic,
          np.dtype, Dtype, Device, Generator, type, types.FunctionType,
          types.BuiltinFunctionType, np.ufunc)
"""Argument types a graph keeps as they are: values that hold no tensor data, and code."""


class Tracer:
    """Builds a :class:`Graph` from the calls made while it is ``state.tracer``."""

    def __init__(self, names: dict | None = None) -> None:
        self.graph = Graph()
        self._names = names or {}  # id(tensor) -> (name, "parameter" | "buffer")
        self._values: dict = {}  # id(tensor) -> its Value now
        self._held: list = []  # every tensor seen, so that no id is reused while tracing
        self._computed: set = set()  # indices of the values computed from the inputs
        self._computed_storages: dict = {}  # id(storage) -> a Value living in it
        self._count = 0
        self._unnamed = 0  # results are numbered %1, %2 ... in the order they are made

    # --- the values ----------------------------------------------------------------------
    def _new_value(self, t: Tensor, name: str | None = None) -> Value:
        index = self._count
        self._count += 1
        if name is None:
            self._unnamed += 1
            name = str(self._unnamed)
        value = Value(index, name, tuple(t._data.shape), t.dtype, t._device)
        self._values[id(t)] = value
        self._held.append(t)
        return value

    def _computed_value(self, t: Tensor, name: str | None = None) -> Value:
        value = self._new_value(t, name)
        self._computed.add(value.index)
        self._computed_storages[id(t._storage)] = value
        return value

    def add_input(self, t: Tensor, name: str) -> None:
        self.graph.inputs.append(self._computed_value(t, name))

    def _value_of(self, t: Tensor, op: str) -> Value:
        value = self._values.get(id(t))
        if value is not None:
            return value
        # Not made by a recorded call: a constant, unless it lives in a computed value's memory
        source = self._computed_storages.get(id(t._storage))
        if source is not None:
            raise TracingError(
                f"{op}: got a tensor of shape {tuple(t.shape)} that shares memory with the "
                f"traced value {source!r} but was not made by a call gradlab.jit records, so "
                "the graph would freeze its current values. Fix: make it with tensor ops "
                "(indexing, view, detach(), ...) instead of reaching into the tensor's data")
        name, kind = self._names.get(id(t), (None, "constant"))
        value = self._new_value(t, name or f"constant{len(self.graph.constants)}")
        if kind != "constant":  # a module's own: %self.fc.weight, apart from results (%1)
            value.label = "self." + value.name
        self.graph.constants.append((value, t, kind))
        return value

    # --- recording -----------------------------------------------------------------------
    def record(self, kind: str, target, args: tuple, kwargs: dict | None = None):
        """Run one call (tracing off inside it) and write it down; return its result."""
        kwargs = kwargs or {}
        state.tracer = None
        try:
            result = _dispatch(target, args) if kind == "op" else target(*args, **kwargs)
        finally:
            state.tracer = self
        op = target.name if kind == "op" else target.__name__
        node = Node(kind, target, self._describe(args, op), self._describe(kwargs, op), None,
                    state.module)
        node.outputs = self._describe_result(result)
        self.graph.nodes.append(node)
        return result

    def _describe(self, x, op: str):
        """``x`` with a Value for each tensor; refuses what may hide data from the inputs."""
        if isinstance(x, Tensor):
            return self._value_of(x, op)
        if isinstance(x, (tuple, list)):
            items = [self._describe(item, op) for item in x]
            if all(a is b for a, b in zip(items, x)):
                return x  # nothing inside changed (a shape, a Size): keep its type
            return tuple(items) if isinstance(x, tuple) else items
        if isinstance(x, dict):
            return {k: self._describe(v, op) for k, v in x.items()}
        if isinstance(x, _PLAIN):
            return x
        if isinstance(x, np.ndarray):
            self._check_array(x, op)
            return x
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            # A record of plain values (a convolution's geometry): kept as it is, once
            # checked to carry no tensor the graph would freeze
            for f in dataclasses.fields(x):
                inner = getattr(x, f.name)
                if self._describe(inner, op) is not inner:
                    raise TracingError(
                        f"{op}: its {type(x).__name__} argument carries a tensor in "
                        f"'{f.name}', which the graph would freeze. Fix: call this part "
                        "outside the traced function")
            return x
        raise TracingError(
            f"{op}: got an argument of type {type(x).__name__}, which may hold data computed "
            "from the traced inputs; gradlab.jit records tensors and plain values (numbers, "
            "strings, dtypes, shapes) only. Fix: call this part outside the traced function "
            "(e.g. trace the model and compute the loss after it)")

    def _check_array(self, array: np.ndarray, op: str) -> None:
        for t in self._held:
            value = self._values.get(id(t))
            if value is not None and value.index in self._computed and \
                    type(t._data) is np.ndarray and np.may_share_memory(array, t._data):
                raise TracingError(
                    f"{op}: got a NumPy array that shares memory with the traced value "
                    f"{value!r}; the graph would freeze its current values. "
                    "Fix: pass tensors to gradlab ops, not their arrays")

    def _describe_result(self, result):
        if isinstance(result, Tensor):
            return self._computed_value(result)
        if isinstance(result, (tuple, list)):
            return tuple(self._describe_result(r) for r in result)
        return result

    def set_outputs(self, returned) -> None:
        """The traced function's return value: tensors, or tuples, lists, dicts of them."""
        self.graph.outputs = self._describe(returned, "the traced function's result")

    def note_read(self, t: Tensor, how: str) -> None:
        """A tensor is being read into Python: warn if it was computed from the inputs."""
        value = self._values.get(id(t))
        if value is None or value.index not in self._computed:
            return
        warnings.warn(TracerWarning(
            f"{how} reads the traced value {value!r} (shape {list(value.shape)}) into Python: "
            "the graph keeps the value it has now, for every input. If the code branches on "
            "it or uses it as a number, the traced graph is right only for inputs that give "
            "the same value; keep such logic in tensor ops (e.g. torch.where)"), stacklevel=3)
