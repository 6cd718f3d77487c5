"""Lesson 7's checks: random broadcastable shapes, against NumPy and gradlab's own ops.

gradlab's engine, like PyTorch's, sums a gradient that comes back in the broadcast
shape down to the input's shape by itself (``_sum_to_shape`` in engine.py). So the
Function checks also call the student's ``backward`` directly, with the node as ctx,
and look at the shapes it returns before the engine could repair them.
"""

import numpy as np

import gradlab
from lessons.expect import check, expect, expect_close, expect_gradcheck, expect_tensor

_F64 = gradlab.float64


def _tensor(rng, shape, requires_grad=False):
    return gradlab.tensor(rng.normal(size=shape), dtype=_F64, requires_grad=requires_grad)


def _reference(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """unbroadcast in NumPy: sum the leading dims, then the size-1 dims (kept)."""
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    ones = tuple(i for i, s in enumerate(shape) if s == 1)
    return grad.sum(axis=ones, keepdims=True) if ones else grad


def _narrow(rng, shape: tuple, drop: int, p_one: float) -> tuple:
    """``shape`` without its first ``drop`` dims, some of the rest set to 1."""
    return tuple(1 if rng.random() < p_one else s for s in shape[drop:])


def _full(rng, lo: int = 1, hi: int = 4) -> tuple:
    return tuple(int(s) for s in rng.integers(2, 5, size=int(rng.integers(lo, hi + 1))))


def _unbroadcast_cases(rng) -> list:
    """(broadcast shape, input shape, what kind of case) for every kind of case."""
    cases = []
    out = _full(rng, 2, 4)
    cases.append((out, _narrow(rng, out, int(rng.integers(1, len(out))), 0.0),
                  "dims added in front"))
    out = _full(rng, 2, 4)
    parity = int(rng.integers(2))  # every other dim set to 1: at least one of them
    ones = tuple(1 if k % 2 == parity else s for k, s in enumerate(out))
    cases.append((out, ones, "size-1 dims stretched"))
    out = _full(rng, 3, 4)
    narrow = list(out[1:])
    narrow[int(rng.integers(len(narrow)))] = 1
    cases.append((out, tuple(narrow), "both"))
    out = _full(rng, 1, 3)
    cases.append((out, (), "a 0-d input (one number)"))
    out = _full(rng, 1, 3)
    cases.append((out, out, "nothing broadcast"))
    return cases


def _expect_shape(t, shape: tuple, what: str) -> None:
    got = tuple(t.shape)
    expect(got == tuple(shape), what, str(tuple(shape)), str(got))


@check("unbroadcast")
def unbroadcast(student, rng):
    for out, shape, kind in _unbroadcast_cases(rng):
        grad = _tensor(rng, out)
        got = student.unbroadcast(grad, shape)
        what = f"grad of shape {out} summed to {shape} ({kind})"
        expect_tensor(got, f"unbroadcast returns a tensor ({kind})")
        _expect_shape(got, shape, f"the shape of {what}")
        expect_close(got, _reference(grad.numpy(), shape), what, rtol=1e-12, atol=1e-12)
    # Built from tensor ops, it is differentiable itself (its derivative broadcasts back).
    out = _full(rng, 2, 3)
    shape = _narrow(rng, out, 1, 0.5)
    expect_gradcheck(lambda g: student.unbroadcast(g, shape), (_tensor(rng, out, True),),
                     f"unbroadcast to {shape} is built from gradlab ops (gradcheck)")


def _pair(rng) -> tuple:
    """Two different shapes that broadcast to a random shape of 2 to 4 dims (each of
    size 2 to 4); either or both may be broadcast."""
    while True:
        out = _full(rng, 2, 4)
        a = _narrow(rng, out, int(rng.integers(0, len(out) + 1)), 0.4)
        b = _narrow(rng, out, int(rng.integers(0, len(out))), 0.4)
        if a != b and tuple(np.broadcast_shapes(a, b)) == out:
            return (a, b) if rng.random() < 0.5 else (b, a)


def _check_function(student, rng, name: str, builtin, derivatives) -> None:
    fn = getattr(student, name)
    for _ in range(3):
        sa, sb = _pair(rng)
        out = tuple(np.broadcast_shapes(sa, sb))
        a, b = _tensor(rng, sa, True), _tensor(rng, sb, True)
        shapes = f"a {sa}, b {sb}"
        y = fn.apply(a, b)
        expect_close(y, builtin(a, b).detach(), f"{name}.apply(a, b), {shapes}, forward",
                     rtol=1e-12, atol=1e-12)
        # backward called directly: the gradients as the Function returns them.
        grad = _tensor(rng, out)
        with gradlab.no_grad():
            result = fn.backward(y.grad_fn, grad)
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        expect(len(result) == 2, f"{name}.backward returns one gradient per input",
               "2 gradients", f"{len(result)}")
        for label, shape, local in (("a", sa, derivatives[0](a, b)),
                                    ("b", sb, derivatives[1](a, b))):
            g = result[0 if label == "a" else 1]
            expect_tensor(g, f"the gradient {name}.backward returns for {label}")
            _expect_shape(g, shape, f"shape of the gradient {name}.backward returns for "
                          f"{label} ({shapes}, output {out})")
            want = _reference(grad.numpy() * np.broadcast_to(local, out), shape)
            expect_close(g, want, f"{name}.backward's gradient for {label}, {shapes}",
                         rtol=1e-10, atol=1e-12)
        # Through the engine, against gradlab's built-in op.
        weights = _tensor(rng, out)
        (y * weights).sum().backward()
        a2, b2 = a.detach().requires_grad_(), b.detach().requires_grad_()
        (builtin(a2, b2) * weights).sum().backward()
        expect_close(a.grad, a2.grad, f"a.grad through backward() vs the built-in, {shapes}",
                     rtol=1e-10, atol=1e-12)
        expect_close(b.grad, b2.grad, f"b.grad through backward() vs the built-in, {shapes}",
                     rtol=1e-10, atol=1e-12)
    sa, sb = _pair(rng)
    expect_gradcheck(fn.apply, (_tensor(rng, sa, True), _tensor(rng, sb, True)),
                     f"{name}: backward against finite differences, a {sa}, b {sb}")


@check("broadcast_add")
def broadcast_add(student, rng):
    _check_function(student, rng, "BroadcastAdd", lambda a, b: a + b,
                    (lambda a, b: np.ones(1), lambda a, b: np.ones(1)))


@check("broadcast_mul")
def broadcast_mul(student, rng):
    _check_function(student, rng, "BroadcastMul", lambda a, b: a * b,
                    (lambda a, b: b.detach().numpy(), lambda a, b: a.detach().numpy()))
