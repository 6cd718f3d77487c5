"""Softsign ... RMSNorm layers: the same values, gradients (input and weight), reprs and
state_dict keys as PyTorch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradlab
from gradlab import nn
from tests.oracle import check_module_against_torch, needs_torch, torch

# (class name, constructor args, constructor kwargs); every layer takes a (2, 4, 6, 6) input
LAYERS = [
    ("Softsign", (), {}), ("Tanhshrink", (), {}), ("Softshrink", (), {}),
    ("Softshrink", (1.2,), {}), ("Hardshrink", (), {}), ("Hardshrink", (), {"lambd": 1.2}),
    ("Softmin", (1,), {}), ("Softmin", (), {"dim": -1}), ("GLU", (), {}), ("GLU", (1,), {}),
    ("PReLU", (), {}), ("PReLU", (4,), {"init": 0.1}), ("RReLU", (), {}),
    ("RReLU", (0.1, 0.3), {}), ("RReLU", (), {"inplace": True}),
    ("PixelShuffle", (2,), {}), ("PixelUnshuffle", (3,), {}), ("PixelUnshuffle", (2,), {}),
    ("RMSNorm", (6,), {}), ("RMSNorm", ([6, 6],), {"eps": 1e-3}),
    ("RMSNorm", ((4, 6, 6),), {"elementwise_affine": False}),
]
IDS = [f"{n}{a}{k}" for n, a, k in LAYERS]
NEW = ["Softsign", "Softshrink", "Hardshrink", "Tanhshrink", "Softmin", "GLU", "PReLU", "RReLU",
       "PixelShuffle", "PixelUnshuffle", "RMSNorm"]


def _inputs():
    """Away from the kinks at 0, ±0.5 and ±1.2, where one-sided derivatives differ."""
    x = np.random.default_rng(0).uniform(-3, 3, size=(2, 4, 6, 6))
    for kink in (0.0, 0.5, -0.5, 1.2, -1.2):
        x[np.abs(x - kink) < 0.05] += 0.1
    return x


def _copy_parameters(ours, theirs):
    """Load PyTorch's (randomised) parameters into ours, so the two compute the same thing."""
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(-0.5, 1.5)
    ours.load_state_dict({k: gradlab.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})


@needs_torch
@pytest.mark.parametrize(("name", "args", "kwargs"), LAYERS, ids=IDS)
def test_layer_matches_torch(name, args, kwargs):
    ours = getattr(nn, name)(*args, **kwargs).double()
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _copy_parameters(ours, theirs)
    ours.eval(), theirs.eval()  # RReLU: the deterministic mean slope (training: tested below)
    check_module_against_torch(ours, theirs, [_inputs()])
    for (key, pg), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(pg.grad.numpy(), pt.grad.numpy(), rtol=1e-8, atol=1e-12,
                                   err_msg=f"{name}.{key}.grad")


def test_layers_are_exported_and_have_pytorchs_defaults():
    for name in NEW:
        assert getattr(gradlab.nn, name) is getattr(gradlab.nn.modules, name)
    assert nn.Softshrink().lambd == 0.5 and nn.Hardshrink().lambd == 0.5
    assert nn.Softmin().dim is None and nn.GLU().dim == -1
    rrelu = nn.RReLU()
    assert (rrelu.lower, rrelu.upper, rrelu.inplace) == (1 / 8, 1 / 3, False)
    assert nn.PixelShuffle(3).upscale_factor == 3 and nn.PixelUnshuffle(2).downscale_factor == 2
    assert list(nn.Softsign().parameters()) == [] and list(nn.RReLU().parameters()) == []


def test_prelu_weight_is_a_parameter_with_one_slope_or_one_per_channel():
    one = nn.PReLU()
    assert isinstance(one.weight, nn.Parameter) and one.weight.requires_grad
    assert one.weight.tolist() == [0.25] and one.num_parameters == 1 and one.init == 0.25
    many = nn.PReLU(3, init=0.1, dtype=gradlab.float64)
    assert many.weight.dtype is gradlab.float64 and many.weight.tolist() == [0.1] * 3
    with gradlab.no_grad():
        many.weight.fill_(0.7)
    many.reset_parameters()
    assert many.weight.tolist() == [0.1] * 3
    assert list(many.state_dict()) == ["weight"]


def test_prelu_learns_its_slope():
    layer = nn.PReLU(2)
    opt = gradlab.optim.SGD(layer.parameters(), lr=0.1)
    x = gradlab.tensor([[-1.0, -2.0], [-3.0, 4.0]])
    target = gradlab.tensor([[-0.5, -0.2], [-1.5, 4.0]])  # slopes 0.5 and 0.1
    for _ in range(200):
        opt.zero_grad()
        ((layer(x) - target) ** 2).mean().backward()
        opt.step()
    np.testing.assert_allclose(layer.weight.detach().numpy(), [0.5, 0.1], atol=1e-4)


def test_rmsnorm_weight_options_and_reset():
    norm = nn.RMSNorm([2, 3])
    assert norm.normalized_shape == (2, 3) and norm.eps is None
    assert norm.weight.shape == (2, 3) and norm.weight.tolist() == [[1.0] * 3] * 2
    plain = nn.RMSNorm(3, eps=1e-6, elementwise_affine=False)
    assert plain.weight is None and list(plain.state_dict()) == [] and \
        list(plain.parameters()) == []
    assert plain.normalized_shape == (3,)
    x = gradlab.tensor([[3.0, 0.0, -4.0]])
    np.testing.assert_allclose(plain(x).numpy(), [[3.0, 0.0, -4.0]] / np.sqrt(25 / 3 + 1e-6),
                               rtol=1e-6)
    with gradlab.no_grad():
        norm.weight.fill_(2.0)
    norm.reset_parameters()
    assert norm.weight.tolist() == [[1.0] * 3] * 2


def test_rrelu_layer_draws_slopes_in_training_and_uses_the_mean_in_eval():
    layer = nn.RReLU(0.2, 0.3)
    x = gradlab.full((500,), -2.0)
    gradlab.manual_seed(0)
    slopes = layer(x).numpy() / -2.0
    assert slopes.min() >= 0.2 and slopes.max() <= 0.3 and slopes.std() > 0.02
    layer.eval()
    np.testing.assert_allclose(layer(x).numpy(), -0.5, rtol=1e-6)
    inplace = nn.RReLU(inplace=True).eval()
    y = gradlab.tensor([-1.0, 2.0])
    assert inplace(y) is y


@needs_torch
def test_softmin_without_dim_warns_like_pytorch():
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        got = nn.Softmin()(gradlab.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.nn.Softmin()(torch.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_layer_errors_come_from_their_ops():
    with pytest.raises(RuntimeError, match=r"glu: dim -1 has odd size 5"):
        nn.GLU()(gradlab.ones(2, 5))
    with pytest.raises(RuntimeError, match=r"prelu: weight has 3 values but the input"):
        nn.PReLU(3)(gradlab.ones(2, 4))
    with pytest.raises(RuntimeError, match=r"pixel_shuffle: the channel dim"):
        nn.PixelShuffle(2)(gradlab.ones(1, 3, 2, 2))
    with pytest.raises(RuntimeError, match=r"rms_norm: normalized_shape=\(4,\) must match"):
        nn.RMSNorm(4)(gradlab.ones(2, 3))


def test_layers_compose_in_a_sequential():
    model = nn.Sequential(nn.PixelUnshuffle(2), nn.PReLU(8), nn.GLU(1), nn.PixelShuffle(2),
                          nn.RMSNorm([4, 4]), nn.Softsign())
    x = gradlab.randn(2, 2, 4, 4, requires_grad=True)
    out = model(x)
    assert tuple(out.shape) == (2, 1, 4, 4)
    out.sum().backward()
    assert x.grad.shape == x.shape
    assert [k for k, _ in model.named_parameters()] == ["1.weight", "4.weight"]
