"""erfc and erfinv: the error function's complement and inverse, which NumPy lacks.

Both are computed in float64 and cast back: erfc from the series ``erf``
uses where that is accurate and from a continued fraction in the tail (no
cancellation where erfc is tiny); erfinv by Halley's method on erf, from a
closed-form first guess. Their derivatives are closed forms of their own
outputs (see each Function).
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .activation import _erf_array
from .inplace import _unary_inplace
from .trigonometry import float_input
from .unary import exp

__all__ = ["erfc", "erfinv", "erfc_"]
TENSOR_METHODS = list(__all__) + ["erfinv_"]

_SQRT_PI = math.sqrt(math.pi)
_ERFC_DEPTH = 40  # continued-fraction terms: ~2e-16 for |x| >= 2


def _erfc_array(x):
    """erfc x = 1 - erf x, accurate also where it is tiny (x >> 1), on a raw array.

    For |x| < 2, 1 - erf(|x|) (at most ~0.995 cancels). For |x| >= 2 the
    continued fraction erfc(x) = e^(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/...)))
    directly, so no cancellation. erfc(-x) = 2 - erfc(x).
    """
    xp = xp_for(x)
    work = x.astype(xp.float64)  # float32's tail is subnormal near x = 10: round it once
    a = xp.abs(work)
    tail = xp.maximum(a, 2.0)  # the fraction is only used (and only accurate) for |x| >= 2
    frac = tail
    for k in range(_ERFC_DEPTH, 0, -1):
        frac = tail + (k / 2) / frac
    with np.errstate(over="ignore", invalid="ignore"):
        upper = xp.exp(-tail * tail) / (_SQRT_PI * frac)
    positive_half = xp.where(a < 2, 1 - _erf_array(a), upper)
    return xp.where(work < 0, 2 - positive_half, positive_half).astype(x.dtype, copy=False)


class Erfc(Function):
    """erfc x = 1 - erf x = 2/√π ∫ₓ^∞ e^(-t²) dt.   d/dx = -2/√π · e^(-x²)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _erfc_array(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (exp(-(x * x)) * (-2 / _SQRT_PI))


_WINITZKI = 0.147  # erfinv y ≈ √(√(c² - L/k) - c), c = 2/(πk) + L/2, L = ln(1 - y²): ~2e-3


def _erfinv_array(y):
    """erfinv of a raw array, in float64: a closed-form first guess, then Halley's method.

    Halley's step for f(x) = erf x - y, with f'' = -2x·f', is x ← x - u/(1 + x·u),
    u = f/f'; each step triples the correct digits, so 3 steps take the ~2e-3
    guess to float64 precision. Near y = 1, f is computed as (1 - y) - erfc x,
    which keeps its digits (1 - y is exact there).
    """
    xp = xp_for(y)
    work = y.astype(xp.float64)
    a = xp.abs(work)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_term = xp.where(a < 0.5, xp.log1p(-a * a), xp.log((1 - a) * (1 + a)))
        c = 2 / (math.pi * _WINITZKI) + log_term / 2
        root = xp.sqrt(c * c - log_term / _WINITZKI)
        # root - c, rearranged where c > 0 so that it doesn't cancel for small y
        gap = xp.where(c > 0, (-log_term / _WINITZKI) / (root + c), root - c)
        x = xp.sqrt(gap)
        for _ in range(3):
            residual = xp.where(a < 0.5, _erf_array(x) - a, (1 - a) - _erfc_array(x))
            u = residual / (2 / _SQRT_PI * xp.exp(-x * x))
            x = x - u / (1 + x * u)
    x = xp.where(a == 1, xp.inf, x)  # erfinv(±1) = ±inf; |y| > 1 is NaN already
    return xp.copysign(x, work).astype(y.dtype, copy=False)


class Erfinv(Function):
    """The inverse of erf on (-1, 1).   d/dy = √π/2 · e^(erfinv(y)²) (the output, saved)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, y):
        out = _erfinv_array(y)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (exp(out * out) * (_SQRT_PI / 2))


def erfc(input) -> Tensor:
    """The complementary error function 1 - erf(x), accurate where it is tiny."""
    return Erfc.apply(float_input(input))


def erfinv(input) -> Tensor:
    """The inverse error function: erf(erfinv(y)) = y on (-1, 1); ±inf at ±1."""
    return Erfinv.apply(float_input(input))


erfc_ = _unary_inplace(Erfc, floats_only=True)
erfinv_ = _unary_inplace(Erfinv, floats_only=True)
