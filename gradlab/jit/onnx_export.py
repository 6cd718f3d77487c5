"""``gradlab.onnx.export``: a traced graph as an ONNX model, for Netron, onnxruntime and friends.

Export traces the model (in eval mode, as PyTorch's exporter does), then
writes each node of the graph as ONNX operators: ``linear`` becomes
``Gemm``, ``convolution`` ``Conv``, ``batch_norm`` ``BatchNormalization``
and so on, one small function per op (:mod:`.onnx_converters`). Parameters and
buffers become initializers under their ``state_dict`` names. Shapes are the
example's, except along ``dynamic_axes`` (a variable batch size or sequence
length, :mod:`.onnx_dynamic`): sizes that follow those axes are read at run
time, and the graph's inputs and outputs name them.

An op without a converter stops the export with the op's name, the module
that ran it and the list of ops that export; the common layers of MLPs,
CNNs, recurrent and attention models are covered. The ``onnx`` package is an
optional dependency (``pip install 'gradlab[onnx]'``), imported only here.
"""

from __future__ import annotations

import numpy as np

from .._atomic_files import write_bytes_atomically
from ..nn.modules.module import Module
from .graph import Graph, Node, Value, fill, leaves
from .onnx_converters import CONVERTERS, ExportError
from .onnx_dynamic import dynamic_axes_by_input, is_dynamic, signatures
from .traced import _as_inputs, trace

__all__ = ["export", "ExportError", "CONVERTERS"]

OPSETS = range(17, 21)  # LayerNormalization needs 17; Gelu is native from 20


def export(model, args, f, *, input_names=None, output_names=None, opset_version: int = 17,
           dynamic_axes=None, verbose: bool = False) -> None:
    """Trace ``model`` (a module or function) on ``args`` (a tensor or a tuple of them) and
    write it to ``f`` (a path or a binary file object) as an ONNX model.

    ``input_names``/``output_names`` name the graph's inputs and outputs (default: the
    forward's parameter names, and ``output``, ``output1`` ...). ``dynamic_axes`` (as in
    PyTorch: ``{"x": {0: "batch"}, "output": [0]}``) lets those axes of the inputs vary; the
    sizes that follow them are read at run time. A module is exported in eval mode (dropout
    off, BatchNorm on its running statistics) and put back as it was.
    """
    onnx = _onnx()
    if opset_version not in OPSETS:
        raise ValueError(f"onnx.export: opset_version {opset_version} is not supported; "
                         f"gradlab writes opsets {OPSETS.start} to {OPSETS.stop - 1}")
    was_training = isinstance(model, Module) and model.training
    if isinstance(model, Module):
        model.eval()
    try:
        traced = trace(model, args, check_trace=False)
        graph = traced.graph
        names_in = list(input_names or [v.name for v in graph.inputs])
        names_out = list(output_names or map(_output_name, range(len(leaves(graph.outputs)))))
        dynamic_in, dynamic_out = dynamic_axes_by_input(dynamic_axes, names_in, names_out)
        sigs = signatures(lambda inputs: trace(model, inputs, check_trace=False).graph,
                          _as_inputs(args, "args"), graph, dynamic_in) if dynamic_in else {}
    finally:
        if was_training:
            model.train()
    constants = [get() for get in traced._graphs[traced._example_key][1]]
    proto = _Builder(onnx, graph, constants, opset_version, sigs).build(
        input_names, output_names, dynamic_in, dynamic_out)
    onnx.checker.check_model(proto)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    data = proto.SerializeToString()
    if hasattr(f, "write"):
        f.write(data)
    else:  # all or nothing, as checkpoints are written
        write_bytes_atomically(f, data)


def _output_name(i: int) -> str:
    """The graph's i-th output when output_names says nothing: output, output1, ..."""
    return "output" if i == 0 else f"output{i}"


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError("onnx.export needs the onnx package: pip install 'gradlab[onnx]' "
                          "(or pip install onnx)") from None
    return onnx


class _Builder:
    """Builds the ONNX graph: names for values, initializers, and the nodes."""

    def __init__(self, onnx, graph: Graph, constants: list, opset: int,
                 sigs: dict | None = None) -> None:
        self.onnx, self.graph, self.opset = onnx, graph, opset
        self.helper = onnx.helper
        self.nodes: list = []
        self.initializers: list = []
        self.names: dict = {}  # Value index -> ONNX name
        self._count = 0
        self.sigs = sigs or {}  # Value index -> per dim, its sizes across the traces
        self.dim_sources: dict = {}  # a dynamic dim's sizes -> (ONNX name, axis) holding it
        self._dims: dict = {}  # (ONNX name, axis) -> a 1-element tensor of that size
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

    # --- shapes, with dynamic axes (see onnx_dynamic.py) ----------------------------------
    def signature(self, value: Value) -> tuple:
        return self.sigs.get(value.index) or tuple((n,) for n in value.shape)

    def dynamic(self, value: Value) -> list:
        """The axes of ``value`` whose size follows a dynamic input axis."""
        return [k for k, sizes in enumerate(self.signature(value)) if is_dynamic(sizes)]

    def require_static(self, value: Value, axes, what: str) -> None:
        rank = len(value.shape)
        moving = sorted({a % rank for a in axes} & set(self.dynamic(value)))
        if moving:
            raise ExportError(f"onnx.export: {what} needs the size of axis {moving[0]} of its "
                              f"input (shape {tuple(value.shape)}) when exporting, but that "
                              "size follows a dynamic axis. Fix: leave that axis out of "
                              "dynamic_axes")

    def dim(self, value: Value, axis: int):
        """Axis ``axis`` of ``value``: its size if static, else a tensor holding it."""
        sizes = self.signature(value)[axis]
        if not is_dynamic(sizes):
            return sizes[0]
        found = self._runtime(sizes)
        if found is None:
            raise ExportError(f"onnx.export: axis {axis} of a tensor of shape "
                              f"{tuple(value.shape)} follows a dynamic axis that no earlier "
                              "tensor holds; export can't read its size at run time")
        return found

    def _runtime(self, sizes: tuple) -> str | None:
        source = self.dim_sources.get(sizes)
        if source is None:
            return None
        if source not in self._dims:
            name, axis = source
            self._dims[source] = self.emit("Shape", [name], start=axis, end=axis + 1)[0]
        return self._dims[source]

    def shape_of(self, value: Value, infer: bool = False) -> str:
        """``value``'s shape as an int64 tensor for Reshape or Expand: its own sizes, read at
        run time where they follow dynamic axes (``infer``: one may be -1, for Reshape)."""
        dims = []
        for sizes in self.signature(value):
            if not is_dynamic(sizes):
                dims.append(sizes[0])
                continue
            found = self._runtime(sizes)
            if found is None and infer and -1 not in dims:
                found = -1
            if found is None:
                raise ExportError(
                    f"onnx.export: a tensor of shape {tuple(value.shape)} has a size that "
                    "follows the dynamic axes in a way export can't read at run time (a "
                    "product of two dynamic sizes, say). Fix: fewer dynamic axes")
            dims.append(found)
        return self.shape_tensor(dims)

    def shape_tensor(self, dims: list) -> str:
        """An int64 shape from ints and 1-element tensors (``dim``'s results)."""
        if all(isinstance(d, int) for d in dims):
            return self.ints(dims)
        pieces, run = [], []
        for d in dims:
            if isinstance(d, int):
                run.append(d)
                continue
            if run:
                pieces.append(self.ints(run))
                run = []
            pieces.append(d)
        if run:
            pieces.append(self.ints(run))
        return self.emit("Concat", pieces, axis=0)[0]

    def _register(self, value: Value) -> None:
        """Make ``value``'s dynamic sizes readable by later shapes."""
        for axis in self.dynamic(value):
            self.dim_sources.setdefault(self.signature(value)[axis], (self.name(value), axis))

    def _type(self, value: Value, name: str, dim_names: dict):
        """A graph input's or output's type, its dynamic dims named."""
        shape = [dim_names.get(k) or self._dim_name(value, k) for k in range(len(value.shape))]
        return self.helper.make_tensor_value_info(name, self.elem_type(value), shape)

    def _dim_name(self, value: Value, axis: int):
        sizes = self.signature(value)[axis]
        if not is_dynamic(sizes):
            return sizes[0]
        return self._named_dims.get(sizes) or f"{self.name(value)}_dim{axis}"

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
    def build(self, input_names, output_names, dynamic_in=None, dynamic_out=None):
        graph, helper = self.graph, self.helper
        if input_names is not None:
            if len(input_names) != len(graph.inputs):
                raise ValueError(f"onnx.export: {len(input_names)} input_names for "
                                 f"{len(graph.inputs)} inputs")
            for v, name in zip(graph.inputs, input_names):
                self.names[v.index] = name
        dynamic_in, dynamic_out = dynamic_in or {}, dynamic_out or {}
        self._named_dims = {self.signature(graph.inputs[i])[axis % len(graph.inputs[i].shape)]:
                            name for i, axes in dynamic_in.items() for axis, name in axes.items()}
        inputs = [self._type(v, self.name(v), {a % max(len(v.shape), 1): n for a, n in
                                               dynamic_in.get(i, {}).items()})
                  for i, v in enumerate(graph.inputs)]
        for v in graph.inputs:
            self._register(v)
        for node in graph.nodes:
            self._convert(node)
            for value in leaves(node.outputs):
                if value.index in self.names:
                    self._register(value)
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
            want = names[i] if names else _output_name(i)
            self.emit("Identity", [self.name(v)], [want])
            declared = dynamic_out.get(want, {})
            for axis in declared:
                if axis % len(v.shape) not in self.dynamic(v):
                    raise ValueError(
                        f"onnx.export: dynamic_axes makes axis {axis} of output {want!r} "
                        f"dynamic, but its size {v.shape[axis]} follows no dynamic input axis")
            outputs.append(self._type(v, want, {a % len(v.shape): n
                                                for a, n in declared.items()}))
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
        result = node.target(*fill(node.args, env), **fill(node.kwargs, env)).numpy()
        (value,) = leaves(node.outputs)
        if not self.dynamic(value):
            self.names[value.index] = self.const(result, node.op)
            return
        filled = result.reshape(-1)[:1]
        if result.size == 0 or (result != filled[0]).any():
            raise ExportError(f"onnx.export: {node.op}() makes a tensor whose size follows a "
                              "dynamic axis and whose values vary; only constant fills "
                              "(zeros, ones, full, *_like) export with dynamic axes")
        value_attr = self.onnx.numpy_helper.from_array(filled.copy(), "value")
        (self.names[value.index],) = self.emit("ConstantOfShape", [self.shape_of(value)],
                                               value=value_attr)


_FACTORIES = {"zeros", "ones", "full", "empty", "arange", "linspace", "eye", "zeros_like",
              "ones_like", "empty_like", "full_like", "tensor", "as_tensor"}


def _flat(structure) -> list:
    if isinstance(structure, (tuple, list)):
        return [x for s in structure for x in _flat(s)]
    return [structure]
