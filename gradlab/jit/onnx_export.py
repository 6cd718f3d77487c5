"""``gradlab.onnx.export``: a traced graph as an ONNX model, for Netron, onnxruntime and friends.

Export traces the model (in eval mode, as PyTorch's exporter does), then
writes each node of the graph as ONNX operators: ``linear`` becomes
``Gemm``, ``convolution`` ``Conv``, ``batch_norm`` ``BatchNormalization``
and so on, one small function per op (:mod:`.onnx_converters`). Parameters and
buffers become initializers under their ``state_dict`` names. Shapes are the
example's: every reshape and pool size is known, so the ONNX graph is fully
static (``dynamic_axes`` is not supported).

An op without a converter stops the export with the op's name, the module
that ran it and the list of ops that export; the common layers of MLPs,
CNNs, recurrent and attention models are covered. The ``onnx`` package is an
optional dependency (``pip install 'gradlab[onnx]'``), imported only here.
"""

from __future__ import annotations

import numpy as np

from ..nn.modules.module import Module
from .graph import Graph, Node, Value, fill, leaves
from .onnx_converters import CONVERTERS, ExportError
from .traced import trace

__all__ = ["export", "ExportError", "CONVERTERS"]

OPSETS = range(17, 21)  # LayerNormalization needs 17; Gelu is native from 20


def export(model, args, f, *, input_names=None, output_names=None, opset_version: int = 17,
           dynamic_axes=None, verbose: bool = False) -> None:
    """Trace ``model`` (a module or function) on ``args`` (a tensor or a tuple of them) and
    write it to ``f`` (a path or a binary file object) as an ONNX model.

    ``input_names``/``output_names`` name the graph's inputs and outputs (default: the
    forward's parameter names, and ``output``, ``output1`` ...). A module is exported in
    eval mode (dropout off, BatchNorm on its running statistics) and put back as it was.
    """
    onnx = _onnx()
    if dynamic_axes:
        raise NotImplementedError(
            "onnx.export: dynamic_axes is not supported: a gradlab graph is traced for the "
            "example's shapes (every reshape and pool size is fixed). Fix: export once per "
            "input shape you need")
    if opset_version not in OPSETS:
        raise ValueError(f"onnx.export: opset_version {opset_version} is not supported; "
                         f"gradlab writes opsets {OPSETS.start} to {OPSETS.stop - 1}")
    was_training = isinstance(model, Module) and model.training
    if isinstance(model, Module):
        model.eval()
    try:
        traced = trace(model, args, check_trace=False)
    finally:
        if was_training:
            model.train()
    graph = traced.graph
    constants = [get() for get in traced._graphs[traced._example_key][1]]
    proto = _Builder(onnx, graph, constants, opset_version).build(input_names, output_names)
    onnx.checker.check_model(proto)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    data = proto.SerializeToString()
    if hasattr(f, "write"):
        f.write(data)
    else:  # all or nothing, as checkpoints are written
        from pathlib import Path

        from ..serialization import _atomic_write
        _atomic_write(Path(f), data, {})


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError("onnx.export needs the onnx package: pip install 'gradlab[onnx]' "
                          "(or pip install onnx)") from None
    return onnx


class _Builder:
    """Builds the ONNX graph: names for values, initializers, and the nodes."""

    def __init__(self, onnx, graph: Graph, constants: list, opset: int) -> None:
        self.onnx, self.graph, self.opset = onnx, graph, opset
        self.helper = onnx.helper
        self.nodes: list = []
        self.initializers: list = []
        self.names: dict = {}  # Value index -> ONNX name
        self._count = 0
        for (value, _, kind), t in zip(graph.constants, constants):
            name = value.name if kind != "constant" else f"constant.{value.name}"
            self.names[value.index] = name
            self.initializers.append(self._tensor(name, t.detach().cpu().numpy()))

    # --- helpers the converters use ------------------------------------------------------
    def name(self, value: Value) -> str:
        if value.index not in self.names:
            self.names[value.index] = f"t{value.name}" if value.name.isdigit() else value.name
        return self.names[value.index]

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}.{self._count}"

    def const(self, array, hint: str = "const") -> str:
        name = self.fresh(hint)
        self.initializers.append(self._tensor(name, np.asarray(array)))
        return name

    def scalar_like(self, number, value: Value) -> str:
        return self.const(np.asarray(number, dtype=value.dtype.np), "scalar")

    def ints(self, values) -> str:
        return self.const(np.asarray(list(values), dtype=np.int64), "shape")

    def emit(self, op_type: str, inputs: list, outputs: list | None = None, **attrs) -> list:
        outputs = outputs or [self.fresh(op_type.lower())]
        self.nodes.append(self.helper.make_node(op_type, inputs, outputs, **attrs))
        return outputs

    def _tensor(self, name: str, array: np.ndarray):
        if array.dtype.kind == "V" or str(array.dtype) == "bfloat16":
            raise ExportError(f"onnx.export: {name} is bfloat16, which gradlab does not write "
                              "to ONNX. Fix: model.float() before exporting")
        return self.onnx.numpy_helper.from_array(np.ascontiguousarray(array), name)

    def elem_type(self, value: Value) -> int:
        return self.helper.np_dtype_to_tensor_dtype(np.dtype(value.dtype.np))

    # --- the graph -----------------------------------------------------------------------
    def build(self, input_names, output_names):
        graph, helper = self.graph, self.helper
        if input_names is not None:
            if len(input_names) != len(graph.inputs):
                raise ValueError(f"onnx.export: {len(input_names)} input_names for "
                                 f"{len(graph.inputs)} inputs")
            for v, name in zip(graph.inputs, input_names):
                self.names[v.index] = name
        inputs = [helper.make_tensor_value_info(self.name(v), self.elem_type(v), list(v.shape))
                  for v in graph.inputs]
        for node in graph.nodes:
            self._convert(node)
        results = leaves(graph.outputs)
        if not results or len(results) != len(_flat(graph.outputs)):
            raise ExportError("onnx.export: the model must return a tensor or a tuple/list of "
                              "tensors")
        names = list(output_names or [])
        if names and len(names) != len(results):
            raise ValueError(f"onnx.export: {len(names)} output_names for {len(results)} "
                             "outputs")
        outputs = []
        for i, v in enumerate(results):
            want = names[i] if names else ("output" if i == 0 else f"output{i}")
            self.emit("Identity", [self.name(v)], [want])
            outputs.append(helper.make_tensor_value_info(want, self.elem_type(v),
                                                         list(v.shape)))
        onnx_graph = helper.make_graph(self.nodes, "gradlab", inputs, outputs, self.initializers)
        return helper.make_model(onnx_graph, producer_name="gradlab",
                                 opset_imports=[helper.make_opsetid("", self.opset)])

    def _convert(self, node: Node) -> None:
        op, args = node.op, node.args
        if node.kind == "call" and node.target.__name__ == "apply_inplace":
            op, args = args[0].name, args[1:]  # x += y: the out-of-place op, into x's place
        elif node.kind == "call" and node.target.__name__ in _FACTORIES:
            self._factory(node)
            return
        convert = CONVERTERS.get(op)
        if convert is None:
            where = f" (in module {node.module})" if node.module else ""
            raise ExportError(
                f"onnx.export: no ONNX form for the op {op}{where}. Ops that export: "
                f"{', '.join(sorted(CONVERTERS))}. Fix: run that part outside the exported "
                "model, or write it with ops from the list")
        out = leaves(node.outputs)
        names = convert(self, args, out)
        for value, name in zip(out, names):
            if name is not None:
                self.names[value.index] = name

    def _factory(self, node: Node) -> None:
        """zeros, ones, arange ...: deterministic, so their values become initializers
        (``zeros_like(x)`` reads only x's shape and dtype, which the graph knows)."""
        if node.op in ("tensor", "as_tensor") and leaves((node.args, node.kwargs)):
            raise ExportError(f"onnx.export: {node.op}() of a computed tensor copies values "
                              "the graph only knows at run time; use clone() instead")
        from ..ops.creation import zeros

        env = {v.index: zeros(v.shape, dtype=v.dtype)
               for v in leaves((node.args, node.kwargs))}
        result = node.target(*fill(node.args, env), **fill(node.kwargs, env))
        (value,) = leaves(node.outputs)
        self.names[value.index] = self.const(result.numpy(), node.op)


_FACTORIES = {"zeros", "ones", "full", "empty", "arange", "linspace", "eye", "zeros_like",
              "ones_like", "empty_like", "full_like", "tensor", "as_tensor"}


def _flat(structure) -> list:
    if isinstance(structure, (tuple, list)):
        return [x for s in structure for x in _flat(s)]
    return [structure]
