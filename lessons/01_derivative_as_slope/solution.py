"""Lesson 1: a derivative is a slope (the reference solution)."""

import gradlab


def f(x):
    """The function of the lesson: f(x) = x**3 - 2x (works on floats and tensors)."""
    return x**3 - 2 * x


def central_difference(f, x, h=1e-5):
    """Estimate the slope of f at x from f(x + h) and f(x - h)."""
    return (f(x + h) - f(x - h)) / (2 * h)


def autograd_slope(f, x):
    """The slope of f at x, computed by gradlab's autograd, as a Python float."""
    t = gradlab.tensor(x, dtype=gradlab.float64, requires_grad=True)
    f(t).backward()
    return t.grad.item()


def tangent_line(f, x0):
    """(slope, intercept) of the line that touches f at x0."""
    slope = autograd_slope(f, x0)
    return slope, f(x0) - slope * x0


if __name__ == "__main__":
    x = gradlab.tensor(1.5, dtype=gradlab.float64, requires_grad=True)
    x.name = "x"  # the name the graph panel shows
    y = f(x)
    y.backward()
    print(f"f(1.5) = {y.item():.4f}, slope from gradlab = {x.grad.item():.4f}")
    print(f"slope from a central difference = {central_difference(f, 1.5):.4f}")
