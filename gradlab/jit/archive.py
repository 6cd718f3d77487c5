"""``gradlab.jit.save`` and ``load``: a traced graph in a file, runnable without its code.

The file is an ordinary gradlab checkpoint (:mod:`gradlab.serialization`:
safetensors, written atomically, never unpickled). It holds the graph as a
tree of plain values (each call's target by name, its arguments, which
value each tensor is) and the constants (parameters, buffers) as tensors
under their names, so ``gradlab.load`` alone reads the weights too.

Loading runs no code from the file. A call's target is looked up by name,
and only these names are accepted:

* an op: a ``gradlab.autograd.Function`` subclass defined in gradlab;
* a recorded entry point (factory, in-place change, detach), marked by
  :func:`gradlab.autograd.tracing.recorded`;
* as an argument, a function of ``gradlab.ops`` (tensor math only), or a
  dataclass of gradlab's holding plain values (a convolution's geometry).

Anything else (a name outside gradlab, a helper that writes files) is
refused with :class:`~gradlab.serialization.CheckpointError`. For the same
reason a graph that calls user code (a custom ``Function`` from the user's
script) cannot be saved: loading it would mean importing that script.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import sys

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function, function_named
from ..backends import device as as_device
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..random import Generator, get_generator
from ..serialization import CheckpointError
from ..serialization import load as _load
from ..serialization import save as _save
from ..tensor import Tensor
from .graph import Graph, Node, Value, leaves
from .traced import TracedFunction, TracedModule

__all__ = ["save", "load", "LoadedGraph"]

FORMAT = "gradlab.jit.graph"
VERSION = 1


# --- saving ---------------------------------------------------------------------------------

def save(traced, f) -> None:
    """Write the example graph of ``traced`` (from :func:`gradlab.jit.trace`) to ``f``,
    a path (written atomically) or a binary file object."""
    if not isinstance(traced, (TracedModule, TracedFunction, LoadedGraph)):
        raise TypeError(f"jit.save: expected what gradlab.jit.trace returns, got "
                        f"{type(traced).__name__}. Fix: traced = gradlab.jit.trace(model, x)")
    graph = traced.graph
    if isinstance(traced, LoadedGraph):
        constants = traced._current_constants()
    else:
        constants = [get() for get in traced._graphs[traced._example_key][1]]
    owner = traced if isinstance(traced, Module) else traced._names_from
    _save(_encode_graph(graph, constants, owner), f)


def _module_state(owner: Module | None) -> list:
    """Every parameter and buffer of ``owner`` in ``state_dict`` order (then the
    non-persistent buffers), so a loaded graph has the traced module's whole state."""
    if owner is None:
        return []
    params = {name for name, _ in owner.named_parameters()}
    state = [{"name": name, "kind": "parameter" if name in params else "buffer",
              "tensor": t.detach(), "requires_grad": bool(t.requires_grad)}
             for name, t in owner.state_dict(keep_vars=True).items()]
    seen = {d["name"] for d in state}
    state += [{"name": name, "kind": "buffer", "tensor": b.detach(), "requires_grad": False,
               "persistent": False}
              for name, b in owner.named_buffers() if name not in seen]
    return state


def _encode_graph(graph: Graph, constants: list, owner: Module | None) -> dict:
    enc = _Encoder()
    return {
        "format": FORMAT, "version": VERSION,
        "inputs": [_describe_value(v) for v in graph.inputs],
        "state": _module_state(owner),
        "constants": [dict(_describe_value(v), kind=kind,
                           tensor=t.detach() if kind == "constant" else None)
                      for (v, _, kind), t in zip(graph.constants, constants)],
        "nodes": [{"kind": n.kind, "target": _reference(n.target, n.kind, n.op),
                   "args": enc.encode(n.args, n.op), "kwargs": enc.encode(n.kwargs, n.op),
                   "outputs": enc.encode(n.outputs, n.op),
                   "results": [_describe_value(v) for v in leaves(n.outputs)],
                   "module": n.module}
                  for n in graph.nodes],
        "outputs": enc.encode(graph.outputs, "the graph's result"),
    }


def _describe_value(v: Value) -> dict:
    return {"index": v.index, "name": v.name, "shape": list(v.shape),
            "dtype": str(v.dtype).replace("gradlab.", ""), "device": str(v.device)}


def _reference(obj, kind: str, op: str) -> str:
    """``module:qualname`` of a call's target or a code argument, if loading may accept it."""
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", "") or ""
    ref = f"{module}:{qualname}"
    if _acceptable(obj, kind) and "<" not in qualname:
        try:
            if _lookup(ref) is obj:
                return ref
        except (ImportError, AttributeError):
            pass
    raise TypeError(
        f"jit.save: {op} calls {qualname or obj!r} (from {module or 'nowhere'}), which a "
        "loaded graph could not find by name: only gradlab's own ops are saved, never user "
        "code (loading would have to import and run it). Fix: keep custom Functions and "
        "lambdas out of the traced part, or save the model's state_dict instead")


def _acceptable(obj, kind: str) -> bool:
    module = getattr(obj, "__module__", "") or ""
    if not (module == "gradlab" or module.startswith("gradlab.")):
        return False
    if isinstance(obj, type):
        return dataclasses.is_dataclass(obj) if kind == "record" else issubclass(obj, Function)
    if getattr(obj, "__gradlab_recorded__", False):
        return True
    return kind == "argument" and module.startswith("gradlab.ops.") and callable(obj)


_IMPORTABLE = ("gradlab.ops.", "gradlab.nn.", "gradlab.autograd.", "gradlab.distributions.",
               "gradlab.amp.", "gradlab.func.")
"""Modules a graph's names may make ``load`` import (ops only: importing one runs no more than
defining ops). Any other module is used only if the program imported it already."""


def _lookup(ref: str):
    """The object named ``module:qualname``: a Function from the registry of ops (which
    also knows ops made by factories), anything else by its attribute path."""
    module, _, qualname = ref.partition(":")
    obj = sys.modules.get(module)
    if obj is None:  # not loaded yet: import it only if it is a package of ops
        if not module.startswith(_IMPORTABLE) or "__main__" in module:
            raise ImportError(module)
        obj = importlib.import_module(module)
    op = function_named(ref)
    if op is not None:
        return op
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


class _Encoder:
    """Arguments as plain JSON-able values, tagged where JSON has no type of its own."""

    def encode(self, x, op: str):
        if type(x) is Value:
            return {"value": x.index}
        if x is None or isinstance(x, (bool, str)):
            return x
        if isinstance(x, (int, np.integer)):
            return int(x)
        if isinstance(x, (float, np.floating)):
            x = float(x)
            return x if math.isfinite(x) else {"float": repr(x)}
        if isinstance(x, complex):
            return {"complex": [x.real, x.imag]}
        if isinstance(x, tuple):
            return {"tuple": [self.encode(v, op) for v in x]}
        if isinstance(x, list):
            return [self.encode(v, op) for v in x]
        if isinstance(x, dict):
            return {"dict": [[k, self.encode(v, op)] for k, v in x.items()]}
        if isinstance(x, slice):
            return {"slice": [self.encode(v, op) for v in (x.start, x.stop, x.step)]}
        if x is Ellipsis:
            return {"ellipsis": True}
        if isinstance(x, _dt.dtype):
            return {"dtype": str(x).replace("gradlab.", "")}
        if isinstance(x, np.dtype):
            return {"numpy_dtype": x.str}
        if isinstance(x, as_device):
            return {"device": str(x)}
        if isinstance(x, Generator):
            if get_generator(x.device) is not x:
                raise TypeError(f"jit.save: {op} draws from a Generator of its own, which a "
                                "file cannot hold. Fix: use the default generator "
                                "(gradlab.manual_seed) in the traced part")
            return {"generator": str(x.device)}
        if isinstance(x, np.ndarray):
            return {"array": x}
        if dataclasses.is_dataclass(x) and not isinstance(x, type):  # a convolution's geometry
            return {"record": [_reference(type(x), "record", op),
                               [[f.name, self.encode(getattr(x, f.name), op)]
                                for f in dataclasses.fields(x)]]}
        if isinstance(x, type) or callable(x):
            return {"ref": _reference(x, "argument", op)}
        raise TypeError(f"jit.save: {op} has an argument of type {type(x).__name__}, which "
                        "the graph format cannot hold")


# --- loading --------------------------------------------------------------------------------

def load(f, map_location=None) -> LoadedGraph:
    """Read a graph written by :func:`save`; returns a :class:`LoadedGraph` module."""
    tree = _load(f, map_location=map_location)
    name = f if isinstance(f, str) else getattr(f, "name", "the file")
    if not isinstance(tree, dict) or tree.get("format") != FORMAT:
        raise CheckpointError(
            f"jit.load: {name} is not a gradlab graph (no '{FORMAT}' marker): it may be a "
            "plain checkpoint, to be read with gradlab.load. Fix: write graphs with "
            "gradlab.jit.save(gradlab.jit.trace(model, x), path)")
    if tree.get("version") != VERSION:
        raise CheckpointError(f"jit.load: {name} holds graph format version "
                              f"{tree.get('version')!r}; this gradlab reads version {VERSION}")
    try:
        return LoadedGraph(*_decode_graph(tree))
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise CheckpointError(f"jit.load: {name} holds a malformed graph "
                              f"({type(e).__name__}: {e})") from None


def _decode_graph(tree: dict) -> tuple:
    values: dict = {}

    def value(d: dict) -> Value:
        v = Value(int(d["index"]), str(d["name"]), tuple(int(s) for s in d["shape"]),
                  _dt.to_dtype(d["dtype"]), as_device(d["device"]))
        values[v.index] = v
        return v

    graph = Graph()
    graph.inputs = [value(d) for d in tree["inputs"]]
    state = tree["state"]
    for d in state:
        if not isinstance(d["tensor"], Tensor) or d["kind"] not in ("parameter", "buffer"):
            raise CheckpointError("jit.load: a state entry is not a parameter or buffer tensor")
    named = {d["name"] for d in state}
    for d in tree["constants"]:
        kind = d["kind"]
        if kind == "constant" and isinstance(d["tensor"], Tensor):
            state.append({"name": d["name"], "kind": "constant", "tensor": d["tensor"]})
        elif kind not in ("parameter", "buffer") or d["name"] not in named:
            raise CheckpointError(f"jit.load: the graph uses {d['name']!r}, which the file "
                                  "does not hold")
        constant = value(d)
        if kind != "constant":
            constant.label = "self." + constant.name
        graph.constants.append((constant, None, kind))
    dec = _Decoder(values)
    for d in tree["nodes"]:
        kind = d["kind"]
        if kind not in ("op", "call"):
            raise CheckpointError(f"jit.load: unknown node kind {kind!r}")
        target = _accepted(d["target"], kind)
        for r in d["results"]:
            value(r)
        graph.nodes.append(Node(kind, target, dec.decode(d["args"]), dec.decode(d["kwargs"]),
                                dec.decode(d["outputs"]), d["module"]))
    graph.outputs = dec.decode(tree["outputs"])
    return graph, state


def _accepted(ref, kind: str):
    """The object ``ref`` names, if it is one a graph may call (see the module docstring)."""
    if not isinstance(ref, str) or ":" not in ref:
        raise CheckpointError(f"jit.load: malformed reference {ref!r}")
    module = ref.partition(":")[0]
    if not (module == "gradlab" or module.startswith("gradlab.")):
        raise CheckpointError(f"jit.load: the graph names {ref}, outside gradlab; refusing "
                              "to import it")
    try:
        obj = _lookup(ref)
    except (ImportError, AttributeError):
        raise CheckpointError(f"jit.load: the graph calls {ref}, which this gradlab does not "
                              "have (saved by another version?)") from None
    if not _acceptable(obj, kind) or (kind in ("op", "record") and not isinstance(obj, type)):
        raise CheckpointError(f"jit.load: the graph names {ref}, which is not an op a graph "
                              "may call; refusing it")
    return obj


class _Decoder:
    def __init__(self, values: dict) -> None:
        self.values = values

    def decode(self, x):
        if isinstance(x, list):
            return [self.decode(v) for v in x]
        if not isinstance(x, dict):
            return x
        if len(x) != 1:
            raise CheckpointError(f"jit.load: malformed argument {sorted(x)!r}")
        (tag, v), = x.items()
        if tag == "value":
            return self.values[int(v)]
        if tag == "tuple":
            return tuple(self.decode(i) for i in v)
        if tag == "dict":
            return {k: self.decode(i) for k, i in v}
        if tag == "float":
            return float(v)
        if tag == "complex":
            return complex(*v)
        if tag == "slice":
            return slice(*(self.decode(i) for i in v))
        if tag == "ellipsis":
            return Ellipsis
        if tag == "dtype":
            return _dt.to_dtype(v)
        if tag == "numpy_dtype":
            return np.dtype(v)
        if tag == "device":
            return as_device(v)
        if tag == "generator":
            return get_generator(v)
        if tag == "array":
            return v
        if tag == "ref":
            return _accepted(v, "argument")
        if tag == "record":
            ref, fields = v
            cls = _accepted(ref, "record")
            names = {f.name for f in dataclasses.fields(cls)}
            record = object.__new__(cls)  # (fields set as saved: no __init__ logic runs)
            for name, item in fields:
                if name not in names:
                    raise CheckpointError(f"jit.load: {ref} has no field {name!r}")
                object.__setattr__(record, name, self.decode(item))
            return record
        raise CheckpointError(f"jit.load: unknown argument tag {tag!r}")


class LoadedGraph(Module):
    """A graph read by :func:`load`: a module whose parameters and buffers sit under their
    saved names (``fc.weight``), so ``state_dict``, optimizers and fine-tuning work; it
    runs only on inputs like the traced example's (it has no Python code to trace again)."""

    def __init__(self, graph: Graph, state: list) -> None:
        super().__init__()
        self.__dict__["_graph"] = graph
        self.__dict__["_graph_constants"] = {}  # plain constants: kept out of state_dict
        for d in state:
            t, kind = d["tensor"], d["kind"]
            if kind == "constant":
                self._graph_constants[d["name"]] = t
                continue
            *path, attr = d["name"].split(".")
            owner = self
            for part in path:
                if part not in owner._modules:
                    owner._modules[part] = Module()
                owner = owner._modules[part]
            if kind == "parameter":
                owner.register_parameter(attr, t if isinstance(t, Parameter) else
                                         Parameter(t, requires_grad=d["requires_grad"]))
            else:
                owner.register_buffer(attr, t, persistent=d.get("persistent", True))
        self.__dict__["_getters"] = [self._getter(v.name, kind) for v, _, kind in
                                     graph.constants]

    def _getter(self, name: str, kind: str):
        if kind == "constant":
            table = self.__dict__["_graph_constants"]
            return lambda: table[name]
        *path, attr = name.split(".")
        owner = self.get_submodule(".".join(path))
        registry = owner._parameters if kind == "parameter" else owner._buffers
        return lambda: registry[attr]

    @property
    def graph(self) -> Graph:
        return self._graph

    def _current_constants(self) -> list:
        return [get() for get in self._getters]

    def forward(self, *inputs):
        graph = self._graph
        if len(inputs) != len(graph.inputs):
            raise TypeError(f"LoadedGraph: traced with {len(graph.inputs)} input(s), called "
                            f"with {len(inputs)}")
        for i, (t, v) in enumerate(zip(inputs, graph.inputs)):
            if not isinstance(t, Tensor) or tuple(t._data.shape) != v.shape or \
                    t.dtype is not v.dtype or str(t.device) != str(v.device):
                got = (f"{type(t).__name__}" if not isinstance(t, Tensor) else
                       f"{str(t.dtype).replace('gradlab.', '')}{list(t.shape)} on {t.device}")
                raise RuntimeError(
                    f"LoadedGraph: input {i} ({v!r}) was traced as {v.type_str} on "
                    f"{v.device}, got {got}. A loaded graph has no Python code to trace "
                    "again, so it runs only on inputs like its example. Fix: trace and save "
                    "once per input shape, or pad/batch the input to the traced shape")
        return graph.run(inputs, self._current_constants())

