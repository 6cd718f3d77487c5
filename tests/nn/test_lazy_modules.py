"""Lazy modules and UninitializedParameter/Buffer: shapes from the first input, PyTorch's
reprs and state_dict keys before and after, materialization in place (an optimizer keeps
working), load_state_dict into a lazy module, dtype moves before the dry run, errors."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
from gradlab.nn.modules.lazy import LazyModuleMixin
from gradlab.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from tests.oracle import check_module_against_torch, needs_torch, torch

# (class name, constructor args, kwargs, input shape of the dry run)
LAZY = [
    ("LazyLinear", (5,), {}, (2, 3)),
    ("LazyLinear", (4,), {"bias": False}, (2, 7, 3)),
    ("LazyConv1d", (4, 3), {"padding": 1, "groups": 2}, (2, 6, 5)),
    ("LazyConv2d", (3, 2), {"stride": 2, "bias": False}, (1, 2, 5, 5)),
    ("LazyConv2d", (3, 3), {"padding": "same", "padding_mode": "reflect"}, (2, 4, 6)),
    ("LazyConv3d", (2, 2), {}, (1, 3, 3, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 4)),
    ("LazyConvTranspose2d", (2, 3), {"groups": 2, "dilation": 2}, (1, 4, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 2, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), {"momentum": None, "bias": False}, (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), {"affine": False}, (2, 2, 2, 3, 3)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"affine": False, "eps": 1e-3}, (1, 2, 3, 3, 3)),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(LAZY)]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, shape", LAZY, ids=IDS)
def test_lazy_module_matches_torch_before_and_after_the_dry_run(name, args, kwargs, shape):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert ours.has_uninitialized_params() and isinstance(ours, LazyModuleMixin)
    before = ours.state_dict()
    assert list(before) == list(theirs.state_dict())
    assert [repr(v) for v in before.values()] == [repr(v) for v in theirs.state_dict().values()]
    x = np.random.default_rng(0).standard_normal(shape)
    ours(gradlab.tensor(x, dtype=gradlab.float32))
    theirs(torch.tensor(x, dtype=torch.float32))
    assert repr(ours) == repr(theirs)
    assert type(ours).__name__ == type(theirs).__name__ == name[4:]
    assert not isinstance(ours, LazyModuleMixin) and not any(map(is_lazy, ours.parameters()))
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    # Now an ordinary layer: with PyTorch's values it computes PyTorch's outputs and grads.
    theirs.double()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    ours.double()
    check_module_against_torch(ours, theirs, [x])


def test_parameters_are_the_same_objects_so_an_optimizer_made_before_keeps_working():
    layer = nn.LazyLinear(2)
    before = list(layer.parameters())
    opt = gradlab.optim.SGD(layer.parameters(), lr=0.5)
    layer(gradlab.randn(3, 4)).sum().backward()
    assert [id(p) for p in layer.parameters()] == [id(p) for p in before]
    assert all(type(p) is nn.Parameter and p.shape in ((2, 4), (2,)) for p in before)
    old = layer.weight.detach().clone()
    opt.step()
    np.testing.assert_allclose(layer.weight.detach().numpy(),
                               old.numpy() - 0.5 * layer.weight.grad.numpy(), rtol=1e-6)


def test_materialized_parameters_get_pytorchs_default_init():
    gradlab.manual_seed(0)
    layer = nn.LazyLinear(200)
    layer(gradlab.zeros(1, 16))
    bound = 1 / math.sqrt(16)
    w = layer.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    norm = nn.LazyBatchNorm1d()
    norm(gradlab.randn(4, 3))
    np.testing.assert_array_equal(norm.weight.detach().numpy(), np.ones(3))
    np.testing.assert_array_equal(norm.bias.detach().numpy(), np.zeros(3))
    assert int(norm.num_batches_tracked) == 1 and type(norm.running_mean) is gradlab.Tensor


def test_load_state_dict_materializes_from_the_checkpoint():
    source = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    lazy = nn.Sequential(nn.LazyLinear(4), nn.LazyBatchNorm1d())
    assert not lazy.load_state_dict(source.state_dict()).missing_keys
    assert type(lazy[0]).__name__ == "LazyLinear"  # it becomes Linear at its first forward
    assert not lazy[0].has_uninitialized_params() and lazy[1].running_var.shape == (4,)
    assert lazy[0].in_features == 3 and lazy[1].num_features == 4  # read from the shapes
    conv = nn.LazyConvTranspose2d(4, 3, groups=2)
    conv.load_state_dict(nn.ConvTranspose2d(6, 4, 3, groups=2).state_dict())
    assert conv.in_channels == 6 and conv(gradlab.randn(1, 6, 2, 2)).shape == (1, 4, 4, 4)
    np.testing.assert_array_equal(lazy[0].weight.detach().numpy(),
                                  source[0].weight.detach().numpy())
    x = gradlab.randn(5, 3)
    np.testing.assert_allclose(lazy(x).detach().numpy(), source(x).detach().numpy(), rtol=1e-6)
    assert type(lazy[0]) is nn.Linear and type(lazy[1]) is nn.BatchNorm1d


def test_loading_a_lazy_checkpoint_into_a_lazy_module_keeps_it_lazy():
    a, b = nn.LazyConv2d(3, 2), nn.LazyConv2d(3, 2)
    result = a.load_state_dict(b.state_dict())
    assert not result.missing_keys and not result.unexpected_keys
    assert a.has_uninitialized_params() and is_lazy(a.weight)
    missing = nn.LazyLinear(2).load_state_dict({"weight": UninitializedParameter()},
                                               strict=False)
    assert missing.missing_keys == ["bias"] and missing.unexpected_keys == []
    with pytest.raises(RuntimeError, match='Missing key.*"bias"'):
        nn.LazyLinear(2).load_state_dict({"weight": UninitializedParameter()})
    with pytest.raises(RuntimeError, match="shape of an uninitialized parameter"):
        nn.Linear(2, 2).load_state_dict(nn.LazyLinear(2).state_dict())


def test_dtype_and_device_moves_before_the_dry_run_are_kept():
    layer = nn.LazyBatchNorm1d().double()
    assert is_lazy(layer.weight) and is_lazy(layer.running_mean)
    assert layer.weight.dtype is gradlab.float64 and layer.running_mean.dtype is gradlab.float64
    layer.to("cpu")(gradlab.randn(3, 2, dtype=gradlab.float64))
    assert layer.weight.dtype is gradlab.float64 and layer.running_var.dtype is gradlab.float64
    p = UninitializedParameter(dtype=gradlab.float16)
    assert p.to(gradlab.float16) is p and p.float().dtype is gradlab.float32
    assert is_lazy(p.float()) and type(p.cpu()) is UninitializedParameter


def test_uninitialized_parameter_and_buffer():
    p, b = UninitializedParameter(), UninitializedBuffer(persistent=False)
    assert isinstance(p, nn.Parameter) and p.requires_grad and not b.requires_grad
    assert isinstance(b, nn.Buffer) and b.persistent is False
    assert repr(p) == "<UninitializedParameter>" and repr(b) == "<UninitializedBuffer>"
    clone = copy.deepcopy(p)
    assert type(clone) is UninitializedParameter and clone is not p
    b.materialize((2, 3), dtype=gradlab.float64)
    assert type(b) is gradlab.Tensor and b.shape == (2, 3) and b.dtype is gradlab.float64
    p.materialize([4])
    assert type(p) is nn.Parameter and p.shape == (4,) and p.requires_grad
    assert gradlab.nn.parameter.UninitializedParameter is nn.UninitializedParameter
    assert nn.UninitializedBuffer is UninitializedBuffer


@pytest.mark.parametrize("use, error, match", [
    (lambda p: p.shape, RuntimeError, "Can't access the shape of an uninitialized"),
    (lambda p: p.size(), RuntimeError, "Can't access the size"),
    (lambda p: p.data, RuntimeError, "Can't access the data"),
    (lambda p: p * 2, ValueError, "Attempted to use an uninitialized parameter"),
    (lambda p: gradlab.nn.functional.linear(gradlab.ones(2, 2), p), ValueError,
     "call the module on a dummy batch first"),
    (lambda p: p.share_memory_(), RuntimeError, "share the memory"),
])
def test_using_an_uninitialized_parameter_says_what_to_do(use, error, match):
    with pytest.raises(error, match=match):
        use(nn.LazyLinear(2).weight)


def test_lazy_errors_teach():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                                           r"to LazyConv2d"):
        nn.LazyConv2d(2, 3)(gradlab.randn(4, 4))
    with pytest.raises(ValueError, match=r"in_channels \(3, read from the input\) must be "
                                         r"divisible by groups \(2\)"):
        nn.LazyConv1d(4, 1, groups=2)(gradlab.randn(1, 3, 5))
    with pytest.raises(ValueError, match="expected input with a channel dim"):
        nn.LazyBatchNorm1d()(gradlab.randn(3))

    class Half(LazyModuleMixin, nn.Linear):
        def __init__(self):
            super().__init__(1, 1)
            self.extra = UninitializedParameter()

    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented"):
        Half()(gradlab.ones(1, 1))


def test_unbatched_instance_norm_reads_the_channel_dim():
    """(C, L) input has its channels in dim 0 (PyTorch 2.13 reads dim 1 and then fails)."""
    norm = nn.LazyInstanceNorm1d()
    out = norm(gradlab.randn(3, 5))
    assert norm.num_features == 3 and norm.weight.shape == (3,) and out.shape == (3, 5)
