"""instance_norm and local_response_norm: the ops (oracle table, running statistics, errors)
and the modules (InstanceNorm1d/2d/3d, LocalResponseNorm) against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

# --- NumPy references -------------------------------------------------------------------------


def channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def np_instance_norm(x, w=None, b=None, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    if w is not None:
        y = y * channel(w, x.ndim) + channel(b, x.ndim)
    return y


def np_local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0):
    c = x.shape[1]
    sq = x * x
    total = np.zeros_like(x)
    for i in range(c):
        lo, hi = max(i - size // 2, 0), min(i + (size - 1) // 2, c - 1)
        total[:, i] = sq[:, lo:hi + 1].sum(axis=1)
    return x / (k + alpha / size * total) ** beta


def normal(rng, dtype, shapes):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def with_running_stats(rng, dtype, shapes):
    x, w, b, rm, rv = shapes
    return [rng.standard_normal(x).astype(dtype), rng.standard_normal(w).astype(dtype),
            rng.standard_normal(b).astype(dtype), rng.standard_normal(rm).astype(dtype),
            rng.uniform(0.5, 2.0, rv).astype(dtype)]


def F(lib):
    return lib.nn.functional


CASES = [
    OpCase("instance_norm_affine",
           lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b),
           ((2, 3, 4), (3,), (3,)), numpy=lambda np, x, w, b: np_instance_norm(x, w, b),
           inputs=normal, variants=(((2, 3, 2, 3), (3,), (3,)), ((1, 3, 2, 2, 2), (3,), (3,)))),
    OpCase("instance_norm_plain", lambda lib, x: F(lib).instance_norm(x, eps=1e-3),
           ((3, 2, 5),), numpy=lambda np, x: np_instance_norm(x, eps=1e-3), inputs=normal),
    OpCase("instance_norm_with_stats",
           lambda lib, x, w, b, rm, rv: F(lib).instance_norm(x, rm.clone(), rv.clone(), w, b,
                                                             momentum=0.3),
           ((2, 3, 4), (3,), (3,), (3,), (3,)),
           numpy=lambda np, x, w, b, rm, rv: np_instance_norm(x, w, b),
           inputs=with_running_stats, grad_inputs=(0, 1, 2)),
    OpCase("instance_norm_running_stats",
           lambda lib, x, w, b, rm, rv: F(lib).instance_norm(x, rm, rv, w, b,
                                                             use_input_stats=False),
           ((2, 3, 4), (3,), (3,), (3,), (3,)),
           numpy=lambda np, x, w, b, rm, rv: (x - channel(rm, 3)) / np.sqrt(
               channel(rv, 3) + 1e-5) * channel(w, 3) + channel(b, 3),
           inputs=with_running_stats, grad_inputs=(0, 1, 2)),
    OpCase("local_response_norm",
           lambda lib, x: F(lib).local_response_norm(x, 3, alpha=0.5, beta=0.6, k=2.0),
           ((2, 5, 3),),
           numpy=lambda np, x: np_local_response_norm(x, 3, alpha=0.5, beta=0.6, k=2.0),
           inputs=normal, variants=(((2, 4, 2, 3),), ((1, 3, 2, 2, 2),))),
    OpCase("local_response_norm_even_size",
           lambda lib, x: F(lib).local_response_norm(x, 4, alpha=0.3),
           ((2, 5, 2, 2),), numpy=lambda np, x: np_local_response_norm(x, 4, alpha=0.3),
           inputs=normal),
    OpCase("local_response_norm_wider_than_channels",
           lambda lib, x: F(lib).local_response_norm(x, 7, alpha=1.0, beta=0.5),
           ((2, 3, 4),), numpy=lambda np, x: np_local_response_norm(x, 7, alpha=1.0, beta=0.5),
           inputs=normal),
]

globals().update(standard_op_tests(CASES))


# --- running statistics -----------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("shape", [(4, 3, 5), (2, 3, 2, 3)])
def test_functional_updates_running_stats_like_torch(shape):
    rng = np.random.default_rng(1)
    ours = [gradlab.zeros(3, dtype=gradlab.float64), gradlab.ones(3, dtype=gradlab.float64)]
    theirs = [torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)]
    version = ours[0]._version
    for step in range(1, 4):
        x = rng.standard_normal(shape) * step + step
        gradlab.nn.functional.instance_norm(gradlab.tensor(x), *ours, momentum=0.25)
        torch.nn.functional.instance_norm(torch.tensor(x), *theirs, momentum=0.25)
        for g, t in zip(ours, theirs):
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)
    assert ours[0]._version > version


def test_use_input_stats_false_leaves_running_stats_alone():
    rm, rv = gradlab.tensor([0.5, -1.0]), gradlab.tensor([2.0, 0.5])
    gradlab.nn.functional.instance_norm(gradlab.randn(4, 2, 3), rm, rv, use_input_stats=False)
    assert rm.tolist() == [0.5, -1.0] and rv.tolist() == [2.0, 0.5]


# --- modules against PyTorch ------------------------------------------------------------------

MODULE_CASES = [
    ("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)),
    ("InstanceNorm2d", (2, 3, 4, 3)), ("InstanceNorm2d", (3, 4, 3)),
    ("InstanceNorm3d", (2, 3, 2, 3, 2)), ("InstanceNorm3d", (3, 2, 2, 2)),
]


def _pair(name, affine, track):
    ours = getattr(gradlab.nn, name)(3, affine=affine, track_running_stats=track, momentum=0.2,
                                     dtype=gradlab.float64)
    theirs = getattr(torch.nn, name)(3, affine=affine, track_running_stats=track, momentum=0.2,
                                     dtype=torch.float64)
    if affine:
        rng = np.random.default_rng(5)
        w, b = rng.standard_normal(3), rng.standard_normal(3)
        with gradlab.no_grad():
            ours.weight.copy_(gradlab.tensor(w))
            ours.bias.copy_(gradlab.tensor(b))
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(w))
            theirs.bias.copy_(torch.tensor(b))
    return ours, theirs


def _step_and_compare(ours, theirs, x):
    gx = gradlab.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    g_out = np.random.default_rng(7).standard_normal(x.shape)
    y, ty = ours(gx), theirs(tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-9, atol=1e-10)
    y.backward(gradlab.tensor(g_out))
    ty.backward(torch.tensor(g_out))
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-10)
    if ours.affine:
        for p, tp in ((ours.weight, theirs.weight), (ours.bias, theirs.bias)):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-8, atol=1e-10)
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("track", [False, True])
@pytest.mark.parametrize("name, shape", MODULE_CASES)
def test_module_train_then_eval_matches_torch(name, shape, affine, track):
    ours, theirs = _pair(name, affine, track)
    rng = np.random.default_rng(hash(shape) % 1000)
    _step_and_compare(ours, theirs, rng.standard_normal(shape) * 2 + 1)  # train: stats move
    ours.eval()
    theirs.eval()
    _step_and_compare(ours, theirs, rng.standard_normal(shape))
    assert list(ours.state_dict()) == list(theirs.state_dict())


@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"affine": True}, {"track_running_stats": True},
                                    {"affine": True, "bias": False, "eps": 1e-3,
                                     "momentum": None}])
@pytest.mark.parametrize("name", ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"])
def test_instance_norm_repr_and_state_dict_keys_match_torch(name, kwargs):
    ours, theirs = getattr(gradlab.nn, name)(4, **kwargs), getattr(torch.nn, name)(4, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@needs_torch
@pytest.mark.parametrize("args, kwargs", [((3,), {}), ((2,), {"alpha": 0.1, "beta": 0.5,
                                                               "k": 2.0})])
def test_local_response_norm_module_matches_torch(args, kwargs):
    ours, theirs = gradlab.nn.LocalResponseNorm(*args, **kwargs), \
        torch.nn.LocalResponseNorm(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == []
    x = np.random.default_rng(2).standard_normal((2, 5, 3, 2))
    gx, tx = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours(gx).sum().backward()
    theirs(tx).sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-10)


def test_momentum_none_keeps_running_stats_and_num_batches_tracked_is_not_counted():
    m = gradlab.nn.InstanceNorm1d(2, track_running_stats=True, momentum=None)
    m(gradlab.randn(3, 2, 4))
    assert m.running_mean.tolist() == [0.0, 0.0] and m.running_var.tolist() == [1.0, 1.0]
    assert m.num_batches_tracked.item() == 0


def test_old_checkpoint_with_unwanted_running_stats_is_refused():
    m = gradlab.nn.InstanceNorm1d(2)
    # A plain dict has no version metadata: a checkpoint from before PyTorch 0.4.
    state = {"running_mean": gradlab.zeros(2), "running_var": gradlab.ones(2)}
    with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
        m.load_state_dict(state)


# --- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("make, shape, error, match", [
    (lambda: gradlab.nn.InstanceNorm1d(3), (2, 3, 4, 5), ValueError,
     r"InstanceNorm1d: expected 2D \(unbatched\) or 3D \(batched\) input, got 4D"),
    (lambda: gradlab.nn.InstanceNorm2d(3), (3, 4), ValueError, r"got 2D input of shape"),
    (lambda: gradlab.nn.InstanceNorm3d(3), (3, 4, 5), ValueError, r"expected 4D .* got 3D"),
    (lambda: gradlab.nn.InstanceNorm2d(3, affine=True), (2, 4, 3, 3), ValueError,
     r"expected 3 channels in dim 1 \(num_features=3\)"),
    (lambda: gradlab.nn.InstanceNorm1d(3, track_running_stats=True), (4, 5), ValueError,
     r"expected 3 channels in dim 0"),
    (lambda: gradlab.nn.InstanceNorm1d(3), (2, 3, 1), ValueError,
     r"more than 1 spatial element"),
    (lambda: gradlab.nn.LocalResponseNorm(2), (2, 3), ValueError,
     r"local_response_norm: expected .* at least 3 dims, got shape \(2, 3\)"),
])
def test_module_errors(make, shape, error, match):
    with pytest.raises(error, match=match):
        make()(gradlab.randn(*shape))


def test_channel_mismatch_without_affine_or_stats_only_warns():
    with pytest.warns(UserWarning, match="does not match num_features=3"):
        y = gradlab.nn.InstanceNorm1d(3)(gradlab.randn(2, 4, 5))
    assert y.shape == (2, 4, 5)


@pytest.mark.parametrize("call, error, match", [
    (lambda x: gradlab.nn.functional.instance_norm(x, use_input_stats=False), RuntimeError,
     r"running_mean and running_var must be given when use_input_stats=False"),
    (lambda x: gradlab.nn.functional.instance_norm(x, weight=gradlab.ones(4)), RuntimeError,
     r"instance_norm: weight should have one value per channel, shape \(3,\)"),
    (lambda x: gradlab.nn.functional.instance_norm(x, gradlab.zeros(3)), RuntimeError,
     r"give both running_mean and running_var"),
    (lambda x: gradlab.nn.functional.instance_norm(x[0, 0]), ValueError,
     r"at least 2 dims, got shape \(4,\)"),
    (lambda x: gradlab.nn.functional.instance_norm(x[:, :, 0]), ValueError,
     r"more than 1 spatial element"),
    (lambda x: gradlab.nn.functional.local_response_norm(x, 0), ValueError,
     r"size must be a positive int"),
])
def test_functional_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(gradlab.randn(2, 3, 4))


def test_empty_input_passes_through():
    x = gradlab.randn(0, 3, 4)
    assert gradlab.nn.functional.local_response_norm(x, 2).shape == (0, 3, 4)
    assert gradlab.nn.functional.instance_norm(x).shape == (0, 3, 4)
