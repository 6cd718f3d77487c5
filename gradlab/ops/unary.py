"""One-input math: exp, log, sqrt, trigonometry, tanh, sigmoid, relu, rounding.

Each op's derivative sits under its forward, as a formula in the output or
the input: d/dx e^x = e^x (the output, saved), d/dx ln x = 1/x (the input,
saved). Rounding ops are flat almost everywhere, so their derivative is 0.
Integer input is computed in the default float dtype, as PyTorch does.

Forward mode needs no second formula here: for a one-input op the tangent is
the same product, ẏ = f'(a) · ȧ, so ``tangent_rule = "elementwise"`` runs
backward on the tangent. The fused ops that tanh, sigmoid and relu call in
their backward take two inputs and write their ``jvp`` out; they are in
``unary_backward.py``.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.function import Function, _dispatch
from ..tensor import Tensor
from ._util import as_operand, check_ordered, xp_for
from .complex_parts import conj
from .unary_backward import SigmoidBackward, TanhBackward, ThresholdBackward

__all__ = ["exp", "log", "log1p", "sqrt", "rsqrt", "abs", "sign", "sin", "cos", "tan", "tanh",
           "sigmoid", "relu", "expm1", "log2", "log10", "exp2", "floor", "ceil", "round",
           "trunc"]
TENSOR_METHODS = list(__all__)


def _unary(fn, x, op: str):
    if not isinstance(x, Tensor):
        x = as_operand(x)
        if not isinstance(x, Tensor):
            from .creation import tensor
            x = tensor(x)
    if x.dtype.category < 2:  # bool and integers (not floats, not complex)
        x = x.to(_dt.get_default_dtype())  # PyTorch: exp(int tensor) is float
    return _dispatch(fn, (x,))


class Exp(Function):
    """e^a.   d/da = e^a (the output itself)."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * conj(out)  # conj: for complex numbers (see complex_parts)


class Log(Function):
    """ln a.   d/da = 1/a."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).log(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / conj(a)


class Log1p(Function):
    """ln(1 + a), accurate for small a.   d/da = 1/(1 + a)."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).log1p(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / conj(a + 1)


class Sqrt(Function):
    """√a.   d/da = 1 / (2√a)."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / conj(out * 2)


class Rsqrt(Function):
    """1/√a.   d/da = -½ a^(-3/2) = -½ · out³."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        out = 1 / xp_for(a).sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * conj(out * out * out) * -0.5


class Abs(Function):
    """|a|.   d/da = sign(a) (0 at 0, as in PyTorch)."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).abs(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        if a.dtype.is_complex:  # |z| grows fastest along z itself: z/|z|
            from .special_math import sgn
            return grad * sgn(a)
        return grad * sign(a)


class Sin(Function):
    """sin a.   d/da = cos a."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).sin(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * conj(cos(a))


class Cos(Function):
    """cos a.   d/da = -sin a."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).cos(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return -(grad * conj(sin(a)))


class Tan(Function):
    """tan a.   d/da = 1 + tan² a."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).tan(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * conj(out * out + 1)


class Tanh(Function):
    """tanh a.   d/da = 1 - tanh² a."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).tanh(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return TanhBackward.apply(grad, conj(out))  # grad * conj(1 - out²), as one op


class Sigmoid(Function):
    """σ(a) = 1 / (1 + e^-a).   d/da = σ(a) (1 - σ(a))."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        xp = xp_for(a)
        if a.dtype.kind == "c":  # (no order to split on: the plain formula)
            out = 1 / (1 + xp.exp(-a))
            ctx.save_for_backward(out)
            return out
        # Stable both ways: e^-|a| never overflows.
        z = xp.exp(-xp.abs(a))
        out = xp.where(a >= 0, 1 / (1 + z), z / (1 + z)).astype(a.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return SigmoidBackward.apply(grad, conj(out))  # grad * conj(out (1 - out)), one op


class Relu(Function):
    """max(a, 0).   d/da = 1 where a > 0, else 0."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).maximum(a, 0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return ThresholdBackward.apply(grad, out)  # grad * (out > 0), as one op


class Expm1(Function):
    """e^a - 1, accurate for small a.   d/da = e^a = out + 1."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).expm1(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * conj(out + 1)


class Log2(Function):
    """log₂ a.   d/da = 1 / (a ln 2)."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).log2(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (conj(a) * math.log(2.0))


class Log10(Function):
    """log₁₀ a.   d/da = 1 / (a ln 10)."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).log10(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (conj(a) * math.log(10.0))


class Exp2(Function):
    """2^a.   d/da = 2^a ln 2."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).exp2(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * conj(out) * math.log(2.0)


class _StepFunction(Function):
    """Piecewise-constant ops (sign, floor, ...): the derivative is 0 almost everywhere."""

    raw = True

    @staticmethod
    def backward(ctx, grad):
        # Zeros, not grad * 0: no gradient passes even where the incoming one is NaN or
        # inf (NaN * 0 is NaN), as in PyTorch.
        return grad.new_zeros(grad.shape)

    @staticmethod
    def jvp(ctx, *tangents):
        """ẏ = 0: a step function doesn't move when its input moves a little."""
        return None


def sign_of(a):
    """NumPy's sign, but 0 for NaN as PyTorch's (sign never gives inf, so nan_to_num is exact)."""
    xp = xp_for(a)
    out = xp.sign(a)
    if out.dtype.kind != "f":
        return out
    return xp.nan_to_num(out, copy=not isinstance(out, xp.ndarray), nan=0.0)  # (0-d: a scalar)


def _step(name: str, xp_name: str):
    def forward(ctx, a):
        return sign_of(a) if xp_name == "sign" else getattr(xp_for(a), xp_name)(a)

    cls = type(name.capitalize(), (_StepFunction,), {
        "name": name, "forward": staticmethod(forward),
        "__doc__": f"{name}(a): piecewise constant, so d/da = 0."})

    def op(input) -> Tensor:
        check_ordered(name, input)  # (sgn is sign's complex form)
        if not input.dtype.is_floating_point and (name != "sign" or input.dtype is _dt.bool):
            return input.clone()  # rounding an integer (or the sign of a bool) changes nothing
        return cls.apply(input)

    op.__name__ = name
    op.__doc__ = cls.__doc__
    return cls, op


Sign, sign = _step("sign", "sign")
Floor, floor = _step("floor", "floor")
Ceil, ceil = _step("ceil", "ceil")
Round, _round_half_even = _step("round", "round")


class RoundDecimals(_StepFunction):
    """round(a · 10^d) / 10^d, d digits after the point (d < 0: round(a / 10^-d) · 10^-d,
    PyTorch's formula; NumPy's multiplies by 10^d there and rounds differently). d/da = 0."""

    name, node_name = "round", "RoundBackward1"

    @staticmethod
    def forward(ctx, a, decimals):
        xp = xp_for(a)
        if decimals >= 0:
            scale = 10.0 ** decimals
            return xp.round(a * scale) / scale
        scale = 10.0 ** -decimals
        return xp.round(a / scale) * scale


def round(input, *, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    """Round half to even; with ``decimals``, to that many digits after the point (negative:
    to tens, hundreds ...). Piecewise constant, so d/dx = 0."""
    if decimals == 0:
        return _round_half_even(input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"round: decimals={decimals} needs a floating point tensor, got "
                           f"{input.dtype}; an integer has no digits after the point. Fix: drop "
                           "decimals, or x = x.float() first")
    return RoundDecimals.apply(input, int(decimals))
Trunc, trunc = _step("trunc", "trunc")


def exp(input) -> Tensor:
    return _unary(Exp, input, "exp")


def log(input) -> Tensor:
    return _unary(Log, input, "log")


def log1p(input) -> Tensor:
    return _unary(Log1p, input, "log1p")


def sqrt(input) -> Tensor:
    return _unary(Sqrt, input, "sqrt")


def rsqrt(input) -> Tensor:
    return _unary(Rsqrt, input, "rsqrt")


def sin(input) -> Tensor:
    return _unary(Sin, input, "sin")


def cos(input) -> Tensor:
    return _unary(Cos, input, "cos")


def tan(input) -> Tensor:
    return _unary(Tan, input, "tan")


def tanh(input) -> Tensor:
    return _unary(Tanh, input, "tanh")


def sigmoid(input) -> Tensor:
    return _unary(Sigmoid, input, "sigmoid")


def expm1(input) -> Tensor:
    return _unary(Expm1, input, "expm1")


def log2(input) -> Tensor:
    return _unary(Log2, input, "log2")


def log10(input) -> Tensor:
    return _unary(Log10, input, "log10")


def exp2(input) -> Tensor:
    return _unary(Exp2, input, "exp2")


def abs(input) -> Tensor:  # noqa: A001 - PyTorch's name
    return Abs.apply(input)


def relu(input) -> Tensor:
    return Relu.apply(input)
