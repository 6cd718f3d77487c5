"""gumbel_softmax: reproducible under a seed, soft outputs on the simplex, argmax frequencies
that follow softmax(logits), one-hot hard outputs with the soft gradient (straight-through),
values and gradients vs PyTorch given the same noise, gradcheck, the errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.nn.functional as F
from tests.oracle import needs_torch, torch

LOGITS = np.array([1.0, -0.5, 0.3, 2.0])


@pytest.fixture(autouse=True)
def _keep_the_global_stream():
    """These tests reseed; leave the generator as it was for the tests that follow."""
    state = gradlab.get_rng_state()
    yield
    gradlab.set_rng_state(state)


def seeded(seed, *args, **kwargs):
    gradlab.manual_seed(seed)
    return F.gumbel_softmax(*args, **kwargs)


def softmax_np(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def test_same_seed_same_sample_and_the_soft_output_is_a_distribution():
    x = gradlab.tensor(np.random.default_rng(0).standard_normal((3, 5, 4)))
    for dim in (-1, 0, 1):
        first, again = seeded(7, x, tau=0.5, dim=dim), seeded(7, x, tau=0.5, dim=dim)
        np.testing.assert_array_equal(first.numpy(), again.numpy())
        np.testing.assert_allclose(first.numpy().sum(dim), 1.0, rtol=1e-12)
        assert (first.numpy() > 0).all() and first.dtype is x.dtype
    assert not np.array_equal(seeded(7, x).numpy(), F.gumbel_softmax(x).numpy())  # fresh noise


@pytest.mark.parametrize("tau, hard", [(1.0, False), (0.3, True), (5.0, False)])
def test_argmax_frequencies_follow_softmax_of_the_logits(tau, hard):
    # The Gumbel-max trick: argmax(logits + g) is class c with probability softmax(logits)_c,
    # whatever tau (dividing by tau keeps the argmax). 40,000 seeded draws: the standard error
    # of each frequency is at most 0.0025, the tolerance 0.015 is six of them, and the seed
    # makes the draw the same every run.
    n = 40_000
    y = seeded(123, gradlab.tensor(LOGITS).expand(n, 4), tau=tau, hard=hard)
    counts = np.bincount(y.numpy().argmax(-1), minlength=4)
    np.testing.assert_allclose(counts / n, softmax_np(LOGITS), atol=0.015)
    assert counts.min() > 0


def test_hard_is_one_hot_with_the_soft_gradient():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((6, 5))
    v = rng.standard_normal((6, 5))
    x_hard = gradlab.tensor(logits, requires_grad=True)
    y_hard = seeded(3, x_hard, tau=0.7, hard=True)
    y_hard.backward(gradlab.tensor(v))
    x_soft = gradlab.tensor(logits, requires_grad=True)
    y_soft = seeded(3, x_soft, tau=0.7)
    y_soft.backward(gradlab.tensor(v))
    h = y_hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(-1) == 1).all()
    np.testing.assert_array_equal(h.argmax(-1), y_soft.detach().numpy().argmax(-1))
    np.testing.assert_allclose(x_hard.grad.numpy(), x_soft.grad.numpy(), rtol=1e-12,
                               atol=1e-15)  # straight through: the soft sample's gradient
    assert np.abs(x_soft.grad.numpy()).max() > 1e-3


def test_small_tau_approaches_one_hot():
    y = seeded(5, gradlab.tensor(LOGITS).expand(200, 4), tau=0.01).numpy()
    assert (y.max(-1) > 0.99).mean() > 0.95


def test_gradcheck_with_the_noise_held_fixed():
    x = gradlab.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    # (hard=True on purpose has no true derivative: its value is piecewise constant)
    assert gradlab.autograd.gradcheck(lambda a: seeded(11, a, tau=0.8, dim=0), (x,))
    assert gradlab.autograd.gradgradcheck(lambda a: seeded(11, a, tau=0.8), (x,))


@needs_torch
@pytest.mark.parametrize("hard, dim", [(False, -1), (True, -1), (True, 0)])
def test_matches_pytorchs_formula_given_the_same_noise(hard, dim):
    rng = np.random.default_rng(4)
    logits, v = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    gradlab.manual_seed(9)
    noise = (-gradlab.empty(4, 5, dtype=gradlab.float64).exponential_().log()).numpy()
    x = gradlab.tensor(logits, requires_grad=True)
    ours = seeded(9, x, tau=0.6, hard=hard, dim=dim)
    ours.backward(gradlab.tensor(v))
    xt = torch.tensor(logits, requires_grad=True)
    soft = ((xt + torch.tensor(noise)) / 0.6).softmax(dim)
    theirs = soft
    if hard:  # torch.nn.functional.gumbel_softmax's own lines, with our noise
        index = soft.max(dim, keepdim=True)[1]
        theirs = torch.zeros_like(xt).scatter_(dim, index, 1.0) - soft.detach() + soft
    theirs.backward(torch.tensor(v))
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_float32_and_the_deprecated_eps():
    x = gradlab.tensor(LOGITS, dtype=gradlab.float32)
    assert seeded(0, x).dtype is gradlab.float32
    with pytest.warns(UserWarning, match="gumbel_softmax: the eps parameter is deprecated"):
        F.gumbel_softmax(x, eps=1e-5)


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.gumbel_softmax(gradlab.tensor([1, 2])), RuntimeError,
     r"gumbel_softmax: expected a floating point tensor.*\.float\(\)"),
    (lambda: F.gumbel_softmax(gradlab.zeros(2, 3), dim=2), IndexError,
     r"gumbel_softmax: dimension 2 is out of range"),
    (lambda: F.gumbel_softmax([1.0, 2.0]), TypeError, r"logits must be a tensor, got list"),
])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
