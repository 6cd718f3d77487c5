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
