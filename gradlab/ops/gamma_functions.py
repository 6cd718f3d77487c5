"""The gamma family: lgamma, digamma, polygamma and mvlgamma, which NumPy lacks.

Each is computed in float64 on raw arrays and cast back. The family is one
chain of derivatives, so one idea covers all of it:

    d/dx lgamma(x) = ψ(x) = digamma(x) = polygamma(0, x)
    d/dx polygamma(n, x) = polygamma(n + 1, x)

and every backward is ``grad · polygamma(n + 1, x)``, itself an op of the
family: gradients of any order come for free.

How the values are computed (x >= 0.5; x < 0.5 by a reflection formula):

* lgamma: the Lanczos approximation (g = 7, 9 terms), except near its zeros
  at 1 and 2, where a Taylor series about 2 keeps the relative accuracy
  (its coefficients are ζ(k) - 1, computed once at import).
  Reflection: lgamma(x) = ln(π / |sin πx|) - lgamma(1 - x).
* polygamma(n, ·), n >= 0: the recurrence ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x + 1) - (-1)ⁿ n!/xⁿ⁺¹
  moves x up to >= 10 + n, where the asymptotic (Stirling) series with
  Bernoulli numbers is accurate to float64. Reflection, from
  ψ(1 - x) - ψ(x) = π cot πx differentiated n times:
  ψ⁽ⁿ⁾(x) = (-1)ⁿ ψ⁽ⁿ⁾(1 - x) - πⁿ⁺¹ Pₙ(cot πx), with P₀(c) = c and
  Pₖ₊₁(c) = -(1 + c²) Pₖ'(c).

Poles as in PyTorch: lgamma is +inf at 0 and the negative integers; digamma
is -inf at +0, +inf at -0 and NaN at the negative integers; polygamma(n ≥ 1)
is (-1)ⁿ⁺¹·inf there.
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .inplace import _unary_inplace
from .trigonometry import float_input

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "lgamma_", "digamma_"]
TENSOR_METHODS = ["lgamma", "digamma", "mvlgamma", "lgamma_", "digamma_",
                  ("polygamma", "_polygamma_method")]

_EULER_GAMMA = 0.5772156649015329
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)

# Lanczos: Γ(x) = √(2π) t^(x-½) e^(-t) A(x), t = x + g - ½, A(x) = c₀ + Σₖ cₖ/(x - 1 + k)
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)

# B₂, B₄, ..., B₁₆: the Bernoulli numbers of the asymptotic series
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _zeta_minus_one(k: int) -> float:
    """ζ(k) - 1 for k >= 2, by Euler-Maclaurin: Σ_{2<=j<N} j^-k plus the tail from N."""
    n = 10
    head = sum(j ** -k for j in range(2, n))
    tail = n ** (1 - k) / (k - 1) + n ** -k / 2
    rising = 1.0  # k (k+1) ... (k + 2i - 2), the derivatives of j^-k
    for i, b in enumerate(_BERNOULLI[:6], start=1):
        rising *= (k + 2 * i - 2) * (k + 2 * i - 3) if i > 1 else k
        tail += b / math.factorial(2 * i) * rising * n ** (-k - 2 * i + 1)
    return head + tail


# lgamma(2 + z) = (1 - γ) z + Σ_{k>=2} (-1)^k (ζ(k) - 1)/k · zᵏ, used for |z| <= 0.5
_TAYLOR_AT_2 = (1 - _EULER_GAMMA,) + tuple((-1) ** k * _zeta_minus_one(k) / k
                                            for k in range(2, 32))


def _lgamma_from_half(x):
    """lgamma for x >= 0.5 (float64 raw array)."""
    xp = xp_for(x)
    acc = xp.full_like(x, _LANCZOS[0])
    for k, c in enumerate(_LANCZOS[1:], start=1):
        acc = acc + c / (x + (k - 1))
    t = x + (_LANCZOS_G - 0.5)
    lanczos = _HALF_LOG_2PI + (x - 0.5) * xp.log(t) - t + xp.log(acc)
    # Near the zeros at 1 and 2 the Lanczos sum cancels: a series about 2 instead
    near_one = (x >= 0.8) & (x <= 1.2)
    z = xp.where(near_one, x - 1, x - 2)
    series = xp.zeros_like(x)
    for c in reversed(_TAYLOR_AT_2):
        series = (series + c) * z  # Horner: Σ cₖ z^k
    series = xp.where(near_one, series - xp.log1p(z), series)  # lgamma(1+z) = lgamma(2+z) - ln(1+z)
    return xp.where(near_one | ((x >= 1.5) & (x <= 2.5)), series, lanczos)


def _lgamma_array(a):
    """ln|Γ(x)| of a raw array, in float64, cast back to its dtype."""
    xp = xp_for(a)
    x = a.astype(xp.float64)
    low = x < 0.5
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        frac = x - xp.round(x)  # sin(πx) = ±sin(π·frac): no digits lost for large |x|
        reflected = (math.log(math.pi) - xp.log(xp.abs(xp.sin(math.pi * frac)))
                     - _lgamma_from_half(xp.where(low, 1 - x, 0.5)))
        out = xp.where(low, reflected, _lgamma_from_half(xp.where(low, 0.5, x)))
    out = xp.where(xp.isinf(x), xp.inf, out)
    return out.astype(a.dtype, copy=False)


def _cot_derivative(n: int, c, xp):
    """Pₙ(c): dⁿ/dθⁿ cot θ as a polynomial in c = cot θ (P₀ = c, Pₖ₊₁ = -(1 + c²) Pₖ')."""
    poly = np.array([0.0, 1.0])  # coefficients of c⁰, c¹, ...
    for _ in range(n):
        deriv = poly[1:] * np.arange(1, len(poly))
        poly = -(np.concatenate([deriv, [0.0, 0.0]]) + np.concatenate([[0.0, 0.0], deriv]))
    out = xp.zeros_like(c)
    for coef in poly[::-1]:
        out = out * c + coef
    return out


def _polygamma_from_half(n: int, x):
    """ψ⁽ⁿ⁾(x) for x >= 0.5 (float64 raw array): recurrence up to >= 10 + n, then the series."""
    xp = xp_for(x)
    target = 10.0 + n
    shift = xp.zeros_like(x)
    z = x
    for _ in range(int(target)):
        below = z < target
        shift = shift + xp.where(below, 1 / z ** (n + 1), 0.0)
        z = xp.where(below, z + 1, z)
    sign = 1.0 if n % 2 else -1.0  # (-1)ⁿ⁺¹
    inv2 = 1 / (z * z)
    if n == 0:
        tail = xp.zeros_like(z)
        for k in range(len(_BERNOULLI), 0, -1):
            tail = (tail + _BERNOULLI[k - 1] / (2 * k)) * inv2
        series = xp.log(z) - 0.5 / z - tail
    else:
        tail = xp.zeros_like(z)
        for k in range(len(_BERNOULLI), 0, -1):
            coef = _BERNOULLI[k - 1] * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
            tail = (tail + coef) * inv2
        series = sign * (math.factorial(n - 1) + math.factorial(n) / (2 * z) + tail) / z ** n
    return series + sign * math.factorial(n) * shift  # ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(z) - (-1)ⁿ n! Σ 1/xⱼⁿ⁺¹


def _polygamma_array(n: int, a):
    """ψ⁽ⁿ⁾ of a raw array, in float64, cast back to its dtype."""
    xp = xp_for(a)
    x = a.astype(xp.float64)
    low = x < 0.5
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        frac = x - xp.round(x)  # cot(πx) = cot(π·frac)
        pole = low & (frac == 0)
        upper = _polygamma_from_half(n, xp.where(low, 1 - x, x))
        cot = 1 / xp.tan(math.pi * frac)
        reflected = (-1) ** n * upper - math.pi ** (n + 1) * _cot_derivative(n, cot, xp)
        out = xp.where(low, reflected, upper)
        if n == 0:  # -inf at +0, +inf at -0, NaN at the negative integers
            out = xp.where(pole, xp.where(x == 0, xp.copysign(xp.inf, -x), xp.nan), out)
        else:
            out = xp.where(pole, (1.0 if n % 2 else -1.0) * xp.inf, out)
            out = xp.where(x == xp.inf, 0.0, out)
    return out.astype(a.dtype, copy=False)


class Polygamma(Function):
    """ψ⁽ⁿ⁾(x), the n-th derivative of digamma.   d/dx = ψ⁽ⁿ⁺¹⁾(x)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx._order = n
        return _polygamma_array(n, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * polygamma(ctx._order + 1, x), None


class Digamma(Function):
    """ψ(x) = d/dx ln Γ(x).   d/dx = ψ⁽¹⁾(x) = polygamma(1, x)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _polygamma_array(0, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * polygamma(1, x)


class Lgamma(Function):
    """ln|Γ(x)|.   d/dx = ψ(x) = digamma(x)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _lgamma_array(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * digamma(x)


def lgamma(input) -> Tensor:
    """ln|Γ(x)|: +inf at 0 and the negative integers, as in PyTorch."""
    return Lgamma.apply(float_input(input))


def digamma(input) -> Tensor:
    """ψ(x) = Γ'(x)/Γ(x): -inf at +0, NaN at the negative integers, as in PyTorch."""
    return Digamma.apply(float_input(input))


def polygamma(n: int, input) -> Tensor:
    """ψ⁽ⁿ⁾(x), the n-th derivative of digamma (n = 0 is digamma itself)."""
    if isinstance(n, bool) or not isinstance(n, Integral):
        raise TypeError(f"polygamma: n must be an int >= 0, got {n!r} of type {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"polygamma: n must be >= 0, got n = {n} (polygamma(n, x) is the "
                           f"n-th derivative of digamma; for ln Γ use lgamma)")
    n = int(n)
    if n == 0:
        return digamma(input)
    return Polygamma.apply(float_input(input), n)


def _polygamma_method(input, n: int) -> Tensor:
    """``x.polygamma(n)``: the Tensor method takes n after the tensor, as in PyTorch."""
    return polygamma(n, input)


def mvlgamma(input, p: int) -> Tensor:
    """The multivariate log-gamma ln Γ_p(x) = p(p-1)/4 · ln π + Σ_{j<p} lgamma(x - j/2).

    Defined for x > (p - 1)/2 (every term's argument positive); a composition of lgamma,
    so its derivative Σ_j ψ(x - j/2) comes with it.
    """
    if isinstance(p, bool) or not isinstance(p, Integral) or p < 1:
        raise RuntimeError(f"mvlgamma: p must be an int >= 1, got p = {p!r}")
    x = float_input(input)
    bound = (p - 1) / 2
    if x.numel() and bool((x <= bound).any()):  # (a NaN gives NaN, as PyTorch)
        raise RuntimeError(f"mvlgamma: all elements of input must be greater than (p - 1)/2 = "
                           f"{bound} for p = {p} (the smallest is {float(x.min())}); "
                           f"use a smaller p or shift the input")
    total = lgamma(x)
    for j in range(1, p):
        total = total + lgamma(x - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


lgamma_ = _unary_inplace(Lgamma, floats_only=True)
digamma_ = _unary_inplace(Digamma, floats_only=True)
