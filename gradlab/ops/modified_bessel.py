"""Modified Bessel functions I0, I1, K0, K1 and their exponentially scaled forms.

``torch.special`` names: i0e, i1e (differentiable), modified_bessel_i0/i1/k0/k1 and
scaled_modified_bessel_k0/k1 (no derivative in PyTorch: their outputs don't
require grad, and so it is here).

I_ν grows like eˣ/√(2πx) and K_ν decays like e⁻ˣ·√(π/(2x)), so for large x
they over/underflow long before the scaled forms do:

    i0e(x) = e^(-|x|) I0(x)        scaled_modified_bessel_k0(x) = eˣ K0(x)

I0 and I1 come from ``bessel.py`` (power series, then the asymptotic series
past |x| = 20), scaled here by e^(-|x|) (or, past 20, never multiplied by eˣ
at all). K0 and K1 (x > 0; NaN below, inf at 0) use three formulas:

* x <= 1: the series (Abramowitz & Stegun 9.6.13, 9.6.11) with the
  harmonic numbers H_k = 1 + 1/2 + ... + 1/k,
  K0 = -(ln(x/2) + γ) I0(x) + Σ_k H_k (x²/4)ᵏ/(k!)²,
  K1 = 1/x + ln(x/2) I1(x) - (x/4) Σ_k (2H_k + 1/(k+1) - 2γ) (x²/4)ᵏ/(k!(k+1)!).
* 1 < x <= 25: the integral eˣ K_ν(x) = ∫₀^∞ e^(-x(cosh t - 1)) cosh(νt) dt by the
  trapezoid rule. The integrand is smooth and decays doubly exponentially, so
  equal steps of 0.1 on [0, 4.6] already give float64 accuracy.
* x > 25: the asymptotic series eˣ K_ν(x) ≈ √(π/(2x)) Σ_k a_k(ν)/xᵏ, the same
  a_k(ν) as I_ν's but without alternating signs.

Derivatives (i0e, i1e):  with s = sign(x),
    d/dx i0e(x) = i1e(x) - s·i0e(x)
    d/dx i1e(x) = i0e(x) - i1e(x)/x - s·i1e(x)     (= 1/2 at x = 0)
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .bessel import _bessel_i
from .selection import where
from .trigonometry import float_input
from .unary import sign

__all__: list[str] = []  # torch.special only: gradlab.special exports them
TENSOR_METHODS: list[str] = []

_EULER_GAMMA = 0.5772156649015329
_I_SERIES_UP_TO = 20.0  # as in bessel.py
_K_SERIES_UP_TO = 1.0
_K_ASYMPTOTIC_FROM = 25.0
_K_STEP, _K_NODES = 0.1, 47  # trapezoid nodes t = 0, 0.1, ..., 4.6
_SERIES_TERMS = 25
_ASYMPTOTIC_TERMS = 25


def _asymptotic_sum(x, order: int, alternating: bool):
    """Σ_k (±1)ᵏ a_k(ν)/xᵏ, a_k(ν) = (4ν² - 1²)(4ν² - 3²)…(4ν² - (2k-1)²)/(k! 8ᵏ)."""
    xp = xp_for(x)
    mu = 4 * order * order
    term = xp.ones_like(x)
    total = term.copy()
    for k in range(1, _ASYMPTOTIC_TERMS):
        factor = (mu - (2 * k - 1) ** 2) / (8 * k)
        term = term * (-factor if alternating else factor) / x
        total += term
    return total


def _scaled_bessel_i(a, order: int):
    """e^(-|x|) I_order(x) for order 0 or 1, on a raw array, in float64 and cast back."""
    xp = xp_for(a)
    x = xp.abs(a.astype(xp.float64))
    small = xp.minimum(x, _I_SERIES_UP_TO)
    large = xp.maximum(x, _I_SERIES_UP_TO)
    series = _bessel_i(small, order) * xp.exp(-small)
    with np.errstate(invalid="ignore"):  # NaN at inf (the sum is inf/inf); 0 is right there
        asymptotic = _asymptotic_sum(large, order, alternating=True) / xp.sqrt(
            2 * math.pi * large)
    asymptotic = xp.where(large == xp.inf, 0.0, asymptotic)
    out = xp.where(x <= _I_SERIES_UP_TO, series, asymptotic)
    if order % 2:
        out = xp.where(a < 0, -out, out)  # I1 is odd
    return out.astype(a.dtype, copy=False)


def _k_series(x, order: int):
    """K_order(x) for 0 < x <= 1 from the power series (A&S 9.6.13 and 9.6.11)."""
    xp = xp_for(x)
    half = x / 2
    q = half * half
    log_half = xp.log(half)
    term = xp.ones_like(x) if order == 0 else half  # (x/2)^(2k+ν) / (k! (k+ν)!)
    bessel_i = term.copy()
    harmonic = 0.0
    if order == 0:
        tail = xp.zeros_like(x)  # Σ H_k qᵏ/(k!)²
    else:
        tail = term * (1 - 2 * _EULER_GAMMA)  # ψ(k+1) + ψ(k+2) = 2H_k + 1/(k+1) - 2γ
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        harmonic += 1 / k
        bessel_i += term
        tail += term * (harmonic if order == 0 else 2 * harmonic + 1 / (k + 1) - 2 * _EULER_GAMMA)
    if order == 0:
        return -(log_half + _EULER_GAMMA) * bessel_i + tail
    return 1 / x + log_half * bessel_i - tail / 2


def _k_integral(x, order: int):
    """eˣ K_order(x) by the trapezoid rule on ∫₀^∞ e^(-x(cosh t - 1)) cosh(νt) dt."""
    xp = xp_for(x)
    total = xp.full_like(x, 0.5)  # the node t = 0, half weight: e⁰ cosh 0 = 1
    for j in range(1, _K_NODES):
        t = j * _K_STEP
        lift = 2 * math.sinh(t / 2) ** 2  # cosh t - 1 without cancelling near 0
        total += xp.exp(-x * lift) * math.cosh(order * t)
    return total * _K_STEP


def _scaled_bessel_k(a, order: int):
    """eˣ K_order(x) on a raw array, in float64 and cast back: inf at 0, NaN for x < 0."""
    xp = xp_for(a)
    x = a.astype(xp.float64)
    safe = xp.where(x > 0, x, 1.0)  # x <= 0 and NaN: each formula sees 1 and is overwritten
    small = xp.minimum(safe, _K_SERIES_UP_TO)
    middle = xp.clip(safe, _K_SERIES_UP_TO, _K_ASYMPTOTIC_FROM)
    large = xp.maximum(safe, _K_ASYMPTOTIC_FROM)
    with np.errstate(invalid="ignore", over="ignore"):
        series = _k_series(small, order) * xp.exp(small)
        asymptotic = _asymptotic_sum(large, order, alternating=False) * xp.sqrt(
            math.pi / (2 * large))
    asymptotic = xp.where(large == xp.inf, 0.0, asymptotic)
    out = xp.where(safe <= _K_SERIES_UP_TO, series, xp.where(
        safe <= _K_ASYMPTOTIC_FROM, _k_integral(middle, order), asymptotic))
    out = xp.where(x == 0, xp.inf, xp.where((x < 0) | xp.isnan(x), xp.nan, out))
    return out.astype(a.dtype, copy=False)


def _bessel_k(a, order: int):
    """K_order(x) = e^(-x) · eˣ K_order(x); underflows to 0 past x ≈ 705."""
    xp = xp_for(a)
    x = a.astype(xp.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        out = _scaled_bessel_k(x, order) * xp.exp(-xp.where(x > 0, x, 0.0))
    return out.astype(a.dtype, copy=False)


class I0e(Function):
    """e^(-|x|) I0(x).   d/dx = i1e(x) - sign(x)·i0e(x)."""

    raw = True
    name, node_name = "special_i0e", "SpecialI0EBackward0"
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _scaled_bessel_i(a, 0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (I1e.apply(x) - sign(x) * I0e.apply(x))


class I1e(Function):
    """e^(-|x|) I1(x).   d/dx = i0e(x) - i1e(x)/x - sign(x)·i1e(x), 1/2 at x = 0."""

    raw = True
    name, node_name = "special_i1e", "SpecialI1EBackward0"
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _scaled_bessel_i(a, 1)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        at_zero = x == 0
        safe = where(at_zero, 1.0, x)  # no 0/0 in the branch where doesn't pick
        scaled = I1e.apply(safe)
        return grad * where(at_zero, 0.5, I0e.apply(safe) - scaled / safe - sign(safe) * scaled)


class _NoDerivative(Function):
    """An op PyTorch gives no derivative: its output never requires grad."""

    raw = True
    differentiable = False
    order = 0

    @classmethod
    def forward(cls, ctx, a):
        return cls.compute(a, cls.order)


class ModifiedBesselI0(_NoDerivative):
    name = "special_modified_bessel_i0"
    compute = staticmethod(_bessel_i)


class ModifiedBesselI1(ModifiedBesselI0):
    name, order = "special_modified_bessel_i1", 1


class ModifiedBesselK0(_NoDerivative):
    name = "special_modified_bessel_k0"
    compute = staticmethod(_bessel_k)


class ModifiedBesselK1(ModifiedBesselK0):
    name, order = "special_modified_bessel_k1", 1


class ScaledModifiedBesselK0(_NoDerivative):
    name = "special_scaled_modified_bessel_k0"
    compute = staticmethod(_scaled_bessel_k)


class ScaledModifiedBesselK1(ScaledModifiedBesselK0):
    name, order = "special_scaled_modified_bessel_k1", 1


def i0e(input: Tensor) -> Tensor:
    """e^(-|x|) I0(x): I0 without its exponential growth, finite for every x (0 at ±inf)."""
    return I0e.apply(float_input(input))


def i1e(input: Tensor) -> Tensor:
    """e^(-|x|) I1(x): odd, 0 at 0 and at ±inf."""
    return I1e.apply(float_input(input))


def modified_bessel_i0(input: Tensor) -> Tensor:
    """I0(x), as ``i0`` but with no derivative (as PyTorch: the output doesn't require grad)."""
    return ModifiedBesselI0.apply(float_input(input))


def modified_bessel_i1(input: Tensor) -> Tensor:
    """I1(x), as ``special.i1`` but with no derivative (as in PyTorch)."""
    return ModifiedBesselI1.apply(float_input(input))


def modified_bessel_k0(input: Tensor) -> Tensor:
    """K0(x), the decaying solution of x²y'' + xy' - x²y = 0: inf at 0, NaN for x < 0.
    No derivative (as in PyTorch)."""
    return ModifiedBesselK0.apply(float_input(input))


def modified_bessel_k1(input: Tensor) -> Tensor:
    """K1(x) (order 1): ~1/x at 0, NaN for x < 0. No derivative (as in PyTorch)."""
    return ModifiedBesselK1.apply(float_input(input))


def scaled_modified_bessel_k0(input: Tensor) -> Tensor:
    """eˣ K0(x), ~√(π/(2x)) for large x where K0 itself underflows. No derivative."""
    return ScaledModifiedBesselK0.apply(float_input(input))


def scaled_modified_bessel_k1(input: Tensor) -> Tensor:
    """eˣ K1(x), ~√(π/(2x)) for large x where K1 itself underflows. No derivative."""
    return ScaledModifiedBesselK1.apply(float_input(input))
