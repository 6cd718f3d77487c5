"""Lesson 1's checks: random polynomials at random points, against exact slopes."""

import math

from lessons.expect import CheckFailed, check, expect, expect_close


def _cubic(rng):
    """A random cubic a x³ + b x² + c x + d and its exact derivative."""
    a, b, c, d = rng.uniform(-3, 3, size=4).round(2)

    def f(x):
        return a * x**3 + b * x**2 + c * x + d

    def df(x):
        return 3 * a * x**2 + 2 * b * x + c

    text = f"{a}x³ {b:+}x² {c:+}x {d:+}".replace("+", "+ ").replace("-", "- ")
    return f, df, text.replace("- ", "-", 1) if a < 0 else text


@check("central_difference")
def central_difference(student, rng):
    f, df, text = _cubic(rng)
    x = float(rng.uniform(-2, 2))
    expect_close(student.central_difference(f, x), df(x),
                 f"slope of {text} at x = {x:.4f}", rtol=1e-6, atol=1e-6)
    x = float(rng.uniform(0.5, 3))
    expect_close(student.central_difference(math.sin, x, h=1e-4), math.cos(x),
                 f"slope of sin at x = {x:.4f} with h = 1e-4", rtol=1e-6, atol=1e-7)
    # A one-sided difference is off by about h·f''/2: the central one must do better.
    h = 1e-2
    got = student.central_difference(math.exp, 1.0, h=h)
    expect(abs(got - math.e) < 1e-3, "central, not one-sided: slope of exp at 1 with h = 0.01",
           f"{math.e:.6f} within 1e-3", f"{got:.6f}",
           "use both f(x + h) and f(x - h), and divide by 2h")


@check("autograd_slope")
def autograd_slope(student, rng):
    f, df, text = _cubic(rng)
    x = float(rng.uniform(-2, 2))
    got = student.autograd_slope(f, x)
    expect(isinstance(got, float), "autograd_slope returns a Python float", "a float",
           f"a {type(got).__name__}", "call .item() on the gradient")
    what = f"gradlab's slope of {text} at x = {x:.4f}"
    error, scale = abs(got - df(x)), max(1.0, abs(df(x)))
    if 1e-9 * scale < error < 1e-4 * scale:
        raise CheckFailed(what, f"{df(x):.12g}", f"{got:.12g}",
                          "right to about 7 digits only: that is float32 rounding. Make the "
                          "tensor with dtype=gradlab.float64")
    expect_close(got, df(x), what, rtol=1e-12, atol=1e-12)


@check("tangent_line")
def tangent_line(student, rng):
    f, df, text = _cubic(rng)
    x0 = float(rng.uniform(-2, 2))
    line = student.tangent_line(f, x0)
    expect(isinstance(line, tuple) and len(line) == 2, "tangent_line returns (slope, intercept)",
           "a pair", repr(line)[:60])
    slope, intercept = line
    expect_close(slope, df(x0), f"tangent slope of {text} at x0 = {x0:.4f}", rtol=1e-6,
                 atol=1e-6)
    expect_close(slope * x0 + intercept, f(x0), "the tangent touches f at x0", rtol=1e-6,
                 atol=1e-6)
