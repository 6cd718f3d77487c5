"""Lesson 19: forward mode and reverse mode.

Five tasks, all marked TODO:

1. Dual: dual numbers value + tangent·ε (ε² = 0) with +, *, sin and exp.
2. jvp(f, x, t): f(x) and J·t from one forward pass, with gradlab.autograd.forward_ad.
3. jacobian_forward(f, x): the Jacobian column by column, one jvp per input.
4. jacobian_reverse(f, x): the Jacobian row by row, one backward pass per output.
5. cheaper_mode(n, m) and jacobian(f, x): pick the mode with fewer passes.

Check them with `gradlab check 19` (or press k in the app). Press r in the app to run
this file under the debugger.
"""

import math

import gradlab
from gradlab.autograd import forward_ad


def lift(value):
    """``value`` as a Dual: a plain number is a constant, so its tangent is 0."""
    return value if isinstance(value, Dual) else Dual(value, 0.0)


class Dual:
    """A dual number value + tangent·ε, where ε² = 0: a number that carries its derivative.

    Start with x = Dual(x0, 1.0) (dx/dx = 1). Every op then computes its result's value
    and, by the chain rule, the result's tangent: its derivative with respect to x.
    So f(Dual(x0, 1.0)).tangent is f'(x0), from one evaluation of f.
    """

    def __init__(self, value, tangent=0.0):
        self.value = float(value)
        self.tangent = float(tangent)

    def __add__(self, other):
        # TODO: other = lift(other); return a Dual whose value is the sum and whose
        #       tangent is the sum of the tangents
        raise NotImplementedError("Dual.__add__")

    def __mul__(self, other):
        # TODO: (a + ȧε)(b + ḃε) = ab + (ȧb + aḃ)ε, since ε² = 0: the product rule
        raise NotImplementedError("Dual.__mul__")

    def sin(self):
        # TODO: sin(a + ȧε) = sin a + cos(a)·ȧ ε (use math.sin and math.cos)
        raise NotImplementedError("Dual.sin")

    def exp(self):
        # TODO: exp(a + ȧε) = eᵃ + eᵃ·ȧ ε
        raise NotImplementedError("Dual.exp")

    # Given: the other operators, built from the four above.
    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-lift(other))

    def __rsub__(self, other):
        return lift(other) + (-self)

    def __repr__(self):
        return f"Dual({self.value:.6g}, tangent={self.tangent:.6g})"


def jvp(f, x, t):
    """``(f(x), J·t)``: f's value at x and its Jacobian times the direction t, from one
    forward pass of f with a dual input."""
    # TODO: inside `with forward_ad.dual_level():`, make a dual input with
    #       forward_ad.make_dual(x, t), call f on it once, and unpack the result with
    #       forward_ad.unpack_dual (it gives value and tangent); return both
    raise NotImplementedError("jvp")


def jacobian_forward(f, x):
    """The (m, n) Jacobian of f: Rⁿ → Rᵐ at x, one column J·e_j per forward pass (n)."""
    # TODO: one jvp per input: column j is J·e_j, with e_j the j-th row of
    #       gradlab.eye(n, dtype=x.dtype); stack the n columns with gradlab.stack(..., dim=1)
    raise NotImplementedError("jacobian_forward")


def jacobian_reverse(f, x):
    """The (m, n) Jacobian of f: Rⁿ → Rᵐ at x, one row e_iᵀJ per backward pass (m)."""
    # TODO: x = x.detach().requires_grad_(); y = f(x) once; then one backward pass per
    #       output i: gradlab.autograd.grad(y, x, grad_outputs=e_i, retain_graph=True)[0]
    #       is row i; stack the m rows
    raise NotImplementedError("jacobian_reverse")


def cheaper_mode(n, m):
    """The mode, "forward" or "reverse", that needs fewer passes for a Jacobian of
    f: Rⁿ → Rᵐ (forward on a tie: it keeps no graph in memory)."""
    # TODO: compare the passes each mode needs (n forward, m backward); forward on a tie
    raise NotImplementedError("cheaper_mode")


def jacobian(f, x):
    """The Jacobian of f at x by the cheaper mode."""
    # TODO: learn m from one evaluation of f, then call jacobian_forward or
    #       jacobian_reverse, whichever cheaper_mode picks
    raise NotImplementedError("jacobian")


def f(x1, x2):
    """The lesson's example, f(x1, x2) = x1·x2 + sin(x1), on Duals or tensors."""
    return x1 * x2 + x1.sin()


A = gradlab.tensor([[1.0, -0.5], [0.3, 2.0], [-1.2, 0.7]], dtype=gradlab.float64)


def g(x):
    """A small map from R² to R³: g(x) = tanh(A x)."""
    return (A @ x).tanh()


if __name__ == "__main__":
    # Reverse mode: one backward pass gives both partial derivatives of f at (2, 3).
    x1 = gradlab.tensor(2.0, dtype=gradlab.float64, requires_grad=True)
    x2 = gradlab.tensor(3.0, dtype=gradlab.float64, requires_grad=True)
    x1.name, x2.name = "x1", "x2"
    y = f(x1, x2)
    y.backward()
    print(f"reverse mode, 1 backward pass: df/dx1 = {x1.grad.item():.4f}, "
          f"df/dx2 = {x2.grad.item():.4f}")

    # Forward mode: one pass per input direction.
    d1 = f(Dual(2.0, 1.0), Dual(3.0, 0.0)).tangent
    d2 = f(Dual(2.0, 0.0), Dual(3.0, 1.0)).tangent
    print(f"forward mode, 2 passes with Duals: df/dx1 = {d1:.4f}, df/dx2 = {d2:.4f}")

    # With gradlab tensors: g: R² → R³ at x, pushed along t = e_0. One forward pass gives
    # g(x) and J·t, the first column of g's Jacobian.
    x = gradlab.tensor([0.5, -1.0], dtype=gradlab.float64)
    t = gradlab.tensor([1.0, 0.0], dtype=gradlab.float64)
    value, column = jvp(g, x, t)
    print("g(x) =", value)
    print("J·t =", column, "(the first column of the Jacobian below)")

    # The whole Jacobian of g both ways: 2 forward passes or 3 backward passes.
    print("Jacobian of g by forward mode:\n", jacobian_forward(g, x))
    print("Jacobian of g by reverse mode:\n", jacobian_reverse(g, x))
    print("cheaper for g:", cheaper_mode(2, 3))
