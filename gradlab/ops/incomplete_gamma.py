"""The regularized incomplete gamma functions: igamma (special.gammainc) and igammac.

    P(a, x) = γ(a, x)/Γ(a) = 1/Γ(a) ∫₀ˣ t^(a-1) e^(-t) dt       (igamma, gammainc)
    Q(a, x) = 1 - P(a, x)  = 1/Γ(a) ∫ₓ^∞ t^(a-1) e^(-t) dt      (igammac, gammaincc)

P is the CDF of the Gamma(a, 1) distribution (and of χ² with 2a degrees of
freedom at 2x). Both are computed in float64 and cast back. Each value comes
from whichever of P or Q is the smaller, so that 1 - (the other) never
cancels, by three formulas (Numerical Recipes' split, plus a third series):

* x < a + 1: the series P = xᵃe⁻ˣ/Γ(a+1) · Σₙ xⁿ/((a+1)(a+2)…(a+n)).
* x >= a + 1: the continued fraction
  Q = xᵃe⁻ˣ/Γ(a) · 1/(x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - …))),
  by the modified Lentz method.
* small x and a (x < 1.1, a below a bound, where Q is the small one):
  Q = -expm1(a ln x - ln Γ(1+a)) - xᵃ/Γ(1+a) · a Σ_{n>=1} (-x)ⁿ/(n!(a+n)),
  with ln Γ(1+a) from its Taylor series so that a tiny a keeps its digits.

The series and the fraction need about √a terms near x = a, so they run
until every element has converged (up to 5,000 terms: a up to ~10⁵).
For a >= 20 the factor xᵃe⁻ˣ/Γ(a+1) is computed as
exp(a·(ln(1+d) - d) - c(a))/√(2πa), d = (x - a)/a, with Stirling's
correction c(a), instead of from three large logs that cancel.

Edges as PyTorch (Cephes): NaN for a < 0 or x < 0; P(0, x > 0) = 1; P(a, 0) = 0;
P(inf, x) = 0 (NaN at x = inf); P(a, inf) = 1.

Derivatives: PyTorch defines only d/dx (d/da raises there, and here):
    ∂P/∂x = x^(a-1) e⁻ˣ / Γ(a) = exp((a - 1) ln x - x - lgamma(a)),   ∂Q/∂x = -∂P/∂x.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import check_float, promote, tangent_sum, unbroadcast, xp_for
from .gamma_functions import _TAYLOR_AT_2, _lgamma_array, lgamma
from .unary import exp, log

__all__ = ["igamma", "igammac"]
TENSOR_METHODS = ["igamma", "igammac"]

_EPS = 1e-16
_RATIO_EPS = 4.5e-16  # a step ratio converged: 1 within two ulps (one ulp at 1 is 2.2e-16,
# so |delta - 1| <= 1e-16 would wait for an exact 1 and run all the terms)
_MAX_TERMS = 5000
_CHECK_EVERY = 8  # convergence is tested every few terms (a test is a sync on a GPU)
_TINY = 1e-300
_STIRLING_FROM = 20.0
# B₂ⱼ/(2j(2j-1)): ln Γ(a+1) = a ln a - a + ½ ln(2πa) + Σⱼ these / a^(2j-1)
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360)


def _lgamma1p(a):
    """ln Γ(1 + a) for 0 <= a <= 0.5: ln Γ(2 + a) - ln(1 + a), both series in a itself."""
    xp = xp_for(a)
    series = xp.zeros_like(a)
    for c in reversed(_TAYLOR_AT_2):
        series = (series + c) * a
    return series - xp.log1p(a)


def _log1pmx(x, a):
    """ln(1 + d) - d for d = (x - a)/a: by its series for |d| < 0.5 (where log1p(d) - d
    would cancel), else as ln(x/a) - d (1 + d itself would lose x's digits if x << a)."""
    xp = xp_for(x)
    d = (x - a) / a
    small = xp.clip(d, -0.5, 0.5)
    series = xp.zeros_like(d)
    for k in range(60, 1, -1):  # Σ_{k>=2} (-1)^(k+1) dᵏ/k
        series = (series + (1.0 if k % 2 else -1.0) / k) * small
    series = series * small
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = xp.log(x / a) - d
    return xp.where(xp.abs(d) < 0.5, series, direct)


def _power_factor(a, x):
    """xᵃ e⁻ˣ / Γ(a + 1) for a > 0, x > 0 (finite)."""
    xp = xp_for(a)
    big = a >= _STIRLING_FROM
    ab = xp.where(big, a, _STIRLING_FROM)
    correction = xp.zeros_like(ab)
    for c in reversed(_STIRLING):
        correction = (correction + c) / (ab * ab)
    correction = correction * ab  # Σⱼ cⱼ / a^(2j-1)
    stirling = xp.exp(ab * _log1pmx(x, ab) - correction) / xp.sqrt(2 * math.pi * ab)
    small = xp.where(big, 1.0, a)
    log_gamma = xp.where(small <= 0.5, _lgamma1p(xp.minimum(small, 0.5)),
                         _lgamma_array(small + 1))
    direct = xp.exp(small * xp.log(x) - x - log_gamma)
    return xp.where(big, stirling, direct)


def _until_converged(xp, step, state, active):
    """Run ``step(state, n) -> (state, converged)`` for n = 1, 2, ... until all ``active``
    elements have converged (checked every few terms) or _MAX_TERMS is reached."""
    for n in range(1, _MAX_TERMS + 1):
        state, converged = step(state, n)
        if n % _CHECK_EVERY == 0 and not bool(xp.any(active & ~converged)):
            break
    return state


def _lower_series(a, x, active):
    """Σₙ xⁿ/((a+1)…(a+n)), the series of P without its factor."""
    xp = xp_for(a)

    def step(state, n):
        term, total = state
        term = term * x / (a + n)
        total = total + term
        return (term, total), term <= _EPS * total

    return _until_converged(xp, step, (xp.ones_like(a), xp.ones_like(a)), active)[1]


def _upper_fraction(a, x, active):
    """The continued fraction of Q (modified Lentz), without the factor xᵃe⁻ˣ/Γ(a)."""
    xp = xp_for(a)
    b = x + 1 - a
    b = xp.where(xp.abs(b) < _TINY, _TINY, b)
    d = 1 / b

    def step(state, n):
        b, c, d, h = state
        an = -n * (n - a)
        b = b + 2
        d = an * d + b
        d = 1 / xp.where(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < _TINY, _TINY, c)
        delta = c * d
        return (b, c, d, h * delta), xp.abs(delta - 1) <= _RATIO_EPS

    return _until_converged(xp, step, (b, xp.full_like(a, 1 / _TINY), d, d), active)[3]


def _small_x_upper(a, x):
    """Q for x < 1.1 and small a: -expm1(a ln x - ln Γ(1+a)) - xᵃ/Γ(1+a) · a Σₙ (-x)ⁿ/(n!(a+n))."""
    xp = xp_for(a)
    log_gamma = xp.where(a <= 0.5, _lgamma1p(xp.minimum(a, 0.5)), _lgamma_array(a + 1))
    power = a * xp.log(x) - log_gamma
    total = xp.zeros_like(a)
    term = xp.ones_like(a)
    for n in range(1, 30):  # xⁿ/n! < 1e-20 by n = 30 for x < 1.1
        term = term * -x / n
        total = total + term / (a + n)
    return -xp.expm1(power) - xp.exp(power) * a * total


def _incomplete_gamma(a_raw, x_raw, upper: bool):
    """P(a, x) (``upper=False``) or Q(a, x) on raw arrays, in float64, cast back."""
    xp = xp_for(a_raw)
    a, x = xp.broadcast_arrays(a_raw.astype(xp.float64), x_raw.astype(xp.float64))
    regular = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    sa, sx = xp.where(regular, a, 1.0), xp.where(regular, x, 1.0)  # others: see the end
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        log_x = xp.log(sx)
        small_q = (sx < 1.1) & xp.where(sx < 0.5, sa * log_x > -0.4, sa < 1.1 * sx)
        use_fraction = (sx >= sa + 1) & ~small_q
        factor = _power_factor(sa, sx)
        fx = xp.where(use_fraction, sx, sa + 2)  # each formula runs only where it is used
        q_fraction = factor * sa * _upper_fraction(sa, fx, regular & use_fraction)
        p_series = factor * _lower_series(sa, xp.where(use_fraction, 0.5 * sa, sx),
                                          regular & ~use_fraction)
        q_small = _small_x_upper(sa, xp.where(small_q, sx, 0.5))
        q = xp.where(small_q, q_small, xp.where(use_fraction, q_fraction, 1 - p_series))
        p = xp.where(small_q, 1 - q_small, xp.where(use_fraction, 1 - q_fraction, p_series))
    out = q if upper else p
    # The edges, lowest precedence first (each later rule overrides the earlier ones)
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)  # P's values at x = 0 and x = inf
    out = xp.where(xp.isnan(a) | xp.isnan(x), xp.nan, out)
    out = xp.where(x == xp.inf, hi, out)
    out = xp.where(a == xp.inf, xp.where(x == xp.inf, xp.nan, lo), out)
    out = xp.where(x == 0, lo, out)
    out = xp.where(a == 0, xp.where(x > 0, hi, xp.nan), out)
    out = xp.where((x < 0) | (a < 0), xp.nan, out)
    return out.astype(a_raw.dtype, copy=False)


def _no_input_derivative(op: str) -> RuntimeError:
    return RuntimeError(
        f"the derivative for '{op}: input' is not implemented: {op}(a, x) is differentiable "
        f"only in x (the second argument), as in PyTorch. Fix: pass a without "
        f"requires_grad (a.detach()), or write d/da yourself")


def _x_derivative(a, x):
    """∂P/∂x = x^(a-1) e⁻ˣ / Γ(a), as a tensor expression (so it is differentiable in x)."""
    return exp((a - 1) * log(x) - x - lgamma(a))


class Igamma(Function):
    """P(a, x).   ∂/∂x = x^(a-1) e⁻ˣ/Γ(a); ∂/∂a not implemented (as PyTorch)."""

    raw = True
    sign = 1.0

    @classmethod
    def forward(cls, ctx, a, x):
        ctx.save_for_backward(a, x)
        return _incomplete_gamma(a, x, upper=cls.sign < 0)

    @classmethod
    def backward(cls, ctx, grad):
        a, x = ctx.saved_tensors
        shape_a, shape_x = ctx.input_shapes
        if shape_a is not None:
            raise _no_input_derivative(cls.name)
        if shape_x is None:
            return None, None
        return None, unbroadcast(grad * _x_derivative(a, x) * cls.sign, shape_x)

    @classmethod
    def jvp(cls, ctx, ta, tx):
        if ta is not None:
            raise _no_input_derivative(cls.name)
        a, x = ctx.primals
        return tangent_sum(ctx.results[0].shape, tx * _x_derivative(a, x) * cls.sign)


class Igammac(Igamma):
    """Q(a, x) = 1 - P(a, x).   ∂/∂x = -x^(a-1) e⁻ˣ/Γ(a)."""

    sign = -1.0


def _operands(op: str, input, other):
    for name, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not "
                            f"{type(value).__name__}. Fix: gradlab.tensor({value!r})")
    a, x = promote(input, other)
    check_float(op, a)
    return a, x


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function P(a = input, x = other).

    Differentiable in ``other`` only: ∂P/∂x = x^(a-1) e⁻ˣ/Γ(a).
    """
    return Igamma.apply(*_operands("igamma", input, other))


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function Q(a = input, x = other) = 1 - P.

    Differentiable in ``other`` only: ∂Q/∂x = -x^(a-1) e⁻ˣ/Γ(a).
    """
    return Igammac.apply(*_operands("igammac", input, other))


def gammainc(input: Tensor, other: Tensor) -> Tensor:
    """``special.gammainc``: P(a, x), the same function as ``igamma``."""
    return Igamma.apply(*_operands("special.gammainc", input, other))


def gammaincc(input: Tensor, other: Tensor) -> Tensor:
    """``special.gammaincc``: Q(a, x) = 1 - P(a, x), the same function as ``igammac``."""
    return Igammac.apply(*_operands("special.gammaincc", input, other))
