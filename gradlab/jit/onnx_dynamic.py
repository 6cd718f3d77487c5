"""``dynamic_axes`` for ONNX export: which sizes in a traced graph follow an input's size.

A trace records one example, so every shape in its graph is a number. To
find out which of those numbers are really "the batch size" or "the
sequence length", export traces the model again once per dynamic input
axis, with that axis grown from n to 2n + 1 (the input twice, then its last
slice, so token ids stay valid). Each dimension of each value then has a *signature*: its
sizes across the traces. A dimension whose sizes never change is static; a
dimension that changes with the batch has the batch's signature, wherever
it is (an input's dim 0, a hidden state's dim 1, a flattened batch x 8).

The converters write shapes through the builder (``shape_of``): static
dims as constants, dynamic ones read at run time from a value that has a
dim with the same signature (``Shape``, then ``Gather``), or ``-1`` where a
Reshape can infer one. A model whose graph changes with the size (a Python
``if`` on a shape), or that can't run at the other size, can't have that
axis dynamic, and export says so.
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .onnx_converters import ExportError

__all__ = ["dynamic_axes_by_input", "signatures"]


def dynamic_axes_by_input(dynamic_axes, input_names, output_names) -> tuple[dict, dict]:
    """PyTorch's ``dynamic_axes`` ({name: [axis, ...] or {axis: dim name}}) as two dicts,
    {input position: {axis: dim name}} and {output name: {axis: dim name}}."""
    inputs, outputs = {}, {}
    for name, axes in (dynamic_axes or {}).items():
        if isinstance(axes, dict):
            named = {int(a): str(n) for a, n in axes.items()}
        elif isinstance(axes, (list, tuple)):
            named = {int(a): f"{name}_dim{int(a)}" for a in axes}
        else:
            raise TypeError(f"onnx.export: dynamic_axes[{name!r}] must be a list of axes or a "
                            f"dict {{axis: name}}, got {type(axes).__name__}")
        if name in input_names:
            inputs[input_names.index(name)] = named
        elif name in output_names:
            outputs[name] = named
        else:
            raise ValueError(f"onnx.export: dynamic_axes names {name!r}, which is neither an "
                             f"input ({', '.join(input_names)}) nor an output "
                             f"({', '.join(output_names)}); pass input_names/output_names")
    return inputs, outputs


def grown(t: Tensor, axis: int) -> Tensor:
    """``t`` with ``axis`` grown from n to 2n + 1: itself twice, then its last slice (token
    ids stay valid). Doubling, not adding one: a size that went through a stride-2 pool
    would not change with one more row, and would look static."""
    from ..ops.joining import cat

    with no_grad():
        return cat([t, t, t.narrow(axis, t.shape[axis] - 1, 1)], axis)


def signatures(trace_at, inputs: tuple, base_graph, dynamic_inputs: dict) -> dict:
    """{value index: per dim, its sizes across the traces}: ``base_graph`` (the example's)
    and one more trace per dynamic input axis, ``trace_at(inputs)`` giving the graph."""
    graphs = [base_graph]
    for position, axes in dynamic_inputs.items():
        example = inputs[position]
        for axis in axes:
            if not -example.ndim <= axis < example.ndim:
                raise ValueError(f"onnx.export: dynamic axis {axis} of input {position} is "
                                 f"out of range for its shape {tuple(example.shape)}")
            changed = list(inputs)
            changed[position] = grown(example, axis)
            where = (f"input {position} with dim {axis} = {2 * example.shape[axis] + 1} "
                     f"instead of {example.shape[axis]}")
            try:
                graph = trace_at(tuple(changed))
            except Exception as error:
                raise ExportError(f"onnx.export: the model can't run on {where} ({error}), so "
                                  "that axis can't be dynamic") from error
            _same_structure(base_graph, graph, where)
            graphs.append(graph)
    values = [g.values() for g in graphs]
    return {v.index: tuple(zip(*(vs[i].shape for vs in values)))
            for i, v in enumerate(values[0])}


def _same_structure(base, other, where: str) -> None:
    ops, again = [n.op for n in base.nodes], [n.op for n in other.nodes]
    if ops != again or len(base.values()) != len(other.values()) or any(
            len(a.shape) != len(b.shape) for a, b in zip(base.values(), other.values())):
        first = next((i for i, (a, b) in enumerate(zip(ops, again)) if a != b),
                     min(len(ops), len(again)))
        raise ExportError(
            f"onnx.export: the traced graph changes on {where} (node {first}: "
            f"{ops[first] if first < len(ops) else 'the end'} vs "
            f"{again[first] if first < len(again) else 'the end'}): the model's Python code "
            "depends on that size, so that axis can't be dynamic. Fix: export with fixed "
            "shapes, or compute with tensor ops instead of branching on sizes")


def is_dynamic(sizes: tuple) -> bool:
    """A dim's signature changes across the traces."""
    return len(set(sizes)) > 1
