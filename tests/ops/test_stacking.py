"""column_stack, row_stack, dstack, hsplit/vsplit/dsplit, split_with_sizes, unravel_index,
argwhere: vs NumPy and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

CASES = [
    OpCase("column_stack", lambda lib, a, b, c: lib.column_stack([a, b, c]), ((3,), (3, 2), (3,)),
           numpy=lambda np, a, b, c: np.column_stack([a, b, c]),
           variants=(((), (), ()), ((2, 2, 2), (2, 1, 2), (2, 3, 2)))),
    OpCase("row_stack", lambda lib, a, b: lib.row_stack((a, b)), ((4,), (2, 4)),
           numpy=lambda np, a, b: np.vstack([a, b])),
    OpCase("dstack", lambda lib, a, b: lib.dstack([a, b]), ((2, 3), (2, 3, 2)),
           numpy=lambda np, a, b: np.dstack([a, b]), variants=(((3,), (1, 3, 1)), ((), ()))),
    OpCase("hsplit", lambda lib, x: lib.hsplit(x, 3), ((2, 6),),
           numpy=lambda np, x: tuple(np.hsplit(x, 3)), variants=(((6,),),)),
    OpCase("hsplit_indices", lambda lib, x: x.hsplit([1, 4]), ((2, 6, 2),),
           numpy=lambda np, x: tuple(np.hsplit(x, [1, 4]))),
    OpCase("vsplit", lambda lib, x: x.vsplit([2]), ((5, 3),),
           numpy=lambda np, x: tuple(np.vsplit(x, [2]))),
    OpCase("dsplit", lambda lib, x: lib.dsplit(x, 2), ((2, 3, 4),),
           numpy=lambda np, x: tuple(np.dsplit(x, 2))),
    OpCase("split_with_sizes", lambda lib, x: x.split_with_sizes([1, 3, 0], 1), ((2, 4),),
           numpy=lambda np, x: (x[:, :1], x[:, 1:], x[:, 4:])),
    OpCase("split_with_sizes_fn", lambda lib, x: lib.split_with_sizes(x, [2, 1]), ((3, 2),),
           numpy=lambda np, x: (x[:2], x[2:])),
    OpCase("argwhere", lambda lib, x: (x > 0).argwhere(), ((3, 4),), grad=False,
           numpy=lambda np, x: np.argwhere(x > 0), variants=(((),), ((0, 2),))),
    OpCase("argwhere_fn", lambda lib, x: lib.argwhere(x.round()), ((2, 3, 2),), grad=False,
           numpy=lambda np, x: np.argwhere(np.round(x))),
]

globals().update(standard_op_tests(CASES))


@needs_torch
def test_unravel_index_matches_torch_including_wrapping():
    flat = [0, 5, 11, -1, 12, 29, -13]
    for shape in [(3, 4), (2, 3, 2), 12, (12,), (1, 12, 1)]:
        ours = gradlab.unravel_index(gradlab.tensor(flat), shape)
        theirs = torch.unravel_index(torch.tensor(flat), shape)
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert o.dtype is gradlab.int64 and o.tolist() == t.tolist()
    assert [t.item() for t in gradlab.unravel_index(gradlab.tensor(4), (3, 2))] == [2, 0]
    assert gradlab.unravel_index(7, (3, 4))[0].shape == ()
    assert gradlab.unravel_index(gradlab.tensor([1, 2]), ()) == ()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_unravel_index_inverts_ravel_multi_index(shape, data):
    n = int(np.prod(shape))
    flat = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6))
    ours = gradlab.unravel_index(gradlab.tensor(flat), tuple(shape))
    assert np.ravel_multi_index([c.numpy() for c in ours], shape).tolist() == flat


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=5), st.integers(0, 2))
def test_split_with_sizes_pieces_join_back_and_gradients_flow(sizes, dim):
    shape = [2, 3, 4]
    shape[dim] = sum(sizes)
    x = gradlab.randn(*shape, requires_grad=True)
    pieces = x.split_with_sizes(sizes, dim)
    assert [p.shape[dim] for p in pieces] == sizes
    assert gradlab.equal(gradlab.cat(pieces, dim), x.detach())
    sum(((i + 1) * p.sum() for i, p in enumerate(pieces)), gradlab.zeros(())).backward()
    want = np.concatenate([np.full(tuple(s if d == dim else shape[d] for d in range(3)), i + 1.0)
                           for i, s in enumerate(sizes)], dim)
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_errors_name_the_op_and_the_fix():
    m = gradlab.ones(2, 6)
    with pytest.raises(RuntimeError, match=r"hsplit: dim 1 has size 6, which 4 doesn't "
                                           r"divide.*tensor_split"):
        gradlab.hsplit(m, 4)
    with pytest.raises(RuntimeError, match=r"hsplit: the number of sections must be > 0"):
        m.hsplit(0)
    with pytest.raises(RuntimeError, match=r"vsplit: needs a tensor with at least 2 dim.*\(6,\)"):
        gradlab.vsplit(gradlab.ones(6), 2)
    with pytest.raises(RuntimeError, match=r"dsplit: needs a tensor with at least 3 dim"):
        m.dsplit(2)
    with pytest.raises(RuntimeError, match=r"hsplit: needs a tensor with at least 1 dim"):
        gradlab.hsplit(gradlab.tensor(1.0), 1)
    with pytest.raises(TypeError, match=r"hsplit: input must be a Tensor"):
        gradlab.hsplit([1, 2], 2)
    with pytest.raises(RuntimeError, match=r"split: the sizes \[2, 3\] must be >= 0 and add "
                                           r"up to 6"):
        m.split_with_sizes([2, 3], 1)
    with pytest.raises(TypeError, match=r"split_with_sizes: split_sizes must be a list of "
                                        r"ints.*split\(x, size, dim\)"):
        m.split_with_sizes(3, 1)
    with pytest.raises(TypeError, match=r"column_stack: expected a sequence of tensors"):
        gradlab.column_stack(m)
    with pytest.raises(RuntimeError, match=r"dstack: expected a non-empty list"):
        gradlab.dstack([])
    with pytest.raises(TypeError, match=r"unravel_index: indices must be an integer tensor, "
                                        r"got gradlab.float32.*long"):
        gradlab.unravel_index(gradlab.tensor([1.0]), (3, 2))
    with pytest.raises(TypeError, match=r"unravel_index: indices must be an integer tensor or "
                                        r"an int, got list"):
        gradlab.unravel_index([1], (3, 2))
    with pytest.raises(TypeError, match=r"unravel_index: shape must be an int or a sequence"):
        gradlab.unravel_index(gradlab.tensor([1]), (3.0, 2))
    with pytest.raises(ValueError, match=r"unravel_index: shape \(3, -2\) has a negative size"):
        gradlab.unravel_index(gradlab.tensor([1]), (3, -2))
    with pytest.raises(RuntimeError, match=r"unravel_index: shape \(0,\) has no elements"):
        gradlab.unravel_index(gradlab.tensor([0]), (0,))
    with pytest.raises(TypeError, match=r"argwhere: input must be a Tensor"):
        gradlab.argwhere([1, 0])
