"""Lesson 19's checks: dual numbers against closed forms and gradlab's reverse mode, and
Jacobians of random maps from Rⁿ to Rᵐ against reverse mode and finite differences.

The functions handed to the student's code are wrapped to count how often they run and
whether their input carried a tangent (a forward-mode pass); backward passes are counted
on gradlab's event bus. So each Jacobian is checked for its cost as well as its values.
"""

import math
from contextlib import contextmanager

import numpy as np

import gradlab
from gradlab import events
from gradlab.autograd import forward_ad
from lessons.expect import check, expect, expect_close, expect_equal

_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _space(k: int) -> str:
    return "R" + str(k).translate(_SUPERSCRIPTS)


# --- dual numbers --------------------------------------------------------------------------

def _dual(a: float, da: float) -> str:
    """a + ȧε as text, e.g. (0.5 − 1.2ε)."""
    return f"({a} {'−' if da < 0 else '+'} {abs(da):g}ε)"


def _poly(p) -> str:
    """p[0]x³ + p[1]x² + p[2]x + p[3] as text."""
    text = f"{p[0]}x³".replace("-", "−")
    for coef, power in zip(p[1:], ("x²", "x", "")):
        text += f" {'−' if coef < 0 else '+'} {abs(coef)}{power}"
    return text


def _expect_dual(student, got, value, tangent, what: str, rtol: float = 1e-9) -> None:
    if not isinstance(got, student.Dual):
        expect(False, f"{what} gives a Dual", "a Dual", f"a {type(got).__name__}",
               "each method returns a new Dual(value, tangent)")
    expect_close([got.value, got.tangent], [value, tangent], f"(value, tangent) of {what}",
                 rtol=rtol, atol=1e-12)


def _plan(rng, n_inputs: int, n_ops: int) -> list:
    """A random expression as steps (kind, i, j, c) over the values made so far, whose last
    value depends on every input."""
    kinds = ("add", "mul", "sub", "scale", "shift", "rsub", "sin", "expsin")
    while True:
        steps, depends = [], [{k} for k in range(n_inputs)]
        for _ in range(n_ops):
            kind = kinds[int(rng.integers(len(kinds)))]
            n = len(depends)
            i = int(rng.integers(max(0, n - 3), n))  # a recent value: the expression grows deep
            j = int(rng.integers(0, n))
            steps.append((kind, i, j, round(float(rng.uniform(-2, 2)), 2)))
            depends.append(depends[i] | depends[j] if kind in ("add", "mul", "sub")
                           else depends[i])
        if len(depends[-1]) == n_inputs:
            return steps


def _build(plan, inputs):
    """Run ``plan`` on ``inputs``, Duals or tensors alike (both have +, *, sin, exp); the
    last value."""
    values = list(inputs)
    for kind, i, j, c in plan:
        a, b = values[i], values[j]
        if kind == "add":
            v = a + b
        elif kind == "mul":
            v = a * b
        elif kind == "sub":
            v = a - b
        elif kind == "scale":
            v = a * c
        elif kind == "shift":
            v = c + a
        elif kind == "rsub":
            v = c - a
        elif kind == "sin":
            v = a.sin()
        else:
            v = a.sin().exp()
        values.append(v)
    return values[-1]


@check("dual_numbers")
def dual_numbers(student, rng):
    Dual = student.Dual
    a, b = rng.uniform(-2, 2, size=2).round(3)
    da, db = rng.uniform(-2, 2, size=2).round(3)
    _expect_dual(student, Dual(a, da) + Dual(b, db), a + b, da + db,
                 f"{_dual(a, da)} + {_dual(b, db)}")
    _expect_dual(student, Dual(a, da) * Dual(b, db), a * b, da * b + a * db,
                 f"{_dual(a, da)} · {_dual(b, db)}")
    _expect_dual(student, Dual(a, da) * b + 1.5, a * b + 1.5, da * b,
                 f"{_dual(a, da)} · {b} + 1.5 (plain numbers are constants, tangent 0)")
    _expect_dual(student, Dual(a, da).sin(), math.sin(a), math.cos(a) * da,
                 f"sin{_dual(a, da)}")
    _expect_dual(student, Dual(a, da).exp(), math.exp(a), math.exp(a) * da,
                 f"exp{_dual(a, da)}")

    # A random cubic: the tangent is the derivative, in closed form.
    p = rng.uniform(-3, 3, size=4).round(2)
    x0 = round(float(rng.uniform(-2, 2)), 3)
    x = Dual(x0, 1.0)
    _expect_dual(student, p[0] * x * x * x + p[1] * x * x + p[2] * x + p[3],
                 np.polyval(p, x0), np.polyval(np.polyder(p), x0),
                 f"{_poly(p)} at x = {_dual(x0, 1.0)}")

    # sin(ux)·exp(wx), scaled by a tangent s: s·(u cos(ux) e^(wx) + w sin(ux) e^(wx)).
    u, w = rng.uniform(-2, 2, size=2).round(2)
    s = round(float(rng.uniform(0.5, 3)), 2)
    x = Dual(x0, s)
    slope = u * math.cos(u * x0) * math.exp(w * x0) + w * math.sin(u * x0) * math.exp(w * x0)
    _expect_dual(student, (x * u).sin() * (x * w).exp(),
                 math.sin(u * x0) * math.exp(w * x0), s * slope,
                 f"sin({u}x)·exp({w}x) at x = {_dual(x0, s)} (the tangent is {s}× the slope)")

    # Random expressions of two inputs: partial derivatives against gradlab's reverse mode.
    for _ in range(2):
        plan = _plan(rng, 2, int(rng.integers(6, 11)))
        data = rng.uniform(-1, 1, size=2).round(3)
        leaves = [gradlab.tensor(d, dtype=gradlab.float64, requires_grad=True) for d in data]
        out = _build(plan, leaves)
        out.backward()
        text = f"a random expression of {len(plan)} ops in x and y"
        for k, name in enumerate("xy"):
            tangents = [1.0 if i == k else 0.0 for i in range(2)]
            got = _build(plan, [Dual(d, t) for d, t in zip(data, tangents)])
            at = ", ".join(f"{v} = {_dual(d, t)}" for v, d, t in zip("xy", data, tangents))
            _expect_dual(student, got, out.item(), leaves[k].grad.item(),
                         f"{text} at {at}; the tangent is ∂/∂{name}, from gradlab's backward")


# --- random maps from Rⁿ to Rᵐ ----------------------------------------------------------------

def _random_map(rng, n: int, m: int):
    """A random smooth map f: Rⁿ → Rᵐ built from matmul, sum, arithmetic and sin/exp/tanh,
    and its formula in words."""
    def matrix():
        return gradlab.tensor(rng.normal(size=(m, n)) / math.sqrt(n), dtype=gradlab.float64)

    A, B = matrix(), matrix()
    c = gradlab.tensor(rng.uniform(-1, 1, size=m), dtype=gradlab.float64)
    kind = int(rng.integers(4))
    if kind == 0:
        def f(x):
            return (A @ x).tanh() * (B @ x) + c * x.sum()
        text = "tanh(Ax)·(Bx) + c·Σx"
    elif kind == 1:
        def f(x):
            return (A @ (x * x)).sin() + (B @ x * 0.5).exp()
        text = "sin(A(x·x)) + exp(Bx/2)"
    elif kind == 2:
        def f(x):
            bx = B @ x
            return (A @ x.tanh()) / (1 + bx * bx)
        text = "A tanh(x) / (1 + (Bx)²)"
    else:
        def f(x):
            return (A @ x + c).sin() * (x * x).sum() - (B @ x).tanh()
        text = "sin(Ax + c)·Σx² − tanh(Bx)"
    return f, f"f(x) = {text}, {_space(n)} → {_space(m)}"


def _point(rng, n: int):
    return gradlab.tensor(rng.uniform(-1, 1, size=n), dtype=gradlab.float64)


def _reference_jacobian(f, x) -> np.ndarray:
    """The Jacobian by gradlab's reverse mode, one row per output."""
    xg = x.detach().requires_grad_()
    y = f(xg)
    flat = y.reshape(-1)
    rows = []
    for i in range(flat.numel()):
        (row,) = gradlab.autograd.grad(flat[i], xg, retain_graph=True)
        rows.append(row.numpy())
    return np.stack(rows)


def _fd_jacobian(f, x, h: float = 1e-6) -> np.ndarray:
    """The Jacobian by central differences, one column per input."""
    base = x.numpy()
    columns = []
    for j in range(base.size):
        step = np.zeros_like(base)
        step[j] = h
        plus = f(gradlab.tensor(base + step, dtype=gradlab.float64)).numpy()
        minus = f(gradlab.tensor(base - step, dtype=gradlab.float64)).numpy()
        columns.append((plus - minus) / (2 * h))
    return np.stack(columns, axis=1)


class _Counted:
    """``f``, counting its calls and those on a dual tensor (a forward-mode pass)."""

    def __init__(self, f) -> None:
        self.f = f
        self.calls = 0
        self.dual_calls = 0
        self.tangents = []

    def __call__(self, x):
        self.calls += 1
        tangent = forward_ad.unpack_dual(x).tangent
        if tangent is not None:
            self.dual_calls += 1
            self.tangents.append(tangent.numpy().copy())
        return self.f(x)


@contextmanager
def _backward_passes():
    """Count the backward passes run inside the block (backward() and autograd.grad)."""
    count = [0]

    def listen(event) -> None:
        if isinstance(event, events.Phase) and event.kind == "backward_begin":
            count[0] += 1

    with events.subscribe(listen, light=True):
        yield count


@contextmanager
def _closes_its_level(who: str):
    """Run the student's code; afterwards no forward-mode level may be left open. One that
    is gets closed here, so that later checks can open their own."""
    try:
        yield
    finally:
        try:
            forward_ad.enter_dual_level()
            left_open = False
        except RuntimeError:
            left_open = True
        forward_ad.exit_dual_level()
    if left_open:
        expect(False, f"{who} closes its forward-mode level", "closed", "still open",
               "use `with forward_ad.dual_level():`, which ends the level even on an error")


# --- jvp ---------------------------------------------------------------------------------------

@check("jvp")
def jvp(student, rng):
    n, m = int(rng.integers(2, 5)), int(rng.integers(3, 7))
    f, text = _random_map(rng, n, m)
    _check_jvp(student, rng, f, n, text)
    # A loss-like f with one number out: its jvp is the directional derivative ∇f·t.
    n = int(rng.integers(3, 7))
    a = gradlab.tensor(rng.normal(size=n), dtype=gradlab.float64)

    def loss(x):
        return (a @ x).sin() + (x * x).sum()
    _check_jvp(student, rng, loss, n, f"the scalar f(x) = sin(a·x) + Σx², {_space(n)} → R")


def _check_jvp(student, rng, f, n: int, text: str) -> None:
    x, t = _point(rng, n), _point(rng, n)
    counted = _Counted(f)
    with _closes_its_level("jvp"), _backward_passes() as backward:
        result = student.jvp(counted, x, t)
    expect(isinstance(result, tuple) and len(result) == 2, "jvp returns (value, tangent)",
           "a pair", repr(result)[:60])
    value, tangent = result
    expect_close(value, f(x), f"the value f(x), {text}", rtol=1e-12)
    J, value_shape = _reference_jacobian(f, x), tuple(f(x).shape)
    expect_close(tangent, (J @ t.numpy()).reshape(value_shape),
                 f"J·t for {text}, against J from gradlab's reverse mode", rtol=1e-9,
                 atol=1e-12)
    h = 1e-6
    fd = (f(x + h * t).numpy() - f(x - h * t).numpy()) / (2 * h)
    expect_close(tangent, fd, "J·t against the central difference (f(x+ht) − f(x−ht))/2h",
                 rtol=1e-5, atol=1e-7)
    expect_equal((counted.calls, counted.dual_calls, backward[0]), (1, 1, 0),
                 "(calls of f, calls with a dual input, backward passes) for one jvp")
    expect_close(counted.tangents[0], t, "the tangent f's input carried: t", rtol=0)


# --- Jacobians ---------------------------------------------------------------------------------

def _expect_jacobian(got, f, x, text: str) -> None:
    expect_close(got, _reference_jacobian(f, x), f"the Jacobian of {text}, against gradlab's "
                 "reverse mode", rtol=1e-9, atol=1e-12)
    expect_close(got, _fd_jacobian(f, x), "the same Jacobian against central differences",
                 rtol=1e-5, atol=1e-7)


def _run(student_fn, f, x):
    """``student_fn(f, x)`` with f counted; its result, f's counter and the backward passes."""
    counted = _Counted(f)
    with _closes_its_level(student_fn.__name__), _backward_passes() as backward:
        got = student_fn(counted, x)
    return got, counted, backward[0]


@check("jacobian_forward")
def jacobian_forward(student, rng):
    for n, m in ((int(rng.integers(2, 4)), int(rng.integers(5, 9))),
                 (int(rng.integers(4, 7)), int(rng.integers(2, 4)))):
        f, text = _random_map(rng, n, m)
        x = _point(rng, n)
        got, counted, backward = _run(student.jacobian_forward, f, x)
        _expect_jacobian(got, f, x, text)
        expect_equal((counted.dual_calls, backward), (n, 0),
                     f"(forward passes with a dual input, backward passes): one pass per "
                     f"input, n = {n}")
        seen = np.stack(counted.tangents) if counted.tangents else None
        expect_close(seen, np.eye(n), f"the tangents f's input carried, one per pass: the "
                     f"one-hot vectors e_1, …, e_{n}", rtol=0)


@check("jacobian_reverse")
def jacobian_reverse(student, rng):
    for n, m in ((int(rng.integers(5, 9)), int(rng.integers(2, 4))),
                 (int(rng.integers(2, 4)), int(rng.integers(4, 7)))):
        f, text = _random_map(rng, n, m)
        x = _point(rng, n)
        got, counted, backward = _run(student.jacobian_reverse, f, x)
        _expect_jacobian(got, f, x, text)
        expect_equal((counted.calls, counted.dual_calls, backward), (1, 0, m),
                     f"(calls of f, calls with a dual input, backward passes): one forward "
                     f"pass and one backward pass per output, m = {m}")


@check("cheaper_mode")
def cheaper_mode(student, rng):
    small, big = int(rng.integers(1, 50)), int(rng.integers(100, 10_000))
    same = int(rng.integers(1, 1000))
    cases = [(small, big, "forward"), (big, small, "reverse"), (same, same, "forward"),
             (int(rng.integers(10**6, 10**8)), 1, "reverse")]
    for n, m, mode in cases:
        expect_equal(student.cheaper_mode(n, m), mode,
                     f"the cheaper mode for a Jacobian of f: {_space(n)} → {_space(m)}"
                     if max(n, m) < 10**4 else
                     f"the cheaper mode for a gradient of one loss in {n:,} weights")

    for n, m, mode in ((int(rng.integers(2, 4)), int(rng.integers(6, 9)), "forward"),
                       (int(rng.integers(6, 9)), int(rng.integers(2, 4)), "reverse")):
        f, text = _random_map(rng, n, m)
        x = _point(rng, n)
        got, counted, backward = _run(student.jacobian, f, x)
        _expect_jacobian(got, f, x, text)
        passes = (n, 0) if mode == "forward" else (0, m)
        expect_equal((counted.dual_calls, backward), passes,
                     f"jacobian on {_space(n)} → {_space(m)} uses {mode} mode: (forward "
                     f"passes with a dual input, backward passes)")
