"""max_unpool1d/2d/3d, lp_pool1d/2d, the *_with_indices names, pdist and channel_shuffle:
forward vs NumPy, gradcheck, values and gradients vs PyTorch, round trips, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.autograd.forward_ad as fwAD
from gradlab.ops import pairwise, unpooling
from tests.oracle import OpCase, away_from_zero, needs_torch, standard_op_tests, torch


def F(lib):
    return lib.nn.functional


# --- max_unpool ---------------------------------------------------------------------------------

def unpool_inputs(spatial, plane):
    """Pooled values and int64 indices: distinct positions of a ``plane``-sized output plane
    per (N, C) (as a non-overlapping max pool gives them), in random order."""
    def make(rng, dtype, shapes):
        shape = shapes[0]
        lead, per_plane = shape[:-spatial], math.prod(shape[-spatial:])
        idx = np.stack([rng.permutation(plane)[:per_plane]
                        for _ in range(math.prod(lead))]) if math.prod(lead) else \
            np.zeros((0, per_plane), dtype=np.int64)
        return [rng.uniform(-2, 2, shape).astype(dtype), idx.reshape(shape).astype(np.int64)]
    return make


def np_unpool(out_spatial):
    def unpool(np, y, idx):
        lead = y.shape[:-len(out_spatial)]
        planes = math.prod(lead)
        out = np.zeros((planes, math.prod(out_spatial)), dtype=y.dtype)
        per_plane = math.prod(y.shape[len(lead):])
        out[np.arange(planes)[:, None], idx.reshape(planes, per_plane)] = \
            y.reshape(planes, per_plane)
        return out.reshape(lead + tuple(out_spatial))
    return unpool


UNPOOL_CASES = [
    OpCase("max_unpool1d", lambda lib, y, i: F(lib).max_unpool1d(y, i, 2), ((2, 3, 4),),
           numpy=np_unpool((8,)), inputs=unpool_inputs(1, 8),
           variants=(((3, 4),), ((0, 3, 4),))),
    OpCase("max_unpool1d", lambda lib, y, i: F(lib).max_unpool1d(y, i, 3, 2, 1, [8]),
           ((2, 2, 4),), numpy=np_unpool((8,)), inputs=unpool_inputs(1, 8),
           id="max_unpool1d_output_size"),
    OpCase("max_unpool2d", lambda lib, y, i: F(lib).max_unpool2d(y, i, 2), ((2, 3, 3, 2),),
           numpy=np_unpool((6, 4)), inputs=unpool_inputs(2, 24), variants=(((3, 3, 2),),)),
    OpCase("max_unpool2d", lambda lib, y, i: F(lib).max_unpool2d(y, i, (3, 2), (2, 1), (1, 0)),
           ((1, 2, 3, 3),), numpy=np_unpool((5, 4)), inputs=unpool_inputs(2, 20),
           id="max_unpool2d_stride_padding"),
    OpCase("max_unpool2d",
           lambda lib, y, i: F(lib).max_unpool2d(y, i, 2, output_size=(1, 2, 7, 5)),
           ((1, 2, 3, 2),), numpy=np_unpool((7, 5)), inputs=unpool_inputs(2, 35),
           id="max_unpool2d_output_size"),
    OpCase("max_unpool3d", lambda lib, y, i: F(lib).max_unpool3d(y, i, 2), ((1, 2, 2, 1, 3),),
           numpy=np_unpool((4, 2, 6)), inputs=unpool_inputs(3, 48),
           variants=(((2, 2, 1, 3),),)),
    OpCase("max_unpool3d", lambda lib, y, i: F(lib).max_unpool3d(y, i, (1, 2, 3), 2, 0, (2, 3, 8)),
           ((1, 1, 1, 1, 3),), numpy=np_unpool((2, 3, 8)), inputs=unpool_inputs(3, 48),
           id="max_unpool3d_output_size"),
]
globals().update(standard_op_tests(UNPOOL_CASES, prefix="unpool_"))


@pytest.mark.parametrize("kernel, stride, padding", [(2, None, 0), (3, 2, 1),
                                                     ((2, 3), (1, 2), (1, 1))])
def test_max_unpool2d_undoes_max_pool2d(kernel, stride, padding):
    """Each max goes back where it came from; every other position is 0, and pooling the
    result again gives the same maxima (for positive inputs: the zeros never win)."""
    x = gradlab.tensor(np.random.default_rng(3).uniform(0.5, 2.0, (2, 3, 7, 6)))
    pooled, idx = F(gradlab).max_pool2d(x, kernel, stride, padding, return_indices=True)
    back = F(gradlab).max_unpool2d(pooled, idx, kernel, stride, padding, output_size=x.shape)
    assert back.shape == x.shape
    flat, xf = back.numpy().reshape(6, -1), x.numpy().reshape(6, -1)
    kept = np.zeros_like(flat, dtype=bool)
    kept[np.arange(6)[:, None], idx.numpy().reshape(6, -1)] = True
    np.testing.assert_array_equal(flat[kept], xf[kept])
    assert not flat[~kept].any()
    again = F(gradlab).max_pool2d(back, kernel, stride, padding)
    np.testing.assert_array_equal(again.numpy(), pooled.numpy())


def test_max_unpool1d_undoes_max_pool1d_and_its_gradient_is_the_gather():
    x = gradlab.tensor(np.random.default_rng(4).standard_normal((2, 2, 9)), requires_grad=True)
    pooled, idx = F(gradlab).max_pool1d(x, 3, return_indices=True)
    y = pooled.detach().requires_grad_()
    back = F(gradlab).max_unpool1d(y, idx, 3)
    np.testing.assert_array_equal(np.take_along_axis(back.detach().numpy(), idx.numpy(), -1),
                                  pooled.detach().numpy())
    g = np.random.default_rng(5).standard_normal((2, 2, 9))
    back.backward(gradlab.tensor(g))
    np.testing.assert_array_equal(y.grad.numpy(), np.take_along_axis(g, idx.numpy(), -1))
    assert back.grad_fn.name() == "MaxUnpool2DBackward0"


@settings(max_examples=25, deadline=None)
@given(data=st.data(), spatial=st.sampled_from([1, 2]))
def test_max_unpool_round_trip_for_any_kernel_stride_padding(data, spatial):
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(spatial))
    stride = tuple(data.draw(st.integers(1, 3)) for _ in range(spatial))
    padding = tuple(data.draw(st.integers(0, k // 2)) for k in kernel)
    size = tuple(data.draw(st.integers(k, k + 4)) for k in kernel)
    x = np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal((2, 2) + size)
    pool = F(gradlab).max_pool2d if spatial == 2 else F(gradlab).max_pool1d
    unpool = F(gradlab).max_unpool2d if spatial == 2 else F(gradlab).max_unpool1d
    pooled, idx = pool(gradlab.tensor(x), kernel, stride, padding, return_indices=True)
    y = pooled.detach().requires_grad_()
    back = unpool(y, idx, kernel, stride, padding, output_size=size)
    assert tuple(back.shape) == x.shape
    flat, flat_idx = back.detach().numpy().reshape(4, -1).copy(), idx.numpy().reshape(4, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, flat_idx, 1),
                                  pooled.numpy().reshape(4, -1))
    np.put_along_axis(flat, flat_idx, 0.0, 1)
    assert not flat.any()  # zeros wherever no index points
    g = np.random.default_rng(1).standard_normal(x.shape)
    back.backward(gradlab.tensor(g))
    if torch is not None:
        tf = torch.nn.functional
        tpool, tunpool = (tf.max_pool2d, tf.max_unpool2d) if spatial == 2 else \
            (tf.max_pool1d, tf.max_unpool1d)
        tp, ti = tpool(torch.from_numpy(x), kernel, stride, padding, return_indices=True)
        np.testing.assert_array_equal(ti.numpy(), idx.numpy())
        yt = tp.clone().requires_grad_()
        want = tunpool(yt, ti, kernel, stride, padding, output_size=size)
        np.testing.assert_array_equal(back.detach().numpy(), want.detach().numpy())
        want.backward(torch.from_numpy(g))
        np.testing.assert_array_equal(y.grad.numpy(), yt.grad.numpy())


def test_max_unpool_output_size_rule():
    y = gradlab.zeros(1, 1, 3, 3)
    idx = gradlab.zeros(1, 1, 3, 3, dtype=gradlab.int64)
    unpool = F(gradlab).max_unpool2d
    assert unpool(y, idx, 2).shape == (1, 1, 6, 6)
    assert unpool(y, idx, 3, 2, 1).shape == (1, 1, 5, 5)
    assert unpool(y, idx, 2, output_size=[7, 5]).shape == (1, 1, 7, 5)
    assert unpool(y, idx, 2, output_size=gradlab.Size([9, 9, 5, 7])).shape == (1, 1, 5, 7)
    assert F(gradlab).max_unpool1d(y[0], idx[0], 2, output_size=7).shape == (1, 3, 7)


UNPOOL_ERRORS = [
    (lambda y, i: F(gradlab).max_unpool2d(y.numpy(), i, 2), TypeError,
     "max_unpool2d: input and indices must be tensors"),
    (lambda y, i: F(gradlab).max_unpool2d(y[0, 0], i[0, 0], 2), RuntimeError,
     r"max_unpool2d: expected a 3-D \(C, H, W\) or 4-D \(N, C, H, W\) input, got shape \(2, 2\)"),
    (lambda y, i: F(gradlab).max_unpool1d(y[0, 0, 0], i[0, 0, 0], 2), RuntimeError,
     r"max_unpool1d: expected a 2-D \(C, L\) or 3-D"),
    (lambda y, i: F(gradlab).max_unpool3d(y[0], i[0], 2), RuntimeError,
     r"max_unpool3d: expected a 4-D \(C, D, H, W\) or 5-D"),
    (lambda y, i: F(gradlab).max_unpool2d(y.long(), i, 2), RuntimeError,
     "expected a floating point input, got gradlab.int64. Fix: convert with .float()"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i.int(), 2), RuntimeError,
     r"indices must be an int64 tensor \(what max_pool2d\(..., return_indices=True\) returns\)"
     r", got gradlab.int32. Fix: indices.long\(\)"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i[..., :1], 2), RuntimeError,
     r"indices must have the input's shape \(1, 2, 2, 2\) .*got \(1, 2, 2, 1\)"),
    (lambda y, i: F(gradlab).max_unpool2d(y[:, :, :0], i[:, :, :0], 2), RuntimeError,
     r"non-zero size in every dim but the batch dim, got shape \(1, 2, 0, 2\)"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i, 2, stride=0), RuntimeError,
     r"max_unpool2d: stride must be positive, got \(0, 0\)"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i, (2, 0)), RuntimeError,
     r"kernel_size must be positive, got \(2, 0\)"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i, (2, 2, 2)), ValueError,
     "kernel_size must be an int or a tuple of 2 ints"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i, 2, output_size=(9, 9)), ValueError,
     r"invalid output_size \(9, 9\): dim 0 must be between 2 and 6 \(exclusive\)"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i, 2, output_size=(5, 5, 5)), ValueError,
     "output_size should be a sequence of 2 or 4 ints .* but it has 3"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i, 1, 1, 2), ValueError,
     r"the output size \(-2, -2\) is negative in dim 0"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i + 100, 2), RuntimeError,
     r"found an invalid max index 1\d\d: the output planes are 4x4, so an index must lie in "
     r"\[0, 16\)"),
    (lambda y, i: F(gradlab).max_unpool2d(y, i - 100, 2), RuntimeError,
     r"invalid max index -\d\d"),
    (lambda y, i: F(gradlab).max_unpool1d(y[0], i[0], 2), RuntimeError,
     r"max_unpool1d: found an invalid max index \d+: the output planes are 4,"),
]


@pytest.mark.parametrize("call, error, match", UNPOOL_ERRORS)
def test_max_unpool_errors_teach(call, error, match):
    x = gradlab.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 4)))
    y, i = F(gradlab).max_pool2d(x, 2, return_indices=True)
    with pytest.raises(error, match=match):
        call(y, i)


# --- lp_pool ------------------------------------------------------------------------------------

def positive(rng, dtype, shapes):
    return [rng.uniform(0.3, 2.0, s).astype(dtype) for s in shapes]


def np_lp_pool(p, k, s):
    """(Σ window x^p)^(1/p) over the last dim, windows of k every s, by hand."""
    def lp(np, x):
        n_out = (x.shape[-1] - k) // s + 1
        wins = np.stack([x[..., o * s:o * s + k] for o in range(n_out)], -2)
        return (np.abs(wins).max(-1) if math.isinf(p) else (wins ** p).sum(-1) ** (1 / p))
    return lp


LP_CASES = [
    OpCase("lp_pool1d", lambda lib, x: F(lib).lp_pool1d(x, 2, 3, 2), ((2, 3, 9),),
           numpy=np_lp_pool(2, 3, 2), variants=(((3, 9),),), inputs=away_from_zero),
    OpCase("lp_pool1d", lambda lib, x: F(lib).lp_pool1d(x, 1.5, 2), ((2, 2, 6),),
           numpy=np_lp_pool(1.5, 2, 2), inputs=positive, id="lp_pool1d_p1.5"),
    OpCase("lp_pool1d", lambda lib, x: F(lib).lp_pool1d(x, math.inf, 3, 1), ((2, 2, 6),),
           numpy=np_lp_pool(math.inf, 3, 1), inputs=away_from_zero, id="lp_pool1d_inf"),
    OpCase("lp_pool1d", lambda lib, x: F(lib).lp_pool1d(x, -math.inf, 2), ((1, 2, 6),),
           inputs=away_from_zero, id="lp_pool1d_minus_inf"),
    OpCase("lp_pool1d", lambda lib, x: F(lib).lp_pool1d(x, 3, 2, 2, ceil_mode=True),
           ((2, 2, 7),), inputs=positive, id="lp_pool1d_ceil"),
    OpCase("lp_pool2d", lambda lib, x: F(lib).lp_pool2d(x, 2, (2, 3), (1, 2)), ((2, 2, 4, 7),),
           inputs=away_from_zero, variants=(((2, 4, 7),),)),
    OpCase("lp_pool2d", lambda lib, x: F(lib).lp_pool2d(x, 1, 2), ((1, 2, 4, 4),),
           inputs=positive, id="lp_pool2d_p1"),
    OpCase("lp_pool2d", lambda lib, x: F(lib).lp_pool2d(x, 4, 3, 2, True), ((1, 2, 6, 5),),
           inputs=away_from_zero, id="lp_pool2d_ceil"),
    OpCase("lp_pool2d", lambda lib, x: F(lib).lp_pool2d(x, math.inf, 2), ((1, 2, 4, 4),),
           inputs=away_from_zero, id="lp_pool2d_inf"),
    # (built on avg_pool3d/max_pool3d of gradlab.ops.volumetric_pooling)
    OpCase("lp_pool3d", lambda lib, x: F(lib).lp_pool3d(x, 2, 2), ((1, 2, 4, 2, 3),),
           inputs=away_from_zero, variants=(((2, 2, 2, 4),),)),
    OpCase("lp_pool3d", lambda lib, x: F(lib).lp_pool3d(x, 1.5, (1, 2, 2), (1, 1, 2), True),
           ((1, 1, 2, 3, 5),), inputs=positive, id="lp_pool3d_ceil"),
]
globals().update(standard_op_tests(LP_CASES, prefix="lp_"))


@needs_torch
@pytest.mark.parametrize("p", [2, 3, 1.5])
def test_lp_pool_gradient_where_a_window_sums_to_zero_is_pytorchs(p):
    """An all-zero window: (·)^(1/p) has an infinite derivative at 0, but relu's derivative
    (a where) stops it, so the window's gradient is exactly 0, as in PyTorch. A window whose
    power sum is negative (odd or fractional p) gives nan in both."""
    x = np.array([[[0.0, 0.0, 1.0, 2.0, -1.0, 0.5]]])
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    with np.errstate(all="ignore"):
        F(gradlab).lp_pool1d(ours, p, 2).sum().backward()
    torch.nn.functional.lp_pool1d(theirs, p, 2).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), equal_nan=True)
    assert ours.grad.numpy()[0, 0, :2].tolist() == [0.0, 0.0]
    assert np.isnan(ours.grad.numpy()[0, 0, 4]) == (p != 2)


@needs_torch
@settings(max_examples=25, deadline=None)
@given(data=st.data(), spatial=st.sampled_from([1, 2]), p=st.sampled_from([1, 2, 2.5, math.inf]))
def test_lp_pool_matches_torch_for_any_kernel_stride_ceil_mode(data, spatial, p):
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(spatial))
    stride = data.draw(st.one_of(st.none(), st.integers(1, 3)))
    ceil = data.draw(st.booleans())
    size = tuple(data.draw(st.integers(k, k + 4)) for k in kernel)
    x = np.random.default_rng(data.draw(st.integers(0, 99))).uniform(0.2, 2, (2, 2) + size)
    name = f"lp_pool{spatial}d"
    k = kernel[0] if spatial == 1 else kernel
    ours, theirs = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got = getattr(F(gradlab), name)(ours, p, k, stride, ceil)
    want = getattr(torch.nn.functional, name)(theirs, p, k, stride, ceil)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    g = np.random.default_rng(2).standard_normal(tuple(want.shape))
    got.backward(gradlab.tensor(g))
    want.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call, error, match", [
    (lambda x: F(gradlab).lp_pool2d(x, 0, 2), ValueError, "lp_pool2d: norm_type must be non-zero"),
    (lambda x: F(gradlab).lp_pool1d(x.numpy(), 2, 2), TypeError, "lp_pool1d: expected a tensor"),
    (lambda x: F(gradlab).lp_pool2d(x, 2, (2, 2, 2)), ValueError,
     "lp_pool2d: kernel_size must be an int or a tuple of 2 ints"),
    (lambda x: F(gradlab).lp_pool2d(x, 2, 5), RuntimeError, "is too small for kernel_size"),
])
def test_lp_pool_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call(gradlab.ones(1, 2, 4, 4))


# --- the *_with_indices names -------------------------------------------------------------------

WITH_INDICES_CASES = [
    OpCase("max_pool1d_with_indices", lambda lib, x: F(lib).max_pool1d_with_indices(x, 3, 2, 1),
           ((2, 3, 8),), gradgrad=False),
    OpCase("max_pool2d_with_indices", lambda lib, x: F(lib).max_pool2d_with_indices(x, 2),
           ((2, 2, 4, 6),), gradgrad=False),
    OpCase("adaptive_max_pool1d_with_indices",
           lambda lib, x: F(lib).adaptive_max_pool1d_with_indices(x, 3), ((2, 2, 7),),
           gradgrad=False),
    OpCase("adaptive_max_pool2d_with_indices",
           lambda lib, x: F(lib).adaptive_max_pool2d_with_indices(x, (2, 3)), ((1, 2, 5, 7),),
           gradgrad=False),
    OpCase("max_pool3d_with_indices",
           lambda lib, x: F(lib).max_pool3d_with_indices(x, (2, 3, 2), 2, 1),
           ((1, 2, 4, 5, 4),), variants=(((2, 3, 4, 3),),), gradgrad=False),
    OpCase("adaptive_max_pool3d_with_indices",
           lambda lib, x: F(lib).adaptive_max_pool3d_with_indices(x, (2, 3, 2)),
           ((1, 2, 5, 7, 3),), variants=(((2, 4, 4, 4),),), gradgrad=False),
]
globals().update(standard_op_tests(WITH_INDICES_CASES, prefix="with_indices_"))


def test_with_indices_names_always_return_the_indices():
    x = gradlab.tensor(np.random.default_rng(0).standard_normal((1, 2, 6)))
    values, idx = F(gradlab).max_pool1d_with_indices(x, 2, return_indices=False)
    want, want_idx = F(gradlab).max_pool1d(x, 2, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), want.numpy())
    np.testing.assert_array_equal(idx.numpy(), want_idx.numpy())
    assert idx.dtype is gradlab.int64
    x3 = gradlab.tensor(np.random.default_rng(1).standard_normal((1, 2, 5, 4, 6)))
    for pooled, want in ((F(gradlab).max_pool3d_with_indices(x3, 2, return_indices=False),
                          F(gradlab).max_pool3d(x3, 2, return_indices=True)),
                         (F(gradlab).adaptive_max_pool3d_with_indices(x3, 3, False),
                          F(gradlab).adaptive_max_pool3d(x3, 3, return_indices=True))):
        for got, expected in zip(pooled, want, strict=True):
            np.testing.assert_array_equal(got.numpy(), expected.numpy())


# --- pdist --------------------------------------------------------------------------------------

def np_pdist(p):
    def dist(np, x):
        i, j = np.triu_indices(x.shape[0], 1)
        d = np.abs(x[i] - x[j])
        if p == 0:
            return (d != 0).sum(-1).astype(x.dtype)
        if math.isinf(p):
            return d.max(-1) if d.shape[-1] else d.sum(-1)
        return (d ** p).sum(-1) ** (1 / p)
    return dist


PDIST_CASES = [
    # (PyTorch has no forward AD for pdist: jvp is checked against finite differences below)
    OpCase("pdist", lambda lib, x: F(lib).pdist(x), ((5, 3),), numpy=np_pdist(2),
           variants=(((1, 3),), ((4, 0),)), jvp=False),
    *[OpCase("pdist", lambda lib, x, p=p: lib.pdist(x, p), ((4, 3),), numpy=np_pdist(p),
             jvp=False, id=f"pdist_p{p}") for p in (1, 0.5, 1.5, 3, math.inf)],
    OpCase("pdist", lambda lib, x: lib.pdist(x, 0), ((4, 3),), numpy=np_pdist(0), jvp=False,
           gradgrad=False, id="pdist_p0"),  # a count: its gradient is a constant 0
]
globals().update(standard_op_tests(PDIST_CASES, prefix="pdist_"))


@needs_torch
@pytest.mark.parametrize("p", [2, 1, 0.5, 1.5, 3, math.inf, 0])
def test_pdist_gradient_at_zero_distance_and_ties_is_pytorchs(p):
    """Equal rows (distance 0), equal coordinates (diff 0: the kink of p <= 1) and inf-norm
    ties (every tied coordinate gets the whole gradient): all as PyTorch's pdist."""
    x = np.array([[1.0, 2, 3], [1, 2, 3], [1, 5, 3], [0, 0, 0], [3, -3, 1], [1, 1, 1]])
    ours, theirs = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = F(gradlab).pdist(ours, p), torch.pdist(theirs, p)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    g = np.arange(1.0, 16.0)
    got.backward(gradlab.tensor(g))
    want.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_pdist_of_no_rows_is_empty_with_an_empty_gradient():
    """(PyTorch 2.13's pdist backward crashes on a (0, M) input, so this is checked alone.)"""
    x = gradlab.zeros(0, 2, requires_grad=True)
    d = F(gradlab).pdist(x)
    assert d.shape == (0,)
    d.sum().backward()
    assert x.grad.shape == (0, 2)


@pytest.mark.parametrize("p", [2, 1, 0.7, 3, math.inf])
def test_pdist_jvp_matches_finite_differences(p):
    rng = np.random.default_rng(8)
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    with fwAD.dual_level():
        out = F(gradlab).pdist(fwAD.make_dual(gradlab.tensor(x), gradlab.tensor(t)), p)
        tangent = fwAD.unpack_dual(out).tangent.numpy()
    eps = 1e-6
    plus, minus = (F(gradlab).pdist(gradlab.tensor(x + s * t), p).numpy() for s in (eps, -eps))
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.pdist(gradlab.ones(2, 3, 4)), RuntimeError,
     r"pdist: expected a 2-D input \(N rows of M features\), got shape \(2, 3, 4\)"),
    (lambda: gradlab.pdist(gradlab.ones(3)), RuntimeError, "x.unsqueeze"),
    (lambda: gradlab.pdist(gradlab.ones(3, 2), -1), RuntimeError, "pdist: p must be >= 0"),
    (lambda: gradlab.pdist(gradlab.ones(3, 2, dtype=gradlab.int64)), RuntimeError,
     "pdist: only floating point inputs are supported, got gradlab.int64"),
    (lambda: gradlab.pdist([[1.0, 2.0]]), TypeError, "pdist: expected a tensor, got list"),
])
def test_pdist_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- channel_shuffle ----------------------------------------------------------------------------

def np_shuffle(g):
    """out[:, k·g + group] = in[:, group·(C/g) + k], channel by channel."""
    def shuffle(np, x):
        c = x.shape[1]
        out = np.empty_like(x)
        for group in range(g):
            for k in range(c // g):
                out[:, k * g + group] = x[:, group * (c // g) + k]
        return out
    return shuffle


SHUFFLE_CASES = [
    OpCase("channel_shuffle", lambda lib, x: F(lib).channel_shuffle(x, 3), ((2, 6, 3),),
           numpy=np_shuffle(3), variants=(((0, 6, 2),),)),
    OpCase("channel_shuffle", lambda lib, x: lib.channel_shuffle(x, 2), ((1, 4, 2, 3),),
           numpy=np_shuffle(2), id="channel_shuffle_2d"),
    # PyTorch's native kernel has no derivative (gradlab's is channel_shuffle's): values only
    OpCase("native_channel_shuffle", lambda lib, x: lib.native_channel_shuffle(x, 4),
           ((2, 8, 1, 2, 2),), numpy=np_shuffle(4), grad=False),
]
globals().update(standard_op_tests(SHUFFLE_CASES, prefix="shuffle_"))


@needs_torch
def test_channel_shuffle_of_integers_matches_torch():
    x = np.arange(2 * 6 * 2).reshape(2, 6, 2)
    got = F(gradlab).channel_shuffle(gradlab.tensor(x), 2)
    want = torch.nn.functional.channel_shuffle(torch.tensor(x), 2)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.dtype is gradlab.int64


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.channel_shuffle(gradlab.ones(1, 5, 2), 2), RuntimeError,
     r"channel_shuffle: the number of channels \(dim 1 of shape \(1, 5, 2\)\) is 5, which is "
     r"not divisible by groups=2"),
    (lambda: gradlab.channel_shuffle(gradlab.ones(1, 4, 2), 0), RuntimeError,
     "groups .* must be positive, got 0"),
    (lambda: gradlab.native_channel_shuffle(gradlab.ones(1, 4), 2), RuntimeError,
     r"native_channel_shuffle: expected an input of shape \(N, C, \*\) with more than 2 dims, "
     r"got shape \(1, 4\)"),
    (lambda: gradlab.channel_shuffle(gradlab.ones(1, 4, 2), 2.0), TypeError,
     "groups must be an int, got float"),
    (lambda: gradlab.channel_shuffle([1.0], 2), TypeError, "expected a tensor, got list"),
])
def test_channel_shuffle_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- where the names live -----------------------------------------------------------------------

def test_bindings_follow_pytorch():
    for module in (unpooling, pairwise):
        for name in module.FUNCTIONAL:
            assert getattr(gradlab.nn.functional, name) is getattr(module, name), name
    for name in pairwise.__all__:  # torch.pdist, torch.channel_shuffle ...
        assert getattr(gradlab, name) is getattr(pairwise, name), name
    assert not hasattr(gradlab, "max_unpool2d") and not hasattr(gradlab, "lp_pool2d")
    if torch is not None:
        assert all(hasattr(torch.nn.functional, n) for n in unpooling.FUNCTIONAL)
        assert all(hasattr(torch, n) for n in pairwise.__all__)
        assert not any(hasattr(torch, n) for n in ("max_unpool2d", "lp_pool2d"))
