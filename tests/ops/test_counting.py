"""bincount, histc, histogram, isin, aminmax: forward vs NumPy, values and dtypes vs PyTorch,
aminmax's gradients (those of amin/amax), and the errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

import gradlab
from tests.oracle import SCALAR, OpCase, needs_torch, standard_op_tests, torch


def ints(high=6):
    """Non-negative int64 inputs in [0, high) (bin indices, isin values), any float dtype."""
    return lambda rng, dtype, shapes: [rng.integers(0, high, s) for s in shapes]


def ints_and_weights(rng, dtype, shapes):
    return [rng.integers(0, 7, shapes[0]), rng.uniform(-1, 2, shapes[1]).astype(dtype)]


def values_and_edges(rng, dtype, shapes):
    edges = np.sort(rng.uniform(-1.5, 1.5, shapes[1])).astype(dtype)
    return [rng.uniform(-2, 2, shapes[0]).astype(dtype), edges]


def ints_and_floats(rng, dtype, shapes):
    """Integer elements, float test values: half of them integral, so some match."""
    tests = rng.integers(0, 8, shapes[1]) + rng.choice([0.0, 0.5], shapes[1])
    return [rng.integers(0, 8, shapes[0]), tests.astype(dtype)]


def np_histc(x, bins, lo=None, hi=None):
    lo, hi = (x.min(), x.max()) if lo is None else (lo, hi)
    return np.histogram(x, bins, range=(lo, hi))[0].astype(x.dtype)


COUNTING = [
    OpCase("bincount", lambda lib, x: lib.bincount(x), ((20,),), inputs=ints(),
           numpy=lambda np, x: np.bincount(x), grad=False, variants=(((0,),),)),
    OpCase("bincount_minlength", lambda lib, x: x.bincount(minlength=9), ((12,),),
           inputs=ints(), numpy=lambda np, x: np.bincount(x, minlength=9), grad=False,
           variants=(((0,),),)),
    OpCase("bincount_weights", lambda lib, x, w: lib.bincount(x, w), ((15,), (15,)),
           inputs=ints_and_weights, numpy=lambda np, x, w: np.bincount(x, w), grad=False),
    OpCase("histc", lambda lib, x: lib.histc(x), ((50,),), numpy=lambda np, x: np_histc(x, 100),
           grad=False),
    OpCase("histc_range", lambda lib, x: lib.histc(x, bins=7, min=-1, max=1.5), ((60,),),
           numpy=lambda np, x: np_histc(x, 7, -1, 1.5), grad=False, variants=(((0,),),)),
    OpCase("histc_2d", lambda lib, x: x.histc(5), ((6, 5),),
           numpy=lambda np, x: np_histc(x.ravel(), 5), grad=False),
    OpCase("histogram", lambda lib, x: lib.histogram(x, 6), ((40,),),
           numpy=lambda np, x: np.histogram(x, 6), grad=False, variants=(((0,),),)),
    OpCase("histogram_weight_density",
           lambda lib, x, w: lib.histogram(x, 5, range=(-1.0, 1.0), weight=w, density=True),
           ((4, 10), (4, 10)), domain=[(-2, 2), (0, 1)], grad=False,
           numpy=lambda np, x, w: np.histogram(x, 5, range=(-1, 1), weights=w, density=True)),
    OpCase("histogram_edges", lambda lib, x, e: x.histogram(e), ((50,), (6,)),
           inputs=values_and_edges, numpy=lambda np, x, e: np.histogram(x, e), grad=False),
    OpCase("isin", lambda lib, a, b: lib.isin(a, b), ((3, 4), (5,)), inputs=ints(8),
           numpy=lambda np, a, b: np.isin(a, b), grad=False,
           variants=(((), (5,)), ((0, 2), (3,)), ((4,), (0,)))),
    OpCase("isin_invert_promoted", lambda lib, a, b: lib.isin(a, b, invert=True),
           ((2, 5), (6,)), inputs=ints_and_floats, grad=False,
           numpy=lambda np, a, b: ~np.isin(a.astype(b.dtype), b)),
    OpCase("isin_scalar", lambda lib, a: lib.isin(a, 3), ((10,),), inputs=ints(5),
           numpy=lambda np, a: a == 3, grad=False),
    OpCase("isin_scalar_elements", lambda lib, b: lib.isin(3, b, assume_unique=True), ((4,),),
           inputs=lambda rng, dtype, shapes: [rng.permutation(6)[:4]], grad=False,
           numpy=lambda np, b: np.isin(3, b)),
    OpCase("aminmax", lambda lib, x: lib.aminmax(x), ((3, 4),),
           numpy=lambda np, x: (x.min(), x.max()), variants=(SCALAR,)),
    OpCase("aminmax_dim", lambda lib, x: x.aminmax(dim=1, keepdim=True), ((2, 3, 4),),
           numpy=lambda np, x: (x.min(1, keepdims=True), x.max(1, keepdims=True)),
           variants=(((0, 3),), ((3, 2),))),
    OpCase("aminmax_dim_keepdim_all", lambda lib, x: lib.aminmax(x, dim=-1), ((5,),),
           numpy=lambda np, x: (x.min(-1), x.max(-1)), variants=(SCALAR,)),
]

globals().update(standard_op_tests(COUNTING))


# --- what the results are ----------------------------------------------------------------------

def test_named_results_have_pytorchs_fields_and_pickle():
    x = gradlab.tensor([[1.0, 5.0], [4.0, 2.0]])
    small, large = gradlab.aminmax(x, dim=0)
    result = gradlab.aminmax(x, dim=0)
    assert result._fields == ("min", "max") and hist_fields() == ("hist", "bin_edges")
    np.testing.assert_array_equal(result.min.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(large.numpy(), [4.0, 5.0])
    hist = gradlab.histogram(x, 2)
    assert type(hist) is gradlab.return_types.histogram
    assert type(result) is gradlab.return_types.aminmax
    np.testing.assert_array_equal(hist.hist.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(hist.bin_edges.numpy(), [1.0, 3.0, 5.0])
    again = pickle.loads(pickle.dumps(hist))
    assert type(again) is gradlab.return_types.histogram
    np.testing.assert_array_equal(again.bin_edges.numpy(), [1.0, 3.0, 5.0])


def hist_fields():
    return gradlab.return_types.histogram._fields


def test_counts_record_no_gradient():
    x = gradlab.tensor([0.5, 1.5, 1.7], requires_grad=True)
    i = gradlab.tensor([0, 2, 2])
    outs = [gradlab.histc(x, 3), gradlab.histogram(x, 3).hist, gradlab.bincount(i, x),
            gradlab.isin(x, x)]
    assert [o.requires_grad for o in outs] == [False] * 4
    assert [o.grad_fn for o in outs] == [None] * 4


def test_aminmax_gradient_is_shared_by_ties():
    x = gradlab.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    small, large = gradlab.aminmax(x)
    (small + 10 * large).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 5, 5], [0, 0, 1]])


@pytest.mark.parametrize("name,dtype", [("float16", gradlab.float16),
                                        ("bfloat16", gradlab.bfloat16)])
@needs_torch
def test_histc_half_precision_matches_torch(name, dtype):
    values = np.random.default_rng(3).uniform(-1, 1, 40)
    ours = gradlab.histc(gradlab.tensor(values).to(dtype), bins=6)
    theirs = torch.histc(torch.tensor(values).to(getattr(torch, name)), bins=6)
    assert ours.dtype is dtype
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


@needs_torch
@pytest.mark.parametrize("call", [
    lambda lib: lib.histc(lib.tensor([1.0, 1.0, 1.0]), bins=4),  # one value: range +-1
    lambda lib: lib.histc(lib.tensor([1.0, 2.0, 1.0]), bins=4, min=5, max=5),  # min == max
    lambda lib: lib.histc(lib.tensor([1.0, float("nan"), float("inf")]), bins=3, min=0, max=3),
    lambda lib: lib.histogram(lib.tensor([1.0, 1.0]), 2),  # one value: range +-0.5
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0, 1.0]), lib.tensor([0.0, 1.0, 1.0, 3.0])),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 1.5, 0.0])),
    lambda lib: lib.histogram(lib.tensor([]), 2, density=True),  # no values: 0/0
    lambda lib: lib.bincount(lib.tensor([1, 3], dtype=lib.uint8), lib.tensor([True, True])),
    lambda lib: lib.bincount(lib.tensor([0, 2]), lib.tensor([1.5, 2.0], dtype=lib.float32)),
    lambda lib: lib.isin(lib.tensor([float("nan"), 1.0]), lib.tensor([float("nan"), 1.0])),
    lambda lib: lib.aminmax(lib.zeros(0, 3), dim=1),
    lambda lib: lib.aminmax(lib.tensor([True, False])),
])
def test_edge_cases_match_torch(call):
    ours, theirs = call(gradlab), call(torch)
    for o, t in zip(ours if isinstance(ours, tuple) else [ours],
                    theirs if isinstance(theirs, tuple) else [theirs]):
        assert o.dtype.name == str(t.dtype).replace("torch.", "")
        np.testing.assert_array_equal(o.numpy(), t.numpy())


# --- properties --------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(values=arrays(np.int64, array_shapes(max_dims=1, min_side=0, max_side=30),
                     elements=st.integers(0, 40)), minlength=st.integers(0, 50))
def test_bincount_counts_every_value_once(values, minlength):
    counts = gradlab.bincount(gradlab.tensor(values), minlength=minlength).numpy()
    assert counts.sum() == values.size
    assert len(counts) == max(minlength, values.max(initial=-1) + 1)
    for v in np.unique(values):
        assert counts[v] == np.count_nonzero(values == v)


@settings(max_examples=25, deadline=None)
@given(values=arrays(np.float64, array_shapes(max_dims=3, max_side=5),
                     elements=st.floats(-10, 10)),
       bins=st.integers(1, 12), lo=st.floats(-5, 0), width=st.floats(0.5, 8))
def test_histc_counts_exactly_the_values_in_range(values, bins, lo, width):
    hi = lo + width
    counts = gradlab.histc(gradlab.tensor(values), bins, lo, hi).numpy()
    assert counts.shape == (bins,)
    assert counts.sum() == np.count_nonzero((values >= lo) & (values <= hi))


@settings(max_examples=25, deadline=None)
@given(values=arrays(np.float64, array_shapes(max_dims=4, max_side=4),
                     elements=st.floats(-10, 10)), data=st.data())
def test_aminmax_is_amin_and_amax(values, data):
    x = gradlab.tensor(values)
    dim = data.draw(st.integers(-values.ndim, values.ndim - 1))
    keepdim = data.draw(st.booleans())
    small, large = gradlab.aminmax(x, dim=dim, keepdim=keepdim)
    np.testing.assert_array_equal(small.numpy(), gradlab.amin(x, dim, keepdim).numpy())
    np.testing.assert_array_equal(large.numpy(), gradlab.amax(x, dim, keepdim).numpy())


# --- errors that teach -------------------------------------------------------------------------

X = gradlab.tensor([1.0, 2.0, 1.0])
IDX = gradlab.tensor([1, 2, 2])


@pytest.mark.parametrize("call,error,match", [
    (lambda: gradlab.bincount(gradlab.tensor([1, -2])), RuntimeError, r"negative.*-2.*>= 0"),
    (lambda: gradlab.bincount(gradlab.tensor([[1, 2]])), RuntimeError, r"1-D.*\(1, 2\).*flatten"),
    (lambda: gradlab.bincount(X), RuntimeError, r"integer tensor.*float32.*\.long\(\)"),
    (lambda: gradlab.bincount(IDX, gradlab.tensor([1.0, 2.0])), RuntimeError,
     r"weights.*\(2,\).*\(3,\)"),
    (lambda: gradlab.bincount(IDX, [1.0, 2.0, 3.0]), TypeError, "weights must be a Tensor"),
    (lambda: gradlab.bincount(IDX, minlength=-1), RuntimeError, "minlength must be an int >= 0"),
    (lambda: gradlab.bincount([1, 2]), TypeError, "expected a Tensor, got list"),
    (lambda: gradlab.histc(IDX), RuntimeError, r"histc: expected a tensor of .*int64.*\.float\(\)"),
    (lambda: gradlab.histc(X, bins=0), RuntimeError, "histc: bins must be a positive int"),
    (lambda: gradlab.histc(X, 4, min=3, max=1), RuntimeError, "max must be larger than min"),
    (lambda: gradlab.histc(gradlab.tensor([1.0, float("nan")]), 4), RuntimeError,
     r"histc: the range \[nan, nan\] is not finite.*isfinite"),
    (lambda: gradlab.histc(X, 4, min=0, max=float("inf")), RuntimeError, "not finite"),
    (lambda: gradlab.histogram(X.half(), 2), RuntimeError, r"float32, float64, got float16"),
    (lambda: gradlab.histogram(X, 2, range=(3.0, 0.0)), RuntimeError,
     r"min should not exceed max.*range=\(0.0, 3.0\)"),
    (lambda: gradlab.histogram(X, 2, range=(0, 1, 2)), RuntimeError, "2 numbers, got 3"),
    (lambda: gradlab.histogram(X, gradlab.tensor([0.0, 3.0]), range=(0, 1)), TypeError,
     "edges already say the range"),
    (lambda: gradlab.histogram(X, gradlab.tensor([[0.0, 3.0]])), RuntimeError,
     r"1-D tensor of at least 2 edges, got shape \(1, 2\)"),
    (lambda: gradlab.histogram(X, gradlab.tensor([0.0, 3.0], dtype=gradlab.float64)),
     RuntimeError, r"edges \(float64\) must have the input's dtype \(float32\)"),
    (lambda: gradlab.histogram(X, 2, weight=gradlab.ones(2)), RuntimeError,
     r"weight must be a tensor of the input's shape \(3,\), got \(2,\)"),
    (lambda: gradlab.histogram(X, 2, weight=X.double()), RuntimeError,
     r"weight \(float64\) must have the input's dtype"),
    (lambda: gradlab.isin(2, 3), TypeError, "can't both be numbers"),
    (lambda: gradlab.isin(IDX, [1, 2]), TypeError, r"test_elements must be a Tensor.*list"),
    (lambda: gradlab.isin(IDX, gradlab.tensor([True])), RuntimeError, "isin: .*got bool"),
    (lambda: gradlab.aminmax(gradlab.zeros(0)), RuntimeError, r"aminmax: .*\(0,\) is empty"),
    (lambda: gradlab.aminmax(gradlab.zeros(0, 3), dim=0), IndexError, "dim 0 .* has size 0"),
    (lambda: gradlab.aminmax(gradlab.zeros(2, 3), dim=(0, 1)), TypeError,
     "dim must be an int or None.*amin and amax"),
    (lambda: gradlab.aminmax(gradlab.zeros(2, 3), dim=2), IndexError, "aminmax: dimension 2"),
])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_isin_is_not_a_tensor_method_as_in_pytorch():
    assert not hasattr(gradlab.Tensor, "isin")
    if torch is not None:
        assert not hasattr(torch.Tensor, "isin")
