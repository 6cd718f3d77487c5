"""Lesson 10's checks: the student's losses against gradlab.nn.functional (values, gradients,
gradcheck, huge logits), and their training loop against the same loop run here."""

import copy
import math

import numpy as np

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.datasets import make_blobs
from lessons.expect import (
    check,
    expect,
    expect_close,
    expect_equal,
    expect_gradcheck,
    expect_tensor,
)

_DONE_FOR_YOU = {"cross_entropy", "nll_loss", "log_softmax", "softmax", "logsumexp"}


def _ops(tensor):
    """The names of the ops in the graph that made ``tensor``."""
    found, todo, seen = set(), [tensor.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        fn = getattr(node, "fn", None)
        if fn is not None:
            found.add(fn.name)
        todo.extend(fn for fn, _ in getattr(node, "next_functions", ()) if fn is not None)
    return found


def _grad_of(fn, *inputs):
    """The output of fn(*inputs) and the gradient of it w.r.t. the first input."""
    leaf = inputs[0].detach().clone().requires_grad_()
    out = fn(leaf, *inputs[1:])
    out.backward()
    return out, leaf.grad


@check("mse_loss")
def mse_loss(student, rng):
    shape = tuple(int(s) for s in rng.integers(1, 5, size=int(rng.integers(2, 4))))
    pred = gradlab.tensor(rng.standard_normal(shape), dtype=gradlab.float64)
    target = gradlab.tensor(rng.standard_normal(shape), dtype=gradlab.float64)
    out, grad = _grad_of(student.mse_loss, pred, target)
    expect_tensor(out, "mse_loss returns a tensor")
    expect_equal(tuple(out.shape), (), "mse_loss returns one number (a 0-d tensor)")
    want, want_grad = _grad_of(F.mse_loss, pred, target)
    expect_close(out, want, f"mse_loss of two tensors of shape {shape}, against F.mse_loss")
    expect_close(grad, want_grad, f"its gradient w.r.t. pred: 2 (pred - target) / "
                 f"{pred.numel()}")
    expect_gradcheck(lambda p: student.mse_loss(p, target),
                     (pred.detach().clone().requires_grad_(),), "gradcheck of mse_loss")


def _logits(rng, n, c, scale=3.0, dtype=gradlab.float64):
    return gradlab.tensor(scale * rng.standard_normal((n, c)), dtype=dtype)


@check("cross_entropy")
def cross_entropy(student, rng):
    n, c = int(rng.integers(2, 9)), int(rng.integers(2, 7))
    logits = _logits(rng, n, c)
    targets = gradlab.tensor(rng.integers(0, c, size=n))
    out, grad = _grad_of(student.cross_entropy, logits, targets)
    expect_tensor(out, "cross_entropy returns a tensor")
    expect_equal(tuple(out.shape), (), "cross_entropy returns one number (a 0-d tensor)")
    used = sorted(_ops(out) & _DONE_FOR_YOU)
    expect(not used, "built from exp, sum, log, amax, gather ... (not a ready-made softmax "
           "or loss)", "none of " + ", ".join(sorted(_DONE_FOR_YOU)),
           ", ".join(used) or "none of them", "write the max trick yourself")
    want, want_grad = _grad_of(F.cross_entropy, logits, targets)
    expect_close(out, want, f"cross_entropy of ({n}, {c}) logits, against "
                 "F.cross_entropy")
    expect_close(grad, want_grad, f"gradient w.r.t. the logits: (softmax - one_hot) / {n}")
    expect_gradcheck(lambda z: student.cross_entropy(z, targets),
                     (logits.detach().clone().requires_grad_(),),
                     f"gradcheck of cross_entropy, ({n}, {c}) logits")

    # Huge logits, in float32, where exp overflows above 88.7: large positive, large negative.
    for shift, spread in ((1000.0, 1e4), (-1000.0, 1e4), (90.0, 1.0)):
        big = _logits(rng, n, c, scale=spread, dtype=gradlab.float32) + shift
        with np.errstate(all="ignore"):
            out, grad = _grad_of(student.cross_entropy, big, targets)
        where = f"float32 logits around {shift:g} with spread {spread:g}"
        values = np.concatenate([[out.item()], grad.numpy().ravel()])
        expect(bool(np.isfinite(values).all()), f"no inf or NaN in the loss or its gradient, "
               f"{where}", "all finite", "inf or NaN", "subtract each row's max before exp")
        want, want_grad = _grad_of(F.cross_entropy, big, targets)
        expect_close(out, want, f"cross_entropy, {where}", rtol=1e-4, atol=1e-3)
        expect_close(grad, want_grad, f"its gradient, {where}", rtol=1e-4, atol=1e-5)


def _blobs(rng, k, n):
    """n points in k well-separated Gaussian blobs around a circle of radius 3."""
    angle = rng.uniform(0, 2 * math.pi) + 2 * math.pi * np.arange(k) / k
    centers = 3.0 * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    generator = gradlab.Generator().manual_seed(int(rng.integers(0, 2**31)))
    return make_blobs(n, centers=centers, cluster_std=0.6, generator=generator)


def _reference(model, X, y, steps, lr):
    """The five-line loop, with gradlab's own loss and SGD."""
    optimizer = gradlab.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        optimizer.step()


@check("train")
def train(student, rng):
    k = int(rng.integers(2, 5))
    X, y = _blobs(rng, k, int(rng.integers(40, 81)))
    hidden = int(rng.integers(4, 17))
    if rng.integers(0, 2):
        model, kind = nn.Linear(2, k), f"Linear(2, {k})"
    else:
        model = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, k))
        kind = f"Linear(2, {hidden}), ReLU, Linear({hidden}, {k})"
    steps, lr = int(rng.integers(15, 31)), round(float(rng.uniform(0.1, 0.5)), 3)
    reference = copy.deepcopy(model)
    with gradlab.no_grad():
        initial = F.cross_entropy(model(X), y).item()

    losses = student.train(model, X, y, steps, lr)
    setup = f"{kind} on {len(y)} points in {k} blobs, {steps} steps, lr {lr}"
    expect(isinstance(losses, list), "train returns a list", "a list",
           f"a {type(losses).__name__}")
    expect_equal(len(losses), steps, f"one loss per step ({steps} steps)")
    expect(all(isinstance(v, float) for v in losses), "the losses are Python floats",
           "floats (loss.item())", ", ".join(sorted({type(v).__name__ for v in losses})))
    expect_close(losses[0], initial, "the first loss is the untrained model's loss on the X "
                 "and y it was given", rtol=1e-4, atol=1e-5)
    with gradlab.no_grad():
        final = F.cross_entropy(model(X), y).item()
    expect(final < 0.5 * initial, f"training brings the loss down: {setup}",
           f"below half of {initial:.4f}", f"{final:.4f}")

    _reference(reference, X, y, steps, lr)
    for (name, mine), (_, want) in zip(model.named_parameters(), reference.named_parameters()):
        expect_close(mine, want, f"{name or 'weight'} after training, against plain SGD "
                     "(zero_grad, forward, loss, backward, step) from the same start",
                     rtol=1e-4, atol=1e-5)
