"""sort, argsort, topk, kthvalue, msort, unique, searchsorted: vs NumPy and PyTorch, ties, NaN."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.ops.test_reduction import check_hessian_vector_product
from tests.oracle import EMPTY, SCALAR, M, OpCase, T, needs_torch, standard_op_tests, torch

NAN = float("nan")


def np_sort(x, dim=-1, descending=False):
    """(values, indices) of a stable sort along ``dim``, descending keeping ties in order."""
    if x.ndim == 0:
        return x.copy(), np.array(0)
    if not descending:
        idx = np.argsort(x, axis=dim, kind="stable")
    else:
        n = x.shape[dim]
        idx = np.flip(n - 1 - np.argsort(np.flip(x, dim), axis=dim, kind="stable"), dim)
    return np.take_along_axis(x, idx, dim), idx


def np_topk(x, k, dim=-1, largest=True):
    values, idx = np_sort(x, dim, descending=largest)
    keep = (slice(None),) * (dim % x.ndim) + (slice(0, k),)
    return values[keep], idx[keep]


def np_kthvalue(x, k, dim=-1, keepdim=False):
    values, idx = np_sort(x, dim)
    pick = (slice(None),) * (dim % x.ndim) + (slice(k - 1, k),)
    values, idx = values[pick], idx[pick]
    return (values, idx) if keepdim else (values.squeeze(dim), idx.squeeze(dim))


CASES = [
    OpCase("sort", lambda lib, x: lib.sort(x), T, numpy=lambda np, x: np_sort(x),
           variants=(SCALAR, EMPTY, M)),
    OpCase("sort_dim0_descending", lambda lib, x: x.sort(0, descending=True), M,
           numpy=lambda np, x: np_sort(x, 0, True), variants=(EMPTY,)),
    OpCase("sort_stable", lambda lib, x: lib.sort(x, dim=1, stable=True), T,
           numpy=lambda np, x: np_sort(x, 1)),
    OpCase("sort_values_only", lambda lib, x: x.sort(descending=True).values * 2, M,
           numpy=lambda np, x: np_sort(x, -1, True)[0] * 2),
    OpCase("argsort", lambda lib, x: lib.argsort(x, dim=1, descending=True), M,
           numpy=lambda np, x: np_sort(x, 1, True)[1], grad=False),
    OpCase("argsort_method", lambda lib, x: x.argsort(), T,
           numpy=lambda np, x: np_sort(x)[1], grad=False, variants=(SCALAR, EMPTY)),
    OpCase("msort", lambda lib, x: lib.msort(x), M, numpy=lambda np, x: np.sort(x, 0),
           variants=(EMPTY,)),
    OpCase("topk", lambda lib, x: x.topk(2), T, numpy=lambda np, x: np_topk(x, 2),
           variants=(M,)),
    OpCase("topk_smallest_dim0", lambda lib, x: lib.topk(x, 2, dim=0, largest=False), M,
           numpy=lambda np, x: np_topk(x, 2, 0, False)),
    OpCase("topk_all", lambda lib, x: x.topk(4, sorted=True), M,
           numpy=lambda np, x: np_topk(x, 4)),
    OpCase("topk_zero", lambda lib, x: x.topk(0), M, numpy=lambda np, x: np_topk(x, 0),
           variants=(EMPTY,)),
    OpCase("topk_0d", lambda lib, x: x.topk(1), SCALAR,
           numpy=lambda np, x: (x.copy(), np.array(0))),
    OpCase("kthvalue", lambda lib, x: lib.kthvalue(x, 2), T,
           numpy=lambda np, x: np_kthvalue(x, 2)),
    OpCase("kthvalue_dim0_keepdim", lambda lib, x: x.kthvalue(3, 0, keepdim=True), M,
           numpy=lambda np, x: np_kthvalue(x, 3, 0, True)),
    OpCase("kthvalue_0d", lambda lib, x: x.kthvalue(1), SCALAR,
           numpy=lambda np, x: (x.copy(), np.array(0))),
]

globals().update(standard_op_tests(CASES))


# --- results: named tuples, dtypes, no gradient for indices ----------------------------------

def test_results_are_named_tuples_that_unpack_and_pickle():
    x = gradlab.tensor([[3.0, 1.0, 2.0]])
    for result, name in ((x.sort(), "sort"), (x.topk(2), "topk"), (x.kthvalue(1), "kthvalue")):
        values, indices = result
        assert values is result.values and indices is result.indices
        assert type(result).__name__ == name and indices.dtype is gradlab.int64
        again = pickle.loads(pickle.dumps(result))
        assert type(again) is type(result) and again.values.tolist() == values.tolist()
    assert x.sort().values.tolist() == [[1.0, 2.0, 3.0]]


def test_indices_and_counts_carry_no_gradient():
    x = gradlab.tensor([3.0, 1.0, 3.0], requires_grad=True)
    values, indices = x.sort()
    assert values.requires_grad and values.grad_fn is not None
    assert not indices.requires_grad and indices.grad_fn is None
    assert not x.argsort().requires_grad
    out, counts = x.unique(return_counts=True)
    assert not out.requires_grad and not counts.requires_grad


def test_gradient_goes_back_to_where_each_value_came_from():
    x = gradlab.tensor([[0.5, 2.0, 1.0], [3.0, -1.0, 0.0]], requires_grad=True)
    values, _ = x.topk(2, dim=1)
    (values * gradlab.tensor([[10.0, 1.0], [20.0, 2.0]])).sum().backward()
    assert x.grad.tolist() == [[0.0, 10.0, 1.0], [20.0, 0.0, 2.0]]


# --- ties and NaN: as PyTorch --------------------------------------------------------------

@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), descending=st.booleans())
def test_stable_sort_of_ties_and_nan_matches_torch(data, descending):
    """Small integers (many ties) and NaN: stable=True fixes the order of ties."""
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.integers(0, 3, size=shape).astype(np.float64)
    x[rng.random(shape) < 0.2] = NAN
    ours = gradlab.sort(gradlab.tensor(x), dim=dim, descending=descending, stable=True)
    theirs = torch.sort(torch.tensor(x), dim=dim, descending=descending, stable=True)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    np.testing.assert_array_equal(gradlab.argsort(gradlab.tensor(x), dim, descending).numpy(),
                                  theirs.indices.numpy())


@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), largest=st.booleans())
def test_topk_and_kthvalue_match_torch_for_any_shape_dim_and_k(data, largest):
    shape = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    k = data.draw(st.integers(0, shape[dim]), label="k")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)  # no ties
    x[rng.random(shape) < 0.1] = NAN  # the largest value, for topk and kthvalue alike
    ours = gradlab.tensor(x).topk(k, dim, largest)
    theirs = torch.tensor(x).topk(k, dim, largest)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    picked = np.take_along_axis(x, ours.indices.numpy(), dim)  # ties among NaNs may differ
    np.testing.assert_array_equal(picked, theirs.values.numpy())
    if k:
        ours_k = gradlab.tensor(x).kthvalue(k, dim)
        theirs_k = torch.tensor(x).kthvalue(k, dim)
        np.testing.assert_array_equal(ours_k.values.numpy(), theirs_k.values.numpy())
        picked = np.take_along_axis(x, np.expand_dims(ours_k.indices.numpy(), dim), dim)
        np.testing.assert_array_equal(picked.squeeze(dim), theirs_k.values.numpy())


@needs_torch
def test_nan_sorts_as_the_largest_value_like_torch():
    x = [3.0, NAN, 1.0, NAN, 2.0]
    for descending in (False, True):
        ours = gradlab.sort(gradlab.tensor(x), descending=descending, stable=True)
        theirs = torch.sort(torch.tensor(x), descending=descending, stable=True)
        assert ours.indices.tolist() == theirs.indices.tolist()
    assert gradlab.tensor(x).topk(2).values.isnan().all().item()
    assert gradlab.tensor(x).kthvalue(5).indices.item() == 3


def test_sort_of_bool_and_bfloat16():
    assert gradlab.tensor([True, False, True]).sort().indices.tolist() == [1, 0, 2]
    x = gradlab.tensor([3.0, NAN, 1.0, 1.0], dtype=gradlab.bfloat16)
    assert x.sort().indices.tolist() == [2, 3, 0, 1]
    assert x.sort().values.dtype is gradlab.bfloat16


@needs_torch
def test_sort_float32_and_double_backward_match_torch():
    x = np.random.default_rng(3).standard_normal((3, 5))
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    results = []
    for lib, t in ((gradlab, ours), (torch, theirs)):
        y = (t.topk(3, 1).values ** 3).sum()
        (g,) = lib.autograd.grad(y, t, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), t)
        results.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


# --- unique and unique_consecutive -----------------------------------------------------------

def _unique_both(x, **kw):
    ours = gradlab.unique(gradlab.tensor(x), **kw)
    theirs = torch.unique(torch.tensor(x), **kw)
    return ([o.numpy() for o in ours] if isinstance(ours, tuple) else [ours.numpy()],
            [t.numpy() for t in theirs] if isinstance(theirs, tuple) else [theirs.numpy()])


@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), return_inverse=st.booleans(), return_counts=st.booleans())
def test_unique_matches_torch(data, return_inverse, return_counts):
    shape = data.draw(st.lists(st.integers(0, 4), min_size=0, max_size=3), label="shape")
    use_dim = bool(shape) and all(shape) and data.draw(st.booleans(), label="use_dim")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim") if use_dim else None
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.integers(0, 3, size=shape)
    ours, theirs = _unique_both(x, return_inverse=return_inverse, return_counts=return_counts,
                                dim=dim)
    assert len(ours) == len(theirs) == 1 + return_inverse + return_counts
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype and o.shape == t.shape
        np.testing.assert_array_equal(o, t)


@needs_torch
def test_unique_nan_bool_and_0d_match_torch():
    for x in ([2.0, NAN, 1.0, NAN, 2.0], [[1.0, NAN], [1.0, NAN]], [True, False, True], 5):
        ours, theirs = _unique_both(np.array(x), return_inverse=True, return_counts=True)
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t)
    rows = np.array([[1, 2], [1, 2], [0, 5]])
    ours, theirs = _unique_both(rows, dim=0, return_inverse=True, return_counts=True)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)


def test_unique_inverse_rebuilds_the_input():
    x = gradlab.tensor([[3, 1, 3], [2, 1, 1]])
    out, inverse = x.unique(return_inverse=True)
    assert out.tolist() == [1, 2, 3] and out[inverse].tolist() == x.tolist()
    assert gradlab.unique(x, sorted=False).tolist() == [1, 2, 3]


@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_unique_consecutive_matches_torch(data):
    shape = data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=2), label="shape")
    use_dim = all(shape) and data.draw(st.booleans(), label="use_dim")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim") if use_dim else None
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.integers(0, 2, size=shape)
    ours = gradlab.unique_consecutive(gradlab.tensor(x), True, True, dim)
    theirs = torch.unique_consecutive(torch.tensor(x), True, True, dim)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_array_equal(o.numpy(), t.numpy())
    assert gradlab.tensor(x).unique_consecutive().tolist() == \
        torch.tensor(x).unique_consecutive().tolist()


# --- searchsorted and bucketize --------------------------------------------------------------

@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), right=st.booleans(), batched=st.booleans(), out_int32=st.booleans())
def test_searchsorted_and_bucketize_match_torch(data, right, batched, out_int32):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    n = data.draw(st.integers(1, 5), label="n")
    seq = np.sort(rng.integers(0, 5, size=(3, n) if batched else (n,)).astype(np.float64), -1)
    values = rng.integers(-1, 6, size=(3, 4) if batched else (2, 4)).astype(np.float64)
    values[0, 0] = NAN
    ours = gradlab.searchsorted(gradlab.tensor(seq), gradlab.tensor(values), right=right,
                                out_int32=out_int32)
    theirs = torch.searchsorted(torch.tensor(seq), torch.tensor(values), right=right,
                                out_int32=out_int32)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    if not batched:
        ours = gradlab.bucketize(gradlab.tensor(values), gradlab.tensor(seq), right=right)
        theirs = torch.bucketize(torch.tensor(values), torch.tensor(seq), right=right)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@needs_torch
def test_searchsorted_side_sorter_and_scalars_match_torch():
    seq, values = [3.0, 1.0, 2.0], [2.0, 5.0, 0.5]
    sorter = [1, 2, 0]
    ours = gradlab.searchsorted(gradlab.tensor(seq), gradlab.tensor(values), side="right",
                                sorter=gradlab.tensor(sorter))
    theirs = torch.searchsorted(torch.tensor(seq), torch.tensor(values), side="right",
                                sorter=torch.tensor(sorter))
    assert ours.tolist() == theirs.tolist()
    assert gradlab.searchsorted(gradlab.tensor([1.0, 2.0, 3.0]), 2.5).item() == \
        torch.searchsorted(torch.tensor([1.0, 2.0, 3.0]), 2.5).item()
    assert gradlab.searchsorted(gradlab.tensor([1.0, 2.0]), gradlab.tensor([2, 3])).tolist() \
        == torch.searchsorted(torch.tensor([1.0, 2.0]), torch.tensor([2, 3])).tolist()


# --- errors that teach -----------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda x: x.topk(4), RuntimeError, r"topk: selected index k=4 out of range.*\[0, 3\]"),
    (lambda x: x.topk(-1), RuntimeError, r"k must be in \[0, 3\]"),
    (lambda x: x.kthvalue(0), RuntimeError, r"kthvalue: selected number k=0 .*counts from 1"),
    (lambda x: x.kthvalue(4), RuntimeError, r"must be in \[1, 3\]"),
    (lambda x: x[:0].kthvalue(1), IndexError, r"kthvalue: dim 0 .* is empty"),
    (lambda x: x.sort(dim=1), IndexError, r"sort: dimension 1 is out of range"),
    (lambda x: gradlab.sort([1.0, 2.0]), TypeError, r"sort: expected a Tensor, got list"),
    (lambda x: gradlab.unique([1, 2]), TypeError, r"unique: expected a Tensor"),
    (lambda x: x.sum().unique(dim=0), IndexError, r"unique: a 0-d tensor has no dim 0"),
    (lambda x: gradlab.ones(2, 0, 3).unique(dim=0), RuntimeError,
     r"unique: the input \(shape \(2, 0, 3\)\) has a 0-sized dim other than dim 0"),
    (lambda x: gradlab.searchsorted(x, x, side="middle"), RuntimeError,
     r"side can only be 'left' or 'right', got 'middle'"),
    (lambda x: gradlab.searchsorted(x, x, side="left", right=True), RuntimeError,
     r"side='left' and right=True contradict"),
    (lambda x: gradlab.searchsorted([1.0], x), TypeError,
     r"searchsorted: sorted_sequence must be a Tensor, got list"),
    (lambda x: gradlab.searchsorted(x.sum(), x), RuntimeError,
     r"sorted_sequence must have at least 1 dim.*reshape\(1\)"),
    (lambda x: gradlab.searchsorted(gradlab.ones(2, 3), x), RuntimeError,
     r"shape \(2, 3\) holds one sorted row per row.*values have shape \(3,\)"),
    (lambda x: gradlab.bucketize(x, gradlab.ones(1, 3)), RuntimeError,
     r"bucketize: boundaries must be a 1-D tensor, got 2 dims"),
    (lambda x: gradlab.bucketize(x, [1.0]), RuntimeError,
     r"bucketize: boundaries must be a 1-D tensor, got list"),
])
def test_errors_name_the_op_and_the_fix(call, error, match):
    with pytest.raises(error, match=match):
        call(gradlab.tensor([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("f", [
    lambda lib, x: x.sort(1).values ** 3,
    lambda lib, x: x.topk(2, dim=0).values ** 3,
    lambda lib, x: lib.kthvalue(x, 2).values ** 3,
], ids=["sort", "topk", "kthvalue"])
def test_forward_over_reverse_gives_hessian_vector_products(f):
    """Backward scatter-adds the gradient to the indices: its tangent must follow them."""
    check_hessian_vector_product(f, (3, 4))
