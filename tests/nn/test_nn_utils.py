"""nn.utils: gradient clipping and parameters <-> vector."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)
from tests.oracle import needs_torch, torch


def _params(lib, grads):
    out = []
    for g in grads:
        p = lib.zeros(*g.shape, dtype=lib.float64, requires_grad=True)
        p.grad = lib.tensor(g)
        out.append(p)
    return out


GRADS = [np.array([[3.0, -4.0], [1.0, 2.0]]), np.array([0.5, -6.0, 2.0])]


@needs_torch
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ours, theirs = _params(gradlab, GRADS), _params(torch, GRADS)
    total_g = clip_grad_norm_(ours, max_norm, norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert isinstance(total_g, gradlab.Tensor) and total_g.ndim == 0
    assert total_g.item() == pytest.approx(total_t.item(), rel=1e-12)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_scales_to_the_limit_and_keeps_direction():
    ps = _params(gradlab, GRADS)
    total = clip_grad_norm_(ps, 1.0).item()
    flat = np.concatenate([p.grad.numpy().ravel() for p in ps])
    assert np.linalg.norm(flat) == pytest.approx(1.0, rel=1e-5)
    want = np.concatenate([g.ravel() for g in GRADS]) / total
    np.testing.assert_allclose(flat, want, rtol=1e-5)


def test_clip_grad_norm_accepts_one_tensor_skips_missing_grads_and_empty_lists():
    p = gradlab.ones(2, requires_grad=True)
    p.grad = gradlab.tensor([3.0, 4.0])
    q = gradlab.ones(2, requires_grad=True)  # no grad yet
    assert clip_grad_norm_([p, q], 10.0).item() == pytest.approx(5.0)
    assert clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    assert clip_grad_norm_([], 1.0).item() == 0.0
    model = nn.Linear(3, 2)
    model(gradlab.randn(4, 3)).sum().backward()
    assert clip_grad_norm_(model.parameters(), 1e-3).item() > 1e-3


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_clip_grad_norm_nonfinite():
    p = gradlab.ones(2, requires_grad=True)
    p.grad = gradlab.tensor([math.inf, 1.0])
    with pytest.raises(RuntimeError, match="non-finite.*error_if_nonfinite=False"):
        clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert math.isinf(clip_grad_norm_([p], 1.0).item())


@needs_torch
def test_clip_grad_value_matches_torch():
    ours, theirs = _params(gradlab, GRADS), _params(torch, GRADS)
    clip_grad_value_(ours, 2.5)
    torch.nn.utils.clip_grad_value_(theirs, 2.5)
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert np.abs(ours[0].grad.numpy()).max() == 2.5


def test_parameters_to_vector_and_back():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = parameters_to_vector(model.parameters())
    assert vec.shape == (3 * 2 + 2 + 2 + 1,)
    np.testing.assert_array_equal(vec.detach().numpy()[:6], model[0].weight.detach().numpy()
                                  .ravel())
    vec.sum().backward()  # differentiable: every parameter gets a gradient of ones
    assert all(np.all(p.grad.numpy() == 1) for p in model.parameters())
    ids = [id(p) for p in model.parameters()]
    vector_to_parameters(gradlab.arange(11, dtype=gradlab.float32), model.parameters())
    assert [id(p) for p in model.parameters()] == ids
    assert model[1].bias.tolist() == [10.0]
    assert model[0].weight.detach().numpy().ravel().tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(RuntimeError, match=r"vec must be 1-D with 11 values.*got shape \(12,\)"):
        vector_to_parameters(gradlab.zeros(12), model.parameters())
    with pytest.raises(TypeError, match="expected vec to be a Tensor"):
        vector_to_parameters([0.0] * 11, model.parameters())
