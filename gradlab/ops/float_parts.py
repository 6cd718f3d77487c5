"""The parts of a float: its sign, its neighbours, its power of two.

A float is ± mantissa · 2^exponent. These ops take it apart and put it
together: ``frexp`` splits x into a mantissa in [0.5, 1) and an integer
exponent, ``ldexp`` multiplies by 2^other, ``copysign`` takes the magnitude
of one number and the sign of another, ``nextafter`` steps to the next
representable float.

Derivatives, each under its forward:

* ``copysign(a, b) = ±|a|``: d/da = copysign(a, b)/a = ±1 (0 where a = 0, as
  PyTorch); nothing flows to b (PyTorch gives it zeros): the sign jumps;
* ``ldexp(a, b) = a·2^b``: d/da = 2^b, d/db = a·2^b·ln 2;
* ``frexp(x)``: the mantissa is x·2^-e with e fixed between powers of two, so
  d mantissa/dx = 2^-e; the exponent is an integer (no gradient);
* ``nextafter`` moves by one unit in the last place: no gradient.
"""

from __future__ import annotations

import math

import numpy as np

from .. import return_types
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import promote, tangent_sum, unbroadcast, xp_for
from .trigonometry import float_operands

__all__ = ["copysign", "nextafter", "ldexp", "frexp"]
TENSOR_METHODS = list(__all__)

_FrexpResult = return_types.frexp  # (PyTorch's name; here ``frexp`` is the function)
"""``torch.return_types.frexp``: ``mantissa, exponent = frexp(x)`` or by field name."""


def _needs_tensor(op: str, name: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__} (as in "
                        f"PyTorch). Fix: wrap it, e.g. gradlab.tensor({x!r})")


# --- copysign: the magnitude of one, the sign of the other ---------------------------------

class Copysign(Function):
    """|a| with the sign of b (also of b = -0.0).   d/da = out/a = ±1, 0 where a = 0;
    d/db = 0 (the sign flips in a jump)."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        xp = xp_for(a)
        out = xp.copysign(a, b).astype(a.dtype, copy=False)
        with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 where a = 0: masked below
            ratio = xp.where(a == 0, 0, out / a).astype(a.dtype, copy=False)
        ctx.save_for_backward(ratio)  # ±1 (NaN where a is NaN): a constant, so d²/da² = 0
        return out

    @staticmethod
    def backward(ctx, grad):
        (ratio,) = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        return (None if sa is None else unbroadcast(grad * ratio, sa),
                None if sb is None else grad.new_zeros(sb))

    @staticmethod
    def jvp(ctx, ta, tb):
        """ẏ = (out/a) · ȧ; b's tangent moves nothing."""
        (ratio,) = ctx.saved_tensors
        return tangent_sum(ctx.results[0].shape, None if ta is None else ta * ratio)


def copysign(input, other) -> Tensor:
    """The magnitude of ``input`` with the sign of ``other`` (a tensor or a number);
    integers give the default float dtype, as in PyTorch."""
    _needs_tensor("copysign", "input", input)
    return Copysign.apply(*float_operands(input, other))


# --- nextafter: one step along the float line ------------------------------------------------

class Nextafter(Function):
    """The float next to a in the direction of b (b itself where a = b). No gradient."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, a, b):
        return xp_for(a).nextafter(a, b).astype(a.dtype, copy=False)


def nextafter(input, other) -> Tensor:
    """The next representable float after ``input`` towards ``other`` (both tensors, floats
    after promotion): the spacing of floats there, made visible. No gradient."""
    _needs_tensor("nextafter", "input", input)
    _needs_tensor("nextafter", "other", other)
    a, b = promote(input, other)
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"nextafter: needs floating point tensors, got {input.dtype} and "
                        f"{other.dtype} (shapes {tuple(input.shape)} and {tuple(other.shape)});"
                        " integers have no float neighbours. Fix: convert first with .float()"
                        " or .double()")
    return Nextafter.apply(a, b)


# --- ldexp and frexp: scaling by, and splitting off, a power of two --------------------------

class Ldexp(Function):
    """a · 2^b.   d/da = 2^b,  d/db = a · 2^b · ln 2.

    An integer b scales the exponent bits exactly (``xp.ldexp``: 0.5 · 2^1024 is finite
    in float64); a float b multiplies by 2^b, which may overflow first, as in PyTorch.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        xp = xp_for(a)
        if b.dtype.kind in "iu":
            return xp.ldexp(a, b.astype(xp.int64, copy=False)).astype(a.dtype, copy=False)
        with np.errstate(over="ignore"):  # a huge 2^b is inf
            return (a * xp.exp2(b)).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        # ldexp again, not grad * exp2(b): exact for integer b, and differentiable in b
        # (double backward), since it is this op.
        return (None if sa is None else unbroadcast(Ldexp.apply(grad, b), sa),
                None if sb is None else unbroadcast(Ldexp.apply(grad * a, b) * math.log(2),
                                                    sb))

    @staticmethod
    def jvp(ctx, ta, tb):
        """ẏ = 2^b · ȧ + a · 2^b · ln 2 · ḃ."""
        _, b = ctx.primals
        (out,) = ctx.results
        return tangent_sum(out.shape, None if ta is None else Ldexp.apply(ta, b),
                           None if tb is None else tb * out * math.log(2))


def ldexp(input, other) -> Tensor:
    """``input · 2^other`` (``other`` need not be whole: 2^2.5 works). Two tensors;
    integers give the default float dtype, as in PyTorch; an integer ``other`` stays
    integer, so the scaling is exact."""
    _needs_tensor("ldexp", "input", input)
    _needs_tensor("ldexp", "other", other)
    a, b = float_operands(input, other)
    if other.dtype.np.kind in "iu":  # keep integer exponents whole: exact, no 2^b overflow
        a, b = input.to(a.dtype), other
    return Ldexp.apply(a, b)


class Frexp(Function):
    """x = mantissa · 2^exponent with |mantissa| in [0.5, 1) (0, inf and NaN keep their
    value, exponent 0).   d mantissa/dx = 2^-exponent; the exponent has no gradient."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        xp = xp_for(a)
        mantissa, exponent = xp.frexp(a)
        exponent = exponent.astype(xp.int32, copy=False)
        ctx.mark_non_differentiable(exponent)
        ctx.save_for_backward(xp.ldexp(xp.ones_like(a), -exponent))  # 2^-e, exact
        return mantissa, exponent

    @staticmethod
    def backward(ctx, grad, _grad_exponent):
        (scale,) = ctx.saved_tensors
        return grad * scale

    @staticmethod
    def jvp(ctx, ta, *_):
        """ṁ = 2^-e · ẋ (e is constant between powers of two)."""
        (scale,) = ctx.saved_tensors
        return ta * scale, None


def frexp(input) -> _FrexpResult:
    """``(mantissa, exponent)`` with input = mantissa · 2^exponent, |mantissa| in [0.5, 1)
    and an int32 exponent: a named tuple, like PyTorch's ``return_types.frexp``."""
    _needs_tensor("frexp", "input", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"frexp: only supports floating point tensors, got {input.dtype} with "
                        f"shape {tuple(input.shape)} (an integer is already its own mantissa "
                        "times 2^0). Fix: convert first with .float() or .double()")
    return _FrexpResult(*Frexp.apply(input))
