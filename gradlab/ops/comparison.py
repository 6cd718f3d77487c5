"""Comparisons and logic: ==, <, &, isnan ... They give bool tensors and no gradient.

These ops are ``differentiable = False``: the dispatcher records no node
for them, since a bool has no derivative. They still pass through the one
dispatch point, so the debugger sees them as ops.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import binary_op, check_ordered, xp_for

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
           "logical_not", "isnan", "isinf", "isfinite", "bitwise_not", "bitwise_and",
           "bitwise_or", "bitwise_xor", "isclose", "allclose", "equal"]
TENSOR_METHODS = list(__all__)


class _Compare(Function):
    raw = True
    differentiable = False


def _comparison(name: str, py_op, ordering: bool = False):
    cls = type(name.capitalize(), (_Compare,), {
        "name": name, "forward": staticmethod(lambda ctx, a, b: py_op(a, b)),
        "__doc__": f"Elementwise {name}; returns a bool tensor (no gradient)."})

    def op(input, other) -> Tensor:
        if ordering:
            check_ordered(name, input, other)
        return binary_op(cls, input, other)

    op.__name__ = name
    op.__doc__ = cls.__doc__
    return op


eq = _comparison("eq", lambda a, b: a == b)
ne = _comparison("ne", lambda a, b: a != b)
lt = _comparison("lt", lambda a, b: a < b, ordering=True)
le = _comparison("le", lambda a, b: a <= b, ordering=True)
gt = _comparison("gt", lambda a, b: a > b, ordering=True)
ge = _comparison("ge", lambda a, b: a >= b, ordering=True)


def _logical(name: str, xp_name: str, unary: bool = False,
             doc: str = "Elementwise {name}; returns a bool tensor (no gradient)."):
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
    op.__doc__ = doc.format(name=name)
    return op


logical_and = _logical("logical_and", "logical_and")
logical_or = _logical("logical_or", "logical_or")
logical_xor = _logical("logical_xor", "logical_xor")
logical_not = _logical("logical_not", "logical_not", unary=True)
isnan = _logical("isnan", "isnan", unary=True)
isinf = _logical("isinf", "isinf", unary=True)
isfinite = _logical("isfinite", "isfinite", unary=True)
bitwise_not = _logical("bitwise_not", "invert", unary=True)


def _bitwise(name: str, xp_name: str):
    """``&``, ``|``, ``^``: bit by bit on integers (logical on bools), never on floats."""
    raw_op = _logical(name, xp_name, doc="Elementwise {name} of the bits of integer or "
                      "bool tensors (the operator form); the promoted dtype (no gradient).")

    def op(input, other) -> Tensor:
        for x in (input, other):
            if isinstance(x, Tensor) and x.dtype.is_floating_point or isinstance(x, float):
                kind = x.dtype if isinstance(x, Tensor) else "a Python float"
                raise TypeError(f"{name}: needs integer or bool operands, got {kind}. Bits of "
                                "floats have no meaning here; for masks use bool tensors "
                                "(x > 0) and for arithmetic use * and +.")
        return raw_op(input, other)

    op.__name__, op.__doc__ = name, raw_op.__doc__
    return op


bitwise_and = _bitwise("bitwise_and", "bitwise_and")
bitwise_or = _bitwise("bitwise_or", "bitwise_or")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor")


# --- closeness: comparing results that rounding may have changed a little --------------------

class Isclose(_Compare):
    """``|a - b| <= atol + rtol * |b|`` elementwise (not symmetric: ``b`` is the reference).

    Equal values are close (so ``inf == inf`` is); NaN is close to NaN only with
    ``equal_nan``. Integers are compared in float64, so ``a - b`` can't overflow.
    """

    name = "isclose"

    @staticmethod
    def forward(ctx, a, b, rtol, atol, equal_nan):
        xp = xp_for(a)
        close = a == b
        if a.dtype == bool:
            return close
        if a.dtype.kind in "iu":
            a, b = a.astype("float64"), b.astype("float64")
        if equal_nan:
            close = close | (xp.isnan(a) & xp.isnan(b))
        with np.errstate(invalid="ignore"):  # inf - inf and 0 * inf are nan: not close
            error = xp.abs(a - b)
            return close | (xp.isfinite(error) & (error <= atol + rtol * xp.abs(b)))


def _check_pair(op: str, input, other) -> None:
    for name, t in (("input", input), ("other", other)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}. "
                            f"Fix: gradlab.tensor(...) it first")


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Bool tensor: where ``|input - other| <= atol + rtol * |other|`` (broadcasting).

    Both tensors must have one dtype, as in PyTorch: closeness of a float32 result
    to a float64 reference depends on which precision you mean, so say it with ``.to``.
    """
    _check_pair("isclose", input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"isclose: input has dtype {input.dtype} but other has {other.dtype}; compare "
            f"tensors of one dtype. Fix: other.to({input.dtype})")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"isclose: {name} must be greater than or equal to zero, "
                               f"but got {value}")
    return Isclose.apply(input, other, float(rtol), float(atol), bool(equal_nan))


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True if every element is close: ``isclose(input, other, ...).all()`` as a Python bool."""
    _check_pair("allclose", input, other)
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other) -> bool:
    """True if both have the same shape and the same values (NaN never equals anything).

    Unlike ``==`` nothing broadcasts: tensors of different shapes are simply not equal.
    """
    _check_pair("equal", input, other)
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(eq(input, other).all().item())
