"""Containers: modules that hold other modules (or parameters) in order or by name.

``Sequential`` runs its children one after another; ``ModuleList`` and
``ModuleDict`` only *hold* modules, so that their parameters are found,
moved and saved (a plain Python list would hide them); ``ParameterList``
and ``ParameterDict`` do the same for parameters. Children are named by
their position (``"0"``, ``"1"``...), so state_dict keys read ``layers.0.weight``.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from ...tensor import Tensor
from ..parameter import Parameter
from .module import Module, _indent

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index(container, idx, op: str) -> int:
    """``idx`` as a position in ``range(len(container))``; negative counts from the end."""
    n = len(container)
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"{type(container).__name__}{op}: index {idx} is out of range for "
                         f"{n} entries (valid: {-n} to {n - 1})")
    return idx % n


class _Positional(Module):
    """Shared by Sequential and ModuleList: children keyed "0", "1", ... in order."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return list(self._modules.values())[_index(self, idx, "[]")]

    def __setitem__(self, idx, module: Module) -> None:
        self.add_module(str(_index(self, idx, "[]=")), module)

    def __delitem__(self, idx) -> None:
        keep = list(self._modules.values())
        if isinstance(idx, slice):
            del keep[idx]
        else:
            del keep[_index(self, idx, ": del")]
        self._renumber(keep)

    def _renumber(self, modules) -> None:
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        modules = list(self._modules.values())
        n = len(modules)
        index = operator.index(index)
        if not -n <= index <= n:
            raise IndexError(f"{type(self).__name__}.insert: index {index} is out of range "
                             f"for {n} entries")
        modules.insert(index, module)
        self._renumber(modules)

    def pop(self, idx: int = -1) -> Module:
        module = self[idx]
        del self[idx]
        return module

    def __add__(self, other):
        if not isinstance(other, type(self)):
            raise TypeError(f"can only add a {type(self).__name__} to a {type(self).__name__}, "
                            f"got {type(other).__name__}")
        return type(self)([*self, *other])

    def __iadd__(self, other):
        return self.extend(other)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]


class Sequential(_Positional):
    """Runs its modules in order, each on the previous one's output.

    ``Sequential(a, b, c)`` names them "0", "1", "2";
    ``Sequential(OrderedDict([("fc", a), ("act", b)]))`` gives names.
    """

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            if len(args) == 1 and isinstance(args[0], list):  # from slicing
                args = args[0]
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return super().__getitem__(idx)

    def __setitem__(self, idx, module: Module) -> None:
        key = list(self._modules)[_index(self, idx, "[]=")]
        self.add_module(key, module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(_Positional):
    """A list of modules whose parameters the parent module sees (a Python list hides them)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __repr__(self) -> str:
        """Runs of identical children print once: ``(0-2): 3 x Linear(...)``."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return f"{self._get_name()}()"
        runs = []  # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for first, last, r in runs:
            head = f"({first})" if first == last else f"({first}-{last}): {last - first + 1} x"
            lines.append(_indent(f"{head}: {r}" if first == last else f"{head} {r}", 2))
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward: it only holds modules. "
                                  "Fix: loop over it in your forward, or use nn.Sequential")


class ModuleDict(Module):
    """A dict of modules (insertion-ordered) whose parameters the parent module sees."""

    def __init__(self, modules: Mapping | Iterable | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for j, pair in enumerate(pairs):
            if isinstance(pair, Module) or len(pair) != 2:
                raise ValueError(f"ModuleDict.update: element #{j} should be a (name, module) "
                                 f"pair, got {pair!r}")
            self[pair[0]] = pair[1]

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward: it only holds modules. "
                                  "Fix: call its entries in your forward")


def _parameter_line(p, type_name: bool = False) -> str:
    """How ParameterList/Dict show an entry, in PyTorch's layout: ``Parameter containing:
    [gradlab.float32 of size 3x4]`` (a dict names the type: ``gradlab.FloatTensor``)."""
    if not isinstance(p, Tensor):
        return f"Object of type: {type(p).__name__}"
    kind = "Parameter containing" if isinstance(p, Parameter) else "Tensor containing"
    size = "x".join(str(s) for s in p.shape)
    device = "" if p.device.type == "cpu" else f" ({p.device})"
    what = p.type() if type_name else f"gradlab.{p.dtype.name}"
    return f"{kind}: [{what} of size {size}{device}]"


def _as_parameter(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters a module owns (e.g. one weight per layer of a custom net)."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self.__dict__["_size"] = 0
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(self, idx, "[]")))

    def __setitem__(self, idx, param) -> None:
        setattr(self, str(_index(self, idx, "[]=")), _as_parameter(param))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def append(self, value) -> ParameterList:
        self.__dict__["_size"] += 1
        setattr(self, str(self._size - 1), _as_parameter(value))
        return self

    def extend(self, values: Iterable) -> ParameterList:
        for v in values:
            self.append(v)
        return self

    def __iadd__(self, values):
        return self.extend(values)

    def extra_repr(self) -> str:
        return "\n".join(f"  ({i}): {_parameter_line(p)}" for i, p in enumerate(self))

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterList has no forward: it only holds parameters")


class ParameterDict(Module):
    """A dict of parameters a module owns, by name."""

    def __init__(self, parameters: Mapping | Iterable | None = None) -> None:
        super().__init__()
        self.__dict__["_keys"] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def values(self):
        return [self[k] for k in self._keys]

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def update(self, parameters) -> None:
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for k, v in pairs:
            self[k] = v

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_parameter_line(p, True)}" for k, p in self.items())

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterDict has no forward: it only holds parameters")
