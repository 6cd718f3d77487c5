"""index_copy, index_fill, masked_scatter, put (and their in-place forms).

Forward vs NumPy, gradcheck, forward mode, values and gradients vs PyTorch
(float64, float32, non-contiguous, NaN/inf output gradients), random shapes
vs PyTorch, the in-place bookkeeping, and the errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import M, OpCase, needs_torch, standard_op_tests, torch


def G(lib, values):
    return lib.tensor(values, dtype=lib.int64)


MASK = [[True, False, True, False], [False, False, True, True], [True, False, False, False]]
ROW_MASK = [False, True, True, False]


def B(lib, values):
    return lib.tensor(values, dtype=lib.bool)


def np_index_copy(x, dim, index, s):
    out = x.copy()
    out[(slice(None),) * dim + (np.array(index),)] = s
    return out


def np_masked_scatter(x, mask, s):
    x, mask = np.broadcast_arrays(x, np.array(mask))
    out = x.copy()
    out[mask] = s.reshape(-1)[:int(mask.sum())]
    return out


def np_put(x, index, s, accumulate=False):
    out = x.copy().reshape(-1)
    index = np.array(index).reshape(-1)
    if accumulate:
        np.add.at(out, index, s.reshape(-1))
    else:
        out[index] = s.reshape(-1)
    return out.reshape(x.shape)


CASES = [
    # index_copy: source's slice k replaces slice index[k]
    OpCase("index_copy_dim1", lambda lib, x, s: x.index_copy(1, G(lib, [3, 0]), s),
           ((3, 4), (3, 2)), numpy=lambda np, x, s: np_index_copy(x, 1, [3, 0], s)),
    OpCase("index_copy_fn_3d", lambda lib, x, s: lib.index_copy(x, 0, G(lib, [1]), s),
           ((2, 3, 4), (1, 3, 4)), numpy=lambda np, x, s: np_index_copy(x, 0, [1], s)),
    OpCase("index_copy_every_slice", lambda lib, x, s: x.index_copy(-1, G(lib, [2, 0, 1]), s),
           ((2, 3), (2, 3)), numpy=lambda np, x, s: np_index_copy(x, 1, [2, 0, 1], s)),
    OpCase("index_copy_0d_index", lambda lib, x, s: x.index_copy(1, G(lib, 2), s),
           ((3, 4), (3, 1)), numpy=lambda np, x, s: np_index_copy(x, 1, [2], s)),
    OpCase("index_copy_0d", lambda lib, x, s: x.index_copy(0, G(lib, [0]), s), ((), ()),
           numpy=lambda np, x, s: s),
    OpCase("index_copy_empty_index", lambda lib, x, s: x.index_copy(0, G(lib, []), s),
           ((3, 4), (0, 4)), numpy=lambda np, x, s: x),
    OpCase("index_copy_inplace", lambda lib, x, s: (x * 1).index_copy_(0, G(lib, [2, 0]), s),
           ((3, 4), (2, 4)), numpy=lambda np, x, s: np_index_copy(x, 0, [2, 0], s)),
    # index_fill: one value (a number or a 0-d tensor) in whole slices
    OpCase("index_fill_number", lambda lib, x: x.index_fill(1, G(lib, [1, 1, 3]), -2.5), M,
           numpy=lambda np, x: np_index_copy(x, 1, [1, 3], -2.5)),
    OpCase("index_fill_tensor_value", lambda lib, x, v: lib.index_fill(x, 0, G(lib, [0, 2]), v),
           ((3, 4), ()), numpy=lambda np, x, v: np_index_copy(x, 0, [0, 2], v)),
    OpCase("index_fill_repeats", lambda lib, x, v: x.index_fill(-1, G(lib, [3, 3, 0]), v),
           ((2, 3, 4), ()), numpy=lambda np, x, v: np_index_copy(x, 2, [3, 0], v)),
    # a negative index: PyTorch's own backward fails on it with a tensor value, so a number
    OpCase("index_fill_negative_index", lambda lib, x: x.index_fill(0, G(lib, [-1, 0]), 3.0),
           M, numpy=lambda np, x: np_index_copy(x, 0, [2, 0], 3.0)),
    OpCase("index_fill_0d", lambda lib, x, v: x.index_fill(0, G(lib, [0]), v), ((), ()),
           numpy=lambda np, x, v: v),
    OpCase("index_fill_inplace", lambda lib, x, v: (x * 1).index_fill_(1, G(lib, [0]), v),
           ((3, 4), ()), numpy=lambda np, x, v: np_index_copy(x, 1, [0], v)),
    # masked_scatter: source's values, in order, where the mask is True
    OpCase("masked_scatter", lambda lib, x, s: x.masked_scatter(B(lib, MASK), s),
           ((3, 4), (2, 5)), numpy=lambda np, x, s: np_masked_scatter(x, MASK, s)),
    OpCase("masked_scatter_row_mask", lambda lib, x, s: lib.masked_scatter(x, B(lib, ROW_MASK),
                                                                           s),
           ((3, 4), (3, 4)), numpy=lambda np, x, s: np_masked_scatter(x, ROW_MASK, s)),
    OpCase("masked_scatter_broadcast_input", lambda lib, x, s: x.masked_scatter(B(lib, MASK), s),
           ((1, 4), (5,)), numpy=lambda np, x, s: np_masked_scatter(x, MASK, s)),
    OpCase("masked_scatter_all_false", lambda lib, x, s: x.masked_scatter(
        B(lib, [[False] * 4] * 3), s), ((3, 4), (2,)), numpy=lambda np, x, s: x),
    OpCase("masked_scatter_0d", lambda lib, x, s: x.masked_scatter(B(lib, True), s),
           ((), (2,)), numpy=lambda np, x, s: s[0]),
    OpCase("masked_scatter_inplace", lambda lib, x, s: (x * 1).masked_scatter_(
        B(lib, ROW_MASK), s), ((3, 4), (6,)),
        numpy=lambda np, x, s: np_masked_scatter(x, ROW_MASK, s)),
    # put: source[k] at flat position index[k]
    OpCase("put", lambda lib, x, s: x.put(G(lib, [[0, 10], [5, -1]]), s), ((3, 4), (2, 2)),
           numpy=lambda np, x, s: np_put(x, [[0, 10], [5, 11]], s)),
    OpCase("put_accumulate", lambda lib, x, s: lib.put(x, G(lib, [0, 0, -12, 3]), s,
                                                       accumulate=True),
           ((3, 4), (4,)), numpy=lambda np, x, s: np_put(x, [0, 0, 0, 3], s, True)),
    OpCase("put_3d", lambda lib, x, s: x.put(G(lib, [23, 7]), s), ((2, 3, 4), (2,)),
           numpy=lambda np, x, s: np_put(x, [23, 7], s)),
    OpCase("put_0d", lambda lib, x, s: x.put(G(lib, [-1]), s), ((), (1,)),
           numpy=lambda np, x, s: s[0]),
    OpCase("put_inplace", lambda lib, x, s: (x * 1).put_(G(lib, [1, 2, 1]), s, accumulate=True),
           ((3, 4), (3,)), numpy=lambda np, x, s: np_put(x, [1, 2, 1], s, True)),
    OpCase("put_inplace_replace", lambda lib, x, s: (x * 1).put_(G(lib, [6, 2]), s),
           ((3, 4), (2,)), numpy=lambda np, x, s: np_put(x, [6, 2], s)),
]

globals().update(standard_op_tests(CASES))


# --- random shapes against PyTorch ------------------------------------------------------------

@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_index_copy_and_index_fill_match_torch_for_random_shapes(data, shape):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[dim]
    index = data.draw(st.permutations(range(size)).map(lambda p: p[:data.draw(
        st.integers(0, size))]))
    rng = np.random.default_rng(len(index))
    x = rng.standard_normal(shape)
    source_shape = list(shape)
    source_shape[dim] = len(index)
    s = rng.standard_normal(source_shape)
    cot = rng.standard_normal(shape)
    for name, args in (("index_copy", (s,)), ("index_fill", (np.array(1.5),))):
        got = []
        for lib in (gradlab, torch):
            xt, at = lib.tensor(x, requires_grad=True), lib.tensor(args[0], requires_grad=True)
            out = getattr(xt, name)(dim, G(lib, index), at)
            gx, ga = lib.autograd.grad(out, [xt, at], lib.tensor(cot))
            got.append([out.detach().numpy(), gx.numpy(), ga.numpy()])
        for ours, theirs in zip(*got):
            np.testing.assert_allclose(ours, theirs, err_msg=f"{name} dim={dim} index={index}")


@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
       accumulate=st.booleans())
def test_put_and_masked_scatter_match_torch_for_random_shapes(data, shape, accumulate):
    n = int(np.prod(shape))
    positions = data.draw(st.lists(st.integers(-n, n - 1), max_size=6, unique_by=lambda p: p % n))
    if accumulate:
        positions = positions + positions[:2]  # repeats add up
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))).reshape(shape)
    rng = np.random.default_rng(n)
    x, s = rng.standard_normal(shape), rng.standard_normal(len(positions) + n)
    cot = rng.standard_normal(shape)
    got = []
    for lib in (gradlab, torch):
        xt = lib.tensor(x, requires_grad=True)
        st_ = lib.tensor(s, requires_grad=True)
        put = xt.put(G(lib, positions), st_[:len(positions)], accumulate=accumulate)
        scattered = xt.masked_scatter(lib.tensor(mask), st_)
        grads = lib.autograd.grad([put, scattered], [xt, st_], [lib.tensor(cot)] * 2)
        got.append([put.detach().numpy(), scattered.detach().numpy(),
                    *(g.numpy() for g in grads)])
    for ours, theirs in zip(*got):
        np.testing.assert_allclose(ours, theirs, err_msg=f"positions={positions} mask={mask}")


# --- dtypes, in-place bookkeeping, graph names ------------------------------------------------

@needs_torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float16"])
def test_other_dtypes_match_torch(dtype):
    results = []
    for lib in (gradlab, torch):
        x = lib.tensor([[1, 0, 3], [4, 5, 0]]).to(getattr(lib, dtype))
        src = lib.tensor([[7, 0, 9]]).to(getattr(lib, dtype))
        outs = [x.index_copy(0, G(lib, [1]), src), x.index_fill(1, G(lib, [2]), 1.7),
                x.masked_scatter(x != 0, src.reshape(-1).repeat(2)),
                x.put(G(lib, [5, 0]), src[0, :2], accumulate=dtype != "bool")]
        results.append([(str(o.dtype).split(".")[-1], o.tolist()) for o in outs])
    assert results[0] == results[1]


def test_inplace_forms_write_into_the_tensor_and_bump_its_version():
    base = gradlab.zeros(3, 4)
    row = base[1]  # a view: writing into it writes into base
    before = base._version
    row.index_fill_(0, G(gradlab, [0, 3]), 2.0)
    row.put_(G(gradlab, [1]), gradlab.tensor([5.0]))
    row.masked_scatter_(row == 0, gradlab.tensor([7.0, 8.0]))
    base.index_copy_(0, G(gradlab, [2]), gradlab.ones(1, 4))
    assert base.tolist() == [[0.0] * 4, [2.0, 5.0, 7.0, 2.0], [1.0] * 4]
    assert base._version == before + 4


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    w = gradlab.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="index_fill_: a leaf tensor that requires grad"):
        w.index_fill_(0, G(gradlab, [0]), 1.0)


@needs_torch
def test_graph_node_names_are_pytorchs():
    def names(lib):
        x = lib.ones(2, 3, requires_grad=True)
        s = lib.ones(2, 3)
        return [type(y.grad_fn).__name__ for y in (
            x.index_copy(1, G(lib, [0]), s[:, :1]), x.index_fill(1, G(lib, [0]), 2.0),
            x.masked_scatter(x > 0, s), x.put(G(lib, [0]), s[0, :1]))]

    assert names(gradlab) == names(torch) == ["IndexCopyBackward0", "IndexFillBackward0",
                                              "MaskedScatterBackward0", "PutBackward0"]


def test_unused_source_values_get_zero_gradient():
    s = gradlab.arange(5.0, requires_grad=True)
    out = gradlab.zeros(2, 2).masked_scatter(gradlab.tensor([[True, False], [False, True]]), s)
    out.sum().backward()
    assert out.tolist() == [[0.0, 0.0], [0.0, 1.0]]
    assert s.grad.tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]


# --- errors -----------------------------------------------------------------------------------

def _x():
    return gradlab.zeros(3, 4)


I32 = gradlab.int32
ERRORS = [
    (lambda: _x().index_copy(2, G(gradlab, [0]), gradlab.ones(3, 1)), IndexError,
     r"index_copy: dimension 2 is out of range .* \[-2, 1\]"),
    (lambda: _x().index_copy(0, gradlab.tensor([0], dtype=I32), gradlab.ones(1, 4)), TypeError,
     "index_copy: index must be an int64 tensor, got .*int32.*long"),
    (lambda: _x().index_copy(0, [0], gradlab.ones(1, 4)), TypeError, "got list"),
    (lambda: _x().index_copy(0, G(gradlab, [[0]]), gradlab.ones(1, 4)), IndexError,
     r"must be 1-D .* got shape \(1, 1\)"),
    (lambda: _x().index_copy(1, G(gradlab, [0, 1]), gradlab.ones(3, 3)), RuntimeError,
     r"source must have shape \(3, 2\).* got \(3, 3\)"),
    (lambda: _x().index_copy(1, G(gradlab, [0]), gradlab.ones(3, 1, dtype=gradlab.float64)),
     RuntimeError, r"source has dtype .*float64 .*float32. Fix: source.to"),
    (lambda: _x().index_copy(1, G(gradlab, [4]), gradlab.ones(3, 1)), IndexError,
     "index 4 is out of range for dim 1 of size 4"),
    (lambda: _x().index_copy(1, G(gradlab, [-1]), gradlab.ones(3, 1)), IndexError,
     "index -1 is out of range"),
    (lambda: _x().index_copy(0, G(gradlab, [2, 0, 2]), gradlab.ones(3, 4)), RuntimeError,
     "position 2 of dim 0 more than once.*undefined.*index_add"),
    (lambda: gradlab.tensor(1.0).index_copy(0, G(gradlab, [0]), gradlab.ones(2)), RuntimeError,
     r"0-d tensor takes a 0-d or 1-element source"),
    (lambda: _x().index_copy_(0, G(gradlab, [0]), 1.0), TypeError, "source must be a Tensor"),
    (lambda: _x().index_fill(1, G(gradlab, [0]), gradlab.ones(2)), RuntimeError,
     r"value must be a number or a 0-d tensor, got shape \(2,\)"),
    (lambda: _x().index_fill(1, G(gradlab, [0]), "1"), TypeError, "got str"),
    (lambda: _x().index_fill(-3, G(gradlab, [0]), 1.0), IndexError, "dimension -3"),
    (lambda: _x().index_fill_(1, G(gradlab, [-5]), 1.0), IndexError, "index -5 is out of range"),
    (lambda: _x().masked_scatter(gradlab.ones(3, 4, dtype=gradlab.int64), gradlab.ones(12)),
     TypeError, "mask must be a bool tensor, got .*int64"),
    (lambda: _x().masked_scatter(_x() == 0, gradlab.ones(5)), RuntimeError,
     r"mask has 12 True values but source \(shape \(5,\)\) has only 5"),
    (lambda: _x().masked_scatter(gradlab.ones(2, 4, dtype=gradlab.bool), gradlab.ones(12)),
     RuntimeError, r"mask of shape \(2, 4\) can't be broadcast"),
    (lambda: gradlab.zeros(4).masked_scatter_(gradlab.ones(3, 4, dtype=gradlab.bool),
                                              gradlab.ones(12)), RuntimeError,
     r"masked_scatter_: the mask of shape \(3, 4\) can't be broadcast .* \(4,\)"),
    (lambda: _x().masked_scatter(_x() == 0, 1.0), TypeError, "source must be a Tensor"),
    (lambda: _x().put(G(gradlab, [0, 1]), gradlab.ones(3)), RuntimeError,
     r"same number of elements, got source shape \(3,\) \(3\) and index shape \(2,\) \(2\)"),
    (lambda: _x().put(G(gradlab, [12]), gradlab.ones(1)), IndexError,
     "put: index 12 is out of range for dim 0 of size 12"),
    (lambda: gradlab.zeros(0, 2).put_(G(gradlab, [0]), gradlab.ones(1)), IndexError,
     r"put_: the tensor \(shape \(0, 2\)\) is empty"),
    (lambda: _x().put(gradlab.tensor([0], dtype=I32), gradlab.ones(1)), TypeError,
     "put: index must be an int64"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_problem(make, error, match):
    with pytest.raises(error, match=match):
        make()
