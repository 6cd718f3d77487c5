"""median, nanmedian, mode, quantile, nanquantile, nanmean, nansum, count_nonzero: vs NumPy
and PyTorch, NaN and ties as PyTorch has them, gradients to the picked values, and the errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import EMPTY, SCALAR, M, OpCase, T, needs_torch, standard_op_tests, torch

NAN = float("nan")
INTERPOLATIONS = ["linear", "lower", "higher", "midpoint", "nearest"]
Q = [0.15, 0.45, 0.85]  # ranks q·(n-1) away from integers and halves for n = 4 and 12


def lower_median(x, axis):
    """(values, indices) of the lower median along ``axis``, keeping it (no NaN, no ties)."""
    order = np.argsort(x, axis=axis, kind="stable")
    k = (x.shape[axis] - 1) // 2
    idx = np.take(order, [k], axis=axis)
    return np.take_along_axis(x, idx, axis), idx


def np_median(x, axis, keepdim=False):
    values, idx = lower_median(x, axis)
    return (values, idx) if keepdim else (values.squeeze(axis), idx.squeeze(axis))


def with_nans(rng, dtype, shapes):
    """Random values with a NaN in every other row, never a whole row of them."""
    x = rng.uniform(-2, 2, shapes[0]).astype(dtype)
    x[::2, 1] = NAN
    return [x]


def small_integers(rng, dtype, shapes):
    """Values 0, 1, 2: many ties, for mode."""
    return [rng.integers(0, 3, shapes[0]).astype(dtype)]


def values_and_q(rng, dtype, shapes):
    return [rng.uniform(-2, 2, shapes[0]).astype(dtype), np.array(Q, dtype=dtype)]


def nan_values_and_q(rng, dtype, shapes):
    return [with_nans(rng, dtype, shapes)[0], np.array(Q, dtype=dtype)]


CASES = [
    OpCase("median_all", lambda lib, x: x.median(), T,
           numpy=lambda np, x: np.sort(x, None)[(x.size - 1) // 2], variants=(SCALAR, M)),
    OpCase("median_dim", lambda lib, x: lib.median(x, 1), T,
           numpy=lambda np, x: np_median(x, 1), variants=(M, ((0, 3),))),
    OpCase("median_dim0_keepdim", lambda lib, x: x.median(0, keepdim=True), M,
           numpy=lambda np, x: np_median(x, 0, True)),
    OpCase("median_0d", lambda lib, x: x.median(0), SCALAR,
           numpy=lambda np, x: (x.copy(), np.array(0))),
    OpCase("nanmedian_all", lambda lib, x: x.nanmedian(), ((4, 3),), inputs=with_nans,
           numpy=lambda np, x: np.sort(x[~np.isnan(x)])[(np.sum(~np.isnan(x)) - 1) // 2]),
    OpCase("nanmedian_dim", lambda lib, x: lib.nanmedian(x, -1), ((4, 5),), inputs=with_nans),
    OpCase("mode", lambda lib, x: x.mode(), T,  # distinct values: the mode is the smallest
           numpy=lambda np, x: (x.min(-1), x.argmin(-1)), variants=(M,)),
    OpCase("mode_0d", lambda lib, x: x.mode(), SCALAR, numpy=lambda np, x: (x.copy(), np.array(0))),
    OpCase("mode_ties_dim0_keepdim", lambda lib, x: lib.mode(x, 0, True), ((7, 4),),
           inputs=small_integers, grad=False),
    OpCase("quantile_all", lambda lib, x: lib.quantile(x, 0.3), T,
           numpy=lambda np, x: np.quantile(x, 0.3)),
    OpCase("quantile_q_tensor_dim_keepdim", lambda lib, x, q: x.quantile(q, 1, keepdim=True),
           ((3, 4, 5),), inputs=values_and_q,
           numpy=lambda np, x, q: np.quantile(x, q, axis=1, keepdims=True)),
    *[OpCase(f"quantile_{m}", lambda lib, x, q, m=m: lib.quantile(x, q, 0, interpolation=m),
             ((12, 3),), inputs=values_and_q,
             numpy=lambda np, x, q, m=m: np.quantile(x, q, axis=0, method=m))
      for m in INTERPOLATIONS],
    OpCase("quantile_0d_q_tensor", lambda lib, x, q: lib.quantile(x, q[1], dim=-1), ((3, 4),),
           inputs=values_and_q, numpy=lambda np, x, q: np.quantile(x, q[1], axis=-1)),
    OpCase("nanquantile", lambda lib, x, q: lib.nanquantile(x, q, 1), ((4, 5),),
           inputs=nan_values_and_q, numpy=lambda np, x, q: np.nanquantile(x, q, axis=1)),
    OpCase("nanquantile_all_nearest", lambda lib, x: x.nanquantile(0.3, interpolation="nearest",
                                                                    keepdim=True),
           ((4, 5),), inputs=with_nans),
    OpCase("nanmean", lambda lib, x: lib.nanmean(x, 1), ((4, 5),), inputs=with_nans,
           numpy=lambda np, x: np.nanmean(x, 1)),
    OpCase("nanmean_all_keepdim", lambda lib, x: x.nanmean((0, 1), keepdim=True), ((4, 5),),
           inputs=with_nans, numpy=lambda np, x: np.nanmean(x, (0, 1), keepdims=True)),
    OpCase("nansum", lambda lib, x: x.nansum(0), ((4, 5),), inputs=with_nans,
           numpy=lambda np, x: np.nansum(x, 0)),
    OpCase("nansum_all", lambda lib, x: lib.nansum(x), T, numpy=lambda np, x: np.nansum(x),
           variants=(SCALAR, EMPTY)),
    OpCase("count_nonzero", lambda lib, x: lib.count_nonzero(x.clamp(min=0), dim=(0, 2)), T,
           numpy=lambda np, x: np.count_nonzero(x.clip(min=0), (0, 2)), grad=False),
    OpCase("count_nonzero_method", lambda lib, x: x.relu().count_nonzero(), M,
           numpy=lambda np, x: np.count_nonzero(x > 0), grad=False, variants=(SCALAR, EMPTY)),
]

globals().update(standard_op_tests(CASES))


# --- NaN and ties: as PyTorch -----------------------------------------------------------------

def test_median_is_the_lower_middle_value_and_one_of_the_inputs():
    x = gradlab.tensor([4.0, 1.0, 3.0, 2.0])
    assert x.median().item() == 2.0  # NumPy's 2.5 averages; PyTorch and gradlab don't
    assert x.median(0).indices.item() == 3


@needs_torch
def test_nan_rows_match_torch():
    x = np.array([[1.0, NAN, 2.0, NAN], [3.0, 1.0, 2.0, 0.0], [NAN, 5.0, NAN, NAN]])
    for fn in ("median", "nanmedian"):
        ours, theirs = getattr(gradlab.tensor(x), fn)(1), getattr(torch.tensor(x), fn)(1)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
        assert np.isnan(getattr(gradlab.tensor(x), fn)().item()) == (fn == "median")
    for fn in ("quantile", "nanquantile"):
        q = np.array([0.0, 0.4, 1.0])
        ours = getattr(gradlab, fn)(gradlab.tensor(x), gradlab.tensor(q), 1)
        np.testing.assert_array_equal(
            ours.numpy(), getattr(torch, fn)(torch.tensor(x), torch.tensor(q), 1).numpy())
    np.testing.assert_array_equal(gradlab.tensor(x).nanmean(1).numpy(),
                                  torch.tensor(x).nanmean(1).numpy())


def test_a_row_of_only_nans():
    x = gradlab.tensor([[NAN, NAN, NAN, NAN], [1.0, 2.0, 3.0, 4.0]])
    values, indices = x.nanmedian(1)  # PyTorch's index here depends on its selection algorithm
    assert np.isnan(values[0].item()) and np.isnan(x[0, indices[0].item()].item())
    assert np.isnan(x.nanmean(1)[0].item()) and x.nanmean(1)[1].item() == 2.5
    assert np.isnan(x.nanquantile(0.5, 1)[0].item()) and x.nansum(1)[0].item() == 0.0


@needs_torch
def test_median_of_all_shares_the_gradient_among_ties_and_nans_as_torch():
    for values in ([1.0, 2.0, 2.0, 3.0], [1.0, NAN, 2.0, NAN], [5.0, 5.0, 5.0]):
        ours = gradlab.tensor(values, requires_grad=True)
        theirs = torch.tensor(values, requires_grad=True)
        ours.median().backward()
        theirs.median().backward()
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), keepdim=st.booleans())
def test_mode_of_small_integers_matches_torch(data, keepdim):
    """Ties between values go to the smallest; the index is the last occurrence."""
    shape = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.integers(0, 3, size=shape).astype(np.float64)
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    got, want = ours.mode(dim, keepdim), theirs.mode(dim, keepdim)
    np.testing.assert_array_equal(got.values.detach().numpy(), want.values.detach().numpy())
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    got.values.sum().backward()
    want.values.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@needs_torch
@settings(max_examples=40, deadline=None)
@given(data=st.data(), keepdim=st.booleans(), interpolation=st.sampled_from(INTERPOLATIONS),
       nan=st.booleans())
def test_quantile_and_median_match_torch_for_any_shape_and_dim(data, keepdim, interpolation,
                                                               nan):
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3), label="shape")
    dim = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)), label="dim")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)  # no ties
    if nan:
        x[rng.random(shape) < 0.2] = NAN
    q = rng.uniform(0, 1, data.draw(st.integers(0, 3), label="len(q)"))
    for fn in ("quantile", "nanquantile"):
        ours = getattr(gradlab, fn)(gradlab.tensor(x), gradlab.tensor(q), dim, keepdim,
                                    interpolation=interpolation)
        theirs = getattr(torch, fn)(torch.tensor(x), torch.tensor(q), dim, keepdim,
                                    interpolation=interpolation)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    if dim is not None:
        for fn in ("median", "nanmedian"):
            got = getattr(gradlab.tensor(x), fn)(dim, keepdim=True)
            want = getattr(torch.tensor(x), fn)(dim, keepdim=True)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            # The index of a NaN (or of ties) is PyTorch's choice; the value there is not.
            picked = np.take_along_axis(x, got.indices.numpy(), dim)
            np.testing.assert_array_equal(picked, want.values.numpy())


@needs_torch
def test_quantile_gradient_reaches_q_through_the_interpolation_weight():
    x = np.array([1.0, 4.0, 2.0, 8.0])
    ours_q = gradlab.tensor([0.3, 0.8], dtype=gradlab.float64, requires_grad=True)
    theirs_q = torch.tensor([0.3, 0.8], dtype=torch.float64, requires_grad=True)
    ours_x = gradlab.tensor(x, requires_grad=True)
    theirs_x = torch.tensor(x, requires_grad=True)
    gradlab.quantile(ours_x, ours_q).sum().backward()
    torch.quantile(theirs_x, theirs_q).sum().backward()
    # rank 0.9 sits between the sorted values 1 and 2: dq = (2 - 1) · 3
    np.testing.assert_allclose(ours_q.grad.numpy(), theirs_q.grad.numpy())
    np.testing.assert_allclose(ours_q.grad.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy())


# --- results, node names ----------------------------------------------------------------------

def test_results_are_named_tuples_that_unpack_and_pickle():
    x = gradlab.tensor([[3.0, 1.0, 2.0, 1.0]])
    for result, name in ((x.median(1), "median"), (x.nanmedian(1), "nanmedian"),
                         (x.mode(), "mode")):
        values, indices = result
        assert values is result.values and indices is result.indices
        assert type(result).__name__ == name and indices.dtype is gradlab.int64
        again = pickle.loads(pickle.dumps(result))
        assert type(again) is type(result) and again.values.tolist() == values.tolist()
    assert x.mode().values.tolist() == [1.0] and x.mode().indices.tolist() == [3]


@needs_torch
@pytest.mark.parametrize("call", [
    lambda x: x.median(), lambda x: x.median(0).values, lambda x: x.nanmedian(),
    lambda x: x.nanmedian(0).values, lambda x: x.mode(0).values])
def test_node_names_are_pytorchs(call):
    """(quantile, nanmean, nansum are compositions: their nodes are sort, gather, where ...)"""
    ours = call(gradlab.rand(3, 4, requires_grad=True))
    theirs = call(torch.rand(3, 4, requires_grad=True))
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__


def test_count_nonzero_and_indices_carry_no_gradient():
    x = gradlab.tensor([[0.0, 1.5], [2.0, 0.0]], requires_grad=True)
    counts = x.count_nonzero(0)
    assert counts.tolist() == [1, 1] and counts.dtype is gradlab.int64
    assert not counts.requires_grad and not x.median(1).indices.requires_grad
    assert gradlab.nansum(gradlab.tensor([1, 2], dtype=gradlab.int32)).dtype is gradlab.int64


# --- errors that teach ------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.median([1.0, 2.0]), TypeError, r"median: expected a Tensor, got list"),
    (lambda: gradlab.median([1.0], 0), TypeError, r"median: expected a Tensor"),
    (lambda: gradlab.zeros(2, 0).median(1), IndexError, r"median: dim 1 .*\(2, 0\).* size 0"),
    (lambda: gradlab.zeros(0, 3).mode(0), IndexError, r"mode: dim 0 .* size 0"),
    (lambda: gradlab.zeros(0, dtype=gradlab.int64).median(), RuntimeError,
     r"median: the gradlab.int64 input .* empty.*nan"),
    (lambda: gradlab.ones(3).quantile(gradlab.ones(1, 1) / 2), RuntimeError,
     r"quantile: q must be a number or a 0-d or 1-D tensor, got shape \(1, 1\)"),
    (lambda: gradlab.ones(3).quantile(gradlab.tensor([0.5], dtype=gradlab.float64)),
     RuntimeError, r"q \(gradlab.float64\) must have the input's dtype \(gradlab.float32\).*q.to"),
    (lambda: gradlab.ones(3).quantile("median"), TypeError, r"q must be a float or a tensor"),
    (lambda: gradlab.ones(3).nanquantile(50), RuntimeError,
     r"nanquantile: q must be in \[0, 1\], got \[50.0\].*percentiles divide by 100"),
    (lambda: gradlab.quantile([1.0], 0.5), TypeError, r"quantile: expected a Tensor"),
    (lambda: gradlab.tensor([1, 2]).quantile(0.5), RuntimeError,
     r"quantile: the input must be float32 or float64, got gradlab.int64.*x.float\(\)"),
    (lambda: gradlab.ones(3).quantile(0.5, interpolation="cubic"), RuntimeError,
     r"interpolation must be one of linear, lower, higher, midpoint, nearest; got 'cubic'"),
    (lambda: gradlab.zeros(2, 0).quantile(0.5, dim=0), RuntimeError,
     r"quantile: the input \(shape \(2, 0\)\) is empty"),
    (lambda: gradlab.tensor([1, 2]).nanmean(), RuntimeError,
     r"nanmean: expected a floating point tensor, got gradlab.int64.*x.float\(\).nanmean\(\)"),
    (lambda: gradlab.count_nonzero([1, 0]), TypeError, r"count_nonzero: expected a Tensor"),
])
def test_errors_name_the_op_and_the_fix(call, error, match):
    with pytest.raises(error, match=match):
        call()
