"""PyTorch's deprecated argument orders, add_(Number, Tensor) and addcmul_(Number, Tensor,
Tensor), which code copied from older optimizers still uses (ops/_util.scale_first)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

CALLS = [
    ("add", lambda x, a, b: x.add(0.5, a)),
    ("add_", lambda x, a, b: x.clone().add_(0.5, a)),
    ("sub", lambda x, a, b: x.sub(2.0, a)),
    ("sub_", lambda x, a, b: x.clone().sub_(2.0, a)),
    ("addcmul", lambda x, a, b: x.addcmul(0.25, a, b)),
    ("addcmul_", lambda x, a, b: x.clone().addcmul_(0.25, a, b)),
    ("addcdiv", lambda x, a, b: x.addcdiv(-3.0, a, b)),
    ("addcdiv_", lambda x, a, b: x.clone().addcdiv_(-3.0, a, b)),
]


def _values(lib):
    rng = np.random.default_rng(0)
    return [lib.tensor(rng.uniform(0.5, 2.0, (2, 3))) for _ in range(3)]


@pytest.mark.parametrize("name, call", CALLS, ids=[n for n, _ in CALLS])
def test_the_old_order_computes_what_the_keyword_does_and_warns(name, call):
    x, a, b = _values(gradlab)
    with pytest.warns(UserWarning, match=rf"{name}\(Number \w+, Tensor ...\) is PyTorch's "
                                         r"deprecated argument order"):
        old = call(x, a, b)
    scale = {"add": 0.5, "sub": 2.0, "addcmul": 0.25, "addcdiv": -3.0}[name.rstrip("_")]
    keyword = "value" if name.startswith("addc") else "alpha"
    method = getattr(x.clone(), name)
    new = method(a, b, **{keyword: scale}) if keyword == "value" else \
        method(a, **{keyword: scale})
    np.testing.assert_allclose(old.numpy(), new.numpy())


@needs_torch
@pytest.mark.filterwarnings("ignore:This overload of")  # PyTorch's own warning
@pytest.mark.parametrize("name, call", CALLS, ids=[n for n, _ in CALLS])
def test_the_old_order_matches_torch(name, call):
    with pytest.warns(UserWarning):
        ours = call(*_values(gradlab))
    theirs = call(*_values(torch))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_a_wrong_call_is_still_an_error():
    x, a, b = _values(gradlab)
    with pytest.raises(TypeError, match=r"add: expected 1 tensor argument\(s\) after the "
                                        r"input and alpha= as a keyword, got 3 positional"):
        x.add(a, b, 2.0)
    with pytest.raises(TypeError, match="addcmul_: expected 2 tensor"):
        x.addcmul_(a, b, a)


def old_style_adam(lib):
    """Adam as optimizers were written before PyTorch 1.5 (and are still copied): .data,
    is_sparse, the scale-first argument order, state built on the first step; the same
    code on ``lib``'s Optimizer."""

    class OldStyleAdam(lib.optim.Optimizer):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

        @lib.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad.data
                    if grad.is_sparse:
                        raise RuntimeError("Adam does not support sparse gradients")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["exp_avg"] = lib.zeros_like(p.data,
                                                          memory_format=lib.preserve_format)
                        state["exp_avg_sq"] = lib.zeros_like(p.data)
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    beta1, beta2 = group["betas"]
                    state["step"] += 1
                    exp_avg.mul_(beta1).add_(1 - beta1, grad)
                    exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)
                    denom = exp_avg_sq.sqrt().add_(group["eps"])
                    step_size = group["lr"] * math.sqrt(1 - beta2 ** state["step"]) / (
                        1 - beta1 ** state["step"])
                    p.data.addcdiv_(-step_size, exp_avg, denom)

    return OldStyleAdam


@needs_torch
@pytest.mark.filterwarnings("ignore:.*deprecated")
def test_an_old_style_optimizer_follows_torchs_trajectory():
    rng = np.random.default_rng(3)
    weight, inputs = rng.standard_normal((1, 3)), rng.standard_normal((16, 3))
    results = []
    for lib in (gradlab, torch):
        w = lib.tensor(weight, requires_grad=True)
        x = lib.tensor(inputs)
        opt = old_style_adam(lib)([w], lr=0.1)
        for _ in range(10):
            opt.zero_grad()
            ((x @ w.T - x.sum(1, keepdim=True)) ** 2).mean().backward()
            opt.step()
        results.append(w.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10)
