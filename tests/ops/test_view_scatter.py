"""slice_scatter, select_scatter, diagonal_scatter: vs NumPy and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import OpCase, standard_op_tests


def _np_slice(np, x, src, dim, start, end, step):
    out = x.copy()
    key = [slice(None)] * x.ndim
    key[dim] = slice(start, end, step)
    out[tuple(key)] = src
    return out


def _np_diagonal(np, x, src, offset, d1, d2):
    out = x.copy()
    n = min(x.shape[d1] + min(offset, 0), x.shape[d2] - max(offset, 0))
    rows = np.arange(max(n, 0)) + max(-offset, 0)
    cols = np.arange(max(n, 0)) + max(offset, 0)
    moved = np.moveaxis(out, (d1, d2), (-2, -1))  # a view: writes land in out
    moved[..., rows, cols] = src
    return out


CASES = [
    OpCase("slice_scatter", lambda lib, x, s: lib.slice_scatter(x, s, 1, 0, 4, 2),
           ((3, 4), (3, 2)), numpy=lambda np, x, s: _np_slice(np, x, s, 1, 0, 4, 2)),
    OpCase("slice_scatter_method_defaults", lambda lib, x, s: x.slice_scatter(s, start=-2),
           ((3, 4), (2, 4)), numpy=lambda np, x, s: _np_slice(np, x, s, 0, -2, None, 1)),
    OpCase("slice_scatter_empty", lambda lib, x, s: lib.slice_scatter(x, s, -1, 5, 9),
           ((3, 4), (3, 0)), numpy=lambda np, x, s: x.copy()),
    OpCase("select_scatter", lambda lib, x, s: lib.select_scatter(x, s, 0, -1),
           ((3, 4), (4,)), numpy=lambda np, x, s: np.concatenate([x[:2], s[None]])),
    OpCase("select_scatter_3d", lambda lib, x, s: x.select_scatter(s, 2, 1),
           ((2, 3, 4), (2, 3)),
           numpy=lambda np, x, s: (lambda o: (o.__setitem__((Ellipsis, 1), s), o)[1])(
               x.copy())),
    OpCase("diagonal_scatter", lambda lib, x, s: lib.diagonal_scatter(x, s), ((3, 4), (3,)),
           numpy=lambda np, x, s: _np_diagonal(np, x, s, 0, 0, 1)),
    OpCase("diagonal_scatter_offset", lambda lib, x, s: x.diagonal_scatter(s, 2),
           ((3, 4), (2,)), numpy=lambda np, x, s: _np_diagonal(np, x, s, 2, 0, 1)),
    OpCase("diagonal_scatter_negative", lambda lib, x, s: lib.diagonal_scatter(x, s, -1),
           ((3, 4), (2,)), numpy=lambda np, x, s: _np_diagonal(np, x, s, -1, 0, 1)),
    OpCase("diagonal_scatter_apart", lambda lib, x, s: lib.diagonal_scatter(x, s, 1, 2, 0),
           ((3, 2, 4), (2, 2)), numpy=lambda np, x, s: _np_diagonal(np, x, s, 1, 2, 0)),
    OpCase("diagonal_scatter_adjacent", lambda lib, x, s: lib.diagonal_scatter(x, s, 0, -1, 1),
           ((2, 3, 3), (2, 3)), numpy=lambda np, x, s: _np_diagonal(np, x, s, 0, 2, 1)),
]

globals().update(standard_op_tests(CASES))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.integers(-3, 3), st.data())
def test_diagonal_scatter_then_diagonal_reads_src_back(shape, offset, data):
    ndim = len(shape)
    d1 = data.draw(st.integers(-ndim, ndim - 1))
    d2 = data.draw(st.integers(-ndim, ndim - 1).filter(lambda d: d % ndim != d1 % ndim))
    x = gradlab.zeros(*shape, dtype=gradlab.float64)
    view_shape = tuple(x.diagonal(offset, d1, d2).shape)
    src = gradlab.arange(1.0, 1.0 + int(np.prod(view_shape)), dtype=gradlab.float64)
    src = src.reshape(view_shape)
    out = gradlab.diagonal_scatter(x, src, offset, d1, d2)
    assert gradlab.equal(out.diagonal(offset, d1, d2), src)
    assert out.sum().item() == src.sum().item()  # nothing written anywhere else


def test_src_of_another_dtype_is_cast_to_the_inputs():
    out = gradlab.select_scatter(gradlab.zeros(2, 2), gradlab.ones(2, dtype=gradlab.float64), 1, 0)
    assert out.dtype is gradlab.float32 and out.tolist() == [[1.0, 0.0], [1.0, 0.0]]
    x = gradlab.zeros(2, 2, requires_grad=True)
    assert type(gradlab.slice_scatter(x, gradlab.ones(1, 2), end=1).grad_fn).__name__ == \
        "SliceScatterBackward0"


def test_errors_name_the_op_and_the_fix():
    x = gradlab.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"slice_scatter: src must have the shape of the view "
                                           r"it replaces, \(3, 2\), got \(3, 3\)"):
        gradlab.slice_scatter(x, gradlab.ones(3, 3), 1, 0, 4, 2)
    with pytest.raises(RuntimeError, match=r"slice_scatter: step must be a positive int.*flip"):
        gradlab.slice_scatter(x, gradlab.ones(3, 4), 1, step=0)
    with pytest.raises(IndexError, match=r"select_scatter: index 3 is out of range for dim 0 "
                                         r"of size 3"):
        gradlab.select_scatter(x, gradlab.ones(4), 0, 3)
    with pytest.raises(RuntimeError, match=r"select_scatter: src must have the shape.*\(4,\), "
                                           r"got \(3,\)"):
        gradlab.select_scatter(x, gradlab.ones(3), 0, 0)
    with pytest.raises(RuntimeError, match=r"diagonal_scatter: src must have the shape.*\(2,\), "
                                           r"got \(3,\)"):
        gradlab.diagonal_scatter(x, gradlab.ones(3), -1)
    with pytest.raises(RuntimeError, match=r"diagonal_scatter: dim1 and dim2 must differ"):
        gradlab.diagonal_scatter(x, gradlab.ones(3), 0, 1, 1)
    with pytest.raises(RuntimeError, match=r"diagonal_scatter: needs at least 2 dims"):
        gradlab.diagonal_scatter(gradlab.zeros(3), gradlab.ones(3))
    with pytest.raises(RuntimeError, match=r"slice_scatter: needs a tensor with at least 1 dim"):
        gradlab.slice_scatter(gradlab.tensor(1.0), gradlab.tensor(2.0))
    with pytest.raises(TypeError, match=r"select_scatter: src must be a Tensor, got float"):
        gradlab.select_scatter(x, 1.0, 0, 0)
    with pytest.raises(IndexError, match=r"slice_scatter: dimension 2 is out of range"):
        gradlab.slice_scatter(x, x, 2)
