"""Writing through indexing: x[i] = v with its versions, history and gradients.

Forward vs NumPy, gradcheck, values and gradients vs PyTorch (repeated
writes included), in-place semantics (versions, leaves, views) and casting.
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
    check_against_torch,
    check_forward_numpy,
    needs_torch,
    standard_op_tests,
    torch,
)

X3 = ((3, 4, 5),)


@needs_torch
@settings(max_examples=50, deadline=None)
@given(data=st.data(), rows=st.integers(1, 4), cols=st.integers(1, 4))
def test_setitem_with_advanced_keys_matches_torch(data, rows, cols):
    picked = data.draw(st.lists(st.integers(-rows, rows - 1), unique_by=lambda v: v % rows,
                                max_size=rows))
    form = data.draw(st.sampled_from(["rows", "rows_slice", "pairs", "int_then_list", "mask"]))
    mask = data.draw(st.lists(st.booleans(), min_size=rows * cols, max_size=rows * cols))
    rng = np.random.default_rng(5)
    a = rng.standard_normal((rows, cols, 2))

    def key(lib):
        i = lib.tensor(picked, dtype=lib.int64)
        if form == "rows":
            return i
        if form == "rows_slice":
            return (i, slice(None, None, 2))
        if form == "mask":
            return lib.tensor(mask).reshape(rows, cols)
        j = lib.tensor([v % cols for v in picked], dtype=lib.int64)
        return (i, j) if form == "pairs" else (0, slice(None), lib.tensor([1, 0]))

    region = tuple(torch.tensor(a)[key(torch)].shape)
    lead = data.draw(st.integers(0, len(region)))  # the value may broadcast over leading dims
    v = rng.standard_normal(region[lead:])
    results = []
    for lib in (gradlab, torch):
        base = lib.tensor(a, requires_grad=True)
        value = lib.tensor(v, requires_grad=True)
        x = base * 1.0
        x[key(lib)] = value
        (x * lib.tensor(np.arange(a.size, dtype=np.float64).reshape(a.shape))).sum().backward()
        results.append([x.detach().numpy(), base.grad.numpy(), value.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# --- writing: x[index] = value ------------------------------------------------------------------

def put(key, *, number=None):
    """``y = x.clone(); y[key(lib, x)] = v`` (or a number), as one harness function."""
    def fn(lib, x, v=None):
        y = x.clone()
        y[key(lib, x)] = number if v is None else v
        return y
    return fn


def np_put(key, *, number=None):
    def fn(np, x, v=None):
        y = x.copy()
        y[key(np, x)] = number if v is None else v
        return y
    return fn


SETITEM = [
    OpCase("row", put(lambda lib, x: 1), ((3, 4), (4,)), numpy=np_put(lambda np, x: 1)),
    OpCase("broadcast_slice", put(lambda lib, x: (slice(None), slice(1, 3))), ((3, 4), (1, 2)),
           numpy=np_put(lambda np, x: (slice(None), slice(1, 3)))),
    OpCase("leading_ones", put(lambda lib, x: 0), ((3, 4), (1, 4)),
           numpy=np_put(lambda np, x: 0)),
    OpCase("scalar_value", put(lambda lib, x: (slice(None), -1)), ((3, 4), ()),
           numpy=np_put(lambda np, x: (slice(None), -1))),
    OpCase("number", put(lambda lib, x: (Ellipsis, 2), number=7.5), M,
           numpy=np_put(lambda np, x: (Ellipsis, 2), number=7.5), variants=(((0, 3),),)),
    OpCase("rows_list", put(lambda lib, x: [2, 0]), ((3, 4), (2, 4)),
           numpy=np_put(lambda np, x: [2, 0])),
    OpCase("mask_number", put(lambda lib, x: x > 0, number=0.0), X3,
           numpy=np_put(lambda np, x: x > 0, number=0.0)),
    OpCase("mask_tensor", put(lambda lib, x: x > 0), ((3, 4), ()),
           numpy=np_put(lambda np, x: x > 0)),
    OpCase("int_then_list", put(lambda lib, x: (0, slice(None), [1, 2])), ((3, 4, 5), (4, 2))),
    OpCase("pairs", put(lambda lib, x: ([0, 2], [3, 1])), ((3, 4), (2,)),
           numpy=np_put(lambda np, x: ([0, 2], [3, 1]))),
    OpCase("none_and_ellipsis", put(lambda lib, x: (Ellipsis, None, 0)), ((3, 4), (3, 1)),
           numpy=np_put(lambda np, x: (Ellipsis, None, 0))),
    OpCase("whole_0d", put(lambda lib, x: ()), ((), ()), numpy=np_put(lambda np, x: ())),
]


globals().update(standard_op_tests(SETITEM, prefix="setitem_"))

# With a repeated index only one write survives, so finite differences see the value once;
# PyTorch's gradient (which gradlab matches) counts it once per occurrence. So this row is
# checked against NumPy and PyTorch only, not with gradcheck.
REPEATED_WRITE = OpCase("repeated_rows_same_value", put(lambda lib, x: [0, 0]), ((3, 4), (4,)),
                        numpy=np_put(lambda np, x: [0, 0]))


def test_setitem_repeated_index_forward_matches_numpy(device):
    check_forward_numpy(REPEATED_WRITE, device)


@needs_torch
@pytest.mark.parametrize("variant", [{}, {"strided": True}, {"dtype": np.float32}],
                         ids=["float64", "non_contiguous", "float32"])
def test_setitem_repeated_index_counts_each_write_like_torch(device, variant):
    check_against_torch(REPEATED_WRITE, device, **variant)


def test_setitem_rebases_history_to_reach_both_sources():
    a = gradlab.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = gradlab.tensor(10.0, requires_grad=True)
    x = a.clone()
    version = x._version
    x[0] = b
    assert x._version == version + 1
    assert x.grad_fn.name() == "IndexPutBackward0" and x.grad_fn.op == "index_put_"
    assert x.tolist() == [10.0, 2.0, 3.0]
    (x * gradlab.tensor([5.0, 6.0, 7.0])).sum().backward()
    assert a.grad.tolist() == [0.0, 6.0, 7.0]  # a[0] was overwritten: no gradient
    assert b.grad.item() == 5.0


def test_setitem_value_with_grad_into_a_plain_tensor():
    v = gradlab.tensor([1.0, 2.0], requires_grad=True)
    x = gradlab.zeros(2, 2)
    x[:, 1] = v
    assert x.requires_grad and x.tolist() == [[0.0, 1.0], [0.0, 2.0]]
    x.sum().backward()
    assert v.grad.tolist() == [1.0, 1.0]


def test_setitem_on_a_leaf_that_requires_grad_teaches():
    x = gradlab.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"index_put_: a leaf tensor .*no_grad"):
        x[0] = 1.0
    assert x._version == 0 and x.tolist() == [0.0, 0.0, 0.0]
    with gradlab.no_grad():
        x[0] = 1.0
    assert x._version == 1 and x.tolist() == [1.0, 0.0, 0.0] and x.grad_fn is None


def test_setitem_on_a_tensor_saved_for_backward_raises_in_backward():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # exp saves its output for backward
    y[0] = 0.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation.*clone"):
        y.sum().backward()


@needs_torch
def test_setitem_version_error_matches_torch():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = t.exp()
    ty[0] = 0.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ty.sum().backward()


def test_setitem_casts_the_value_like_torch():
    x = gradlab.zeros(3, dtype=gradlab.int64)
    x[0] = 2.7
    x[1] = gradlab.tensor(-1.9)
    assert x.tolist() == [2, -1, 0] and x.dtype is gradlab.int64
    f = gradlab.zeros(2, dtype=gradlab.float32)
    v = gradlab.tensor([1.5], dtype=gradlab.float64, requires_grad=True)
    g = f.clone().requires_grad_()
    g = g * 1.0
    g[1:] = v
    assert g.dtype is gradlab.float32
    g.sum().backward()
    assert v.grad.dtype is gradlab.float64 and v.grad.tolist() == [1.0]


def test_setitem_from_an_overlapping_view_reads_the_old_values():
    x = gradlab.arange(5.0)
    x[1:] = x[:-1]  # PyTorch refuses this overlap; gradlab copies first, like NumPy
    assert x.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0]


def test_index_put_accumulates_repeats_out_of_place():
    x = gradlab.zeros(3)
    out = gradlab.index_put(x, (gradlab.tensor([0, 0, 2]),), gradlab.tensor(1.0),
                            accumulate=True)
    assert out.tolist() == [2.0, 0.0, 1.0] and x.tolist() == [0.0, 0.0, 0.0]
    x.index_put_((gradlab.tensor([1]),), gradlab.tensor([5.0]))
    assert x.tolist() == [0.0, 5.0, 0.0]


# --- forward mode: a write changes tangents too ------------------------------------------------

@pytest.mark.parametrize("record", [False, True], ids=["no_graph", "graph"])
def test_setitem_through_a_view_writes_the_tangent_into_the_base(record):
    """As in PyTorch: writing a dual value into a view of y gives the view that tangent and
    puts it into y's tangent at the view's place (zeros around it if y had none)."""
    t = np.arange(12.0).reshape(3, 4)
    with fwAD.dual_level():
        w = fwAD.make_dual(gradlab.tensor([10.0, 20.0], dtype=gradlab.float64),
                           gradlab.tensor([-1.0, -2.0], dtype=gradlab.float64))
        p = gradlab.zeros(3, 4, dtype=gradlab.float64, requires_grad=record)
        y = fwAD.make_dual(p, gradlab.tensor(t)).clone()
        row = y[1]
        row[1:3] = w
        plain = gradlab.zeros(3, 4, dtype=gradlab.float64)
        plain[2][::3] = w
        got = [fwAD.unpack_dual(z).tangent.tolist() for z in (y, row, plain)]
    want = t.copy()
    want[1, 1:3] = [-1.0, -2.0]
    assert got[0] == want.tolist()
    assert got[1] == want[1].tolist()
    assert got[2] == [[0.0] * 4, [0.0] * 4, [-1.0, 0.0, 0.0, -2.0]]


def test_setitem_of_a_constant_zeroes_the_tangent_there():
    with fwAD.dual_level():
        y = fwAD.make_dual(gradlab.zeros(2, 3, dtype=gradlab.float64),
                           gradlab.ones(2, 3, dtype=gradlab.float64)).clone()
        y[:, 1] = 5.0
        y[gradlab.tensor([[True, False, False], [False, False, False]])] = 3.0  # a mask
        assert fwAD.unpack_dual(y).tangent.tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
