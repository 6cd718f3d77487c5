"""Modified Bessel functions of the first kind: i0 (``torch.i0``) and i1 (``special.i1``).

I_ν solves x² y'' + x y' - (x² + ν²) y = 0; I0 appears in the von Mises
distribution and the Kaiser window. Neither NumPy nor CuPy has I1 and both
lack a ufunc for I0, so they are computed here, in float64, from two
classic formulas that meet at |x| = 20:

* |x| <= 20, the power series  I_ν(x) = Σ_k (x/2)^(2k+ν) / (k! (k+ν)!).
  Every term is positive, so nothing cancels; 55 terms reach double
  precision (the terms peak near k = |x|/2 and then fall fast).
* |x| > 20, the asymptotic series
  I_ν(x) ≈ eˣ/√(2πx) · Σ_k (-1)^k a_k(ν) / x^k,
  a_k(ν) = (4ν² - 1²)(4ν² - 3²)…(4ν² - (2k-1)²) / (k! 8^k), 25 terms.

I0 is even and I1 odd, so both are computed at |x|. Like PyTorch (Cephes),
they overflow to inf just past |x| = 709 and give NaN at ±inf.

Derivatives:  I0'(x) = I1(x);   I1'(x) = I0(x) - I1(x)/x  (= 1/2 at x = 0).
So the backward of each is written with the other, and higher derivatives
come for free.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .selection import where

__all__ = ["i0"]
TENSOR_METHODS = ["i0"]

_SERIES_UP_TO = 20.0
_SERIES_TERMS = 55
_ASYMPTOTIC_TERMS = 25


def _bessel_i(a, order: int):
    """I_order(a) for order 0 or 1, on a raw array, computed in float64."""
    xp = xp_for(a)
    x = xp.abs(a.astype(xp.float64))
    small = xp.minimum(x, _SERIES_UP_TO)  # each formula only sees the values it is good for
    large = xp.maximum(x, _SERIES_UP_TO)
    # The power series: term_k = term_{k-1} · (x/2)² / (k (k + ν)).
    half = small / 2
    quarter = half * half
    term = half ** order
    series = term.copy()
    for k in range(1, _SERIES_TERMS):
        term = term * quarter / (k * (k + order))
        series += term
    # The asymptotic series: term_k = -term_{k-1} · (4ν² - (2k-1)²) / (8 k x).
    mu = 4 * order * order
    term = xp.ones_like(large)
    asymptotic = term.copy()
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = term * (-(mu - (2 * k - 1) ** 2) / (8 * k)) / large
        asymptotic += term
    with np.errstate(over="ignore", invalid="ignore"):  # inf past 709 and NaN at inf: Cephes's
        asymptotic = xp.exp(large) / xp.sqrt(2 * math.pi * large) * asymptotic
    out = xp.where(x <= _SERIES_UP_TO, series, asymptotic)
    if order % 2:
        out = xp.where(a < 0, -out, out)  # I1 is odd
    return out.astype(a.dtype, copy=False)


class I0(Function):
    """I0(x).   d/dx = I1(x)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _bessel_i(a, 0)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * I1.apply(a)


class I1(Function):
    """I1(x).   d/dx = I0(x) - I1(x)/x, which is 1/2 at x = 0."""

    raw = True
    name, node_name = "special_i1", "SpecialI1Backward0"
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _bessel_i(a, 1)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        at_zero = a == 0
        safe = where(at_zero, 1.0, a)  # no 0/0 in the branch where doesn't pick (its gradient)
        return grad * where(at_zero, 0.5, I0.apply(safe) - I1.apply(safe) / safe)


def _float_input(op: str, input) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}. Fix: "
                        f"gradlab.tensor(...) first")
    if input.dtype.category < 2:  # bool and integers: as PyTorch, i0 of integers is a float
        return input.to(_dt.get_default_dtype())
    return input


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0: Σ_k (x/2)^(2k) / (k!)².

    Even, 1 at x = 0, growing like eˣ/√(2πx). d/dx I0 = I1 (``special.i1``).
    """
    return I0.apply(_float_input("i0", input))


def i1(input: Tensor) -> Tensor:
    """``special.i1``: the modified Bessel function of the first kind, order 1:
    Σ_k (x/2)^(2k+1) / (k! (k+1)!). Odd, with slope 1/2 at 0. d/dx = I0 - I1/x."""
    return I1.apply(_float_input("special.i1", input))
