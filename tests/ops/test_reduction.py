"""Reductions and cumsum: forward vs NumPy, gradcheck, values and gradients vs PyTorch."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradlab
from gradlab.autograd import forward_ad as fwAD
from gradlab.ops import reduction, softmax_family
from tests.oracle import (
    EMPTY,
    SCALAR,
    M,
    OpCase,
    T,
    away_from_zero_small,
    standard_op_tests,
    torch,
)

INF = math.inf


def zeros_in_rows(rng, dtype, shapes):
    """A (3, 4) input whose rows hold one zero, two zeros and none."""
    (x,) = away_from_zero_small(rng, dtype, [(3, 4)])
    x[0, 1] = x[1, 0] = x[1, 3] = 0.0
    return [x]


def n_zeros(n):
    def inputs(rng, dtype, shapes):
        (x,) = away_from_zero_small(rng, dtype, [(5,)])
        x[1:1 + n] = 0.0
        return [x]
    return inputs


# --- NumPy references -------------------------------------------------------------------------

def np_pick(np, x, dim, keepdim, largest=True):
    """(values, indices) of max/min along ``dim``, as PyTorch's max(x, dim) returns them."""
    idx = (np.argmax if largest else np.argmin)(x, axis=dim)
    values = (np.max if largest else np.min)(x, axis=dim)
    if keepdim:
        idx, values = np.expand_dims(idx, dim), np.expand_dims(values, dim)
    return values, idx


# --- the table --------------------------------------------------------------------------------

SUM_MEAN = [
    OpCase("sum_all", lambda lib, x: x.sum(), M, numpy=lambda np, x: x.sum(),
           variants=(SCALAR, EMPTY)),
    OpCase("sum_dim", lambda lib, x: x.sum(1), M, numpy=lambda np, x: x.sum(1),
           variants=(EMPTY,)),
    OpCase("sum_neg_keepdim", lambda lib, x: lib.sum(x, -1, keepdim=True), T,
           numpy=lambda np, x: x.sum(-1, keepdims=True)),
    OpCase("sum_tuple", lambda lib, x: x.sum((0, -1)), T, numpy=lambda np, x: x.sum((0, 2))),
    OpCase("sum_empty_tuple_is_all", lambda lib, x: x.sum(()), M, numpy=lambda np, x: x.sum()),
    OpCase("sum_0d_dim", lambda lib, x: x.sum(0, keepdim=True), SCALAR,
           numpy=lambda np, x: x.sum()),
    OpCase("sum_dtype", lambda lib, x: x.sum(0, dtype=lib.float64), M,
           numpy=lambda np, x: x.sum(0)),
    OpCase("mean_all", lambda lib, x: x.mean(), M, numpy=lambda np, x: x.mean(),
           variants=(SCALAR,)),
    OpCase("mean_dim", lambda lib, x: lib.mean(x, 1), M, numpy=lambda np, x: x.mean(1),
           variants=(EMPTY,)),
    OpCase("mean_tuple_keepdim", lambda lib, x: x.mean((-1, 1), keepdim=True), T,
           numpy=lambda np, x: x.mean((1, 2), keepdims=True)),
    OpCase("mean_0d_dim", lambda lib, x: x.mean(-1), SCALAR, numpy=lambda np, x: x),
]


PROD = [
    OpCase("prod_all", lambda lib, x: x.prod(), M, numpy=lambda np, x: x.prod(),
           inputs=away_from_zero_small, variants=(SCALAR, EMPTY)),
    OpCase("prod_dim", lambda lib, x: lib.prod(x, 1), M, numpy=lambda np, x: x.prod(1),
           inputs=away_from_zero_small, variants=(EMPTY,)),
    OpCase("prod_neg_keepdim", lambda lib, x: x.prod(-2, keepdim=True), T,
           numpy=lambda np, x: x.prod(1, keepdims=True), inputs=away_from_zero_small),
    OpCase("prod_0d_dim", lambda lib, x: x.prod(0), SCALAR, numpy=lambda np, x: x),
    OpCase("prod_rows_with_zeros", lambda lib, x: x.prod(1), M, numpy=lambda np, x: x.prod(1),
           inputs=zeros_in_rows),
    OpCase("prod_one_zero", lambda lib, x: x.prod(), ((5,),), numpy=lambda np, x: x.prod(),
           inputs=n_zeros(1)),
    OpCase("prod_two_zeros", lambda lib, x: x.prod(), ((5,),), numpy=lambda np, x: x.prod(),
           inputs=n_zeros(2)),
    OpCase("prod_three_zeros", lambda lib, x: x.prod(0, keepdim=True), ((5,),),
           numpy=lambda np, x: x.prod(0, keepdims=True), inputs=n_zeros(3)),
]


MAX_MIN = [
    OpCase("max_all", lambda lib, x: x.max(), M, numpy=lambda np, x: x.max(),
           variants=(SCALAR,)),
    OpCase("min_all", lambda lib, x: lib.min(x), M, numpy=lambda np, x: x.min()),
    OpCase("max_dim", lambda lib, x: x.max(1), M, numpy=lambda np, x: np_pick(np, x, 1, False),
           variants=(EMPTY,)),
    OpCase("max_neg_dim_keepdim", lambda lib, x: lib.max(x, -1, keepdim=True), T,
           numpy=lambda np, x: np_pick(np, x, 2, True)),
    OpCase("min_dim", lambda lib, x: x.min(dim=0), T,
           numpy=lambda np, x: np_pick(np, x, 0, False, largest=False)),
    OpCase("max_0d_dim", lambda lib, x: x.max(0), SCALAR,
           numpy=lambda np, x: (x, np.array(0))),
    OpCase("max_other", lambda lib, x, y: lib.max(x, y), ((3, 4), (4,)),
           numpy=lambda np, x, y: np.maximum(x, y)),
    OpCase("min_other_kw", lambda lib, x, y: lib.min(x, other=y), ((3, 4), (3, 4)),
           numpy=lambda np, x, y: np.minimum(x, y)),
    OpCase("amax_all", lambda lib, x: x.amax(), M, numpy=lambda np, x: x.max(),
           variants=(SCALAR,)),
    OpCase("amax_dim", lambda lib, x: lib.amax(x, 1), M, numpy=lambda np, x: x.max(1),
           variants=(EMPTY,)),
    OpCase("amax_tuple_keepdim", lambda lib, x: x.amax((0, -1), keepdim=True), T,
           numpy=lambda np, x: x.max((0, 2), keepdims=True)),
    OpCase("amin_neg_dim", lambda lib, x: x.amin(-2), T, numpy=lambda np, x: x.min(1)),
    OpCase("amin_0d", lambda lib, x: lib.amin(x, 0), SCALAR, numpy=lambda np, x: x),
]


NO_GRAD = [
    OpCase("argmax_flat", lambda lib, x: x.argmax(), T, numpy=lambda np, x: np.argmax(x),
           grad=False, variants=(SCALAR,)),
    OpCase("argmax_flat_keepdim", lambda lib, x: lib.argmax(x, keepdim=True), M,
           numpy=lambda np, x: np.argmax(x).reshape(1, 1), grad=False),
    OpCase("argmax_dim", lambda lib, x: x.argmax(1), M, numpy=lambda np, x: np.argmax(x, 1),
           grad=False, variants=(EMPTY,)),
    OpCase("argmin_neg_keepdim", lambda lib, x: x.argmin(-1, keepdim=True), T,
           numpy=lambda np, x: np.argmin(x, -1)[..., None], grad=False),
    OpCase("argmin_0d_dim", lambda lib, x: lib.argmin(x, 0), SCALAR,
           numpy=lambda np, x: np.array(0), grad=False),
    OpCase("any_all", lambda lib, x: (x > 1.5).any(), M, numpy=lambda np, x: (x > 1.5).any(),
           grad=False, variants=(SCALAR, EMPTY)),
    OpCase("any_dim_keepdim", lambda lib, x: lib.any(x > 1, 1, keepdim=True), M,
           numpy=lambda np, x: (x > 1).any(1, keepdims=True), grad=False),
    OpCase("all_all", lambda lib, x: (x > -1.9).all(), M, numpy=lambda np, x: (x > -1.9).all(),
           grad=False, variants=(SCALAR, EMPTY)),
    OpCase("all_tuple", lambda lib, x: lib.all(x > -1, (0, -1)), T,
           numpy=lambda np, x: (x > -1).all((0, 2)), grad=False),
    OpCase("all_of_floats", lambda lib, x: x.all(0), M, numpy=lambda np, x: x.all(0),
           grad=False),
]


CUMSUM = [
    OpCase("cumsum_dim", lambda lib, x: x.cumsum(1), M, numpy=lambda np, x: np.cumsum(x, 1),
           variants=(EMPTY,)),
    OpCase("cumsum_neg", lambda lib, x: lib.cumsum(x, -3), T, numpy=lambda np, x: np.cumsum(x, 0)),
    OpCase("cumsum_0d", lambda lib, x: x.cumsum(0), SCALAR, numpy=lambda np, x: x),
]

ALL = SUM_MEAN + PROD + MAX_MIN + NO_GRAD + CUMSUM


globals().update(standard_op_tests(ALL))


# --- ties, zeros, large values ----------------------------------------------------------------

TIES = [[1.0, 3.0, 3.0], [3.0, -2.0, 0.0]]


@pytest.mark.parametrize("fn,expected", [
    (lambda x: x.max(), [[0, 1 / 3, 1 / 3], [1 / 3, 0, 0]]),
    (lambda x: x.amax(1), [[0, 0.5, 0.5], [1, 0, 0]]),
    (lambda x: x.amax((0, 1), keepdim=True), [[0, 1 / 3, 1 / 3], [1 / 3, 0, 0]]),
    (lambda x: (-x).amin(), [[0, -1 / 3, -1 / 3], [-1 / 3, 0, 0]]),
    (lambda x: x.max(1).values, [[0, 1, 0], [1, 0, 0]]),  # only the returned (first) index
    (lambda x: x.norm(INF), [[0, 1 / 3, 1 / 3], [1 / 3, 0, 0]]),
], ids=["max", "amax_dim", "amax_tuple", "amin", "max_dim", "norm_inf"])
def test_ties_share_the_gradient_like_torch(fn, expected):
    x = gradlab.tensor(TIES, dtype=gradlab.float64, requires_grad=True)
    fn(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    if torch is not None:
        t = torch.tensor(TIES, dtype=torch.float64, requires_grad=True)
        fn(t).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_max_dim_returns_first_index_of_ties():
    values, indices = gradlab.tensor(TIES).max(1)
    assert values.tolist() == [3.0, 3.0] and indices.tolist() == [1, 0]
    assert gradlab.tensor(TIES).argmax(1).tolist() == [1, 0]
    assert gradlab.tensor(TIES).argmax().item() == 1


@pytest.mark.parametrize("vals,grad", [
    ([0.0, 2.0, 3.0], [6.0, 0.0, 0.0]),
    ([0.0, 2.0, 0.0], [0.0, 0.0, 0.0]),
    ([2.0, 3.0, 4.0], [12.0, 8.0, 6.0]),
])
def test_prod_gradient_with_zeros_is_finite_and_exact(vals, grad):
    x = gradlab.tensor(vals, dtype=gradlab.float64, requires_grad=True)
    x.prod().backward()
    assert x.grad.tolist() == grad


def test_cumsum_backward_is_a_reversed_cumsum():
    x = gradlab.zeros(4, requires_grad=True)
    x.cumsum(0).backward(gradlab.tensor([1.0, 2.0, 3.0, 4.0]))
    assert x.grad.tolist() == [10.0, 9.0, 7.0, 4.0]


# --- what each op returns ---------------------------------------------------------------------

def test_max_with_dim_returns_a_named_tuple():
    x = gradlab.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    out = x.max(dim=1)
    assert isinstance(out, gradlab.return_types.max) and isinstance(out, tuple)
    assert out.values.tolist() == [5.0, 7.0] and out.indices.tolist() == [1, 0]
    assert out.indices.dtype is gradlab.int64 and not out.indices.requires_grad
    assert out.values.grad_fn.name() == "MaxBackward0" and out.values.grad_fn.op == "max"
    low = gradlab.min(x, 0)
    assert isinstance(low, gradlab.return_types.min) and low.indices.tolist() == [0, 1]
    again = pickle.loads(pickle.dumps(low))
    assert type(again) is gradlab.return_types.min and again.values.tolist() == [1.0, 2.0]


def test_max_of_two_tensors_is_maximum():
    a = gradlab.tensor([1.0, 5.0])
    b = gradlab.tensor([3.0, 2.0])
    assert gradlab.max(a, b).tolist() == [3.0, 5.0] == a.max(b).tolist()
    assert gradlab.min(a, other=b).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("fn", [
    lambda x: x.argmax(), lambda x: x.argmin(0), lambda x: x.any(), lambda x: x.all(0),
    lambda x: x.max(0).indices,
])
def test_index_and_logic_results_have_no_gradient(fn):
    x = gradlab.tensor([[1.0, 2.0], [3.0, 0.0]], requires_grad=True)
    out = fn(x)
    assert out.grad_fn is None and not out.requires_grad


def test_index_and_logic_functions_are_marked_not_differentiable():
    for cls in (reduction.Argmax, reduction.Argmin, reduction.Any, reduction.All):
        assert cls.differentiable is False
    for cls in (reduction.Sum, reduction.Amax, softmax_family.Softmax):
        assert cls.differentiable is True


@pytest.mark.parametrize("dtype,op,expected", [
    ("int32", "sum", "int64"), ("bool", "sum", "int64"), ("float16", "sum", "float16"),
    ("int32", "prod", "int64"), ("bool", "prod", "int64"), ("int32", "cumsum", "int64"),
    ("bool", "cumsum", "int64"), ("int32", "amax", "int32"), ("int32", "max", "int32"),
    ("bool", "amin", "bool"), ("int64", "argmax", "int64"), ("float32", "argmin", "int64"),
    ("int32", "any", "bool"), ("float16", "all", "bool"), ("int32", "logsumexp", "float32"),
    ("float64", "norm", "float64"), ("float16", "softmax", "float16"),
])
def test_result_dtypes(dtype, op, expected):
    args = (0,) if op in ("cumsum", "logsumexp", "softmax") else ()
    lhs = dtype
    x = gradlab.ones(3, dtype=getattr(gradlab, lhs))
    assert getattr(gradlab, op)(x, *args).dtype.name == expected
    if torch is not None:
        t = torch.ones(3, dtype=getattr(torch, lhs))
        assert str(getattr(torch, op)(t, *args).dtype) == f"torch.{expected}"


@pytest.mark.parametrize("fn,dtype", [
    (lambda lib, x: lib.prod(x, dtype=lib.float64), "float64"),
    (lambda lib, x: lib.cumsum(x, 0, dtype=lib.float32), "float32"),
    (lambda lib, x: lib.mean(x, dtype=lib.float64), "float64"),
    (lambda lib, x: lib.sum(x, dtype=lib.float32), "float32"),
    (lambda lib, x: lib.log_softmax(x, 0, dtype=lib.float64), "float64"),
])
def test_dtype_argument_casts_first(fn, dtype):
    out = fn(gradlab, gradlab.tensor([1, 2, 3]))
    assert out.dtype.name == dtype
    if torch is not None:
        expected = fn(torch, torch.tensor([1, 2, 3]))
        assert str(expected.dtype) == f"torch.{dtype}"
        np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6)


def test_empty_results_follow_pytorch():
    empty = gradlab.zeros(0)
    assert empty.sum().item() == 0.0 and empty.prod().item() == 1.0
    assert empty.any().item() is False and empty.all().item() is True
    assert empty.norm().item() == 0.0 and empty.logsumexp(0).item() == -INF
    assert gradlab.zeros(0, 3).var(1).shape == (0,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy "mean of empty slice" noise
        assert math.isnan(empty.mean().item())


# --- errors that teach ------------------------------------------------------------------------

DIM_OPS = {
    "sum": lambda x, d: x.sum(d), "mean": lambda x, d: x.mean(d), "prod": lambda x, d: x.prod(d),
    "amax": lambda x, d: x.amax(d), "amin": lambda x, d: x.amin((0, d)),
    "max": lambda x, d: x.max(d), "min": lambda x, d: x.min(d),
    "argmax": lambda x, d: x.argmax(d), "argmin": lambda x, d: x.argmin(d),
    "any": lambda x, d: x.any(d), "all": lambda x, d: x.all(d), "var": lambda x, d: x.var(d),
    "std": lambda x, d: x.std(d), "logsumexp": lambda x, d: x.logsumexp(d),
    "norm": lambda x, d: x.norm(dim=d), "cumsum": lambda x, d: x.cumsum(d),
    "softmax": lambda x, d: x.softmax(d), "log_softmax": lambda x, d: x.log_softmax(d),
}


@pytest.mark.parametrize("op", sorted(DIM_OPS))
@pytest.mark.parametrize("dim", [2, -3])
def test_bad_dim_names_the_op_and_the_valid_range(op, dim):
    x = gradlab.ones(2, 3)
    with pytest.raises(IndexError, match=rf"^{op}: dimension {dim} is out of range .*\[-2, 1\]"):
        DIM_OPS[op](x, dim)


def test_repeated_dim_is_an_error():
    with pytest.raises(RuntimeError, match=r"sum: dim \(1, -1\) names a dimension twice"):
        gradlab.ones(2, 3).sum((1, -1))


def test_cumsum_needs_a_dim():
    with pytest.raises(TypeError, match=r"cumsum: dim is required.*cumsum\(x, dim=0\)"):
        gradlab.ones(3).cumsum()


@pytest.mark.parametrize("op", ["mean", "var", "std", "norm", "softmax", "log_softmax"])
def test_integer_input_asks_for_a_float(op):
    args = (0,) if "softmax" in op else ()
    with pytest.raises(RuntimeError, match=rf"{op}: expected a floating point (or complex )?"
                                           rf"tensor, got gradlab.int64 with shape \(2,\).*"
                                           rf"\.float\(\)"):
        getattr(gradlab, op)(gradlab.tensor([1, 2]), *args)


def test_prod_over_several_dims_points_to_chaining():
    with pytest.raises(TypeError, match=r"prod: dim must be one int, got \(0, 1\).*prod\(1\)"):
        gradlab.ones(2, 3).prod((0, 1))


@pytest.mark.parametrize("fn,err,msg", [
    (lambda: gradlab.zeros(0).max(), RuntimeError, r"max: the input of shape \(0,\) is empty"),
    (lambda: gradlab.zeros(0, 3).amin(0), IndexError,
     r"amin: dim 0 of the input of shape \(0, 3\) has size 0"),
    (lambda: gradlab.zeros(2, 0).max(1), IndexError, r"max: dim 1 .* has size 0"),
    (lambda: gradlab.zeros(0).argmax(), RuntimeError, "argmax: .* is empty"),
    (lambda: gradlab.zeros(0).norm(INF), RuntimeError, "norm: .* is empty"),
])
def test_picking_from_nothing_is_an_error(fn, err, msg):
    with pytest.raises(err, match=msg):
        fn()


# --- properties over shapes and dims ----------------------------------------------------------

@st.composite
def shape_and_dims(draw):
    """A shape, then None, one dim or a tuple of distinct dims, each maybe negative."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    n = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"])) if n else "none"
    if kind == "none":
        return shape, None
    picked = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    signed = [d - n if draw(st.booleans()) else d for d in picked]
    return shape, signed[0] if kind == "int" else tuple(signed)


@settings(max_examples=80, deadline=None)
@given(case=shape_and_dims(), keepdim=st.booleans(),
       op=st.sampled_from(["sum", "mean", "amax", "var"]))
def test_reductions_match_numpy_values_and_gradients(case, keepdim, op):
    shape, dim = case
    x_np = np.random.default_rng(len(shape)).standard_normal(shape)
    axis = dim if dim is None or isinstance(dim, int) else tuple(d % len(shape) for d in dim)
    x = gradlab.tensor(x_np, requires_grad=True)
    kwargs = {"unbiased": False} if op == "var" else {}
    out = getattr(x, op)(dim, keepdim=keepdim, **kwargs) if dim is not None else \
        getattr(x, op)(keepdim=keepdim, **kwargs)
    want = getattr(np, op)(x_np, axis=axis, keepdims=keepdim)
    assert tuple(out.shape) == np.shape(want)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10, atol=1e-12)
    out.sum().backward()
    count = x_np.size // max(np.size(want), 1)
    local = {"sum": np.ones_like(x_np), "mean": np.full_like(x_np, 1 / count),
             "amax": (x_np == np.amax(x_np, axis=axis, keepdims=True)).astype(float),
             "var": 2 * (x_np - x_np.mean(axis=axis, keepdims=True)) / count}[op]
    np.testing.assert_allclose(x.grad.numpy(), local, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, kwargs", [
    ("sum", {"axis": 1}), ("mean", {"axis": 0, "keepdims": True}), ("prod", {"axis": -1}),
    ("amax", {"axis": 1, "keepdims": True}), ("argmax", {"axis": 0}), ("std", {"axis": 1}),
    ("var", {"axis": 0, "keepdims": True}), ("logsumexp", {"axis": 1}),
    ("softmax", {"axis": 1}), ("cumsum", {"axis": 0}),
])
def test_numpy_keywords_axis_and_keepdims_mean_dim_and_keepdim(name, kwargs):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    ours = getattr(gradlab, name)(gradlab.tensor(x), **kwargs)
    plain = {"dim" if k == "axis" else "keepdim": v for k, v in kwargs.items()}
    expected = getattr(gradlab, name)(gradlab.tensor(x), **plain)
    np.testing.assert_array_equal(ours.numpy(), expected.numpy())
    method = getattr(gradlab.tensor(x), name)(**kwargs)  # the Tensor method too
    np.testing.assert_array_equal(method.numpy(), expected.numpy())
    if torch is not None:
        theirs = getattr(torch, name)(torch.tensor(x), **kwargs)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


# --- forward over reverse: tangents through the backward formulas ----------------------------

def check_hessian_vector_product(f, shape, seed: int = 0) -> None:
    """Forward over reverse: with x = x0 + vε, the gradient that backward computes with
    ``create_graph=True`` carries the tangent H·v. Checked against a central difference of
    the gradient along v, and against torch.func's jvp of grad where PyTorch is installed."""
    rng = np.random.default_rng(seed)
    x0, v = rng.uniform(-2.0, 2.0, shape), rng.standard_normal(shape)
    with fwAD.dual_level():
        x = fwAD.make_dual(gradlab.tensor(x0, requires_grad=True), gradlab.tensor(v))
        (g,) = gradlab.autograd.grad(f(gradlab, x).sum(), x, create_graph=True)
        hv = fwAD.unpack_dual(g).tangent
    assert hv is not None, "the gradient carries no tangent"

    def gradient(at):
        x = gradlab.tensor(at, requires_grad=True)
        return gradlab.autograd.grad(f(gradlab, x).sum(), x)[0].numpy()

    eps = 1e-6
    want = (gradient(x0 + eps * v) - gradient(x0 - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv.detach().numpy(), want, rtol=1e-5, atol=1e-7)
    if torch is not None:
        grad = torch.func.grad(lambda t: f(torch, t).sum())
        _, theirs = torch.func.jvp(grad, (torch.from_numpy(x0),), (torch.from_numpy(v),))
        np.testing.assert_allclose(hv.detach().numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("f", [
    lambda lib, x: x.amax(1) ** 2,
    lambda lib, x: x.max(0).values ** 3,
    lambda lib, x: x.cumsum(1) ** 2,
    lambda lib, x: lib.max(x, other=0.5 - x) ** 2,  # maximum
    lambda lib, x: x.clamp(-1.0, 1.0) ** 3,
    lambda lib, x: lib.where(x > 0, x ** 2, x ** 3),
    lambda lib, x: x.prod(1),  # its backward reads its output: that tangent must come too
], ids=["amax", "max_dim", "cumsum", "maximum", "clamp", "where", "prod"])
def test_forward_over_reverse_gives_hessian_vector_products(f):
    check_hessian_vector_product(f, (3, 4))
