"""Diagonals (diag, diagonal, diag_embed, diagflat, trace, tril/triu_indices) and products
(tensordot, inner, mv, kron, cross, cdist, cosine_similarity, pairwise_distance)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.autograd.forward_ad as fwAD
from gradlab.ops import products
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def _embed(np, x, offset=0, dim1=-2, dim2=-1):
    """NumPy reference for diag_embed: zeros, then the diagonal written in place."""
    n = x.shape[-1] + abs(offset)
    ndim = x.ndim + 1
    d1, d2 = dim1 % ndim, dim2 % ndim
    rest = iter(x.shape[:-1])
    out = np.zeros([n if i in (d1, d2) else next(rest) for i in range(ndim)])
    view = np.diagonal(out, offset, d1, d2)
    view.flags.writeable = True
    view[...] = x
    return out


def _cdist(np, a, b, p):
    diff = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == np.inf:
        return diff.max(-1)
    return (diff ** p).sum(-1) ** (1 / p)


def _cosine(np, a, b, dim):
    a, b = np.broadcast_arrays(a, b)
    na = np.maximum(np.linalg.norm(a, axis=dim, keepdims=True), 1e-8)
    nb = np.maximum(np.linalg.norm(b, axis=dim, keepdims=True), 1e-8)
    return (a / na * b / nb).sum(dim)


DIAGONALS = [
    OpCase("diagonal", lambda lib, x: x.diagonal(), ((3, 4),),
           numpy=lambda np, x: np.diagonal(x), variants=(((4, 3),), ((0, 3),))),
    OpCase("diagonal_offset_dims", lambda lib, x: lib.diagonal(x, 1, 2, 0), ((2, 3, 4),),
           numpy=lambda np, x: np.diagonal(x, 1, 2, 0)),
    OpCase("diagonal_below", lambda lib, x: x.diagonal(-1, -2, -1), ((2, 3, 4),),
           numpy=lambda np, x: np.diagonal(x, -1, -2, -1)),
    OpCase("diagonal_copy", lambda lib, x: lib.diagonal_copy(x, 1), ((3, 4),),
           numpy=lambda np, x: np.diagonal(x, 1)),
    OpCase("diag_of_vector", lambda lib, x: lib.diag(x, 1), ((4,),),
           numpy=lambda np, x: np.diag(x, 1), variants=(((0,),),)),
    OpCase("diag_of_matrix", lambda lib, x: x.diag(-1), ((3, 4),),
           numpy=lambda np, x: np.diag(x, -1)),
    OpCase("diag_embed", lambda lib, x: x.diag_embed(), ((2, 3),),
           numpy=lambda np, x: _embed(np, x), variants=(((3,),),)),
    OpCase("diag_embed_offset_dims", lambda lib, x: lib.diag_embed(x, -1, 0, 2), ((2, 3),),
           numpy=lambda np, x: _embed(np, x, -1, 0, 2)),
    OpCase("diagflat", lambda lib, x: lib.diagflat(x, 1), ((2, 3),),
           numpy=lambda np, x: np.diagflat(x, 1)),
    OpCase("trace", lambda lib, x: x.trace(), ((3, 4),), numpy=lambda np, x: np.trace(x),
           variants=(((4, 3),), ((0, 3),))),
]

PRODUCTS = [
    OpCase("tensordot_int", lambda lib, a, b: lib.tensordot(a, b, 2), ((2, 3, 4), (3, 4, 5)),
           numpy=lambda np, a, b: np.tensordot(a, b, 2)),
    OpCase("tensordot_lists", lambda lib, a, b: lib.tensordot(a, b, dims=([1, 0], [0, 2])),
           ((3, 2, 4), (2, 5, 3)), numpy=lambda np, a, b: np.tensordot(a, b, ([1, 0], [0, 2]))),
    OpCase("tensordot_outer", lambda lib, a, b: lib.tensordot(a, b, 0), ((2,), (3,)),
           numpy=lambda np, a, b: np.tensordot(a, b, 0)),
    OpCase("inner", lambda lib, a, b: a.inner(b), ((2, 3), (4, 3)),
           numpy=lambda np, a, b: np.inner(a, b),
           variants=(((), (2, 3)), ((3,), (3,)), ((2, 1, 3), (3,)))),
    OpCase("mv", lambda lib, m, v: m.mv(v), ((3, 4), (4,)), numpy=lambda np, m, v: m @ v),
    OpCase("kron", lambda lib, a, b: a.kron(b), ((2, 3), (4, 2)),
           numpy=lambda np, a, b: np.kron(a, b), variants=(((2,), (3, 2)), ((2, 1, 3), (2, 2)))),
    OpCase("cross", lambda lib, a, b: a.cross(b, dim=-1), ((4, 3), (4, 3)),
           numpy=lambda np, a, b: np.cross(a, b), variants=(((2, 1, 3), (1, 4, 3)),)),
    OpCase("cross_dim0", lambda lib, a, b: lib.cross(a, b, dim=0), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.cross(a, b, axis=0)),
    # torch.func.jvp can't check cdist (PyTorch has no forward AD for it): see test_cdist_jvp.
    OpCase("cdist", lambda lib, a, b: lib.cdist(a, b), ((4, 3), (5, 3)),
           numpy=lambda np, a, b: _cdist(np, a, b, 2), variants=(((2, 4, 3), (1, 5, 3)),),
           jvp=False),
    OpCase("cdist_p1", lambda lib, a, b: lib.cdist(a, b, p=1), ((4, 3), (5, 3)),
           numpy=lambda np, a, b: _cdist(np, a, b, 1), jvp=False),
    OpCase("cdist_inf", lambda lib, a, b: lib.cdist(a, b, p=float("inf")), ((4, 3), (5, 3)),
           numpy=lambda np, a, b: _cdist(np, a, b, np.inf), jvp=False),
    OpCase("cdist_p3", lambda lib, a, b: lib.cdist(a, b, p=3), ((4, 3), (5, 3)),
           numpy=lambda np, a, b: _cdist(np, a, b, 3), jvp=False),
    OpCase("cosine_similarity", lambda lib, a, b: lib.cosine_similarity(a, b), ((4, 3), (4, 3)),
           numpy=lambda np, a, b: _cosine(np, a, b, 1)),
    OpCase("cosine_similarity_dim", lambda lib, a, b: lib.cosine_similarity(a, b, dim=-1),
           ((2, 1, 3), (4, 3)), numpy=lambda np, a, b: _cosine(np, a, b, -1)),
    OpCase("pairwise_distance", lambda lib, a, b: lib.pairwise_distance(a, b), ((4, 3), (4, 3)),
           numpy=lambda np, a, b: np.linalg.norm(a - b + 1e-6, axis=-1)),
    OpCase("pairwise_distance_p1_keepdim",
           lambda lib, a, b: lib.pairwise_distance(a, b, p=1, keepdim=True), ((4, 3), (3,)),
           numpy=lambda np, a, b: np.abs(a - b + 1e-6).sum(-1, keepdims=True)),
]

globals().update(standard_op_tests(DIAGONALS, prefix="diagonals_"))
globals().update(standard_op_tests(PRODUCTS, prefix="products_"))


# --- diagonal is a view -----------------------------------------------------------------------

def test_diagonal_is_a_writeable_view_of_its_input():
    x = gradlab.zeros(3, 4)
    d = x.diagonal(1)
    assert d._view_base is not None and tuple(d.stride()) == (5,)
    d.fill_(7.0)  # writes through to x
    expected = np.zeros((3, 4))
    expected[[0, 1, 2], [1, 2, 3]] = 7.0
    np.testing.assert_array_equal(x.numpy(), expected)
    assert gradlab.diag(x, 1)._view_base is None  # diag copies, as in PyTorch


@needs_torch
def test_in_place_change_through_the_diagonal_matches_torch():
    a = np.random.default_rng(0).standard_normal((3, 3))
    results = []
    for lib in (gradlab, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x * 2
        y.diagonal().mul_(3)  # the base's history now goes through the view's change
        out = (y * y).sum()
        out.backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


def test_diagonal_backward_puts_the_gradient_on_a_diagonal_of_zeros():
    x = gradlab.ones(2, 3, 4, requires_grad=True)
    x.diagonal(-1, 1, 2).backward(gradlab.tensor([[10.0, 20.0], [30.0, 40.0]]))
    expected = np.zeros((2, 3, 4))
    expected[:, [1, 2], [0, 1]] = [[10, 20], [30, 40]]
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    assert x.diagonal().grad_fn.next_functions[0][0] is not None


@needs_torch
@pytest.mark.parametrize("make", [
    lambda lib, x: x.diagonal(), lambda lib, x: lib.diag(x), lambda lib, x: lib.diag(x[0]),
    lambda lib, x: lib.diag_embed(x), lambda lib, x: lib.trace(x), lambda lib, x: lib.mv(x, x[0]),
    lambda lib, x: lib.cdist(x, x), lambda lib, x: lib.cdist(x, x, p=1)])
def test_node_names_match_torch(make):
    a = np.ones((3, 3))
    ours = make(gradlab, gradlab.tensor(a, requires_grad=True)).grad_fn
    theirs = make(torch, torch.tensor(a, requires_grad=True)).grad_fn
    assert ours.name() == theirs.name()


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=2, max_size=4), data=st.data())
def test_diagonal_and_diag_embed_agree_with_numpy_and_undo_each_other(shape, data):
    ndim = len(shape)
    dim1 = data.draw(st.integers(-ndim, ndim - 1))
    dim2 = data.draw(st.integers(-ndim, ndim - 1).filter(lambda d: d % ndim != dim1 % ndim))
    offset = data.draw(st.integers(-4, 4))
    x = np.random.default_rng(0).standard_normal(shape)
    d = gradlab.tensor(x).diagonal(offset, dim1, dim2)
    np.testing.assert_array_equal(d.numpy(), np.diagonal(x, offset, dim1, dim2))
    if d.shape[-1]:  # diag_embed of an empty last dim makes |offset| x |offset| zeros
        back = gradlab.diag_embed(d, offset, dim1, dim2).diagonal(offset, dim1, dim2)
        np.testing.assert_array_equal(back.numpy(), d.numpy())


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_trace_of_integers_adds_up_in_int64(dtype):
    x = gradlab.ones(3, 3, dtype=getattr(gradlab, dtype))
    out = x.trace()
    assert out.dtype is gradlab.int64 and out.item() == 3


@needs_torch
@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args", [(3, 4), (3, 4, 1), (4, 3, -2), (0, 3), (3, 3, 5)])
def test_triangle_indices_match_torch(fn, args):
    ours = getattr(gradlab, fn)(*args)
    theirs = getattr(torch, fn)(*args)
    assert ours.dtype is gradlab.int64 and not ours.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert getattr(gradlab, fn)(3, 3, dtype=gradlab.int32).dtype is gradlab.int32


# --- products ---------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_tensordot_matches_numpy_for_any_pairing(data):
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    free_a = data.draw(st.lists(st.integers(1, 3), max_size=2))
    free_b = data.draw(st.lists(st.integers(1, 3), max_size=2))
    rng = np.random.default_rng(0)
    perm_a = rng.permutation(len(sizes) + len(free_a))
    perm_b = rng.permutation(len(sizes) + len(free_b))
    a = rng.standard_normal([(sizes + free_a)[i] for i in perm_a])
    b = rng.standard_normal([(sizes + free_b)[i] for i in perm_b])
    dims_a = [int(np.flatnonzero(perm_a == k)[0]) for k in range(len(sizes))]
    dims_b = [int(np.flatnonzero(perm_b == k)[0]) for k in range(len(sizes))]
    out = gradlab.tensordot(gradlab.tensor(a), gradlab.tensor(b), (dims_a, dims_b))
    np.testing.assert_allclose(out.numpy(), np.tensordot(a, b, (dims_a, dims_b)), rtol=1e-12)


def test_tensordot_accepts_single_ints_and_a_dims_tensor():
    a, b = gradlab.ones(2, 3), gradlab.ones(3, 4)
    assert tuple(gradlab.tensordot(a, b, (1, 0)).shape) == (2, 4)
    assert tuple(gradlab.tensordot(a, b, gradlab.tensor([[1], [0]])).shape) == (2, 4)


def test_integer_products_stay_integers():
    a = gradlab.tensor([[1, 2], [3, 4]])
    assert a.kron(a).dtype is gradlab.int64 and a.kron(a)[1, 3].item() == 8
    v = gradlab.tensor([1, 0, 0])
    np.testing.assert_array_equal(v.cross(gradlab.tensor([0, 1, 0]), dim=0).numpy(), [0, 0, 1])


@needs_torch
def test_cross_without_dim_takes_the_first_size_3_dim_and_warns():
    a = np.random.default_rng(0).standard_normal((3, 3, 2))
    b = np.random.default_rng(1).standard_normal((3, 3, 2))
    with pytest.warns(UserWarning, match="cross: calling it without dim is deprecated"):
        ours = gradlab.cross(gradlab.tensor(a), gradlab.tensor(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.cross(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("p", [2.0, 1.0, float("inf"), 3.0, 0.5, 0.0])
def test_cdist_at_zero_distance_matches_torch_without_nan(p):
    """Rows that coincide: PyTorch takes the gradient as 0 there (2-norm: 0/0 otherwise)."""
    a = np.random.default_rng(0).standard_normal((4, 3))
    grads = []
    for lib in (gradlab, torch):
        x = lib.tensor(a, requires_grad=True)
        out = lib.cdist(x, x[1:3], p=p)  # rows 1 and 2 are at distance 0 from themselves
        out.backward(lib.ones(4, 2, dtype=lib.float64))
        grads.append((out.detach().numpy(), x.grad.numpy()))
    assert not np.isnan(grads[0][1]).any()
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [2.0, 1.0, float("inf"), 3.0])
def test_cdist_jvp_matches_central_differences(p):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((5, 3))
    ta, tb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    eps = 1e-6

    def dist(x, y):
        return gradlab.cdist(gradlab.tensor(x), gradlab.tensor(y), p=p).numpy()

    want = (dist(a + eps * ta, b + eps * tb) - dist(a - eps * ta, b - eps * tb)) / (2 * eps)
    with fwAD.dual_level():
        x = fwAD.make_dual(gradlab.tensor(a), gradlab.tensor(ta))
        y = fwAD.make_dual(gradlab.tensor(b), gradlab.tensor(tb))
        got = fwAD.unpack_dual(gradlab.cdist(x, y, p=p)).tangent.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_cdist_gradgrad_of_p2_needs_no_nan_at_zero_distance():
    x = gradlab.tensor([[0.0, 1.0], [2.0, 0.5]], dtype=gradlab.float64, requires_grad=True)
    (g,) = gradlab.autograd.grad(gradlab.cdist(x, x).sum(), x, create_graph=True)
    (gg,) = gradlab.autograd.grad((g * g).sum(), x)
    assert np.isfinite(gg.numpy()).all()


@needs_torch
def test_cosine_similarity_of_a_zero_vector_matches_torch():
    a = np.zeros((2, 3))
    b = np.random.default_rng(0).standard_normal((2, 3))
    results = []
    for lib in (gradlab, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.cosine_similarity(x, y)
        out.sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_functional_names_are_in_nn_functional():
    assert products.FUNCTIONAL == ["cosine_similarity", "pairwise_distance"]
    import gradlab.nn.functional as F

    for name in products.FUNCTIONAL:
        assert getattr(gradlab, name) is getattr(products, name) is getattr(F, name)


def test_tensor_methods_are_bound():
    x = gradlab.ones(3, 3)
    v = gradlab.ones(3)
    assert x.diag().shape == (3,) and v.diag().shape == (3, 3)
    assert v.diagflat().shape == (3, 3) and x.trace().item() == 3.0
    assert x.inner(v).shape == (3,) and x.mv(v).shape == (3,)
    assert x.cross(x, dim=1).abs().sum().item() == 0.0


# --- errors that teach ------------------------------------------------------------------------

def _cross_without_dim(a, b):
    with pytest.warns(UserWarning, match="without dim is deprecated"):
        return gradlab.cross(a, b)


ERRORS = [
    (lambda: gradlab.ones(3).diagonal(), RuntimeError, r"diagonal: needs a tensor with at least "
     r"2 dims.*got 1 dim\(s\); use diag_embed"),
    (lambda: gradlab.ones(3, 3).diagonal(0, 1, -1), RuntimeError,
     r"diagonal: dim1 and dim2 name the same dim \(1 and -1"),
    (lambda: gradlab.ones(3, 3).diagonal(0, 0, 2), IndexError, r"diagonal: dimension 2 is out"),
    (lambda: gradlab.diagonal_copy(gradlab.ones(3)), RuntimeError, r"diagonal_copy: needs"),
    (lambda: gradlab.diag_embed(gradlab.tensor(1.0)), RuntimeError,
     r"diag_embed: needs at least a 1-d tensor.*reshape\(1\)"),
    (lambda: gradlab.diag_embed(gradlab.ones(3), 0, 0, -2), RuntimeError,
     r"diag_embed: dim1 and dim2 name the same dim \(0 and -2 of the 2-d output\)"),
    (lambda: gradlab.diag(gradlab.ones(2, 2, 2)), RuntimeError,
     r"diag: expected a 1-d \(vector\) or 2-d \(matrix\) tensor, got shape \(2, 2, 2\)"),
    (lambda: gradlab.trace(gradlab.ones(2, 2, 2)), RuntimeError,
     r"trace: expected a matrix.*\(2, 2, 2\).*diagonal\(dim1=-2, dim2=-1\)"),
    (lambda: gradlab.tril_indices(-1, 3), RuntimeError, r"tril_indices: row and col must be >= 0"),
    (lambda: gradlab.triu_indices(3, 3, dtype=gradlab.float32), RuntimeError,
     r"triu_indices: dtype must be an integer type.*got gradlab.float32"),
    (lambda: gradlab.tensordot(gradlab.ones(2), 2.0), TypeError,
     r"tensordot: expected two tensors, got Tensor and float"),
    (lambda: gradlab.tensordot(gradlab.ones(2), gradlab.ones(2), 1, out=gradlab.ones(())),
     TypeError, r"tensordot: out= is not supported"),
    (lambda: gradlab.tensordot(gradlab.ones(2, 3), gradlab.ones(3), 2), RuntimeError,
     r"tensordot: dims=2 pairs a's last 2 dims with b's first 2.*use 0 to 1"),
    (lambda: gradlab.tensordot(gradlab.ones(2, 3), gradlab.ones(3), "ij"), RuntimeError,
     r"tensordot: dims must be an int or a pair of lists"),
    (lambda: gradlab.tensordot(gradlab.ones(2, 3), gradlab.ones(3, 2), ([0, 1], [0])),
     RuntimeError, r"tensordot: both lists of dims must have the same length"),
    (lambda: gradlab.tensordot(gradlab.ones(2, 2), gradlab.ones(2, 2), ([0, -2], [0, 1])),
     RuntimeError, r"tensordot: a dim is named twice"),
    (lambda: gradlab.tensordot(gradlab.ones(2, 3), gradlab.ones(4, 2), 1), RuntimeError,
     r"tensordot: dim 1 of a \(size 3\) is paired with dim 0 of b \(size 4\)"),
    (lambda: gradlab.inner(gradlab.ones(2, 3), gradlab.ones(2)), RuntimeError,
     r"inner: the last dims must have the same size.*did you mean matmul"),
    (lambda: gradlab.mv(gradlab.ones(2, 3), gradlab.ones(3, 1)), RuntimeError,
     r"mv: expects a matrix \(2-d\) and a vector \(1-d\), got shapes \(2, 3\) and \(3, 1\)"),
    (lambda: gradlab.cross(gradlab.ones(2, 3), gradlab.ones(4, 3), dim=1), RuntimeError,
     r"cross: shapes \(2, 3\) and \(4, 3\) can't be broadcast"),
    (lambda: _cross_without_dim(gradlab.ones(2, 4), gradlab.ones(2, 4)), RuntimeError,
     r"cross: no dim of size 3 in the broadcast shape \(2, 4\)"),
    (lambda: gradlab.cross(gradlab.ones(3, 4), gradlab.ones(3, 4), dim=1), RuntimeError,
     r"cross: dim 1 of input \(shape \(3, 4\)\) must have size 3"),
    (lambda: gradlab.cross(gradlab.ones(3), gradlab.ones(2, 3), dim=0), RuntimeError,
     r"cross: input and other must have the same number of dims.*\(3,\) and \(2, 3\)"),
    (lambda: gradlab.cdist(gradlab.ones(3), gradlab.ones(2, 3)), RuntimeError,
     r"cdist: x1 and x2 must have at least 2 dims.*unsqueeze\(0\)"),
    (lambda: gradlab.cdist(gradlab.ones(2, 3), gradlab.ones(2, 4)), RuntimeError,
     r"cdist: x1 and x2 must have the same number of features"),
    (lambda: gradlab.cdist(gradlab.ones(2, 3, dtype=gradlab.int64), gradlab.ones(2, 3)),
     RuntimeError, r"cdist: only floating point tensors are supported, got gradlab.int64"),
    (lambda: gradlab.cdist(gradlab.ones(2, 3), gradlab.ones(2, 3), p=-1), RuntimeError,
     r"cdist: p must be >= 0"),
    (lambda: gradlab.cdist(gradlab.ones(2, 2, 3), gradlab.ones(3, 2, 3)), RuntimeError,
     r"cdist: the batch dims of shapes \(2, 2, 3\) and \(3, 2, 3\) can't be broadcast"),
    (lambda: gradlab.cosine_similarity(gradlab.ones(2, 3), gradlab.ones(4, 3)), RuntimeError,
     r"cosine_similarity: shapes \(2, 3\) and \(4, 3\) can't be broadcast"),
    (lambda: gradlab.pairwise_distance(gradlab.ones(2, 3), [1.0]), TypeError,
     r"pairwise_distance: expected two tensors, got Tensor and list"),
]


@pytest.mark.parametrize("call, error, match", ERRORS, ids=[e[2][:30] for e in ERRORS])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
