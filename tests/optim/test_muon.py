"""Muon against PyTorch's: the update rule exactly (both orthogonalizations run in float64
for that comparison, since in bfloat16 their rounding differs by as much as some options
change the step), the bfloat16 orthogonalization itself, and the errors."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import gradlab
from gradlab.optim import muon as gradlab_muon
from tests.oracle import needs_torch, torch


def _torch_newton_schulz_float64(grad, ns_coefficients, ns_steps, eps):
    """PyTorch's iteration (its _muon module), in float64 instead of bfloat16."""
    a, b, c = ns_coefficients
    x = grad.double()
    tall = grad.size(0) > grad.size(1)
    x = x.T if tall else x
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return (x.T if tall else x).to(grad.dtype)


def _trajectory(lib, w0, x, steps, **options):
    w = lib.tensor(w0.copy(), requires_grad=True)
    opt = lib.optim.Muon([w], **options)
    for _ in range(steps):
        opt.zero_grad()
        ((lib.tensor(x) @ w.T) ** 2).sum().backward()
        opt.step()
    return w.detach().numpy().copy(), opt.state[w]["momentum_buffer"].numpy().copy()


@needs_torch
@pytest.mark.parametrize("shape", [(6, 4), (4, 6)], ids=["tall", "wide"])
@pytest.mark.parametrize("options", [
    dict(lr=0.02), dict(lr=0.05, nesterov=False, momentum=0.9),
    dict(lr=0.01, weight_decay=0.0, adjust_lr_fn="match_rms_adamw"),
    dict(lr=0.02, ns_steps=3, adjust_lr_fn="original"),
], ids=["defaults", "plain_momentum", "match_rms_adamw", "three_ns_steps"])
def test_update_rule_matches_pytorch(shape, options, monkeypatch):
    monkeypatch.setattr(torch.optim._muon, "_zeropower_via_newtonschulz",
                        _torch_newton_schulz_float64)
    monkeypatch.setattr(gradlab_muon, "_newton_schulz",
                        functools.partial(gradlab_muon._newton_schulz, dtype=gradlab.float64))
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=shape)
    x = rng.normal(size=(5, shape[1]))
    ours, theirs = (_trajectory(lib, w0, x, 5, **options) for lib in (gradlab, torch))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


@needs_torch
@pytest.mark.parametrize("shape", [(6, 4), (4, 6)], ids=["tall", "wide"])
def test_bfloat16_orthogonalization_matches_pytorchs(shape):
    u = np.random.default_rng(2).normal(size=shape).astype(np.float32)
    coefficients = (3.4445, -4.775, 2.0315)
    ours = gradlab_muon._newton_schulz(gradlab.tensor(u), coefficients, 5, 1e-7)
    theirs = torch.optim._muon._zeropower_via_newtonschulz(torch.tensor(u), coefficients, 5,
                                                           1e-7)
    assert ours.dtype is gradlab.bfloat16 and theirs.dtype is torch.bfloat16
    # five iterations of bfloat16 (8 bits of mantissa): agreement to a few hundredths
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), atol=0.04)


def test_orthogonalization_pushes_singular_values_towards_one():
    rng = np.random.default_rng(1)
    u = gradlab.tensor(rng.normal(size=(8, 5)) * np.array([8.0, 4, 2, 1, 0.5]),
                       dtype=gradlab.float32)
    out = gradlab_muon._newton_schulz(u, (3.4445, -4.775, 2.0315), 5, 1e-7)
    singular = np.linalg.svd(out.float().numpy(), compute_uv=False)
    spread = np.linalg.svd(u.numpy(), compute_uv=False)
    assert spread.max() / spread.min() > 10  # an order of magnitude apart ...
    assert singular.min() > 0.6 and singular.max() < 1.3  # ... then all near 1


def test_errors_teach():
    w = gradlab.ones(3, 2, requires_grad=True)
    with pytest.raises(ValueError, match="only supports 2D parameters.*AdamW"):
        gradlab.optim.Muon([w, gradlab.ones(3, requires_grad=True)])
    with pytest.raises(ValueError, match="adjust_lr_fn"):
        gradlab.optim.Muon([w], adjust_lr_fn="rms")
    with pytest.raises(ValueError, match="ns_steps"):
        gradlab.optim.Muon([w], ns_steps=100)
    with pytest.raises(ValueError, match="ns_coefficients"):
        gradlab.optim.Muon([w], ns_coefficients=(1.0, 2.0))
    with pytest.raises(ValueError, match="lr"):
        gradlab.optim.Muon([w], lr=-1.0)
