"""Double-double arithmetic: a number held as an unevaluated sum hi + lo of two float64s.

A sum like J0(20) = Σ (-1)ᵏ (x²/4)ᵏ/(k!)² has terms near 10⁷ that cancel down
to a result near 0.17: float64's 16 digits lose 8 of them there. Carrying each
value as hi + lo (|lo| <= ulp(hi)/2) gives about 32 digits for a few times the
work, using two exact identities of IEEE arithmetic (Dekker, Knuth):

* two_sum(a, b) = (s, e) with s = fl(a + b) and s + e = a + b exactly;
* two_prod(a, b) = (p, e) with p = fl(a·b) and p + e = a·b exactly (each
  factor split into two 26-bit halves whose products are exact).

Both need each operation rounded on its own, as NumPy and CuPy ufuncs do (a
compiler fusing a·b + c into one FMA would break the split). The values here
are pairs (hi, lo) of arrays; ``dd(x)`` makes one from a float64 array and
``dd_constant`` an exact pair from a Fraction.
"""

from __future__ import annotations

from fractions import Fraction

_SPLITTER = 134217729.0  # 2²⁷ + 1: splits a float64 into two halves of 26 bits


def two_sum(a, b):
    """s + e = a + b exactly, s = fl(a + b)."""
    s = a + b
    shift = s - a
    return s, (a - (s - shift)) + (b - shift)


def _fast_two_sum(a, b):
    """two_sum when |a| >= |b| (one subtraction fewer)."""
    s = a + b
    return s, b - (s - a)


def _split(a):
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a, b):
    """p + e = a·b exactly, p = fl(a·b) (for |a·b| well inside the float64 range)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def dd(x):
    """A float64 array as a double-double (its lo is 0)."""
    return x, x * 0.0


def dd_constant(value: Fraction) -> tuple[float, float]:
    """The double-double nearest an exact rational."""
    hi = float(value)
    return hi, float(value - Fraction(hi))


def dd_add(a, b):
    """a + b, accurate even when a and b nearly cancel."""
    s, e = two_sum(a[0], b[0])
    t, f = two_sum(a[1], b[1])
    s, e = _fast_two_sum(s, e + t)
    return _fast_two_sum(s, e + f)


def dd_mul(a, b):
    """a·b."""
    p, e = two_prod(a[0], b[0])
    return _fast_two_sum(p, e + (a[0] * b[1] + a[1] * b[0]))


def dd_polynomial(t, coefficients):
    """Σ_k c_k tᵏ by Horner's rule, all in double-double (``coefficients`` are pairs)."""
    hi, lo = coefficients[-1]
    total = (t[0] * 0.0 + hi, t[0] * 0.0 + lo)
    for c in reversed(coefficients[:-1]):
        total = dd_add(dd_mul(total, t), c)
    return total


def dd_value(a):
    """The float64 nearest the double-double a."""
    return a[0] + a[1]
