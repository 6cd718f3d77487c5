"""Attach the ops to ``Tensor`` as methods and operators.

Each op is a plain function whose first argument is the tensor, so the
same function serves as ``gradlab.exp(x)`` and ``x.exp()``. Each family says
which of its functions are methods (``TENSOR_METHODS``); this module binds
them, and the operators (``+``, ``@``, ``==`` ...).
"""

from __future__ import annotations

from ..tensor import Tensor
from . import arithmetic, comparison, complex_parts, inplace, linalg, unary


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


def install_methods(families, cls=Tensor) -> None:
    """Bind each family's TENSOR_METHODS (a name, or (method name, function name)), then
    the operators."""
    for module in families:
        for entry in module.TENSOR_METHODS:
            method, function = entry if isinstance(entry, tuple) else (entry, entry)
            setattr(cls, method, getattr(module, function))
    ar, cmp, inp = arithmetic, comparison, inplace
    dunders = {
        "__add__": ar.add, "__radd__": _reversed(ar.add), "__iadd__": _iop(inp.add_),
        "__sub__": ar.sub, "__rsub__": ar.rsub, "__isub__": _iop(inp.sub_),
        "__mul__": ar.mul, "__rmul__": _reversed(ar.mul), "__imul__": _iop(inp.mul_),
        "__truediv__": ar.div, "__rtruediv__": _reversed(ar.div),
        "__itruediv__": _iop(inp.div_),
        "__floordiv__": ar.floor_divide, "__rfloordiv__": _reversed(ar.floor_divide),
        "__mod__": ar.remainder, "__rmod__": _reversed(ar.remainder),
        "__pow__": ar.pow, "__rpow__": _reversed(ar.pow), "__ipow__": _iop(inp.pow_),
        "__matmul__": linalg.matmul, "__rmatmul__": _reversed(linalg.matmul),
        "__neg__": ar.neg, "__pos__": lambda self: self, "__abs__": unary.abs,
        "__eq__": cmp.eq, "__ne__": cmp.ne, "__lt__": cmp.lt, "__le__": cmp.le,
        "__gt__": cmp.gt, "__ge__": cmp.ge, "__invert__": cmp.bitwise_not,
        # Bit by bit on integers, which on bools is logical and/or/xor (as in PyTorch).
        "__and__": cmp.bitwise_and, "__rand__": _reversed(cmp.bitwise_and),
        "__or__": cmp.bitwise_or, "__ror__": _reversed(cmp.bitwise_or),
        "__xor__": cmp.bitwise_xor, "__rxor__": _reversed(cmp.bitwise_xor),
    }
    for name, fn in dunders.items():
        setattr(cls, name, fn)
    cls.__hash__ = object.__hash__  # defining __eq__ would otherwise drop hashing
    cls.T = property(lambda self: self.permute(*reversed(range(self.ndim))),
                     doc="All dims reversed (the transpose, for a matrix).")
    cls.mT = property(lambda self: self.transpose(-2, -1),
                      doc="The last two dims swapped: a batch of transposed matrices.")
    cls.real = property(complex_parts.real, doc="The real parts: a view for complex tensors, "
                        "the tensor itself for real ones.")
    cls.imag = property(complex_parts.imag, doc="The imaginary parts of a complex tensor, "
                        "as a view.")
