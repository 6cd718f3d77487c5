"""Arithmetic: + - * / ** and friends, each forward with its derivative right below.

Every op here acts value by value, so its backward is the chain rule one
value at a time: ``grad_input = grad_output * (local derivative)``. When
inputs were broadcast, ``unbroadcast`` sums the gradient back to each
input's shape (a value used by many outputs collects all their gradients).

Forwards run on raw arrays (``raw = True``); backwards are tensor code, so
they are differentiable themselves (``create_graph=True``).

Forward mode goes the other way: each ``jvp`` gives the output's tangent from
the inputs' tangents (ȧ, ḃ), ẏ = ∂y/∂a · ȧ + ∂y/∂b · ḃ, with no
unbroadcasting: a tangent of a broadcast input simply broadcasts with it
(``tangent_sum`` expands the sum to the output's shape).
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Size, Tensor
from ._util import (
    as_operand,
    binary_op,
    promote,
    scale_first,
    tangent_sum,
    unbroadcast,
    xp_for,
)
from .complex_parts import conj
from .selection import where
from .unary import _StepFunction, floor, log, trunc

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg",
           "negative", "pow", "reciprocal", "square", "remainder", "floor_divide",
           "broadcast_shapes", "rsub"]
TENSOR_METHODS = [name for name in __all__ if name not in ("broadcast_shapes", "rsub")]
# (broadcast_shapes and rsub are functions only, as in PyTorch; rsub is also __rsub__)


class Add(Function):
    """a + b.   d/da = 1, d/db = 1."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.input_shapes
        return unbroadcast(grad, sa), unbroadcast(grad, sb)

    @staticmethod
    def jvp(ctx, ta, tb):
        """ẏ = ȧ + ḃ."""
        return tangent_sum(ctx.results[0].shape, ta, tb)


class Sub(Function):
    """a - b.   d/da = 1, d/db = -1."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a, b):
        return a - b

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.input_shapes
        return unbroadcast(grad, sa), None if sb is None else unbroadcast(-grad, sb)

    @staticmethod
    def jvp(ctx, ta, tb):
        """ẏ = ȧ - ḃ."""
        return tangent_sum(ctx.results[0].shape, ta, None if tb is None else -tb)


class Rsub(Sub):
    """``rsub(input, other)`` = other - input: Sub with its operands swapped, under
    PyTorch's names (``number - tensor`` runs it too, as RsubScalar)."""

    name, node_name = "rsub", "RsubBackward0"
    supports_complex = True


class RsubScalar(Rsub):
    """``rsub`` of a number: PyTorch's overload for it, RsubBackward1."""

    name, node_name = "rsub", "RsubBackward1"
    supports_complex = True


class AddScaled(Function):
    """a + alpha·b: ``add`` with ``alpha=``, one op as in PyTorch (not a mul, then an add).
    d/da = 1, d/db = alpha."""

    name, node_name = "add", "AddBackward0"
    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.alpha = alpha
        return a + b * alpha

    @staticmethod
    def backward(ctx, grad):
        sa, sb, _ = ctx.input_shapes
        return (None if sa is None else unbroadcast(grad, sa),
                None if sb is None else unbroadcast(grad * conj(ctx.alpha), sb), None)

    @staticmethod
    def jvp(ctx, ta, tb, _):
        """ẏ = ȧ + alpha·ḃ."""
        return tangent_sum(ctx.results[0].shape, ta, None if tb is None else tb * ctx.primals[2])


class SubScaled(AddScaled):
    """a - alpha·b: ``sub`` with ``alpha=``, as AddScaled with -alpha under sub's names."""

    name, node_name = "sub", "SubBackward0"
    supports_complex = True

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.alpha = -alpha
        return a - b * alpha

    @staticmethod
    def jvp(ctx, ta, tb, _):
        """ẏ = ȧ - alpha·ḃ."""
        return tangent_sum(ctx.results[0].shape, ta,
                           None if tb is None else tb * -ctx.primals[2])


class Mul(Function):
    """a * b.   d/da = b, d/db = a.   jvp: ẏ = ȧ · b + a · ḃ (linear in each input)."""

    raw = True
    supports_complex = True
    tangent_rule = "multilinear"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        # For complex numbers the local derivative is conjugated (see complex_parts).
        return (None if sa is None else unbroadcast(grad * conj(b), sa),
                None if sb is None else unbroadcast(grad * conj(a), sb))


class Div(Function):
    """a / b.   d/da = 1/b, d/db = -a/b² = -(a/b)/b."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a, b):
        out = a / b
        ctx.save_for_backward(b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        b, out = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        grad_a = grad / conj(b)
        return (None if sa is None else unbroadcast(grad_a, sa),
                None if sb is None else unbroadcast(-grad_a * conj(out), sb))

    @staticmethod
    def jvp(ctx, ta, tb):
        """ẏ = ȧ/b - (a/b) · ḃ/b."""
        _, b = ctx.primals
        (out,) = ctx.results
        return tangent_sum(out.shape, None if ta is None else ta / b,
                           None if tb is None else -(out * tb / b))


class Neg(Function):
    """-a.   d/da = -1.   jvp: ẏ = -ȧ."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, grad):
        return -grad


def add(input, other, *deprecated, alpha=1) -> Tensor:
    """``input + alpha * other``, broadcasting (``deprecated``: see ``scale_first``)."""
    if deprecated:
        (other,), alpha = scale_first("add", (other, *deprecated), 1, "alpha", alpha)
    if alpha != 1:
        return _scaled(AddScaled, input, other, alpha)
    return binary_op(Add, input, other)


def _scaled(op, a, b, alpha):
    """``a + alpha * b`` (op AddScaled) or ``a - alpha * b`` (SubScaled), the operands
    promoted together first (so a float64 ``a`` makes the product float64 too, as
    PyTorch); a float alpha for integer tensors is refused."""
    a, b = _promoted_for_alpha(op.name, a, b, alpha)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):  # a number: scale it here
        return binary_op(Add if op is AddScaled else Sub, a, b * alpha)
    return op.apply(a, b, alpha)


def _promoted_for_alpha(name: str, a, b, alpha):
    """``a`` and ``b`` promoted together; a float alpha for integer tensors is refused."""
    a, b = promote(a, b)
    dtype = _dtype_of(a, b)
    if isinstance(alpha, float) and not dtype.is_floating_point:
        raise RuntimeError(f"{name}: for integer tensors ({dtype}), alpha must be an integer, "
                           f"got {alpha} (as PyTorch). Fix: convert to float first, e.g. "
                           "x.float()")
    return a, b


def sub(input, other, *deprecated, alpha=1) -> Tensor:
    """``input - alpha * other``, broadcasting (``deprecated``: see ``scale_first``)."""
    if deprecated:
        (other,), alpha = scale_first("sub", (other, *deprecated), 1, "alpha", alpha)
    return _subtract(Sub, input, other, alpha)


def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input`` (what ``number - tensor`` runs)."""
    return _subtract(Rsub if isinstance(other, Tensor) else RsubScalar, other, input, alpha)


def _subtract(op, minuend, subtrahend, alpha) -> Tensor:
    """``minuend - alpha * subtrahend`` as the node ``op`` (Sub, or Rsub with them swapped)."""
    if getattr(minuend, "dtype", None) is _dt.bool or \
            getattr(subtrahend, "dtype", None) is _dt.bool:
        raise RuntimeError(
            f"{op.name}: subtracting bool tensors is not supported (shapes "
            f"{tuple(getattr(minuend, 'shape', ()))} and "
            f"{tuple(getattr(subtrahend, 'shape', ()))}). "
            "Fix: to invert a mask use ~mask or logical_not(); for numbers convert with .int()"
        )
    if alpha != 1:
        if op is Sub:
            return _scaled(SubScaled, minuend, subtrahend, alpha)
        # rsub(x, y, alpha) = y - alpha·x, rare enough to stay two ops
        minuend, subtrahend = _promoted_for_alpha(op.name, minuend, subtrahend, alpha)
        return binary_op(op, minuend, mul(subtrahend, alpha))
    return binary_op(op, minuend, subtrahend)


def mul(input, other) -> Tensor:
    return binary_op(Mul, input, other)


def div(input, other, *, rounding_mode: str | None = None) -> Tensor:
    """True division; integers divide to float. ``rounding_mode`` 'trunc' or 'floor' rounds."""
    a, b = promote(input, other)
    if rounding_mode is not None:
        return _rounded_div(a, b, rounding_mode)
    dtype = a.dtype if isinstance(a, Tensor) else b.dtype
    if dtype.category < 2:  # PyTorch: int / int is float (bool and integers only)
        fdt = _dt.get_default_dtype()
        a = a.to(fdt) if isinstance(a, Tensor) else float(a)
        b = b.to(fdt) if isinstance(b, Tensor) else float(b)
    return Div.apply(a, b)


def check_integer_divisor(op: str, a, b) -> None:
    """Integer division by 0 has no value (a float one gives inf or NaN): refuse it, as
    PyTorch does, instead of NumPy's silent 0. (On a GPU this check waits for the data.)"""
    dtype_a, dtype_b = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if (dtype_a is not None and dtype_a.is_floating_point) or \
            (dtype_b is not None and dtype_b.is_floating_point) or isinstance(b, float):
        return
    if bool((b == 0).any()) if isinstance(b, Tensor) else b == 0:
        where = f"the divisor of shape {tuple(b.shape)} holds a 0" if isinstance(b, Tensor) \
            else "the divisor is 0"
        raise RuntimeError(f"{op}: integer division by zero ({where}). Fix: convert to float "
                           "(x.float()) to get inf or NaN there, or mask the zeros first")


def _rounded_div(a, b, mode):
    check_integer_divisor("div", a, b)
    if mode == "trunc":
        return trunc(Div.apply(*_as_float(a, b))).to(_dtype_of(a, b))
    if mode == "floor":
        return floor_divide(a, b)
    raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {mode!r}")


def _as_float(a, b):
    if _dtype_of(a, b).is_floating_point:
        return a, b
    f = _dt.get_default_dtype()
    return (a.to(f) if isinstance(a, Tensor) else float(a),
            b.to(f) if isinstance(b, Tensor) else float(b))


def _dtype_of(a, b):
    return a.dtype if isinstance(a, Tensor) else b.dtype


def neg(input) -> Tensor:
    return Neg.apply(input)


subtract, multiply, divide, true_divide, negative = sub, mul, div, div, neg


class PowScalar(Function):
    """a ** e for a number e.   d/da = e · a^(e-1)."""

    raw = True
    supports_complex = True
    name, node_name = "pow", "PowBackward0"
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.save_for_backward(a)
        ctx.exponent = exponent
        return (a ** exponent).astype(a.dtype, copy=False)  # ml_dtypes: bf16 ** 2.0 is f32

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        e = ctx.exponent
        if e == 0:  # a constant: zeros, even where grad is NaN or inf (as PyTorch)
            return grad.new_zeros(a.shape), None
        return grad * conj(a ** (e - 1) * e), None


def _integer_power(a, b):
    """a ** b for integer b, with PyTorch's answer for negative powers of integers (NumPy
    refuses them): 1/a^k truncated toward 0, so 1 for a = 1, ±1 for a = -1 by the
    parity of k, else 0."""
    xp = xp_for(b)
    negative = b < 0
    if getattr(a, "dtype", np.dtype(type(a))).kind not in "iu" or not bool(negative.any()):
        return a ** b
    out = a ** xp.where(negative, 0, b)
    one_over = xp.where(a == 1, 1, xp.where(a == -1, 1 - 2 * (b & 1), 0))
    return xp.where(negative, one_over, out).astype(out.dtype, copy=False)


class Pow(Function):
    """a ** b for tensors.   d/da = b · a^(b-1),  d/db = a^b · ln a (0 where a = 0, b >= 0).

    Complex: holomorphic in each input (principal log), so backward conjugates both.
    """

    raw = True
    supports_complex = True
    node_name = "PowBackward1"  # tensor ** tensor; a number ** tensor is PowBackward2

    @staticmethod
    def forward(ctx, a, b):
        if not hasattr(a, "shape"):
            ctx.node_name = "PowBackward2"
        out = _integer_power(a, b) if b.dtype.kind in "iu" else a ** b
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        grad_a = grad_b = None
        if sa is not None:  # a^0 is 1 for every a: no gradient, not 0·a^-1 (inf at a = 0)
            grad_a = unbroadcast(where(b == 0, 0.0, grad * conj(b * a ** (b - 1))), sa)
        if sb is not None:
            # Where a = 0 and b >= 0, a^b is flat in b: 0 (as PyTorch), not out·ln 0.
            if isinstance(a, Tensor):
                flat = (a == 0) & _not_negative(b)
                term = grad * conj(out * log(where(flat, 1.0, a)))
            else:
                flat = _not_negative(b) if a == 0 else None
                term = grad * conj(out * _log_of_number(a))
            grad_b = unbroadcast(term if flat is None else where(flat, 0.0, term), sb)
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        """ẏ = b · a^(b-1) · ȧ + a^b · ln a · ḃ (ln a taken as 0 where a = 0)."""
        a, b = ctx.primals
        (out,) = ctx.results
        term_a = term_b = None
        if ta is not None:
            term_a = ta * b * a ** (b - 1)
        if tb is not None:
            if isinstance(a, Tensor):
                safe_log = log(where(a == 0, 1.0, a))
            elif isinstance(a, complex):
                safe_log = cmath.log(a) if a != 0 else 0.0
            else:
                safe_log = math.log(a) if a > 0 else 0.0
            term_b = tb * out * safe_log
        return tangent_sum(out.shape, term_a, term_b)


def _not_negative(b: Tensor) -> Tensor:
    """b >= 0; for a complex b, a real b >= 0 (PyTorch's rule for where a^b is flat in b)."""
    return (b.imag == 0) & (b.real >= 0) if b.dtype.is_complex else b >= 0


def _log_of_number(a):
    """ln a for a number base: -inf at 0, NaN for a negative real, the principal log of a
    complex number."""
    if isinstance(a, complex):
        return cmath.log(a) if a != 0 else -math.inf
    return math.log(a) if a > 0 else -math.inf if a == 0 else math.nan


def pow(input, exponent) -> Tensor:
    """``input ** exponent``; either side may be a number (``2 ** x`` works)."""
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        exponent = as_operand(exponent, input)
        if not isinstance(exponent, Tensor):
            if input.dtype is _dt.bool and not isinstance(exponent, float):
                input = input.to(_dt.int64)  # a bool to a power is a count, as PyTorch
            if input.dtype.category < 2:  # bool and integers
                if isinstance(exponent, float):
                    input = input.to(_dt.get_default_dtype())
                elif exponent < 0:
                    raise RuntimeError(
                        f"pow: integers to negative integer powers are not allowed "
                        f"({input.dtype} tensor ** {exponent}). Fix: x.float() ** {exponent}")
            return PowScalar.apply(input, exponent)
    a, b = promote(input, exponent)
    return Pow.apply(a, b)


def reciprocal(input) -> Tensor:
    """1 / input (float result)."""
    return div(1.0, input)


def square(input) -> Tensor:
    if isinstance(input, Tensor) and input.dtype is _dt.bool:
        input = input.to(_dt.int64)  # as PyTorch: True² is 1, an int64
    return mul(input, input)


def _integer_op(name: str, xp_name: str):
    def forward(ctx, a, b):
        with np.errstate(divide="ignore", invalid="ignore"):  # x // 0: no warning, as PyTorch
            return getattr(xp_for(a), xp_name)(a, b)

    cls = type(name.capitalize(), (_StepFunction,), {"name": name,
                                                     "forward": staticmethod(forward)})

    def op(input, other) -> Tensor:
        a, b = promote(input, other)
        check_integer_divisor(name, a, b)
        return binary_op(cls, a, b)

    op.__name__ = name
    return cls, op


FloorDivide, floor_divide = _integer_op("floor_divide", "floor_divide")


class Remainder(Function):
    """a mod b = a - b·floor(a/b) (sign of b, Python's rule).   d/da = 1, d/db = -floor(a/b).

    ``quotient`` is the rounding of a/b the remainder is taken after; fmod is the same
    op with trunc (see special_math.Fmod).
    """

    raw = True
    quotient = staticmethod(floor)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):  # x % 0: no NumPy warning
            return xp_for(a).remainder(a, b)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        return (None if sa is None else unbroadcast(grad, sa),
                None if sb is None else unbroadcast(-grad * cls.quotient(a / b), sb))

    @classmethod
    def jvp(cls, ctx, ta, tb):
        """ẏ = ȧ - quotient(a/b) · ḃ."""
        a, b = ctx.primals
        return tangent_sum(ctx.results[0].shape, ta,
                           None if tb is None else -(tb * cls.quotient(a / b)))


def remainder(input, other) -> Tensor:
    a, b = promote(input, other)
    check_integer_divisor("remainder", a, b)
    return binary_op(Remainder, a, b)


# --- broadcasting: the shape rule every op above follows ------------------------------------

def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of these shapes broadcast to, without making any tensor.

    Line the shapes up on the right; in each dim the sizes must be equal or 1,
    and a 1 stretches to the other size (``(2, 1)`` and ``(3,)`` give ``(2, 3)``).
    An int ``n`` counts as the shape ``(n,)``.
    """
    dims: list[int] = []
    for i, shape in enumerate(shapes):
        if isinstance(shape, int):
            shape = (shape,)
        elif not isinstance(shape, (tuple, list)):
            raise RuntimeError(f"broadcast_shapes: shape {i} should be an int, a tuple of ints "
                               f"or a list of ints, got {shape!r}. Fix: pass t.shape, not t")
        for size in shape:
            if not isinstance(size, int):
                raise TypeError(f"broadcast_shapes: shape {i} = {tuple(shape)} has a "
                                f"{type(size).__name__} size {size!r}; sizes must be ints")
            if size < 0:
                raise ValueError(f"broadcast_shapes: shape {i} = {tuple(shape)} has a negative "
                                 "size; a dim's size is >= 0")
        if len(shape) > len(dims):
            dims[:0] = [1] * (len(shape) - len(dims))
        for d in range(1, len(shape) + 1):
            size, have = shape[-d], dims[-d]
            if size != have and 1 not in (size, have):
                raise RuntimeError(
                    f"broadcast_shapes: shape {i} = {tuple(shape)} can't broadcast with "
                    f"{tuple(dims)}: dim {-d} has size {size} against {have} (sizes must be "
                    "equal, or one of them 1). Fix: unsqueeze() a dim so they line up")
            if have == 1:
                dims[-d] = size
    return Size(dims)
