"""The graph a trace records: values, the calls that make them, and how to run it again.

A :class:`Graph` is a straight list of calls, in the order the traced
function made them, over numbered :class:`Value` s:

* the **inputs** (``%x``), bound to the tensors passed on each run;
* the **constants** (``%fc.weight``), tensors the function used but did not
  make: a module's parameters and buffers, or any tensor from outside;
* the **results** of the calls (``%3``).

Each :class:`Node` is one call: an op through the dispatcher
(``Function.apply``), or a recorded entry point (an in-place change, a
factory such as ``zeros`` or ``randn``, ``detach``). Its arguments are kept
as they were passed, with a :class:`Value` in place of each tensor. Running
the graph calls the same things again on new tensors, so the ops compute
and differentiate exactly as they did eagerly, and every op still emits its
events: the debugger sees a traced model as it sees an eager one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..autograd.function import _dispatch
from ..autograd.grad_mode import state

__all__ = ["Graph", "Node", "Value"]


@dataclass(eq=False)
class Value:
    """One tensor in the graph: an input, a constant, or a call's result."""

    index: int
    name: str  # what the printout calls it: "x", "fc.weight", "3"
    shape: tuple
    dtype: object  # a gradlab dtype
    device: object  # a gradlab device

    label: str | None = None  # how the printout shows it, if not by name ("self.fc.weight")

    def __repr__(self) -> str:
        return "%" + (self.label or self.name)

    @property
    def type_str(self) -> str:
        dims = ", ".join(map(str, self.shape))
        where = "" if str(self.device) == "cpu" else f", {self.device}"
        return f"{str(self.dtype).replace('gradlab.', '')}[{dims}]{where}"


@dataclass(eq=False)
class Node:
    """One recorded call: ``kind`` "op" (a Function through the dispatcher) or "call"
    (a recorded entry point: an in-place change, a factory, detach)."""

    kind: str
    target: object  # the Function class, or the recorded callable
    args: tuple  # as passed, with a Value for each tensor
    kwargs: dict
    outputs: object  # the result's structure, with a Value for each tensor
    module: str | None  # path of the nn.Module that made the call ("encoder.0")

    @property
    def op(self) -> str:
        """The name the printout shows: the op's (``linear``), or the entry point's (``add_``)."""
        if self.kind == "op":
            return self.target.name
        name = self.target.__name__
        if name in ("apply_inplace", "apply_inplace_fn"):  # (op or name, target, ...)
            first = self.args[0]
            return first if isinstance(first, str) else first.name + "_"
        return name

    def shown_args(self) -> str:
        """The arguments as the printout shows them (an in-place entry's op is in the name)."""
        args = list(self.args)
        if self.kind == "call" and self.target.__name__ in ("apply_inplace", "apply_inplace_fn"):
            args = args[1:]
            if self.target.__name__ == "apply_inplace_fn":
                del args[1]  # the function that computes the new values
        shown = [_show(a) for a in args]
        shown += [f"{k}={_show(v)}" for k, v in self.kwargs.items() if k != "convert"]
        return ", ".join(shown)


@dataclass(eq=False)
class Graph:
    """A traced function as a list of calls; ``run`` replays it on new inputs."""

    inputs: list = field(default_factory=list)  # Values, in argument order
    constants: list = field(default_factory=list)  # (Value, Tensor, kind) triples; kind:
    # "parameter" or "buffer" (a traced module's, by its name), or "constant"
    nodes: list = field(default_factory=list)
    outputs: object = None  # the function's return structure, with Values for tensors

    def run(self, inputs, constants) -> object:
        """Replay on ``inputs`` (tensors, in order) with ``constants`` (tensors, in order)."""
        env: dict = {}
        for value, t in zip(self.inputs, inputs):
            env[value.index] = t
        for (value, _, _), t in zip(self.constants, constants):
            env[value.index] = t
        plan = self._plan if self._plan is not None else self._make_plan()
        outer = state.module  # the traced module's own path, when it sits inside a model
        try:
            for node, slots, out in plan:
                state.module = node.module if not outer else \
                    outer if not node.module else f"{outer}.{node.module}"
                if slots is None:  # arguments nested in lists or dicts: the general way
                    args, kwargs = fill(node.args, env), fill(node.kwargs, env)
                else:  # the usual flat call: drop the tensors into their places
                    args = list(node.args)
                    for position, index in slots:
                        args[position] = env[index]
                    kwargs = node.kwargs
                if node.kind == "op":
                    result = _dispatch(node.target, tuple(args))
                else:
                    result = node.target(*args, **kwargs)
                if out is not None:
                    env[out] = result
                else:
                    bind(node.outputs, result, env)
        finally:
            state.module = outer
        return fill(self.outputs, env)

    _plan = None

    def _make_plan(self) -> list:
        """Per node: where its tensor arguments go (None: nested) and its one result's index."""
        plan = []
        for node in self.nodes:
            slots = []
            for position, a in enumerate(node.args):
                if type(a) is Value:
                    slots.append((position, a.index))
                elif leaves(a):
                    slots = None
                    break
            if leaves(node.kwargs):
                slots = None
            out = node.outputs.index if type(node.outputs) is Value else None
            plan.append((node, slots, out))
        self._plan = plan
        return plan

    def values(self) -> list:
        """Every value: inputs, constants, then each node's results."""
        found = list(self.inputs) + [c[0] for c in self.constants]
        for node in self.nodes:
            found.extend(leaves(node.outputs))
        return found

    def __str__(self) -> str:
        head = ", ".join(f"{v!r} : {v.type_str}" for v in self.inputs)
        lines = [f"graph({head}):"]
        for value, _, kind in self.constants:
            lines.append(f"  {value!r} : {value.type_str} = {kind}")
        for node in self.nodes:
            outs = leaves(node.outputs)
            left = ", ".join(f"{v!r} : {v.type_str}" for v in outs) or "_"
            call = f"{node.op}({node.shown_args()})"
            where = f"  # {node.module}" if node.module else ""
            lines.append(f"  {left} = {call}{where}")
        lines.append(f"  return {_show(self.outputs)}")
        return "\n".join(lines)

    __repr__ = __str__


def fill(structure, env):
    """``structure`` with each Value replaced by its tensor in ``env``."""
    kind = type(structure)
    if kind is Value:
        return env[structure.index]
    if kind is tuple:
        return tuple(fill(s, env) for s in structure)
    if kind is list:
        return [fill(s, env) for s in structure]
    if kind is dict:
        return {k: fill(v, env) for k, v in structure.items()}
    return structure


def bind(structure, result, env) -> None:
    """Record in ``env`` the tensors of ``result`` at the Values of ``structure``."""
    if type(structure) is Value:
        env[structure.index] = result
    elif type(structure) in (tuple, list):
        for s, r in zip(structure, result):
            bind(s, r, env)
    elif type(structure) is dict:
        for k, s in structure.items():
            bind(s, result[k], env)


def leaves(structure, kind: type = Value) -> list:
    """The ``kind`` objects (Values, or tensors in a function's result) in ``structure``
    (nested tuples, lists and dicts), in order."""
    if isinstance(structure, kind):
        return [structure]
    if isinstance(structure, (tuple, list)):
        return [v for s in structure for v in leaves(s, kind)]
    if isinstance(structure, dict):
        return [v for s in structure.values() for v in leaves(s, kind)]
    return []


def _show(x) -> str:
    if isinstance(x, Value):
        return repr(x)
    if isinstance(x, slice):
        text = ":".join("" if v is None else _show(v) for v in (x.start, x.stop, x.step))
        return text[:-1] if x.step is None else text
    if x is Ellipsis:
        return "..."
    if isinstance(x, tuple):
        inner = ", ".join(_show(v) for v in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if isinstance(x, list):
        return "[" + ", ".join(_show(v) for v in x) + "]"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_show(v)}" for k, v in x.items()) + "}"
    if isinstance(x, type):
        return x.__name__
    if callable(x) and hasattr(x, "__name__"):
        return x.__name__
    if type(x).__name__ == "Generator":
        return f"<generator {x.device}>"
    if type(x).__name__ == "ndarray":
        return f"array{list(x.shape)}"
    return repr(x)
