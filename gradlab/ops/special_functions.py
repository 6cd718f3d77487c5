"""entr, erfcx and log_ndtr (``torch.special``): formulas rewritten so that no digits are lost.

Each is a plain formula in math, but computed naively it overflows, underflows
or cancels long before its value does:

* ``entr(x) = -x ln x``, the summand of Shannon entropy, with its limit 0 at
  x = 0 written in (the naive 0·(-inf) is NaN) and -inf for x < 0 (no
  probability is negative).
* ``erfcx(x) = e^(x²) erfc(x)``, the scaled complementary error function:
  for large x, e^(x²) overflows and erfc underflows, but their product is
  ≈ 1/(x√π). For x >= 1 it is the continued fraction
  1/(√π (x + (1/2)/(x + 1/(x + (3/2)/...)))), with no exponential at all;
  below, e^(x²)·erfc(x) is safe; for x <= -1, erfcx(x) = 2e^(x²) - erfcx(-x).
* ``log_ndtr(x) = ln Φ(x)``, the log of the normal CDF: for x < 0,
  Φ(x) = ½ erfcx(t) e^(-t²) with t = -x/√2, so ln Φ = ln(½ erfcx(t)) - t²
  stays finite far past where Φ underflows (x = -40); for x >= 0,
  ln Φ = log1p(-½ erfc(x/√2)) keeps the tiny distance from 0 (erfc from erfcx).

Derivatives (written with the ops themselves, so higher ones come free):

    d/dx entr(x)     = -(ln x + 1)
    d/dx erfcx(x)    = 2x·erfcx(x) - 2/√π
    d/dx log_ndtr(x) = φ(x)/Φ(x) = √(2/π) / erfcx(-x/√2)
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .error_function import _erfc_array
from .trigonometry import float_input
from .unary import log

__all__: list[str] = []  # torch.special only: gradlab.special exports them
TENSOR_METHODS: list[str] = []

_SQRT_PI = math.sqrt(math.pi)
_SQRT_HALF = math.sqrt(0.5)
_FRACTION_DEPTH = 200  # continued-fraction terms: float64 accuracy for x >= 1 (60 at x >= 2)


def _erfcx_array(a):
    """e^(x²) erfc(x) of a raw array, computed in float64 and cast back."""
    xp = xp_for(a)
    x = a.astype(xp.float64)
    ax = xp.abs(x)
    tail = xp.maximum(ax, 1.0)  # the fraction only sees |x| >= 1, where it converges
    frac = tail
    for k in range(_FRACTION_DEPTH, 0, -1):
        frac = tail + (k / 2) / frac
    with np.errstate(over="ignore", invalid="ignore"):
        positive = 1 / (_SQRT_PI * frac)  # erfcx(|x|), |x| >= 1
        middle = xp.exp(x * x) * _erfc_array(xp.where(ax < 1, x, 0.0))  # erfc > 0.15: no loss
        negative = 2 * xp.exp(x * x) - positive  # erfc(-y) = 2 - erfc(y); inf below -26.6
    out = xp.where(ax < 1, middle, xp.where(x < 0, negative, positive))
    return out.astype(a.dtype, copy=False)


def _log_ndtr_array(a):
    """ln Φ(x) of a raw array, computed in float64 and cast back."""
    xp = xp_for(a)
    x = a.astype(xp.float64)
    t = -x * _SQRT_HALF
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        left = xp.log(_erfcx_array(xp.maximum(t, 0.0)) / 2) - t * t  # x <= 0
        y = xp.maximum(-t, 0.0)  # erfc y = erfcx(y) e^(-y²): no 1 - erf cancelling
        right = xp.log1p(-_erfcx_array(y) * xp.exp(-y * y) / 2)  # x >= 0
    return xp.where(x < 0, left, right).astype(a.dtype, copy=False)


def _entr_array(a):
    """-x ln x, 0 at x = 0, -inf for x < 0 (NaN stays NaN)."""
    xp = xp_for(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -a * xp.log(xp.where(a > 0, a, 1))
    out = xp.where(a == 0, 0, xp.where(a < 0, -xp.inf, out))
    return out.astype(a.dtype, copy=False)


class Entr(Function):
    """-x ln x.   d/dx = -(ln x + 1): +inf at 0, NaN below (as PyTorch)."""

    raw = True
    name, node_name = "special_entr", "SpecialEntrBackward0"
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _entr_array(a)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -(log(x) + 1)


class Erfcx(Function):
    """e^(x²) erfc(x).   d/dx = 2x·erfcx(x) - 2/√π."""

    raw = True
    name, node_name = "special_erfcx", "SpecialErfcxBackward0"
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _erfcx_array(a)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x * Erfcx.apply(x) * 2 - 2 / _SQRT_PI)


class LogNdtr(Function):
    """ln Φ(x).   d/dx = φ(x)/Φ(x) = √(2/π) / erfcx(-x/√2) (no 0/0 in either tail)."""

    raw = True
    name, node_name = "special_log_ndtr", "SpecialLogNdtrBackward0"
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _log_ndtr_array(a)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (math.sqrt(2 / math.pi) / Erfcx.apply(x * -_SQRT_HALF))


def entr(input: Tensor) -> Tensor:
    """The elementwise entropy term -x ln x: 0 at x = 0, -inf for x < 0.

    ``entr(p).sum()`` is the Shannon entropy H(p) of a distribution p, in nats.
    """
    return Entr.apply(float_input(input))


def erfcx(input: Tensor) -> Tensor:
    """The scaled complementary error function e^(x²)·erfc(x), finite where erfc underflows."""
    return Erfcx.apply(float_input(input))


def log_ndtr(input: Tensor) -> Tensor:
    """ln Φ(x), the log of the standard normal CDF, accurate in both tails (-inf only at -inf)."""
    return LogNdtr.apply(float_input(input))
