"""Attach the ops to ``Tensor`` as methods and operators.

Each op is a plain function whose first argument is the tensor, so the
same function serves as ``gradlab.exp(x)`` and ``x.exp()``. This module is
the one table that says which functions are methods.
"""

from __future__ import annotations

from ..tensor import Tensor
from . import (
    activation,
    conversion,
    elementwise,
    indexing,
    inplace,
    joining,
    linalg,
    reduction,
    shape,
)

# Each family lists its methods in TENSOR_METHODS: a name, or (method name, function name).
FAMILIES = (elementwise, reduction, linalg, shape, joining, indexing, activation, conversion,
            inplace)


def _reversed(fn):
    def method(self, other):
        return fn(other, self)

    method.__name__ = f"__r{fn.__name__}__"
    return method


def _iop(fn):
    def method(self, other):
        return fn(self, other)

    method.__name__ = f"__i{fn.__name__.rstrip('_')}__"
    return method


def _where_bool(bool_op, int_op):
    """``&``, ``|``, ``^``: logical on bool tensors, bitwise on integers (as in PyTorch)."""
    def method(self, other):
        if self.dtype.name == "bool" and getattr(other, "dtype", None) in (None, self.dtype):
            return bool_op(self, other)
        return int_op(self, other)
    return method


def install_methods(cls=Tensor) -> None:
    for module in FAMILIES:
        for entry in module.TENSOR_METHODS:
            method, function = entry if isinstance(entry, tuple) else (entry, entry)
            setattr(cls, method, getattr(module, function))
    ew = elementwise
    dunders = {
        "__add__": ew.add, "__radd__": _reversed(ew.add), "__iadd__": _iop(inplace.add_),
        "__sub__": ew.sub, "__rsub__": _reversed(ew.sub), "__isub__": _iop(inplace.sub_),
        "__mul__": ew.mul, "__rmul__": _reversed(ew.mul), "__imul__": _iop(inplace.mul_),
        "__truediv__": ew.div, "__rtruediv__": _reversed(ew.div),
        "__itruediv__": _iop(inplace.div_),
        "__floordiv__": ew.floor_divide, "__rfloordiv__": _reversed(ew.floor_divide),
        "__mod__": ew.remainder, "__rmod__": _reversed(ew.remainder),
        "__pow__": ew.pow, "__rpow__": _reversed(ew.pow), "__ipow__": _iop(inplace.pow_),
        "__matmul__": linalg.matmul, "__rmatmul__": _reversed(linalg.matmul),
        "__neg__": ew.neg, "__pos__": lambda self: self, "__abs__": ew.abs,
        "__eq__": ew.eq, "__ne__": ew.ne, "__lt__": ew.lt, "__le__": ew.le, "__gt__": ew.gt,
        "__ge__": ew.ge, "__invert__": ew.bitwise_not,
        "__and__": _where_bool(ew.logical_and, ew.logical_and),
        "__or__": _where_bool(ew.logical_or, ew.logical_or),
        "__xor__": _where_bool(ew.logical_xor, ew.logical_xor),
    }
    dunders["__rand__"] = _reversed(dunders["__and__"])
    dunders["__ror__"] = _reversed(dunders["__or__"])
    for name, fn in dunders.items():
        setattr(cls, name, fn)
    cls.__hash__ = object.__hash__  # defining __eq__ would otherwise drop hashing
    cls.T = property(lambda self: self.permute(*reversed(range(self.ndim))),
                     doc="All dims reversed (the transpose, for a matrix).")
    cls.mT = property(lambda self: self.transpose(-2, -1),
                      doc="The last two dims swapped: a batch of transposed matrices.")
