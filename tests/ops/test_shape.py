"""Shape ops: forward vs NumPy, gradcheck, values and gradients vs PyTorch, and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import (
    OpCase,
    cases_by_id,
    check_against_torch,
    check_forward_numpy,
    check_gradcheck,
    needs_torch,
    torch,
)


def F(lib):
    """``pad`` lives in ``nn.functional`` in PyTorch; gradlab has it at the top level too."""
    return lib.nn.functional if lib is torch else lib


def np_pad(x, pairs, mode="constant", value=0.0):
    """NumPy's pad with PyTorch's pair order (last dim first); negative pads crop."""
    widths = [(0, 0)] * x.ndim
    for i in range(len(pairs) // 2):
        widths[x.ndim - 1 - i] = (pairs[2 * i], pairs[2 * i + 1])
    crop = tuple(slice(max(-b, 0), x.shape[d] - max(-e, 0)) for d, (b, e) in enumerate(widths))
    x = x[crop]
    widths = [(max(b, 0), max(e, 0)) for b, e in widths]
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap"}[mode]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x, widths, mode=np_mode, **kw)


SCALAR = ((),)
EMPTY = ((0, 3),)
M = ((3, 4),)
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
    OpCase("tril", lambda lib, x: x.tril(), M, numpy=lambda np, x: np.tril(x),
           variants=(((2, 4, 3),), EMPTY)),
    OpCase("tril_k", lambda lib, x: lib.tril(x, -1), ((4, 4),),
           numpy=lambda np, x: np.tril(x, -1)),
    OpCase("triu", lambda lib, x: x.triu(), M, numpy=lambda np, x: np.triu(x),
           variants=(((2, 4, 3),), EMPTY)),
    OpCase("triu_k", lambda lib, x: lib.triu(x, 2), ((4, 5),),
           numpy=lambda np, x: np.triu(x, 2)),
    OpCase("narrow", lambda lib, x: x.narrow(1, 1, 2), T3, numpy=lambda np, x: x[:, 1:3]),
    OpCase("narrow_neg", lambda lib, x: lib.narrow(x, -1, -3, 2), T3,
           numpy=lambda np, x: x[..., 1:3]),
    OpCase("narrow_empty", lambda lib, x: x.narrow(0, 3, 0), M, numpy=lambda np, x: x[3:3]),
    OpCase("pad", lambda lib, x: F(lib).pad(x, (1, 2)), M,
           numpy=lambda np, x: np_pad(x, (1, 2)), variants=(EMPTY, ((4,),))),
    OpCase("pad_2d_value", lambda lib, x: F(lib).pad(x, (0, 1, 2, 0), value=1.5), M,
           numpy=lambda np, x: np_pad(x, (0, 1, 2, 0), value=1.5)),
    OpCase("pad_crop", lambda lib, x: F(lib).pad(x, (-1, 2, 1, -2)), T3,
           numpy=lambda np, x: np_pad(x, (-1, 2, 1, -2))),
    OpCase("pad_crop_all", lambda lib, x: F(lib).pad(x, (-2, -2)), M,
           numpy=lambda np, x: np_pad(x, (-2, -2))),
    OpCase("pad_reflect", lambda lib, x: F(lib).pad(x, (2, 3), mode="reflect"), M,
           numpy=lambda np, x: np_pad(x, (2, 3), "reflect")),
    OpCase("pad_reflect_2d", lambda lib, x: F(lib).pad(x, (1, 2, 2, 1), mode="reflect"),
           T3, numpy=lambda np, x: np_pad(x, (1, 2, 2, 1), "reflect")),
    OpCase("pad_replicate", lambda lib, x: F(lib).pad(x, (2, 1, 0, 2), mode="replicate"), T3,
           numpy=lambda np, x: np_pad(x, (2, 1, 0, 2), "replicate")),
    OpCase("pad_circular", lambda lib, x: F(lib).pad(x, (3, 1), mode="circular"), M,
           numpy=lambda np, x: np_pad(x, (3, 1), "circular")),
    OpCase("pad_circular_crop", lambda lib, x: F(lib).pad(x, (-1, 2), mode="circular"), M,
           numpy=lambda np, x: np_pad(x, (-1, 2), "circular")),
]


@cases_by_id(CASES)
def test_forward_matches_numpy(case, device):
    check_forward_numpy(case, device)


@cases_by_id(CASES)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@cases_by_id(CASES)
def test_gradgradcheck(case, device):
    check_gradcheck(case, device, second_order=True)


@needs_torch
@cases_by_id(CASES)
def test_matches_torch(case, device):
    check_against_torch(case, device)


@needs_torch
@cases_by_id(CASES)
def test_matches_torch_float32(case, device):
    check_against_torch(case, device, dtype=np.float32)


@needs_torch
@cases_by_id([c for c in CASES if c.strided])
def test_matches_torch_non_contiguous(case, device):
    check_against_torch(case, device, strided=True)


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


def test_pad_backward_crops_and_zero_fills():
    x = gradlab.arange(6.0).reshape(2, 3).requires_grad_()
    y = gradlab.pad(x, (1, -1))  # one column of zeros in front, last column cropped
    assert y.tolist() == [[0.0, 0.0, 1.0], [0.0, 3.0, 4.0]]
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]
    assert y.grad_fn.name() == "ConstantPadNdBackward0"


def test_dims_may_be_numpy_integers():
    x = gradlab.ones(1, 3, 1)
    assert tuple(x.squeeze(np.int64(2)).shape) == (1, 3)
    assert tuple(x.flip(np.int64(1)).shape) == (1, 3, 1)
    assert tuple(x.roll(np.int64(1), np.int64(1)).shape) == (1, 3, 1)


def test_pad_keeps_integer_dtype():
    x = gradlab.tensor([[1, 2]])
    y = gradlab.pad(x, (1, 1), value=7)
    assert y.dtype is gradlab.int64 and y.tolist() == [[7, 1, 2, 7]]


def test_flip_and_shape_ops_keep_names_of_pytorch():
    x = gradlab.ones(2, 3, requires_grad=True)
    assert x.flip(0).grad_fn.name() == "FlipBackward0"
    assert x.repeat(2, 1).grad_fn.name() == "RepeatBackward0"
    assert x.tril().grad_fn.name() == "TrilBackward0"
    assert x.permute(1, 0).grad_fn.op == "permute"


# --- property-based -----------------------------------------------------------------------------

@st.composite
def pads(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    n = draw(st.integers(1, len(shape)))
    pairs = []
    for i in range(n):
        size = shape[len(shape) - 1 - i]
        b = draw(st.integers(-size, 3))
        e = draw(st.integers(-(size + min(b, 0)), 3))  # never crop more than the size
        pairs += [b, e]
    return shape, tuple(pairs)


@needs_torch
@settings(max_examples=40, deadline=None)
@given(case=pads(), value=st.sampled_from([0.0, -1.5]))
def test_constant_pad_matches_torch(case, value):
    shape, pairs = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out_g = gradlab.pad(ours, pairs, value=value)
    out_t = torch.nn.functional.pad(theirs, pairs, value=value)
    np.testing.assert_array_equal(out_g.detach().numpy(), out_t.detach().numpy())
    np.testing.assert_array_equal(out_g.detach().numpy(), np_pad(x, pairs, value=value))
    cot = rng.standard_normal(tuple(out_t.shape))
    out_g.backward(gradlab.tensor(cot))
    out_t.backward(torch.tensor(cot))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


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
    (lambda: gradlab.ones(3).tril(), RuntimeError, r"at least 2 dims.*shape \(3,\)"),
    (lambda: gradlab.ones(3).triu(), RuntimeError, "at least 2 dims"),
    (lambda: gradlab.tensor(1.0).narrow(0, 0, 1), RuntimeError, "0-d tensor has no dim"),
    (lambda: _x().narrow(1, 4, 0), IndexError, r"start 4 is out of range for dim 1 of size 3"),
    (lambda: _x().narrow(1, 2, 2), RuntimeError, r"start \(2\) \+ length \(2\) exceeds dim 1"),
    (lambda: _x().narrow(1, 0, -1), RuntimeError, "exceeds dim 1"),
    (lambda: gradlab.pad(_x(), (1,)), RuntimeError, "must be even"),
    (lambda: gradlab.pad(_x(), (1, 1) * 3), RuntimeError, "3 pairs of padding .* 2 dims"),
    (lambda: gradlab.pad(_x(), (1, 1), mode="mirror"), NotImplementedError, "mode must be"),
    (lambda: gradlab.pad(_x(), (-2, -2)), RuntimeError, "negative size -1"),
    (lambda: gradlab.pad(_x(), (1, 1), mode="reflect", value=2.0), RuntimeError,
     "takes no value"),
    (lambda: gradlab.pad(_x(), (3, 0), mode="reflect"), RuntimeError,
     "reflect padding of 3 is too large for dim 1 of size 3"),
    (lambda: gradlab.pad(_x(), (0, 4), mode="circular"), RuntimeError, "at most 3"),
    (lambda: gradlab.pad(gradlab.ones(2, 0), (1, 0), mode="replicate"), RuntimeError,
     "too large for dim 1 of size 0"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_problem(make, error, match):
    with pytest.raises(error, match=match):
        make()
