"""Lesson 3's checks: random neurons, against NumPy, central differences and gradlab's
autograd (float64)."""

import numpy as np

import gradlab
from lessons.expect import check, expect, expect_close


def _neuron(rng):
    """Random w, x (n of 2..6 numbers), b and a target t in (-1, 1)."""
    n = int(rng.integers(2, 7))
    w = rng.normal(0, 0.6, size=n)
    x = rng.normal(0, 1.0, size=n)
    b = float(rng.normal(0, 0.5))
    t = float(rng.uniform(-0.9, 0.9))
    return w, x, b, t


def _autograd(w, x, b, t):
    """gradlab's answer: the loss and its gradients w.r.t. w, b and x."""
    tw, tx, tb = (gradlab.tensor(v, dtype=gradlab.float64, requires_grad=True)
                  for v in (w, x, b))
    loss = ((tw @ tx + tb).tanh() - t) ** 2
    loss.backward()
    return loss.item(), tw.grad.numpy(), tb.grad.item(), tx.grad.numpy()


def _not_tensors(values, what):
    tensors = [type(v).__name__ for v in values if isinstance(v, gradlab.Tensor)]
    expect(not tensors, what, "floats and NumPy arrays",
           ", ".join(tensors) or "floats and NumPy arrays",
           "do it by hand with NumPy: gradlab is what we compare against")


def _central(fn, at, h=1e-6):
    return (fn(at + h) - fn(at - h)) / (2 * h)


@check("forward")
def forward(student, rng):
    w, x, b, t = _neuron(rng)
    result = student.forward(w, x, b, t)
    expect(isinstance(result, tuple) and len(result) == 3, "forward returns (z, y, loss)",
           "a tuple of 3 numbers", repr(result)[:80])
    _not_tensors(result, "forward computes with NumPy")
    z, y, loss = result
    n = len(w)
    expect_close(z, w @ x + b, f"z = w·x + b for n = {n} inputs", rtol=1e-10)
    expect_close(y, np.tanh(w @ x + b), "y = tanh(z)", rtol=1e-10)
    expect_close(loss, _autograd(w, x, b, t)[0], f"loss = (y - t)² with t = {t:.3f}",
                 rtol=1e-10)


@check("local_derivatives")
def local_derivatives(student, rng):
    w, x, b, t = _neuron(rng)
    d = student.local_derivatives(w, x, b, t)
    keys = {"dloss_dy", "dy_dz", "dz_dw", "dz_db", "dz_dx"}
    expect(isinstance(d, dict) and set(d) == keys, "local_derivatives returns a dict",
           ", ".join(sorted(keys)), ", ".join(sorted(map(str, d))) if isinstance(d, dict)
           else type(d).__name__)
    _not_tensors(d.values(), "the local derivatives are worked out by hand")
    z = w @ x + b
    y = np.tanh(z)
    # Each compared with a central difference of that one step, at this sample.
    expect_close(d["dloss_dy"], _central(lambda v: (v - t) ** 2, y),
                 f"d(y - t)²/dy at y = {y:.4f}, t = {t:.3f}", rtol=1e-6, atol=1e-8)
    expect_close(d["dy_dz"], _central(np.tanh, z), f"d tanh(z)/dz at z = {z:.4f}",
                 rtol=1e-6, atol=1e-8)
    step = 1e-6 * np.eye(len(w))
    expect_close(d["dz_dw"], [(np.dot(w + s, x) - np.dot(w - s, x)) / 2e-6 for s in step],
                 "dz/dw (one number per weight)", rtol=1e-6, atol=1e-8)
    expect_close(d["dz_db"], 1.0, "dz/db")
    expect_close(d["dz_dx"], [(np.dot(w, x + s) - np.dot(w, x - s)) / 2e-6 for s in step],
                 "dz/dx (one number per input)", rtol=1e-6, atol=1e-8)


@check("backward")
def backward(student, rng):
    for _ in range(2):  # two neurons, so a lucky sign can't pass
        w, x, b, t = _neuron(rng)
        result = student.backward(w, x, b, t)
        expect(isinstance(result, tuple) and len(result) == 3,
               "backward returns (dloss_dw, dloss_db, dloss_dx)", "a tuple of 3",
               repr(result)[:80])
        _not_tensors(result, "backward is done by hand")
        _, dw, db, dx = _autograd(w, x, b, t)
        n = len(w)
        expect_close(result[0], dw, f"dloss/dw, n = {n}, against gradlab's backward",
                     rtol=1e-8, atol=1e-12)
        expect_close(result[1], db, "dloss/db, against gradlab's backward", rtol=1e-8,
                     atol=1e-12)
        expect_close(result[2], dx, "dloss/dx, against gradlab's backward", rtol=1e-8,
                     atol=1e-12)


@check("batch_backward")
def batch_backward(student, rng):
    m, n = int(rng.integers(3, 9)), int(rng.integers(2, 6))
    w = rng.normal(0, 0.6, size=n)
    X = rng.normal(0, 1.0, size=(m, n))
    b = float(rng.normal(0, 0.5))
    T = rng.uniform(-0.9, 0.9, size=m)
    result = student.batch_backward(w, X, b, T)
    expect(isinstance(result, tuple) and len(result) == 2,
           "batch_backward returns (dloss_dw, dloss_db)", "a tuple of 2", repr(result)[:80])
    _not_tensors(result, "batch_backward is done by hand")
    tw, tb = (gradlab.tensor(v, dtype=gradlab.float64, requires_grad=True) for v in (w, b))
    y = (gradlab.tensor(X) @ tw + tb).tanh()
    ((y - gradlab.tensor(T)) ** 2).mean().backward()
    expect_close(result[0], tw.grad, f"dloss/dw for the mean loss of {m} samples, n = {n}",
                 rtol=1e-8, atol=1e-12)
    expect_close(result[1], tb.grad, f"dloss/db for the mean loss of {m} samples",
                 rtol=1e-8, atol=1e-12)
