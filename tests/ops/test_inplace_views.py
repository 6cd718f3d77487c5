"""In-place shape changes (t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_).

Values, shapes, versions and gradients against PyTorch, also for views made
before the change and changed in place after it (their steps start from the
base's old layout: autograd/views.py steps_from_base).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import needs_torch, torch


def _coef(lib, shape):
    n = int(np.prod(shape))
    return lib.arange(1.0, n + 1.0, dtype=lib.float64).reshape(shape)


def _scenario(lib, ops, shape, early_view):
    """Apply ``ops`` in place to a non-leaf; optionally change an early view afterwards."""
    x = lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), requires_grad=True)
    y = x * 2
    v = y[0] if early_view and y.ndim else None
    versions = [y._version]
    for name, args in ops:
        out = getattr(y, name)(*args)
        assert out is y
        versions.append(y._version)
    if v is not None:
        v.mul_(3)
    (y * _coef(lib, tuple(y.shape))).sum().backward()
    return tuple(y.shape), y.detach().numpy().copy(), x.grad.numpy().copy(), versions


def _random_ops(draw, shape):
    ops, shape = [], list(shape)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["t_", "transpose_", "swapaxes_", "unsqueeze_", "squeeze_",
                                     "squeeze_all"]))
        n = len(shape)
        if kind == "t_" and n <= 2:
            ops.append(("t_", ()))
            shape = shape[::-1]
        elif kind in ("transpose_", "swapaxes_") and n >= 1:
            a, b = draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1))
            ops.append((kind, (a, b)))
            shape[a], shape[b] = shape[b], shape[a]
        elif kind == "unsqueeze_" and n < 5:
            d = draw(st.integers(-n - 1, n))
            ops.append(("unsqueeze_", (d,)))
            shape.insert(d % (n + 1), 1)
        elif kind == "squeeze_" and n >= 1:
            d = draw(st.integers(-n, n - 1))
            ops.append(("squeeze_", (d,)))
            if shape[d] == 1:
                del shape[d]
        elif kind == "squeeze_all":
            ops.append(("squeeze_", ()))
            shape = [s for s in shape if s != 1]
    return ops


@st.composite
def _cases(draw):
    shape = tuple(draw(st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=3)))
    return shape, _random_ops(draw, shape), draw(st.booleans())


@needs_torch
@settings(max_examples=40, deadline=None)
@given(_cases())
def test_random_sequences_match_torch(case):
    shape, ops, early_view = case
    ours = _scenario(gradlab, ops, shape, early_view)
    theirs = _scenario(torch, ops, shape, early_view)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    assert ours[3] == theirs[3]


def test_early_view_follows_the_old_layout_without_oracle():
    x = gradlab.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 1
    row = y[0]          # made while y is 2x3: x's first row
    y.t_()              # y is now 3x2; row is still x's first row (y's first column)
    row.mul_(10)
    assert y.tolist() == [[10.0, 4.0], [20.0, 5.0], [30.0, 6.0]]
    y.sum().backward()
    assert x.grad.tolist() == [[10.0, 10.0, 10.0], [1.0, 1.0, 1.0]]


def test_view_changes_shape_and_stays_a_view():
    y = gradlab.zeros(2, 3)
    v = y[1]
    v.unsqueeze_(0)
    v.fill_(7.0)  # still y's memory
    assert v.shape == (1, 3) and y.tolist() == [[0.0] * 3, [7.0] * 3]
    v.squeeze_().t_()  # a 1-D t_ changes nothing
    assert v.shape == (3,)


def test_leaf_requiring_grad_refuses_but_no_grad_allows():
    w = gradlab.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        w.t_()
    with gradlab.no_grad():
        w.t_()
    assert w.shape == (3, 2) and w.is_leaf and w.requires_grad


def test_saved_tensor_changed_in_shape_is_caught_at_backward():
    x = gradlab.ones(2, 3, requires_grad=True)
    y = x * 2
    z = (y * y).sum()  # saves y
    y.t_()
    with pytest.raises(RuntimeError, match="version"):
        z.backward()


def test_errors_name_the_op():
    y = gradlab.zeros(2, 3)
    with pytest.raises(IndexError, match="transpose_"):
        y.transpose_(0, 5)
    with pytest.raises(IndexError, match="unsqueeze_"):
        y.unsqueeze_(4)
    with pytest.raises(RuntimeError, match="t\\(\\) expects"):
        gradlab.zeros(2, 2, 2).t_()


# --- resize_ --------------------------------------------------------------------------------

def test_resize_within_the_memory_block_is_a_view_of_it():
    x = gradlab.arange(6.0)
    before = x[:2]  # a view made before the resize still shares the memory
    version = x._version
    assert x.resize_(2, 2) is x
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]] and x._version == version + 1
    x[0, 0] = 100.0
    assert before.tolist() == [100.0, 1.0]


def test_resize_past_the_memory_block_keeps_the_old_values_first_then_zeros():
    x = gradlab.arange(3.0)
    allocated = gradlab.memory_allocated()
    x.resize_((2, 3))
    assert x.tolist() == [[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]]
    assert gradlab.memory_allocated() == allocated + 6 * 4 - 3 * 4  # the old memory went
    assert x.resize_as_(gradlab.zeros(4)).tolist() == [0.0, 1.0, 2.0, 0.0]


@needs_torch
def test_resize_matches_torch_where_torch_defines_the_values():
    ours, theirs = gradlab.arange(12).reshape(3, 4), torch.arange(12).reshape(3, 4)
    for shape in [(2, 5), (12,), (1, 3, 2)]:
        assert ours.resize_(*shape).tolist() == theirs.resize_(*shape).tolist()


def test_a_resized_view_shares_what_it_kept():
    base = gradlab.arange(6.0)
    view = base[:4].resize_(2, 2)
    view[1, 1] = -1.0
    assert base.tolist() == [0.0, 1.0, 2.0, -1.0, 4.0, 5.0]
    within = base[:2].resize_(3)  # still inside base's memory block: still shared
    within[2] = 7.0
    assert base[2].item() == 7.0
    grown = base[4:].resize_(3)  # past the block's end: new memory, no longer shared
    grown[0] = 9.0
    assert base[4].item() == 4.0 and grown.tolist() == [9.0, 5.0, 0.0]


def test_resize_errors_teach():
    with pytest.raises(RuntimeError, match=r"resize_: cannot resize a tensor that requires "
                                           r"grad \(shape \(2,\)\).*detach\(\).clone\(\)"):
        gradlab.zeros(2, requires_grad=True).resize_(3)
    with pytest.raises(TypeError, match="resize_as_: expected a Tensor"):
        gradlab.zeros(2).resize_as_((3,))
