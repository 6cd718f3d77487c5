"""The 3-D layers (Conv3d, ConvTranspose3d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d,
AdaptiveMaxPool3d) against PyTorch: repr, state_dict, init, padding modes, forward and
gradients; their errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
from tests.nn.test_convolution import torch_twin
from tests.oracle import check_module_against_torch, needs_torch, torch

pytestmark = pytest.mark.filterwarnings("ignore:Using padding=.same.")

CONV_LAYERS = [
    ("Conv3d", (2, 3, 3), {}),
    ("Conv3d", (4, 2, (2, 3, 1)), dict(stride=(2, 1, 1), padding=(1, 1, 0), dilation=(1, 1, 2),
                                       groups=2, bias=False)),
    ("Conv3d", (2, 2, 3), dict(padding="same", padding_mode="reflect")),
    ("Conv3d", (2, 3, 2), dict(padding=1, padding_mode="replicate")),
    ("Conv3d", (2, 2, (3, 2, 3)), dict(padding=(1, 0, 1), padding_mode="circular")),
    ("Conv3d", (2, 2, 2), dict(padding="valid")),
    ("ConvTranspose3d", (2, 3, 3), dict(stride=2, output_padding=1)),
    ("ConvTranspose3d", (4, 2, (2, 3, 2)), dict(stride=(1, 2, 2), padding=1, groups=2,
                                                dilation=(2, 1, 1), bias=False)),
]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs", CONV_LAYERS,
                         ids=[f"{n}{i}" for i, (n, _, _) in enumerate(CONV_LAYERS)])
def test_conv_layer_matches_torch(name, args, kwargs):
    """repr, state_dict keys and shapes as PyTorch; forward and all gradients with its weights."""
    ours, theirs = torch_twin(name, args, kwargs, with_their_weights=True)
    x = np.random.default_rng(0).standard_normal((2, args[0], 4, 5, 4))
    check_module_against_torch(ours, theirs, [x])
    for key, value in theirs.named_parameters():
        np.testing.assert_allclose(dict(ours.named_parameters())[key].grad.numpy(),
                                   value.grad.numpy(), rtol=1e-9, atol=1e-12)


@needs_torch
def test_conv_layers_take_unbatched_input_and_transposed_output_size():
    ours = nn.Conv3d(2, 3, 2, padding=1).double()
    theirs = torch.nn.Conv3d(2, 3, 2, padding=1).double()
    ours.load_state_dict({k: gradlab.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    check_module_against_torch(ours, theirs, [np.random.default_rng(1).standard_normal(
        (2, 3, 4, 3))])
    up, up_t = nn.ConvTranspose3d(2, 2, 3, stride=2), torch.nn.ConvTranspose3d(2, 2, 3, stride=2)
    x = torch.randn(1, 2, 3, 3, 3)
    assert tuple(up(gradlab.tensor(x.numpy()), output_size=(8, 7, 8)).shape) == \
        tuple(up_t(x, output_size=(8, 7, 8)).shape) == (1, 2, 8, 7, 8)
    with pytest.raises(ValueError, match=r"ConvTranspose3d: requested an output size of "
                                         r"\(9, 7, 7\).*range from 7 to 8 in dim 0"):
        up(gradlab.tensor(x.numpy()), output_size=(9, 7, 7))


def test_conv3d_default_init_is_uniform_within_one_over_sqrt_fan_in():
    """PyTorch's init: W and b ~ U(±1/√fan_in), fan_in = C_in/groups · kd · kh · kw."""
    layer = nn.Conv3d(4, 8, (3, 2, 3), groups=2)
    bound = 1 / math.sqrt(2 * 3 * 2 * 3)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert w.shape == (8, 2, 3, 2, 3) and b.shape == (8,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.15 * bound  # the std of U(-a, a) is a/√3
    transposed = nn.ConvTranspose3d(4, 6, 2, groups=2, dtype=gradlab.float64)
    assert transposed.weight.shape == (4, 3, 2, 2, 2)  # (C_in, C_out/groups, k, k, k)
    assert transposed.weight.dtype is gradlab.float64
    assert np.abs(transposed.weight.detach().numpy()).max() <= 1 / math.sqrt(3 * 8)


POOL_LAYERS = [
    ("MaxPool3d", (2,), {}),
    ("MaxPool3d", ((3, 2, 2),), dict(stride=(2, 1, 2), padding=1, dilation=(1, 2, 1),
                                     ceil_mode=True)),
    ("AvgPool3d", (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("AvgPool3d", ((2, 1, 2),), dict(stride=1, divisor_override=3)),
    ("AdaptiveAvgPool3d", ((3, None, 2),), {}),
    ("AdaptiveAvgPool3d", (1,), {}),
    ("AdaptiveMaxPool3d", ((2, 3, 3),), {}),
]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs", POOL_LAYERS,
                         ids=[f"{n}{i}" for i, (n, _, _) in enumerate(POOL_LAYERS)])
def test_pool_layer_matches_torch(name, args, kwargs):
    ours, theirs = torch_twin(name, args, kwargs)
    assert ours.state_dict() == {} and not list(ours.parameters())
    rng = np.random.default_rng(2)
    check_module_against_torch(ours, theirs, [rng.standard_normal((2, 2, 5, 4, 5))])
    check_module_against_torch(ours, theirs, [rng.standard_normal((2, 4, 5, 4))])  # unbatched


@needs_torch
@pytest.mark.parametrize("name, args", [("MaxPool3d", (2, 1)), ("AdaptiveMaxPool3d", (3,))])
def test_max_pool_layers_return_indices_like_torch(name, args):
    ours, theirs = getattr(nn, name)(*args, return_indices=True), \
        getattr(torch.nn, name)(*args, return_indices=True)
    x = np.random.default_rng(3).integers(0, 3, (1, 2, 4, 5, 4)).astype(float)
    (yg, ig), (yt, it) = ours(gradlab.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_array_equal(yg.numpy(), yt.numpy())
    np.testing.assert_array_equal(ig.numpy(), it.numpy())
    assert ig.dtype is gradlab.int64


def test_layers_without_torch():
    """Shapes and the values that follow from the definitions, with no oracle."""
    x = gradlab.arange(64.0).reshape(1, 1, 4, 4, 4)
    assert nn.MaxPool3d(2)(x).flatten().tolist() == [21.0, 23.0, 29.0, 31.0, 53.0, 55.0, 61.0,
                                                     63.0]
    assert nn.AvgPool3d(4)(x).item() == pytest.approx(31.5)
    assert nn.AdaptiveAvgPool3d(1)(x).item() == pytest.approx(31.5)
    assert nn.AdaptiveMaxPool3d((1, 1, 2))(x).flatten().tolist() == [61.0, 63.0]
    conv = nn.Conv3d(1, 1, 2, bias=False)
    with gradlab.no_grad():
        conv.weight.fill_(1.0)
    assert conv(x)[0, 0, 0, 0, 0].item() == sum([0, 1, 4, 5, 16, 17, 20, 21])
    assert tuple(nn.ConvTranspose3d(1, 2, 2, stride=2)(x).shape) == (1, 2, 8, 8, 8)


@pytest.mark.parametrize("make, message", [
    (lambda: nn.Conv3d(3, 6, 3, groups=2), r"Conv3d: in_channels \(3\) must be divisible by "
                                           r"groups \(2\)"),
    (lambda: nn.Conv3d(4, 6, 3, groups=4), r"Conv3d: out_channels \(6\) must be divisible"),
    (lambda: nn.Conv3d(1, 1, 3, stride=2, padding="same"), r"Conv3d: padding='same' is not "
                                                           r"supported for strided"),
    (lambda: nn.Conv3d(1, 1, 3, padding_mode="mirror"), r"Conv3d: padding_mode must be one"),
    (lambda: nn.ConvTranspose3d(1, 1, 3, padding_mode="circular"),
     r"Only 'zeros' padding mode is supported for ConvTranspose3d"),
    (lambda: nn.ConvTranspose3d(1, 1, 3, padding="same"),
     r"ConvTranspose3d: padding must be an int or a tuple"),
])
def test_layer_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_layer_forward_errors_name_the_3d_op():
    with pytest.raises(RuntimeError, match=r"conv3d: given groups=1.*expects input with 2 "
                                           r"channels.*has 3"):
        nn.Conv3d(2, 4, 3)(gradlab.zeros(1, 3, 4, 4, 4))
    with pytest.raises(RuntimeError, match=r"max_pool3d: expected a 4-D \(unbatched\) or 5-D"):
        nn.MaxPool3d(2)(gradlab.zeros(4, 4, 4))
