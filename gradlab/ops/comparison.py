"""Comparisons and logic: ==, <, &, isnan ... They give bool tensors and no gradient.

These ops are ``differentiable = False``: the dispatcher records no node
for them, since a bool has no derivative. They still pass through the one
dispatch point, so the debugger sees them as ops.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import binary_op, xp_for

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
           "logical_not", "isnan", "isinf", "isfinite", "bitwise_not"]
TENSOR_METHODS = list(__all__)


class _Compare(Function):
    raw = True
    differentiable = False


def _comparison(name: str, py_op):
    cls = type(name.capitalize(), (_Compare,), {
        "name": name, "forward": staticmethod(lambda ctx, a, b: py_op(a, b)),
        "__doc__": f"Elementwise {name}; returns a bool tensor (no gradient)."})

    def op(input, other) -> Tensor:
        return binary_op(cls, input, other)

    op.__name__ = name
    op.__doc__ = cls.__doc__
    return op


eq = _comparison("eq", lambda a, b: a == b)
ne = _comparison("ne", lambda a, b: a != b)
lt = _comparison("lt", lambda a, b: a < b)
le = _comparison("le", lambda a, b: a <= b)
gt = _comparison("gt", lambda a, b: a > b)
ge = _comparison("ge", lambda a, b: a >= b)


def _logical(name: str, xp_name: str, unary: bool = False):
    def forward(ctx, *arrays):
        return getattr(xp_for(arrays[0]), xp_name)(*arrays)

    cls = type("".join(p.capitalize() for p in name.split("_")), (_Compare,),
               {"name": name, "forward": staticmethod(forward)})
    if unary:
        def op(input) -> Tensor:
            return cls.apply(input)
    else:
        def op(input, other) -> Tensor:
            return binary_op(cls, input, other)
    op.__name__ = name
    op.__doc__ = f"Elementwise {name}; returns a bool tensor (no gradient)."
    return op


logical_and = _logical("logical_and", "logical_and")
logical_or = _logical("logical_or", "logical_or")
logical_xor = _logical("logical_xor", "logical_xor")
logical_not = _logical("logical_not", "logical_not", unary=True)
isnan = _logical("isnan", "isnan", unary=True)
isinf = _logical("isinf", "isinf", unary=True)
isfinite = _logical("isfinite", "isfinite", unary=True)
bitwise_not = _logical("bitwise_not", "invert", unary=True)
