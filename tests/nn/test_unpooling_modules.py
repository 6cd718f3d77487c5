"""MaxUnpool1d/2d/3d, LPPool1d/2d/3d and ChannelShuffle: PyTorch's constructors, attributes,
reprs and state_dicts, and outputs and input gradients against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from gradlab import nn
from tests.oracle import check_module_against_torch, needs_torch, torch

CONSTRUCTORS = [
    ("MaxUnpool1d", (2,), {}),
    ("MaxUnpool1d", (3,), {"stride": 2, "padding": 1}),
    ("MaxUnpool2d", (2,), {}),
    ("MaxUnpool2d", ((3, 2),), {"stride": (2, 1), "padding": (1, 0)}),
    ("MaxUnpool3d", (2, 1), {}),
    ("MaxUnpool3d", ((1, 2, 3),), {"padding": 1}),
    ("LPPool1d", (2, 3), {}),
    ("LPPool1d", (1.5, 3, 2, True), {}),
    ("LPPool2d", (2, (2, 3)), {"stride": (1, 2)}),
    ("LPPool2d", (float("inf"), 2), {"ceil_mode": True}),
    ("LPPool3d", (3, 2), {}),
    ("ChannelShuffle", (2,), {}),
]
ATTRIBUTES = {"MaxUnpool": ("kernel_size", "stride", "padding"),
              "LPPool": ("norm_type", "kernel_size", "stride", "ceil_mode"),
              "ChannelShuffle": ("groups",)}


@pytest.mark.parametrize("name, args, kwargs", CONSTRUCTORS)
def test_constructor_attributes_repr_and_state_dict(name, args, kwargs):
    layer = getattr(nn, name)(*args, **kwargs)
    assert layer.state_dict() == {} and list(layer.parameters()) == []
    attributes = next(v for k, v in ATTRIBUTES.items() if name.startswith(k))
    if torch is None:
        assert all(hasattr(layer, a) for a in attributes)
        return
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(layer) == repr(theirs)
    for attribute in attributes:
        assert getattr(layer, attribute) == getattr(theirs, attribute), attribute


def test_max_unpool_stores_tuples_and_defaults_stride_to_kernel_size():
    layer = nn.MaxUnpool2d(3)
    assert (layer.kernel_size, layer.stride, layer.padding) == ((3, 3), (3, 3), (0, 0))
    assert nn.MaxUnpool1d(2, 1).stride == (1,)
    assert nn.MaxUnpool3d((1, 2, 3)).stride == (1, 2, 3)


@needs_torch
@pytest.mark.parametrize("dims, kernel, stride, padding, shape", [
    (1, 2, None, 0, (2, 3, 9)),
    (1, 3, 2, 1, (3, 8)),
    (2, 2, None, 0, (2, 2, 5, 7)),
    (2, (3, 2), (2, 1), (1, 0), (1, 2, 6, 5)),
    (3, 2, None, 0, (1, 2, 4, 5, 4)),
    (3, (1, 2, 3), (1, 2, 2), (0, 1, 1), (2, 3, 4, 5)),
])
def test_pool_then_unpool_matches_torch(dims, kernel, stride, padding, shape):
    """The PyTorch docs' pattern: MaxPool(return_indices=True), then MaxUnpool with the
    pool's input size as output_size. Indices come from PyTorch's pool (converted), so 3-D
    is checked on real pool indices; values and the gradient of the pooled values."""
    pool = getattr(torch.nn, f"MaxPool{dims}d")(kernel, stride, padding, return_indices=True)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal(shape))
    pooled, idx = pool(x)
    yt = pooled.clone().requires_grad_()
    yg = gradlab.tensor(pooled.numpy(), requires_grad=True)
    theirs = getattr(torch.nn, f"MaxUnpool{dims}d")(kernel, stride, padding)
    ours = getattr(nn, f"MaxUnpool{dims}d")(kernel, stride, padding)
    size = x.size() if x.dim() == dims + 2 else x.size()[-dims:]  # (the whole size: batched)
    want = theirs(yt, idx, output_size=size)
    got = ours(yg, gradlab.tensor(idx.numpy()), output_size=list(size))
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    if dims > 1 and len(shape) == dims + 2:  # (1-D and unbatched ones end in a squeeze)
        assert got.grad_fn.name() == want.grad_fn.name()  # MaxUnpool2DBackward0 ...
    g = np.random.default_rng(1).standard_normal(tuple(want.shape))
    want.backward(torch.from_numpy(g))
    got.backward(gradlab.tensor(g))
    np.testing.assert_array_equal(yg.grad.numpy(), yt.grad.numpy())


def test_max_unpool2d_after_gradlabs_own_max_pool2d_restores_the_maxima():
    x = gradlab.tensor(np.random.default_rng(2).uniform(0.5, 2.0, (1, 2, 4, 6)))
    pooled, idx = nn.MaxPool2d(2, return_indices=True)(x)
    back = nn.MaxUnpool2d(2)(pooled, idx)
    assert back.shape == x.shape
    np.testing.assert_array_equal(nn.MaxPool2d(2)(back).numpy(), pooled.numpy())
    assert np.count_nonzero(back.numpy()) == pooled.numel()


@needs_torch
@pytest.mark.parametrize("name, args, shape", [
    ("LPPool1d", (2, 3), (2, 3, 8)),
    ("LPPool1d", (1.5, 2, 1, True), (3, 7)),
    ("LPPool2d", (2, (2, 3), (1, 2)), (2, 2, 5, 7)),
    ("LPPool2d", (3, 2, None, True), (1, 2, 5, 5)),
    ("LPPool2d", (math.inf, 2), (1, 2, 4, 4)),
    ("LPPool3d", (2, 2), (1, 2, 4, 4, 3)),
    ("ChannelShuffle", (3,), (2, 6, 2, 3)),
    ("ChannelShuffle", (2,), (1, 4, 5)),
])
def test_module_matches_torch(name, args, shape):
    x = np.random.default_rng(3).uniform(0.2, 2.0, shape)
    check_module_against_torch(getattr(nn, name)(*args), getattr(torch.nn, name)(*args), [x])


def test_channel_shuffle_deals_the_channels_out_of_their_groups():
    x = gradlab.arange(6.0).reshape(1, 6, 1)
    assert nn.ChannelShuffle(2)(x).flatten().tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert nn.ChannelShuffle(3)(x).flatten().tolist() == [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]


def test_module_errors_come_from_the_ops():
    with pytest.raises(RuntimeError, match="channel_shuffle: the number of channels"):
        nn.ChannelShuffle(4)(gradlab.ones(1, 6, 2))
    with pytest.raises(RuntimeError, match="max_unpool2d: indices must be an int64 tensor"):
        nn.MaxUnpool2d(2)(gradlab.ones(1, 1, 2, 2), gradlab.zeros(1, 1, 2, 2))
    with pytest.raises(ValueError, match="lp_pool1d: norm_type must be non-zero"):
        nn.LPPool1d(0, 2)(gradlab.ones(1, 4))
