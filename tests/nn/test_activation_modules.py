"""Activation layers: the same values and gradients as PyTorch's, and the same reprs."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import nn
from tests.oracle import needs_torch, torch

# (class name, constructor args, constructor kwargs)
LAYERS = [
    ("ReLU", (), {}), ("ReLU", (), {"inplace": True}), ("ReLU6", (), {}),
    ("ReLU6", (True,), {}), ("LeakyReLU", (), {}), ("LeakyReLU", (0.2, True), {}),
    ("ELU", (), {}), ("ELU", (0.5,), {"inplace": True}), ("SELU", (), {}),
    ("CELU", (2.0,), {}), ("GELU", (), {}), ("GELU", (), {"approximate": "tanh"}),
    ("SiLU", (), {}), ("SiLU", (True,), {}), ("Mish", (), {}), ("Sigmoid", (), {}),
    ("Tanh", (), {}), ("Softplus", (), {}), ("Softplus", (2.0, 5.0), {}), ("Hardtanh", (), {}),
    ("Hardtanh", (-2.0, 3.0), {}), ("Hardswish", (), {}), ("Hardsigmoid", (), {}),
    ("LogSigmoid", (), {}), ("Softmax", (1,), {}), ("Softmax", (), {"dim": -1}),
    ("LogSoftmax", (0,), {}),
]
IDS = [f"{n}{a}{k}" for n, a, k in LAYERS]


def _inputs():
    # away from the kinks at 0, ±1, ±3 and 6, where one-sided derivatives differ
    rng = np.random.default_rng(0)
    x = rng.uniform(-7, 7, size=(4, 5))
    for kink in (0.0, 1.0, -1.0, 3.0, -3.0, 6.0):
        x[np.abs(x - kink) < 0.05] += 0.1
    return x


@needs_torch
@pytest.mark.parametrize(("name", "args", "kwargs"), LAYERS, ids=IDS)
def test_activation_layer_matches_torch(name, args, kwargs):
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    x = _inputs()
    xg, xt = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    # an in-place layer may not write into a leaf: feed it a fresh non-leaf copy
    yg, yt = ours(xg * 1.0), theirs(xt * 1.0)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    cot = np.random.default_rng(1).standard_normal(x.shape)
    yg.backward(gradlab.tensor(cot))
    yt.backward(torch.tensor(cot))
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-7, atol=1e-12)


def test_inplace_layers_write_into_their_input():
    for layer in (nn.ReLU(inplace=True), nn.LeakyReLU(0.1, inplace=True), nn.ELU(inplace=True),
                  nn.ReLU6(inplace=True), nn.SiLU(inplace=True)):
        x = gradlab.tensor([-1.0, 2.0, 7.0])
        y = layer(x)
        assert y is x, type(layer).__name__
    x = gradlab.tensor([-1.0, 2.0])
    assert nn.ReLU()(x) is not x and x.tolist() == [-1.0, 2.0]


def test_activation_layers_have_no_parameters_and_attributes_are_settings():
    layer = nn.LeakyReLU(0.3)
    assert list(layer.parameters()) == [] and layer.negative_slope == 0.3
    assert nn.Softplus(beta=2).beta == 2 and nn.GELU("tanh").approximate == "tanh"
    assert nn.Softmax(dim=0).dim == 0
    with pytest.raises(ValueError, match=r"Hardtanh: min_val \(2\) must be less than max_val"):
        nn.Hardtanh(2, 1)
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh'"):
        nn.GELU("fast")(gradlab.ones(1))


@needs_torch
@pytest.mark.parametrize("shape", [(5,), (2, 5), (2, 3, 4), (2, 3, 4, 5)])
def test_softmax_without_dim_uses_pytorchs_old_rule_and_warns(shape):
    x = np.random.default_rng(0).standard_normal(shape)
    for ours, theirs in ((nn.Softmax(), torch.nn.Softmax()),
                         (nn.LogSoftmax(), torch.nn.LogSoftmax())):
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            got = ours(gradlab.tensor(x))
        with pytest.warns(UserWarning):
            want = theirs(torch.tensor(x))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
