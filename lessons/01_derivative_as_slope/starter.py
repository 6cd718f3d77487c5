"""Lesson 1: a derivative is a slope.

Fill in the three functions marked TODO, then check them with `gradlab check 1`
(or press k in the app). Run this file under the debugger with r in the app.
"""

import gradlab


def f(x):
    """The function of the lesson: f(x) = x**3 - 2x (works on floats and tensors)."""
    return x**3 - 2 * x


def central_difference(f, x, h=1e-5):
    """Estimate the slope of f at x from f(x + h) and f(x - h)."""
    # TODO: return the central difference (f(x + h) - f(x - h)) / (2h)
    raise NotImplementedError("central_difference")


def autograd_slope(f, x):
    """The slope of f at x, computed by gradlab's autograd, as a Python float."""
    # TODO: make x a float64 tensor with requires_grad=True, apply f, call backward()
    #       and return the gradient as a float
    raise NotImplementedError("autograd_slope")


def tangent_line(f, x0):
    """(slope, intercept) of the line that touches f at x0."""
    # TODO: the tangent passes through (x0, f(x0)) with f's slope at x0
    raise NotImplementedError("tangent_line")


if __name__ == "__main__":
    # What the app runs when you press r: step it with n (ops) and b (backward).
    x = gradlab.tensor(1.5, dtype=gradlab.float64, requires_grad=True)
    x.name = "x"  # the name the graph panel shows
    y = f(x)
    y.backward()
    print(f"f(1.5) = {y.item():.4f}, slope from gradlab = {x.grad.item():.4f}")
    print(f"slope from a central difference = {central_difference(f, 1.5):.4f}")
