"""Lesson 6's checks: random models and data in float64, compared with gradlab autograd
on a copy. Every check first fills .grad with noise, as an earlier step would leave it."""

import copy
import math

import numpy as np

import gradlab
from gradlab import nn, optim
from lessons.expect import check, expect, expect_close, expect_tensor

_F64 = gradlab.float64


def _tensor(rng, *shape, requires_grad=False):
    return gradlab.tensor(rng.normal(size=shape), dtype=_F64, requires_grad=requires_grad)


def _problem(rng, n: int):
    """A small random model, a loss and a batch of n samples (regression or classes)."""
    gradlab.manual_seed(int(rng.integers(2**31)))
    d_in, hidden = int(rng.integers(2, 5)), int(rng.integers(3, 7))
    inputs = _tensor(rng, n, d_in)
    if rng.random() < 0.5:
        d_out, loss_fn, text = 1, nn.MSELoss(), "MSELoss"
        targets = _tensor(rng, n, 1)
    else:
        d_out, loss_fn, text = 3, nn.CrossEntropyLoss(), "CrossEntropyLoss, 3 classes"
        targets = gradlab.tensor(rng.integers(0, 3, size=n))
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, d_out))
    return model.double(), loss_fn, inputs, targets, text


def _noise_grads(model, rng) -> None:
    """Leave old gradients behind, as a step before this one would."""
    for p in model.parameters():
        p.grad = gradlab.tensor(rng.normal(size=tuple(p.shape)), dtype=_F64)


def _flat(tensors) -> np.ndarray:
    return np.concatenate([t.detach().numpy().ravel() for t in tensors])


def _grads(model, what: str) -> np.ndarray:
    missing = [name for name, p in model.named_parameters() if p.grad is None]
    expect(not missing, f"every parameter has a gradient ({what})", "a .grad on each",
           f"none on {', '.join(missing)}" if missing else "each has one")
    return _flat(p.grad for p in model.parameters())


@check("two_gradients")
def two_gradients(student, rng):
    n, d, m = (int(v) for v in rng.integers(2, 6, size=3))
    x, c = _tensor(rng, n, d), _tensor(rng, n, m)
    w = _tensor(rng, d, m, requires_grad=True)

    def losses():
        h = (x @ w).tanh()  # the shared part: tanh saves its output for backward
        return (h**2).mean(), (h * c).sum()

    want_a = gradlab.autograd.grad(losses()[0], w)[0]
    want_b = gradlab.autograd.grad(losses()[1], w)[0]
    loss_a, loss_b = losses()
    w.grad = _tensor(rng, d, m)  # left over from before
    try:
        got = student.two_gradients(w, loss_a, loss_b)
    except RuntimeError as error:
        if "second time" not in str(error):
            raise
        expect(False, "two backward calls through one graph", "both run", "RuntimeError: "
               "trying to backward through the graph a second time",
               "the first backward freed the saved tensors: pass retain_graph=True to it")
    expect(isinstance(got, tuple) and len(got) == 2, "two_gradients returns (grad_a, grad_b)",
           "a pair", repr(got)[:80])
    grad_a, grad_b = got
    expect_tensor(grad_a, "grad_a is a tensor")
    expect_tensor(grad_b, "grad_b is a tensor")
    shape = f"w of shape ({d}, {m})"
    expect_close(grad_a, want_a, f"d mean(h²)/dw, h = tanh(x @ w), {shape}", rtol=1e-9,
                 atol=1e-12)
    expect_close(grad_b, want_b, f"d sum(h·c)/dw, same h, {shape}", rtol=1e-9, atol=1e-12)


def _reference_step(model, optimizer, loss_fn, inputs, targets) -> float:
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()


@check("train_step")
def train_step(student, rng):
    model, loss_fn, inputs, targets, text = _problem(rng, int(rng.integers(4, 9)))
    lr = round(float(rng.uniform(0.05, 0.3)), 3)
    momentum = float(rng.choice([0.0, 0.9]))
    reference = copy.deepcopy(model)
    ref_optimizer = optim.SGD(reference.parameters(), lr=lr, momentum=momentum)
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    _noise_grads(model, rng)
    for step in range(1, 4):
        want_loss = _reference_step(reference, ref_optimizer, loss_fn, inputs, targets)
        got = student.train_step(model, optimizer, loss_fn, inputs, targets)
        setting = f"SGD(lr={lr}, momentum={momentum}), {text}"
        expect(isinstance(got, float), f"train_step returns the loss as a float (step {step})",
               "a float", f"a {type(got).__name__}", "return loss.item()")
        expect_close(got, want_loss, f"the loss train_step {step} returned, {setting}",
                     rtol=1e-9)
        before = " (before it, .grad held an earlier step's leftovers)" if step == 1 else ""
        expect_close(_flat(model.parameters()), _flat(reference.parameters()),
                     f"all parameters after train_step call {step}{before}, {setting}",
                     rtol=1e-9, atol=1e-12)


class _Counting(nn.Module):
    """The model, noting the batch size of every forward pass."""

    def __init__(self, inner) -> None:
        super().__init__()
        self.inner = inner
        self.sizes = []

    def forward(self, x):
        self.sizes.append(int(x.shape[0]))
        return self.inner(x)


@check("accumulated_gradient")
def accumulated_gradient(student, rng):
    k = int(rng.integers(2, 5))
    uneven = int(rng.integers(1, k))
    for n in (k * int(rng.integers(2, 5)), k * int(rng.integers(2, 4)) + uneven):
        model, loss_fn, inputs, targets, text = _problem(rng, n)
        reference = copy.deepcopy(model)
        reference.zero_grad()
        loss = loss_fn(reference(inputs), targets)
        loss.backward()
        counting = _Counting(model)
        _noise_grads(model, rng)
        got = student.accumulated_gradient(counting, loss_fn, inputs, targets, k)
        size = math.ceil(n / k)
        what = f"{n} samples, k = {k}, {text}"
        expect(sum(counting.sizes) == n and max(counting.sizes, default=0) <= size,
               f"forward passes on micro-batches of at most {size} samples ({what})",
               f"sizes adding up to {n}", f"sizes {counting.sizes}",
               "run the model on each micro-batch, not on the whole batch")
        want = _flat(p.grad for p in reference.parameters())
        expect_close(_grads(model, what), want,
                     f"all parameters' .grad against the whole batch's gradient ({what})",
                     rtol=1e-9, atol=1e-12)
        expect_close(got, loss.item(), f"the whole batch's loss returned ({what})", rtol=1e-9)
