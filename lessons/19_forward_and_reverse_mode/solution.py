"""Lesson 19: forward mode and reverse mode (the reference solution)."""

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
        other = lift(other)
        # (a + ȧε) + (b + ḃε) = (a + b) + (ȧ + ḃ)ε: tangents add
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __mul__(self, other):
        other = lift(other)
        # (a + ȧε)(b + ḃε) = ab + (ȧb + aḃ)ε + ȧḃε², and ε² = 0: the product rule
        return Dual(self.value * other.value,
                    self.tangent * other.value + self.value * other.tangent)

    def sin(self):
        # sin(a + ȧε) = sin a + cos(a)·ȧ ε: Taylor's series stops after the ε term
        return Dual(math.sin(self.value), math.cos(self.value) * self.tangent)

    def exp(self):
        # exp(a + ȧε) = eᵃ·e^(ȧε) = eᵃ(1 + ȧε)
        e = math.exp(self.value)
        return Dual(e, e * self.tangent)

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
    with forward_ad.dual_level():
        y = f(forward_ad.make_dual(x, t))  # x + tε: every op carries the tangent along
        value, tangent = forward_ad.unpack_dual(y)
    # Leaving the level dropped all tangents; value and tangent are plain tensors.
    return value, tangent


def jacobian_forward(f, x):
    """The (m, n) Jacobian of f: Rⁿ → Rᵐ at x, one column J·e_j per forward pass (n)."""
    n = x.numel()
    basis = gradlab.eye(n, dtype=x.dtype)  # row j is e_j; a tangent has its primal's dtype
    columns = [jvp(f, x, basis[j])[1] for j in range(n)]
    return gradlab.stack(columns, dim=1)


def jacobian_reverse(f, x):
    """The (m, n) Jacobian of f: Rⁿ → Rᵐ at x, one row e_iᵀJ per backward pass (m)."""
    x = x.detach().requires_grad_()
    y = f(x)  # one forward pass; its graph serves all m backward passes
    m = y.numel()
    basis = gradlab.eye(m, dtype=y.dtype)
    rows = [gradlab.autograd.grad(y, x, grad_outputs=basis[i], retain_graph=True)[0]
            for i in range(m)]
    return gradlab.stack(rows)


def cheaper_mode(n, m):
    """The mode, "forward" or "reverse", that needs fewer passes for a Jacobian of
    f: Rⁿ → Rᵐ (forward on a tie: it keeps no graph in memory)."""
    return "forward" if n <= m else "reverse"


def jacobian(f, x):
    """The Jacobian of f at x by the cheaper mode."""
    with gradlab.no_grad():  # one plain evaluation, to learn m
        m = f(x).numel()
    if cheaper_mode(x.numel(), m) == "forward":
        return jacobian_forward(f, x)
    return jacobian_reverse(f, x)


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
