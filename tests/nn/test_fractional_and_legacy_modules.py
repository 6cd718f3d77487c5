"""FractionalMaxPool2d/3d, CrossMapLRN2d and NLLLoss2d against PyTorch: arguments, repr,
state_dict, forward and gradients; CrossMapLRN2d's legacy window and its true derivative;
their errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
from tests.oracle import check_module_against_torch, needs_torch, torch

# --- FractionalMaxPool2d / 3d -------------------------------------------------------------------

POOLS = [
    ("FractionalMaxPool2d", (3,), dict(output_size=(5, 4)), (2, 3, 11, 9)),
    ("FractionalMaxPool2d", ((2, 3),), dict(output_ratio=0.6), (3, 10, 12)),
    ("FractionalMaxPool2d", (2,), dict(output_ratio=(0.5, 0.75), return_indices=True),
     (1, 2, 8, 8)),
    ("FractionalMaxPool3d", (2,), dict(output_size=3), (2, 2, 6, 5, 7)),
    ("FractionalMaxPool3d", ((1, 2, 2),), dict(output_ratio=(0.5, 0.6, 0.7),
                                               return_indices=True), (2, 6, 8, 9)),
]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, shape", POOLS, ids=range(len(POOLS)))
def test_fractional_pool_layer_matches_torch(name, args, kwargs, shape):
    """With the same _random_samples buffer: the same values, indices and input gradient;
    the stored arguments, repr and state_dict as PyTorch's."""
    spatial = int(name[-2])
    batch = 1 if len(shape) == spatial + 1 else shape[0]
    u = np.random.default_rng(0).random((batch, shape[-spatial - 1], spatial))
    ours = getattr(nn, name)(*args, **kwargs, _random_samples=gradlab.tensor(u))
    theirs = getattr(torch.nn, name)(*args, **kwargs, _random_samples=torch.tensor(u))
    assert repr(ours) == repr(theirs)
    for attr in ("kernel_size", "output_size", "output_ratio", "return_indices"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_random_samples"]
    x = np.random.default_rng(1).standard_normal(shape)
    if not kwargs.get("return_indices"):
        check_module_against_torch(ours, theirs, [x])
        return
    (v, i), (tv, ti) = ours(gradlab.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())


def test_fractional_pool_layer_draws_new_steps_each_call_without_samples():
    pool = nn.FractionalMaxPool2d(2, output_ratio=0.5)
    assert list(pool.state_dict()) == [] and pool._random_samples is None
    x = gradlab.randn(4, 8, 21, 21)  # (20 -> 10 would step by exactly 2 whatever the draw)
    first, second = pool(x), pool(x)
    assert tuple(first.shape) == (4, 8, 10, 10)
    assert not np.array_equal(first.numpy(), second.numpy())


@pytest.mark.parametrize("make, match", [
    (lambda lib: lib.nn.FractionalMaxPool2d(2), "requires specifying either an output size, "
                                               "or a pooling ratio"),
    (lambda lib: lib.nn.FractionalMaxPool3d(2, 3, 0.5), "only one of output_size and "
                                                       "output_ratio may be specified"),
    (lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.0),
     r"output_ratio must be between 0 and 1 \(got 1.0\)"),
    (lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 0)),
     r"output_ratio must be between 0 and 1 \(got \(0.5, 0.5, 0\)\)"),
    (lambda lib: lib.nn.FractionalMaxPool3d(0, 3), "kernel_size must be greater than 0, but "
                                                  "got 0"),
])
def test_fractional_pool_layer_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make(gradlab)
    if torch is not None:
        with pytest.raises(ValueError):
            make(torch)


# --- CrossMapLRN2d ------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("channels", [1, 2, 4, 9])
def test_cross_map_lrn2d_values_match_torch(size, channels):
    """The legacy values exactly (to rounding), window and channel-0 term included."""
    x = np.random.default_rng(size * 10 + channels).standard_normal((2, channels, 3, 4))
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        ours = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.5)(gradlab.tensor(x.astype(dtype)))
        theirs = torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.5)(
            torch.tensor(x.astype(dtype)))
        assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=0)


@needs_torch
def test_cross_map_lrn2d_repr_and_attributes_match_torch():
    for args in ((3,), (4, 1e-3, 0.5, 2.0)):
        ours, theirs = nn.CrossMapLRN2d(*args), torch.nn.CrossMapLRN2d(*args)
        assert repr(ours) == repr(theirs)
        assert (ours.size, ours.alpha, ours.beta, ours.k) == \
            (theirs.size, theirs.alpha, theirs.beta, theirs.k)
        assert not isinstance(ours, nn.LocalResponseNorm)
        assert list(ours.state_dict()) == []


@pytest.mark.parametrize("size, channels", [(3, 2), (5, 3), (1, 1)])
def test_cross_map_lrn2d_is_local_response_norm_where_the_legacy_slip_cannot_show(size,
                                                                                 channels):
    """An odd window and no channel beyond (size - 1) // 2 (so none counts channel 0 by
    mistake): the two modules agree."""
    x = gradlab.tensor(np.random.default_rng(2).standard_normal((2, channels, 3, 3)))
    np.testing.assert_allclose(nn.CrossMapLRN2d(size, 0.3, 0.6, 1.2)(x).numpy(),
                               nn.LocalResponseNorm(size, 0.3, 0.6, 1.2)(x).numpy(),
                               rtol=1e-13)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_cross_map_lrn2d_gradcheck_and_gradgradcheck(size):
    from gradlab.autograd import gradcheck, gradgradcheck

    layer = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.0)
    x = gradlab.tensor(np.random.default_rng(3).standard_normal((2, 6, 2, 3)),
                       requires_grad=True)
    assert gradcheck(layer, (x,))
    assert gradgradcheck(layer, (x,))


@needs_torch
@pytest.mark.parametrize("size", [2, 3, 5])
def test_cross_map_lrn2d_gradient_is_the_derivative_of_torchs_values(size):
    """gradlab's gradient is the derivative of PyTorch's forward (central differences of
    PyTorch's values), which PyTorch's legacy hand-written backward is not."""
    x = np.random.default_rng(4).standard_normal((1, 6, 2, 2))
    cot = np.random.default_rng(5).standard_normal(x.shape)
    theirs = torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.0)
    xg = gradlab.tensor(x, requires_grad=True)
    nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.0)(xg).backward(gradlab.tensor(cot))
    eps, numeric = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        plus, minus = (theirs(torch.tensor(x + s)).numpy() for s in (step, -step))
        numeric[i] = ((plus - minus) * cot).sum() / (2 * eps)
    np.testing.assert_allclose(xg.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)
    xt = torch.tensor(x, requires_grad=True)
    theirs(xt).backward(torch.tensor(cot))
    assert not np.allclose(xt.grad.numpy(), numeric, rtol=1e-4, atol=1e-6)  # why we differ


@pytest.mark.parametrize("call, error, match", [
    (lambda lib: lib.nn.CrossMapLRN2d(3)(lib.randn(2, 3, 4)), ValueError,
     r"CrossMapLRN2d: Expected input to be 4D, got 3D instead \(shape \(2, 3, 4\)\). Fix: it "
     r"takes \(N, C, H, W\); nn.LocalResponseNorm takes any \(N, C, \*\)"),
    (lambda lib: lib.nn.CrossMapLRN2d(3)(lib.randn(1, 2, 3, 4, 5)), ValueError,
     "Expected input to be 4D, got 5D instead"),
])
def test_cross_map_lrn2d_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(gradlab)
    if torch is not None:
        with pytest.raises(error):
            call(torch)


@pytest.mark.parametrize("call, error, match", [
    (lambda: nn.CrossMapLRN2d(0)(gradlab.randn(1, 2, 3, 3)), ValueError,
     "size must be a positive int"),  # PyTorch: ZeroDivisionError
    (lambda: nn.CrossMapLRN2d(3)(gradlab.ones(1, 2, 3, 3, dtype=gradlab.int64)), RuntimeError,
     "CrossMapLRN2d"),
])
def test_cross_map_lrn2d_gradlab_only_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- NLLLoss2d ----------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("kwargs", [{}, dict(reduction="sum", ignore_index=1),
                                    dict(reduction="none"), "weight"])
def test_nll_loss2d_is_nll_loss_and_warns_as_torch(kwargs):
    rng = np.random.default_rng(6)
    weight = rng.uniform(0.5, 2.0, 4)
    ours_kw = dict(weight=gradlab.tensor(weight)) if kwargs == "weight" else kwargs
    theirs_kw = dict(weight=torch.tensor(weight)) if kwargs == "weight" else kwargs
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated. Please use "
                                           "`NLLLoss` instead"):
        ours = nn.NLLLoss2d(**ours_kw)
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        theirs = torch.nn.NLLLoss2d(**theirs_kw)
    assert isinstance(ours, nn.NLLLoss) and repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    logp = np.log(rng.dirichlet(np.ones(4), (2, 3, 5))).transpose(0, 3, 1, 2).copy()
    target = rng.integers(0, 4, (2, 3, 5))
    xg, xt = gradlab.tensor(logp, requires_grad=True), torch.tensor(logp, requires_grad=True)
    got, want = ours(xg, gradlab.tensor(target)), theirs(xt, torch.tensor(target))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_nll_loss2d_subclasses_do_not_warn():
    class Mine(nn.NLLLoss2d):
        pass

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Mine()
