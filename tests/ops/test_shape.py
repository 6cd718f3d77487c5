"""Shape ops: forward vs NumPy, gradcheck, values and gradients vs PyTorch, and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import (
    EMPTY,
    SCALAR,
    M,
    OpCase,
    standard_op_tests,
)

T3 = ((2, 3, 4),)


CASES = [
    OpCase("reshape", lambda lib, x: x.reshape(4, 3), M, numpy=lambda np, x: x.reshape(4, 3),
           variants=(((2, 6),),)),
    OpCase("reshape_infer", lambda lib, x: x.reshape(-1, 2), T3,
           numpy=lambda np, x: x.reshape(-1, 2), variants=(((0, 4),),)),
    OpCase("reshape_tuple", lambda lib, x: lib.reshape(x, (2, 12)), T3,
           numpy=lambda np, x: x.reshape(2, 12)),
    OpCase("reshape_0d", lambda lib, x: x.reshape(1, 1), SCALAR,
           numpy=lambda np, x: x.reshape(1, 1)),
    OpCase("view", lambda lib, x: x.view(2, 2, 3), M, numpy=lambda np, x: x.reshape(2, 2, 3),
           strided=False, variants=(((12,),),)),
    OpCase("view_infer", lambda lib, x: x.view(-1), T3, numpy=lambda np, x: x.reshape(-1),
           strided=False, variants=(SCALAR, EMPTY)),
    OpCase("flip_separate_dims", lambda lib, x: x.flip(0, 2), T3,
           numpy=lambda np, x: np.flip(x, (0, 2))),
    OpCase("view_as", lambda lib, x, y: x.view_as(y), ((3, 4), (2, 6)),
           numpy=lambda np, x, y: x.reshape(y.shape), strided=False, grad_inputs=(0,)),
    OpCase("reshape_as", lambda lib, x, y: x.reshape_as(y), ((3, 4), (4, 3)),
           numpy=lambda np, x, y: x.reshape(y.shape), grad_inputs=(0,)),
    OpCase("expand", lambda lib, x: x.expand(2, 3, 4), ((3, 1),),
           numpy=lambda np, x: np.broadcast_to(x, (2, 3, 4)), variants=(((1, 4),),)),
    OpCase("expand_keep", lambda lib, x: x.expand(-1, 5), ((3, 1),),
           numpy=lambda np, x: np.broadcast_to(x, (3, 5))),
    OpCase("expand_0d", lambda lib, x: x.expand(2, 3), SCALAR,
           numpy=lambda np, x: np.broadcast_to(x, (2, 3))),
    OpCase("expand_as", lambda lib, x, y: x.expand_as(y), ((1, 4), (3, 4)),
           numpy=lambda np, x, y: np.broadcast_to(x, y.shape), grad_inputs=(0,)),
    OpCase("broadcast_to", lambda lib, x: lib.broadcast_to(x, (2, 3, 4)), ((3, 1),),
           numpy=lambda np, x: np.broadcast_to(x, (2, 3, 4))),
    OpCase("transpose", lambda lib, x: x.transpose(0, 2), T3,
           numpy=lambda np, x: x.swapaxes(0, 2), variants=(((0, 2, 3),),)),
    OpCase("transpose_neg", lambda lib, x: lib.transpose(x, -1, 0), M,
           numpy=lambda np, x: x.T),
    OpCase("swapaxes", lambda lib, x: lib.swapaxes(x, 0, 1), M, numpy=lambda np, x: x.T),
    OpCase("swapdims", lambda lib, x: x.swapdims(1, 2), T3,
           numpy=lambda np, x: x.swapaxes(1, 2)),
    OpCase("permute", lambda lib, x: x.permute(2, 0, 1), T3,
           numpy=lambda np, x: x.transpose(2, 0, 1), variants=(((0, 2, 3),),)),
    OpCase("permute_list", lambda lib, x: lib.permute(x, [1, -1, 0]), T3,
           numpy=lambda np, x: x.transpose(1, 2, 0)),
    OpCase("t", lambda lib, x: x.t(), M, numpy=lambda np, x: x.T,
           variants=(((4,),), SCALAR, EMPTY)),
    OpCase("T", lambda lib, x: x.T, M, numpy=lambda np, x: x.T, variants=(EMPTY,)),
    OpCase("mT", lambda lib, x: x.mT, T3, numpy=lambda np, x: x.swapaxes(-1, -2)),
    OpCase("unsqueeze", lambda lib, x: x.unsqueeze(1), M,
           numpy=lambda np, x: np.expand_dims(x, 1), variants=(EMPTY,)),
    OpCase("unsqueeze_end", lambda lib, x: lib.unsqueeze(x, -1), M,
           numpy=lambda np, x: x[..., None], variants=(SCALAR,)),
    OpCase("squeeze_all", lambda lib, x: x.squeeze(), ((1, 3, 1, 4),),
           numpy=lambda np, x: np.squeeze(x), variants=(SCALAR, ((1, 0),))),
    OpCase("squeeze_dim", lambda lib, x: x.squeeze(2), ((1, 3, 1, 4),),
           numpy=lambda np, x: np.squeeze(x, 2)),
    OpCase("squeeze_not_one", lambda lib, x: x.squeeze(1), ((1, 3, 1, 4),),
           numpy=lambda np, x: x),
    OpCase("squeeze_tuple", lambda lib, x: x.squeeze((0, -2)), ((1, 3, 1, 4),),
           numpy=lambda np, x: x.reshape(3, 4)),
    OpCase("flatten", lambda lib, x: x.flatten(), T3, numpy=lambda np, x: x.reshape(-1),
           variants=(SCALAR, EMPTY)),
    OpCase("flatten_range", lambda lib, x: lib.flatten(x, 1, 2), ((2, 3, 4, 2),),
           numpy=lambda np, x: x.reshape(2, 12, 2)),
    OpCase("unflatten", lambda lib, x: x.unflatten(1, (2, -1)), ((3, 4),),
           numpy=lambda np, x: x.reshape(3, 2, 2)),
    OpCase("flip", lambda lib, x: x.flip(0), T3, numpy=lambda np, x: x[::-1],
           variants=(EMPTY,)),
    OpCase("flip_dims", lambda lib, x: lib.flip(x, (0, -1)), T3,
           numpy=lambda np, x: x[::-1, :, ::-1]),
    OpCase("flip_0d", lambda lib, x: x.flip(0), SCALAR, numpy=lambda np, x: x),
    OpCase("fliplr", lambda lib, x: lib.fliplr(x), M, numpy=lambda np, x: np.fliplr(x)),
    OpCase("flipud", lambda lib, x: lib.flipud(x), M, numpy=lambda np, x: np.flipud(x)),
    OpCase("roll", lambda lib, x: x.roll(1, 0), M, numpy=lambda np, x: np.roll(x, 1, 0),
           variants=(EMPTY,)),
    OpCase("roll_dims", lambda lib, x: lib.roll(x, (2, -1), (1, 2)), T3,
           numpy=lambda np, x: np.roll(x, (2, -1), (1, 2))),
    OpCase("roll_flat", lambda lib, x: x.roll(5), M, numpy=lambda np, x: np.roll(x, 5)),
    OpCase("movedim", lambda lib, x: x.movedim(0, -1), T3,
           numpy=lambda np, x: np.moveaxis(x, 0, -1)),
    OpCase("movedim_many", lambda lib, x: lib.movedim(x, (0, 1), (2, 0)), T3,
           numpy=lambda np, x: np.moveaxis(x, (0, 1), (2, 0))),
    OpCase("moveaxis_0d", lambda lib, x: lib.moveaxis(x, 0, 0), SCALAR, numpy=lambda np, x: x),
    OpCase("repeat", lambda lib, x: x.repeat(2, 3), M, numpy=lambda np, x: np.tile(x, (2, 3)),
           variants=(EMPTY,)),
    OpCase("repeat_new_dims", lambda lib, x: x.repeat(2, 1, 2), ((3,),),
           numpy=lambda np, x: np.tile(x, (2, 1, 2)), variants=(SCALAR,)),
    OpCase("repeat_zero", lambda lib, x: x.repeat(0, 2), M,
           numpy=lambda np, x: np.tile(x, (0, 2))),
    OpCase("tile", lambda lib, x: x.tile((2,)), M, numpy=lambda np, x: np.tile(x, 2)),
]


globals().update(standard_op_tests(CASES))


# --- views, copies, and what the graph records -------------------------------------------------

def test_views_share_memory_and_copies_do_not():
    x = gradlab.arange(12.0).reshape(3, 4)
    for view in (x.view(4, 3), x.t(), x.transpose(0, 1), x.unsqueeze(0), x.narrow(1, 1, 2),
                 x.expand(2, 3, 4), x.permute(1, 0), x.flatten(), x.squeeze()):
        assert view._version == x._version
        assert np.shares_memory(view.numpy(), x.numpy()), view
    for copy in (x.flip(0), x.repeat(1, 2), x.tril(), x.roll(1, 0),
                 gradlab.pad(x, (1, 1)), x.t().reshape(-1)):
        assert not np.shares_memory(copy.numpy(), x.numpy())
    x.narrow(1, 0, 2).mul_(0)  # an in-place change through a view reaches its base
    assert x[:, :2].sum().item() == 0 and x[:, 2:].sum().item() == 2 + 3 + 6 + 7 + 10 + 11


def test_t_of_a_vector_is_a_new_view_with_its_own_node():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    y = x.t()
    assert y is not x and y.grad_fn is not None
    (y * gradlab.tensor([3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_repeat_backward_sums_the_tiles():
    x = gradlab.tensor([[1.0, 2.0]], requires_grad=True)
    y = x.repeat(3, 2)  # (3, 4): every value appears 3 * 2 = 6 times
    weights = gradlab.arange(12.0).reshape(3, 4)
    (y * weights).sum().backward()
    w = np.arange(12.0).reshape(3, 4)
    assert x.grad.tolist() == [[w[:, [0, 2]].sum(), w[:, [1, 3]].sum()]]


def test_dims_may_be_numpy_integers():
    x = gradlab.ones(1, 3, 1)
    assert tuple(x.squeeze(np.int64(2)).shape) == (1, 3)
    assert tuple(x.flip(np.int64(1)).shape) == (1, 3, 1)
    assert tuple(x.roll(np.int64(1), np.int64(1)).shape) == (1, 3, 1)


def test_flip_and_shape_ops_keep_names_of_pytorch():
    x = gradlab.ones(2, 3, requires_grad=True)
    assert x.flip(0).grad_fn.name() == "FlipBackward0"
    assert x.repeat(2, 1).grad_fn.name() == "RepeatBackward0"
    assert x.tril().grad_fn.name() == "TrilBackward0"
    assert x.permute(1, 0).grad_fn.op == "permute"


# --- property-based -----------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=4), data=st.data())
def test_movedim_and_permute_match_numpy_and_invert(shape, data):
    ndim = len(shape)
    src = data.draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    dst = data.draw(st.permutations(range(ndim)))[:len(src)]
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    t = gradlab.tensor(x, requires_grad=True)
    y = gradlab.movedim(t, src, dst)
    np.testing.assert_array_equal(y.detach().numpy(), np.moveaxis(x, src, dst))
    cot = np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape))
    y.backward(gradlab.tensor(cot))
    np.testing.assert_array_equal(t.grad.numpy(), np.moveaxis(cot, dst, src))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_repeat_gradient_counts_copies(shape, data):
    extra = data.draw(st.integers(0, 2))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=len(shape) + extra,
                               max_size=len(shape) + extra))
    x = gradlab.ones(*shape, dtype=gradlab.float64, requires_grad=True)
    y = x.repeat(*sizes)
    assert tuple(y.shape) == np.tile(np.ones(shape), sizes).shape
    y.sum().backward()
    copies = int(np.prod(sizes))
    np.testing.assert_array_equal(x.grad.numpy(), np.full(shape, float(copies)))


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=3), data=st.data())
def test_expand_is_numpys_read_only_broadcast_view_of_its_input(shape, data):
    """Expand builds its view itself (NumPy's broadcast_to is slow): the same strides, no
    copy, read-only, in the graph as a view of the input, for any broadcastable target."""
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    target = tuple(lead) + tuple(data.draw(st.sampled_from([s, 4])) if s == 1 else s
                                 for s in shape)
    x = gradlab.arange(float(np.prod(shape))).reshape(shape)
    y = x.expand(*target)
    expected = np.broadcast_to(x.numpy(), target)
    assert y.numpy().strides == expected.strides and not y.numpy().flags.writeable
    np.testing.assert_array_equal(y.numpy(), expected)
    assert y._storage is x._storage  # a view: the same memory, counted once
    x.fill_(7.0)
    assert np.all(y.numpy() == 7.0)


# --- errors that teach --------------------------------------------------------------------------

def _x():
    return gradlab.ones(2, 3)


ERRORS = [
    (lambda: _x().reshape(-1, -1), RuntimeError, "only one dimension can be -1"),
    (lambda: _x().reshape(4, 2), RuntimeError, r"invalid for input of size 6.*shape \(2, 3\)"),
    (lambda: _x().reshape(-1, 4), RuntimeError, "invalid for input of size 6"),
    (lambda: _x().reshape(-2, 3), RuntimeError, "invalid size -2"),
    (lambda: _x().t().view(6), RuntimeError, r"not a view.*\.reshape"),
    (lambda: _x().expand(3), RuntimeError, "fewer dims"),
    (lambda: _x().expand(-1, 2, 3), RuntimeError, "-1 is not allowed for new leading dim 0"),
    (lambda: _x().expand(2, 4), RuntimeError, r"must match the existing size \(3\)"),
    (lambda: _x().expand(-2, 3), RuntimeError, "invalid size -2"),
    (lambda: _x().permute(0), RuntimeError, "has 2 dims but 1 were given"),
    (lambda: _x().permute(0, 0), RuntimeError, "repeats a dim"),
    (lambda: _x().transpose(0, 2), IndexError, r"dimension 2 is out of range.*\[-2, 1\]"),
    (lambda: gradlab.ones(2, 2, 2).t(), RuntimeError, r"<= 2 dims.*\.mT"),
    (lambda: gradlab.ones(2, 2, 2).flatten(2, 1), RuntimeError, "start_dim 2 comes after"),
    (lambda: _x().unflatten(1, (2, 2)), RuntimeError, "invalid for input of size 3"),
    (lambda: _x().unflatten(1, ()), RuntimeError, "sizes must be non-empty"),
    (lambda: _x().flip((0, 0)), RuntimeError, "names a dimension twice"),
    (lambda: _x().flip(2), IndexError, "dimension 2 is out of range"),
    (lambda: gradlab.fliplr(gradlab.ones(3)), RuntimeError, "at least 2 dims"),
    (lambda: gradlab.flipud(gradlab.tensor(1.0)), RuntimeError, "at least 1 dim"),
    (lambda: _x().roll((1, 2)), RuntimeError, "without dims, give exactly one shift"),
    (lambda: _x().roll((1, 2), 0), RuntimeError, "same length"),
    (lambda: _x().movedim((0, 1), 0), RuntimeError, "must name as many dims"),
    (lambda: _x().movedim((0, 0), (0, 1)), RuntimeError, "source .* repeats a dim"),
    (lambda: _x().repeat(2), RuntimeError, r"can't be smaller.*x\.repeat\(1, 1\)"),
    (lambda: _x().repeat(2, -1), RuntimeError, "must be >= 0"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_problem(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_flip_without_dims_says_how_to_give_them():
    with pytest.raises(TypeError, match=r"flip: missing dims, e.g. x.flip\(0\)"):
        gradlab.ones(2).flip()
