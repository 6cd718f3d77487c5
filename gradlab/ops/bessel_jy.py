"""Bessel functions of the first and second kind, J0, J1, Y0, Y1, with spherical j0 and Airy Ai.

``torch.special`` names: bessel_j0, bessel_j1, bessel_y0, bessel_y1,
spherical_bessel_j0, airy_ai. PyTorch gives none of them a derivative (their
outputs don't require grad), and neither does gradlab.

J_ν and Y_ν solve x²y'' + xy' + (x² - ν²)y = 0: J_ν is finite at 0, Y_ν has a
log (ν = 0) or a pole (ν = 1) there; both oscillate like damped cosines. Two
formulas cover x >= 0 (J0 is even, J1 odd; Y is NaN for x < 0, -inf at 0):

* x <= 20: the power series (Abramowitz & Stegun 9.1.10, 9.1.11), with
  q = x²/4, H_k = 1 + 1/2 + ... + 1/k and γ Euler's constant,
      J0 = Σ (-q)ᵏ/(k!)²                  J1 = (x/2) Σ (-q)ᵏ/(k!(k+1)!)
      Y0 = (2/π)[(ln(x/2) + γ) J0 - Σ H_k (-q)ᵏ/(k!)²]
      Y1 = -2/(πx) + (2/π)(ln(x/2) + γ) J1 - (x/2π) Σ (H_k + H_{k+1}) (-q)ᵏ/(k!(k+1)!)
  Its terms reach 10⁷ at x = 20 and cancel down to ~0.1, so the sums run in
  double-double arithmetic (``_double_double.py``): ~32 digits, 24 kept.
* x > 20: Hankel's asymptotic expansion (A&S 9.2.5-9.2.10), with χ = x - (2ν+1)π/4,
      J_ν = √(2/(πx)) (P cos χ - Q sin χ)      Y_ν = √(2/(πx)) (P sin χ + Q cos χ)
      P = Σ (-1)ᵏ a_2k/x²ᵏ,  Q = Σ (-1)ᵏ a_(2k+1)/x^(2k+1),
      a_k = (4ν² - 1²)(4ν² - 3²)…(4ν² - (2k-1)²)/(k! 8ᵏ);
  30 terms, all still shrinking at x = 20, the smallest ~e^(-2x). cos χ and
  sin χ come from cos x and sin x (cos(x - π/4) = (cos x + sin x)/√2), which
  NumPy reduces exactly for any x; PyTorch rounds x - π/4 first, so past
  x ~ 10⁴ its phase, and its values near the zeros, drift (gradlab agrees
  with mpmath there; see the tests).

spherical_bessel_j0(x) = sin(x)/x, by its Taylor series below |x| = 0.5.

airy_ai(x) = Ai(x), the solution of y'' = xy that decays as x -> +∞, with
ζ = (2/3)|x|^(3/2):

* |x| <= 9: the Maclaurin series Ai = Ai(0) f(x) + Ai'(0) g(x),
  f = Σ 3ᵏ(1/3)_k x³ᵏ/(3k)!, g = Σ 3ᵏ(2/3)_k x^(3k+1)/(3k+1)!, in
  double-double (f and g grow like e^ζ while Ai shrinks like e^(-ζ)).
* x > 9: Ai ≈ e^(-ζ)/(2√π x^(1/4)) Σ (-1)ᵏ u_k/ζᵏ (A&S 10.4.59), and
  x < -9: Ai ≈ (cos(ζ - π/4) Σ (-1)ᵏ u_2k/ζ²ᵏ + sin(ζ - π/4) Σ (-1)ᵏ u_(2k+1)/ζ^(2k+1))
  /(√π |x|^(1/4)) (A&S 10.4.60), u_k = (2k+1)(2k+3)…(6k-1)/(216ᵏ k!), with ζ
  itself in double-double so the phase stays right for large |x|.

PyTorch's own values drift by up to ~1e-6 (of the amplitude) for 2 < x < 25
(J, Y) and -4.5 < x < -2.09 (Ai); gradlab's agree with mpmath to ~1e-15 there.

Edges as PyTorch: J, Y and Ai are NaN at ±inf (the limits are 0, but
PyTorch's cos(inf) makes NaN and gradlab keeps its answers); spherical j0 is
0 there. All are computed in float64 and cast back.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..tensor import Tensor
from ._double_double import dd, dd_add, dd_constant, dd_mul, dd_polynomial, dd_value, two_prod
from ._util import xp_for
from .modified_bessel import _NoDerivative
from .trigonometry import float_input

__all__: list[str] = []  # torch.special only: gradlab.special exports them
TENSOR_METHODS: list[str] = []

_SERIES_UP_TO = 20.0
_SERIES_TERMS = 45  # (x²/4)ᵏ/(k!)² < 1e-22 at x = 20
_HANKEL_TERMS = 30
_AIRY_SERIES_UP_TO = 9.0
_AIRY_SERIES_TERMS = 60
_AIRY_ASYMPTOTIC_TERMS = 20
_AIRY_UNDERFLOWS = 110.0  # Ai(110) ~ 1e-335: below the smallest float64
_EULER_GAMMA = 0.5772156649015329
_AIRY_AI_0 = (0.3550280538878172, 2.05233632436212e-17)  # Ai(0) = 1/(3^(2/3) Γ(2/3))
_AIRY_AI_PRIME_0 = (-0.2588194037928068, 2.522243111610832e-17)  # Ai'(0) = -1/(3^(1/3) Γ(1/3))
_QUARTER_PI = (math.pi / 4, 3.061616997868383e-17)
_TWO_THIRDS = dd_constant(Fraction(2, 3))


def _series_coefficients():
    """Double-double coefficients of the four power series in q = x²/4 (see above)."""
    factorial, harmonic = [1], [Fraction(0)]
    for k in range(1, _SERIES_TERMS + 2):
        factorial.append(factorial[-1] * k)
        harmonic.append(harmonic[-1] + Fraction(1, k))
    j0, j1, y0, y1 = [], [], [], []
    for k in range(_SERIES_TERMS):
        sign = (-1) ** k
        j0.append(dd_constant(Fraction(sign, factorial[k] ** 2)))
        j1.append(dd_constant(Fraction(sign, factorial[k] * factorial[k + 1])))
        y0.append(dd_constant(-sign * harmonic[k] / factorial[k] ** 2))
        y1.append(dd_constant(sign * (harmonic[k] + harmonic[k + 1])
                              / (factorial[k] * factorial[k + 1])))
    return {"j0": j0, "j1": j1, "y0": y0, "y1": y1}


def _airy_coefficients():
    """f_k = 1·4·…·(3k-2)/(3k)! and g_k = 2·5·…·(3k-1)/(3k+1)!, as double-doubles."""
    f, g = [], []
    rising_f = rising_g = Fraction(1)
    for k in range(_AIRY_SERIES_TERMS):
        f.append(dd_constant(rising_f / math.factorial(3 * k)))
        g.append(dd_constant(rising_g / math.factorial(3 * k + 1)))
        rising_f, rising_g = rising_f * (3 * k + 1), rising_g * (3 * k + 2)
    return f, g


_SERIES = _series_coefficients()
_AIRY_F, _AIRY_G = _airy_coefficients()


def _only_where(mask, x, fn):
    """fn(x[mask]) scattered back into an array shaped like x (NaN elsewhere): the series
    cost ~100x more per element than the asymptotic forms, so they see only their own."""
    xp = xp_for(x)
    out = xp.full(x.shape, xp.nan)
    if bool(mask.any()):
        out[mask] = fn(x[mask])
    return out


def _terms_needed(x, coefficients, power: int) -> int:
    """How many terms c_k tᵏ (t = xᵖᵒʷᵉʳ/4 or x³) keep the sum exact to ~1e-30 for the
    largest |x| present (fewer for small arguments: cheaper)."""
    t = float(x.max()) ** power / (4 if power == 2 else 1) if x.size else 0.0
    for k, (c, _) in enumerate(coefficients):
        if k > 0 and abs(c) * t ** k < 1e-30:
            return k
    return len(coefficients)


def _series(x, name: str):
    """The double-double sum Σ c_k qᵏ, q = x²/4, of the named series, rounded to float64."""
    coefficients = _SERIES[name]
    square = two_prod(x, x)
    coefficients = coefficients[:_terms_needed(x, coefficients, 2) + 1]
    return dd_value(dd_polynomial((square[0] / 4, square[1] / 4), coefficients))


def _hankel(x, order: int):
    """√(2/(πx)) times (P, Q) of Hankel's expansion, and (cos χ, sin χ), for x > 0."""
    mu = 4 * order * order
    p, q = x * 0.0 + 1.0, x * 0.0
    term = x * 0.0 + 1.0
    for k in range(1, _HANKEL_TERMS):
        term = term * ((mu - (2 * k - 1) ** 2) / (8 * k)) / x
        if k % 2:
            q = q + term if k % 4 == 1 else q - term
        else:
            p = p - term if k % 4 == 2 else p + term
    xp = xp_for(x)
    cos, sin, half = xp.cos(x), xp.sin(x), math.sqrt(0.5)
    if order == 0:  # χ = x - π/4
        cos_chi, sin_chi = (cos + sin) * half, (sin - cos) * half
    else:  # χ = x - 3π/4
        cos_chi, sin_chi = (sin - cos) * half, -(sin + cos) * half
    scale = xp.sqrt(2 / (math.pi * x))
    return scale * p, scale * q, cos_chi, sin_chi


def _bessel_j(a, order: int):
    """J_order(x) on a raw array, in float64 and cast back (NaN at ±inf, as PyTorch)."""
    xp = xp_for(a)
    x = xp.abs(a.astype(xp.float64))
    if order == 0:
        series = _only_where(x <= _SERIES_UP_TO, x, lambda s: _series(s, "j0"))
    else:
        series = _only_where(x <= _SERIES_UP_TO, x, lambda s: s / 2 * _series(s, "j1"))
    with np.errstate(invalid="ignore"):
        p, q, cos_chi, sin_chi = _hankel(xp.maximum(x, _SERIES_UP_TO), order)
        out = xp.where(x <= _SERIES_UP_TO, series, p * cos_chi - q * sin_chi)
    if order == 1:
        out = xp.where(xp.signbit(a), -out, out)  # J1 is odd (and J1(-0) = -0)
    return out.astype(a.dtype, copy=False)


def _y_series(x, order: int):
    """Y_order(x) for 0 < x <= 20 from its series (the docstring's formulas)."""
    xp = xp_for(x)
    log_term = xp.log(x) - math.log(2) + _EULER_GAMMA  # (x/2 underflows at 5e-324)
    if order == 0:
        return (2 / math.pi) * (log_term * _series(x, "j0") + _series(x, "y0"))
    j1 = x / 2 * _series(x, "j1")
    return (-2 / math.pi) / x + (2 / math.pi) * log_term * j1 \
        - x / (2 * math.pi) * _series(x, "y1")


def _bessel_y(a, order: int):
    """Y_order(x) on a raw array: -inf at 0, NaN for x < 0 and at +inf (as PyTorch)."""
    xp = xp_for(a)
    x = a.astype(xp.float64)
    with np.errstate(over="ignore", divide="ignore"):
        series = _only_where((x > 0) & (x <= _SERIES_UP_TO), x, lambda s: _y_series(s, order))
    with np.errstate(invalid="ignore"):
        p, q, cos_chi, sin_chi = _hankel(xp.maximum(x, _SERIES_UP_TO), order)
        out = xp.where(x <= _SERIES_UP_TO, series, p * sin_chi + q * cos_chi)
    out = xp.where(x == 0, -xp.inf, xp.where(x < 0, xp.nan, out))
    return out.astype(a.dtype, copy=False)


def _spherical_j0(a):
    """sin(x)/x; its Taylor series Σ (-x²)ᵏ/(2k+1)! below |x| = 0.5 (no 0/0 at 0)."""
    xp = xp_for(a)
    x = a.astype(xp.float64)
    near_zero = xp.abs(x) < 0.5
    small = xp.where(near_zero, x, 0.0)
    square = small * small
    taylor = xp.zeros_like(x)
    for k in range(6, -1, -1):
        taylor = taylor * square + (-1) ** k / math.factorial(2 * k + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = xp.where(near_zero, taylor, xp.sin(x) / x)
    out = xp.where(xp.isinf(x), 0.0, out)
    return out.astype(a.dtype, copy=False)


def _zeta(z):
    """ζ = (2/3) z^(3/2) as a double-double, for z >= 0."""
    xp = xp_for(z)
    root = xp.sqrt(z)
    p, e = two_prod(root, root)
    with np.errstate(invalid="ignore", divide="ignore"):
        root_lo = xp.where(root > 0, ((z - p) - e) / (2 * root), 0.0)  # one Newton step
    return dd_mul(dd_mul(dd(z), (root, root_lo)), _TWO_THIRDS)


def _airy_asymptotic(zeta, alternate: bool):
    """Σ (±1)ᵏ u_k/ζᵏ split by parity: (even-k sum, odd-k sum), signs (-1)^⌊k/2⌋ if
    ``alternate`` (the oscillating side) else (-1)ᵏ."""
    even, odd = zeta * 0.0 + 1.0, zeta * 0.0
    u, power = 1.0, zeta * 0.0 + 1.0
    for k in range(1, _AIRY_ASYMPTOTIC_TERMS):
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)
        power = power / zeta
        sign = (-1) ** (k // 2) if alternate else (-1) ** k
        if k % 2:
            odd = odd + sign * u * power
        else:
            even = even + sign * u * power
    return even, odd


def _airy_series(x):
    """Ai(0) f(x) + Ai'(0) g(x) in double-double, for |x| <= 9."""
    square = two_prod(x, x)
    cube = dd_mul(square, dd(x))
    terms = _terms_needed(abs(x), _AIRY_F, 3) + 1
    f = dd_polynomial(cube, _AIRY_F[:terms])
    g = dd_mul(dd_polynomial(cube, _AIRY_G[:terms]), dd(x))
    return dd_value(dd_add(dd_mul(f, _AIRY_AI_0), dd_mul(g, _AIRY_AI_PRIME_0)))


def _airy_ai(a):
    """Ai(x) on a raw array, in float64 and cast back (NaN at ±inf, as PyTorch)."""
    xp = xp_for(a)
    x = a.astype(xp.float64)
    series = _only_where(xp.abs(x) <= _AIRY_SERIES_UP_TO, x, _airy_series)

    z = xp.maximum(xp.abs(x), _AIRY_SERIES_UP_TO)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        zeta_hi, zeta_lo = _zeta(z)
        even, odd = _airy_asymptotic(zeta_hi, alternate=False)
        decaying = xp.exp(-zeta_hi) * (1 - zeta_lo) * (even + odd) / (
            2 * math.sqrt(math.pi) * z ** 0.25)
        even, odd = _airy_asymptotic(zeta_hi, alternate=True)
        shift = (zeta_lo - _QUARTER_PI[1]) - _QUARTER_PI[0]  # ζ - π/4 = ζ_hi + shift
        cos, sin = xp.cos(zeta_hi), xp.sin(zeta_hi)
        cos_phase = cos * xp.cos(shift) - sin * xp.sin(shift)
        sin_phase = sin * xp.cos(shift) + cos * xp.sin(shift)
        oscillating = (cos_phase * even + sin_phase * odd) / (math.sqrt(math.pi) * z ** 0.25)
    decaying = xp.where(x > _AIRY_UNDERFLOWS, 0.0, decaying)  # (not inf·0 = NaN)
    out = xp.where(xp.abs(x) <= _AIRY_SERIES_UP_TO, series,
                   xp.where(x > 0, decaying, oscillating))
    out = xp.where(xp.isinf(x), xp.nan, out)
    return out.astype(a.dtype, copy=False)


class BesselJ0(_NoDerivative):
    name = "special_bessel_j0"
    compute = staticmethod(_bessel_j)


class BesselJ1(BesselJ0):
    name, order = "special_bessel_j1", 1


class BesselY0(_NoDerivative):
    name = "special_bessel_y0"
    compute = staticmethod(_bessel_y)


class BesselY1(BesselY0):
    name, order = "special_bessel_y1", 1


class SphericalBesselJ0(_NoDerivative):
    name = "special_spherical_bessel_j0"
    compute = staticmethod(lambda a, order: _spherical_j0(a))


class AiryAi(_NoDerivative):
    name = "special_airy_ai"
    compute = staticmethod(lambda a, order: _airy_ai(a))


def bessel_j0(input: Tensor) -> Tensor:
    """J0(x), the Bessel function of the first kind of order 0: even, J0(0) = 1.
    No derivative (as in PyTorch; mathematically J0' = -J1)."""
    return BesselJ0.apply(float_input(input))


def bessel_j1(input: Tensor) -> Tensor:
    """J1(x), the Bessel function of the first kind of order 1: odd, J1(0) = 0.
    No derivative (as in PyTorch; mathematically J1' = J0 - J1/x)."""
    return BesselJ1.apply(float_input(input))


def bessel_y0(input: Tensor) -> Tensor:
    """Y0(x), the Bessel function of the second kind of order 0: -inf at 0, NaN for
    x < 0. No derivative (as in PyTorch)."""
    return BesselY0.apply(float_input(input))


def bessel_y1(input: Tensor) -> Tensor:
    """Y1(x), the Bessel function of the second kind of order 1: ~-2/(πx) at 0, NaN for
    x < 0. No derivative (as in PyTorch)."""
    return BesselY1.apply(float_input(input))


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """j0(x) = sin(x)/x, the spherical Bessel function of order 0 (1 at 0, 0 at ±inf).
    No derivative (as in PyTorch)."""
    return SphericalBesselJ0.apply(float_input(input))


def airy_ai(input: Tensor) -> Tensor:
    """Ai(x), the Airy function of the first kind: oscillates for x < 0, decays like
    e^(-(2/3)x^(3/2)) for x > 0. No derivative (as in PyTorch)."""
    return AiryAi.apply(float_input(input))
