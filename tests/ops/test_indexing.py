"""Indexing: x[i], index_put, masks, nonzero (writes: test_indexing_writes.py).

Forward vs NumPy, gradcheck, values and gradients vs PyTorch (repeated
indices included), in-place semantics (versions, leaves, views, second
derivatives), and the errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.autograd.forward_ad as fwAD
from tests.oracle import (
    M,
    OpCase,
    check_hvp,
    needs_torch,
    standard_op_tests,
    torch,
)
from tests.oracle import (
    index_tensor as idx,
)

X3 = ((3, 4, 5),)


# --- reading: x[index] --------------------------------------------------------------------------

GETITEM = [
    OpCase("int", lambda lib, x: x[1], X3, numpy=lambda np, x: x[1]),
    OpCase("negative_int", lambda lib, x: x[-1, -2], X3, numpy=lambda np, x: x[-1, -2]),
    OpCase("all_ints", lambda lib, x: x[1, 2, 3], X3, numpy=lambda np, x: x[1, 2, 3]),
    OpCase("slices", lambda lib, x: x[1:, ::2, 1:4:2], X3, numpy=lambda np, x: x[1:, ::2, 1:4:2],
           variants=(((0, 4, 5),),)),
    OpCase("slice_past_end", lambda lib, x: x[:, 2:10], M, numpy=lambda np, x: x[:, 2:10]),
    OpCase("ellipsis", lambda lib, x: x[..., 1:3], X3, numpy=lambda np, x: x[..., 1:3]),
    OpCase("ellipsis_middle", lambda lib, x: x[0, ..., 2], X3, numpy=lambda np, x: x[0, ..., 2]),
    OpCase("none", lambda lib, x: x[None, 0, None], X3, numpy=lambda np, x: x[None, 0, None]),
    OpCase("scalar_none", lambda lib, x: x[None], ((),), numpy=lambda np, x: x[None]),
    OpCase("scalar_empty_tuple", lambda lib, x: x[()], ((),), numpy=lambda np, x: x[()]),
    OpCase("scalar_ellipsis", lambda lib, x: x[...], ((),), numpy=lambda np, x: x[...]),
    OpCase("bool_true", lambda lib, x: x[True], M, numpy=lambda np, x: x[None]),
    OpCase("bool_false", lambda lib, x: x[False, 1], M, numpy=lambda np, x: x[None, 1][:0]),
    OpCase("tensor_slice_bound", lambda lib, x: x[:idx(lib, 2), idx(lib, 1):], M,
           numpy=lambda np, x: x[:2, 1:]),
    OpCase("numpy_index", lambda lib, x: x[np.array([2, 0])], X3,
           numpy=lambda np, x: x[[2, 0]]),
    OpCase("numpy_mask", lambda lib, x: x[:, np.array([True, False, False, True])], M,
           numpy=lambda np, x: x[:, [0, 3]]),
    OpCase("list", lambda lib, x: x[[2, 0]], X3, numpy=lambda np, x: x[[2, 0]]),
    OpCase("list_repeated", lambda lib, x: x[[0, 2, 0, 0]], X3,
           numpy=lambda np, x: x[[0, 2, 0, 0]]),
    OpCase("empty_list", lambda lib, x: x[[]], M, numpy=lambda np, x: x[np.array([], int)]),
    OpCase("tensor_2d", lambda lib, x: x[idx(lib, [[0, 1], [1, 1]])], X3,
           numpy=lambda np, x: x[np.array([[0, 1], [1, 1]])]),
    OpCase("tensor_int32_negative", lambda lib, x: x[:, idx(lib, [-1, 0, -1], "int32")], X3,
           numpy=lambda np, x: x[:, [-1, 0, -1]]),
    OpCase("tensor_0d", lambda lib, x: x[idx(lib, 1)], X3, numpy=lambda np, x: x[1]),
    OpCase("mask", lambda lib, x: x[x > 0], X3, numpy=lambda np, x: x[x > 0],
           variants=(((0, 3),), ((),))),
    OpCase("mask_2d_then_slice", lambda lib, x: x[x.sum(-1) > 0, 1:], X3,
           numpy=lambda np, x: x[x.sum(-1) > 0, 1:]),
    OpCase("mask_middle", lambda lib, x: x[:, x[0, :, 0] > 0], X3,
           numpy=lambda np, x: x[:, x[0, :, 0] > 0]),
    OpCase("adjacent_tensors", lambda lib, x: x[:, [0, 2, 2], [1, 3, 1]], X3,
           numpy=lambda np, x: x[:, [0, 2, 2], [1, 3, 1]]),
    OpCase("separated_tensors", lambda lib, x: x[[0, 2], 1:, [1, 1]], X3,
           numpy=lambda np, x: x[[0, 2], 1:, [1, 1]]),
    OpCase("broadcast_tensors", lambda lib, x: x[idx(lib, [[0], [2]]), :, idx(lib, [1, 3, 1])],
           X3, numpy=lambda np, x: x[np.array([[0], [2]]), :, np.array([1, 3, 1])]),
    # PyTorch applies integers first: (4, 2) here, where NumPy gives (2, 4).
    OpCase("int_then_list", lambda lib, x: x[0, :, [1, 2]], X3,
           numpy=lambda np, x: x[0][:, [1, 2]]),
    OpCase("list_none_list", lambda lib, x: x[[0, 1], None, [0, 1]], X3,
           numpy=lambda np, x: x[[0, 1], None, [0, 1]]),
    OpCase("select", lambda lib, x: x.select(1, -1), X3, numpy=lambda np, x: x[:, -1]),
]


globals().update(standard_op_tests(GETITEM, prefix="getitem_"))


def test_repeated_indices_accumulate_gradients():
    x = gradlab.zeros(4, requires_grad=True)
    x[[0, 0, 3, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 0.0, 1.0]
    assert x[[0]].grad_fn.name() == "IndexBackward0"


def test_gradient_of_half_precision_indexing():
    for dtype in (gradlab.float16,):
        x = gradlab.zeros(3, dtype=dtype, requires_grad=True)
        x[[1, 1, 2]].sum().backward()
        assert x.grad.dtype is dtype and x.grad.float().tolist() == [0.0, 2.0, 1.0]


def test_negative_steps_work_like_numpy():
    """PyTorch refuses negative steps; gradlab allows them, as NumPy does."""
    a = np.arange(24.0).reshape(2, 3, 4)
    x = gradlab.tensor(a, requires_grad=True)
    y = x[::-1, 2:0:-1, ::-2]
    np.testing.assert_array_equal(y.detach().numpy(), a[::-1, 2:0:-1, ::-2])
    cot = np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape))
    y.backward(gradlab.tensor(cot))
    want = np.zeros_like(a)
    want[::-1, 2:0:-1, ::-2] = cot
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_basic_indexing_is_a_view_and_advanced_indexing_a_copy():
    x = gradlab.arange(12.0).reshape(3, 4)
    row = x[1]
    assert np.shares_memory(row.numpy(), x.numpy()) and row._version == x._version
    picked = x[[1]]
    assert not np.shares_memory(picked.numpy(), x.numpy())
    x[1, 0] = 100.0  # visible through the view, not through the copy
    assert row[0].item() == 100.0 and picked[0, 0].item() == 4.0
    assert row._version == x._version == 1
    row[1] = -1.0  # writing through a view changes its base
    assert x[1, 1].item() == -1.0


def test_iterating_a_tensor_gives_its_rows_with_gradients():
    x = gradlab.arange(6.0).reshape(3, 2).requires_grad_()
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    sum((r * k).sum() for k, r in enumerate(rows)).backward()
    assert x.grad.tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    with pytest.raises(TypeError, match="0-d"):
        iter(gradlab.tensor(1.0))


@st.composite
def basic_index(draw, negative_steps):
    """A shape and a tuple of ints, slices, None and at most one Ellipsis that fits it."""
    shape = tuple(draw(st.lists(st.integers(1, 4), max_size=4)))
    ndim = len(shape)
    n = draw(st.integers(0, ndim))  # how many dims the key indexes explicitly
    dims = list(range(n))
    ellipsis_at = draw(st.none() | st.integers(0, n))
    if ellipsis_at is not None:  # the dims after the ... are the last ones
        dims = dims[:ellipsis_at] + list(range(ndim - (n - ellipsis_at), ndim))
    key = []
    for k, dim in enumerate(dims):
        if k == ellipsis_at:
            key.append(Ellipsis)
        while draw(st.integers(0, 4)) == 0:
            key.append(None)
        size = shape[dim]
        if draw(st.booleans()):
            key.append(draw(st.integers(-size, size - 1)))
        else:
            bound = st.none() | st.integers(-size - 2, size + 2)
            steps = [1, 2, 3, -1, -2] if negative_steps else [1, 2, 3]
            key.append(slice(draw(bound), draw(bound), draw(st.none() | st.sampled_from(steps))))
    if ellipsis_at == n:
        key.append(Ellipsis)
    return shape, tuple(key)


@settings(max_examples=80, deadline=None)
@given(case=basic_index(negative_steps=True))
def test_basic_indexing_matches_numpy_with_gradients(case):
    shape, key = case
    a = np.arange(float(np.prod(shape))).reshape(shape)
    x = gradlab.tensor(a, requires_grad=True)
    y = x[key]
    np.testing.assert_array_equal(y.detach().numpy(), a[key])
    cot = np.random.default_rng(0).standard_normal(np.shape(a[key]))
    y.backward(gradlab.tensor(cot))
    want = np.zeros_like(a)
    want[key] += cot
    np.testing.assert_array_equal(x.grad.numpy(), want)


@needs_torch
@settings(max_examples=60, deadline=None)
@given(case=basic_index(negative_steps=False))
def test_basic_indexing_matches_torch(case):
    shape, key = case
    a = np.random.default_rng(1).standard_normal(shape)
    ours, theirs = gradlab.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y_g, y_t = ours[key], theirs[key]
    assert tuple(y_g.shape) == tuple(y_t.shape)
    np.testing.assert_array_equal(y_g.detach().numpy(), y_t.detach().numpy())
    cot = np.random.default_rng(2).standard_normal(tuple(y_t.shape))
    y_g.backward(gradlab.tensor(cot))
    y_t.backward(torch.tensor(cot))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@needs_torch
@settings(max_examples=50, deadline=None)
@given(data=st.data(), rows=st.integers(1, 4), cols=st.integers(1, 4))
def test_advanced_indexing_with_repeats_matches_torch(data, rows, cols):
    index = st.lists(st.integers(-rows, rows - 1), min_size=0, max_size=6)
    first = data.draw(index)
    form = data.draw(st.sampled_from(["rows", "rows_slice", "pairs", "int_then_list"]))
    a = np.random.default_rng(3).standard_normal((rows, cols, 2))

    def key(lib):
        i = lib.tensor(first, dtype=lib.int64)
        if form == "rows":
            return i
        if form == "rows_slice":
            return (i, slice(None, None, 2))
        j = lib.tensor([v % cols for v in first], dtype=lib.int64)
        return (i, j) if form == "pairs" else (0, slice(None), lib.tensor([1, 0, 1]))

    ours, theirs = gradlab.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y_g, y_t = ours[key(gradlab)], theirs[key(torch)]
    np.testing.assert_array_equal(y_g.detach().numpy(), y_t.detach().numpy())
    cot = np.random.default_rng(4).standard_normal(tuple(y_t.shape))
    y_g.backward(gradlab.tensor(cot))
    y_t.backward(torch.tensor(cot))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


# --- index_put and masks ---------------------------------------------------------------------

FUNCS = [
    OpCase("index_put_accumulate", lambda lib, x, v: x.index_put(
        (idx(lib, [0, 2, 0]),), v, accumulate=True), ((3, 2), (3, 2))),
    OpCase("masked_fill", lambda lib, x: x.masked_fill(x > 0, -1.0), X3,
           numpy=lambda np, x: np.where(x > 0, -1.0, x), variants=(((),), ((0, 2),))),
    OpCase("masked_fill_tensor_value", lambda lib, x, v: lib.masked_fill(x, x < 0, v),
           ((3, 4), ()), numpy=lambda np, x, v: np.where(x < 0, v, x)),
    OpCase("masked_fill_broadcast_mask", lambda lib, x: x.masked_fill(
        lib.tensor([True, False, False, True]), 0.0), M,
           numpy=lambda np, x: np.where([True, False, False, True], 0.0, x)),
    OpCase("masked_fill_broadcast_input", lambda lib, x: lib.masked_fill(
        x, lib.tensor([[True], [False]]), 2.0), ((3,),),
           numpy=lambda np, x: np.where([[True], [False]], 2.0, x)),
    OpCase("masked_fill_inplace", lambda lib, x, v: x.clone().masked_fill_(x > 0.5, v),
           ((3, 4), ())),
    OpCase("masked_select", lambda lib, x: x.masked_select(x > 0), X3,
           numpy=lambda np, x: x[x > 0]),
    OpCase("masked_select_broadcast", lambda lib, x: lib.masked_select(
        x, lib.tensor([[True], [False], [True]])), ((4,),),
           numpy=lambda np, x: np.broadcast_to(x, (3, 4))[[0, 2]].reshape(-1)),
]


globals().update(standard_op_tests(FUNCS, prefix="functions_"))


def test_changing_the_index_after_indexing_does_not_change_the_gradient():
    x = gradlab.zeros(3, requires_grad=True)
    index = gradlab.tensor([0, 0])
    y = x[index]
    index[1] = 2  # PyTorch would refuse (version check); gradlab kept its own copy
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 0.0]


def test_masked_fill_in_place_bumps_the_version_and_keeps_the_mask_bool():
    x = gradlab.tensor([1.0, -1.0, 2.0])
    x.masked_fill_(x < 0, 0.0)
    assert x.tolist() == [1.0, 0.0, 2.0] and x._version == 1
    leaf = gradlab.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="masked_fill_: a leaf tensor"):
        leaf.masked_fill_(gradlab.tensor([True, False]), 0.0)


# --- nonzero ------------------------------------------------------------------------------------

NONZERO = [[[0, 1, 0], [2, 0, 3]], [0.0, 1.5, -2.0], [[False, True]], 5, 0, [], [[]]]


@needs_torch
@pytest.mark.parametrize("values", NONZERO, ids=str)
def test_nonzero_matches_torch(values):
    ours, theirs = gradlab.tensor(values), torch.tensor(values)
    got, want = gradlab.nonzero(ours), torch.nonzero(theirs)
    assert got.dtype is gradlab.int64 and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got_t, want_t = ours.nonzero(as_tuple=True), torch.nonzero(theirs, as_tuple=True)
    assert len(got_t) == len(want_t)
    for g, w in zip(got_t, want_t):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_one_argument_where_is_nonzero_as_tuple_and_indexes_back():
    x = gradlab.tensor([[1.0, -1.0], [-2.0, 3.0]], requires_grad=True)
    rows, cols = gradlab.where(x > 0)
    assert rows.tolist() == [0, 1] and cols.tolist() == [0, 1]
    x[rows, cols].sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert gradlab.nonzero([0, 3]).tolist() == [[1]]
    assert gradlab.nonzero(x).grad_fn is None


# --- forward mode ------------------------------------------------------------------------------

def test_forward_over_reverse_through_indexing_gives_a_hessian_vector_product(device):
    """H·v as the tangent of a create_graph gradient: it flows through index's backward
    (an accumulating index_put into zeros), masked_fill's (where) and cat's (split)."""
    rng = np.random.default_rng(4)
    x0, v0 = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    mask = gradlab.tensor([[True, False], [False, False], [False, True]], device=device)

    def grad_at(x, create_graph=False):
        y = gradlab.cat([x[[0, 0, 2]], x.masked_fill(mask, 2.0)[1:]])
        (g,) = gradlab.autograd.grad((y * y * y).sum(), x, create_graph=create_graph)
        return g

    check_hvp(grad_at, x0, v0, device)


def test_masked_fill_and_index_put_treat_a_missing_tangent_as_zero():
    x = gradlab.tensor([1.0, -2.0, 3.0], dtype=gradlab.float64)
    mask = gradlab.tensor([True, False, True])
    with fwAD.dual_level():
        value = fwAD.make_dual(gradlab.tensor(5.0, dtype=gradlab.float64),
                               gradlab.tensor(0.5, dtype=gradlab.float64))
        filled = x.masked_fill(mask, value)  # only the value moves
        put = x.index_put((gradlab.tensor([2, 2]),), value, accumulate=True)
        dual = fwAD.make_dual(x, gradlab.tensor([1.0, 2.0, 3.0], dtype=gradlab.float64))
        constant = dual.masked_fill(mask, 7.0)  # only x moves
        got = [fwAD.unpack_dual(y).tangent.tolist() for y in (filled, put, constant)]
    assert got == [[0.5, 0.0, 0.5], [0.0, 0.0, 1.0], [0.0, 2.0, 0.0]]


# --- errors that teach --------------------------------------------------------------------------

def _x():
    return gradlab.zeros(3, 4)


def _setitem(key, value):
    x = _x()
    x[key] = value


ERRORS = [
    (lambda: _x()[0, 0, 0], IndexError, r"too many indices.*dimension 2 \(shape \(3, 4\)\)"),
    (lambda: gradlab.tensor(1.0)[0], IndexError, "too many indices for a tensor of dimension 0"),
    (lambda: _x()[3], IndexError, r"index 3 is out of range for dim 0 of size 3 \(valid: -3"),
    (lambda: _x()[:, -5], IndexError, "index -5 is out of range for dim 1 of size 4"),
    (lambda: _x()[:, [0, 4]], IndexError, "index 4 is out of range for dim 1 of size 4"),
    (lambda: _x()[gradlab.tensor([-4])], IndexError, "index -4 is out of range for dim 0"),
    (lambda: gradlab.zeros(0)[0], IndexError, "dim 0 of size 0 .valid: none"),
    (lambda: _x()[gradlab.tensor([True, False])], IndexError,
     r"mask of shape \(2,\) doesn't match the tensor's shape \(3,\) at dims 0..0"),
    (lambda: _x()[gradlab.tensor([0.0])], IndexError, r"must be integer.*float32.*idx\.long"),
    (lambda: _x()["a"], IndexError, "only integers, slices .* got str"),
    (lambda: _x()[[0.5, 1.0]], IndexError, "must be integer .* got gradlab.float64"),
    (lambda: _x()[[slice(None), 0]], IndexError, "must be integer .* got object"),
    (lambda: _x()[1.5], IndexError, "got float"),
    (lambda: _x()[..., ...], IndexError, "only one ellipsis"),
    (lambda: _x()[::0], ValueError, "slice step cannot be zero"),
    (lambda: _x()[:1.5], IndexError, "slice bounds must be integers"),
    (lambda: _x()[[0, 1], [0, 1, 2]], IndexError, r"index arrays of shapes \[\(2,\), \(3,\)\]"),
    (lambda: _setitem(0, gradlab.ones(3)), RuntimeError,
     r"value of shape \(3,\) can't be broadcast to the indexed region of shape \(4,\)"),
    (lambda: _setitem([0, 1], gradlab.ones(3, 4)), RuntimeError, r"region of shape \(2, 4\)"),
    (lambda: _setitem(5, 1.0), IndexError, "index 5 is out of range for dim 0"),
    (lambda: _x().masked_fill(gradlab.ones(3, 4), 0.0), TypeError, "mask must be a bool tensor"),
    (lambda: _x().masked_fill(gradlab.ones(2, dtype=gradlab.bool), 0.0), RuntimeError,
     r"mask of shape \(2,\) can't be broadcast to the tensor's shape \(3, 4\)"),
    (lambda: gradlab.zeros(4).masked_fill_(gradlab.ones(3, 4, dtype=gradlab.bool), 0.0),
     RuntimeError, "can't be broadcast"),
    (lambda: _x().masked_fill(_x() > 0, gradlab.ones(2)), RuntimeError, "0-d tensor.*where"),
    (lambda: _x().masked_select(gradlab.ones(2, dtype=gradlab.bool)), RuntimeError,
     "can't be broadcast"),
    (lambda: gradlab.index_put(_x(), gradlab.tensor([0]), gradlab.tensor(1.0)), TypeError,
     r"tuple of tensors.*index_put\(\(idx,\), values\)"),
    (lambda: gradlab.tensor(1.0).select(0, 0), IndexError, "0-d tensor has no dim"),
    (lambda: _x().select(0, 3), IndexError, "index 3 is out of range for dim 0"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_problem(make, error, match):
    with pytest.raises(error, match=match):
        make()
