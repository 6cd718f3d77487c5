"""cat, stack, split, chunk, tensor_split, unbind: forward vs NumPy, gradients vs PyTorch,
promotion, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.autograd.forward_ad as fwAD
from tests.oracle import (
    OpCase,
    index_tensor,
    needs_torch,
    standard_op_tests,
    torch,
)


def np_split(x, sizes, axis):
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


CASES = [
    OpCase("cat", lambda lib, x, y: lib.cat([x, y]), ((2, 3), (4, 3)),
           numpy=lambda np, x, y: np.concatenate([x, y]),
           variants=(((0, 3), (2, 3)), ((1,), (3,)))),
    OpCase("cat_dim1", lambda lib, x, y, z: lib.cat((x, y, z), 1), ((2, 1), (2, 3), (2, 2)),
           numpy=lambda np, x, y, z: np.concatenate([x, y, z], 1),
           variants=(((2, 0), (2, 3), (2, 1)),)),
    OpCase("cat_negative_dim", lambda lib, x, y: lib.cat([x, y], dim=-2), ((2, 2, 3), (2, 1, 3)),
           numpy=lambda np, x, y: np.concatenate([x, y], -2)),
    OpCase("cat_one", lambda lib, x: lib.cat([x]), ((2, 3),), numpy=lambda np, x: x.copy()),
    OpCase("cat_legacy_empty", lambda lib, x, y: lib.cat([x, y]), ((2, 3), (0,)),
           numpy=lambda np, x, y: x.copy(), grad_inputs=(0,)),
    OpCase("concat", lambda lib, x, y: lib.concat([x, y], 1), ((2, 3), (2, 2)),
           numpy=lambda np, x, y: np.concatenate([x, y], 1)),
    OpCase("concatenate", lambda lib, x, y: lib.concatenate([x, y], 0), ((1, 3), (2, 3)),
           numpy=lambda np, x, y: np.concatenate([x, y], 0)),
    OpCase("stack", lambda lib, x, y: lib.stack([x, y]), ((2, 3), (2, 3)),
           numpy=lambda np, x, y: np.stack([x, y]),
           variants=(((), ()), ((0, 3), (0, 3)))),
    OpCase("stack_last", lambda lib, x, y, z: lib.stack((x, y, z), dim=-1),
           ((2, 3), (2, 3), (2, 3)), numpy=lambda np, x, y, z: np.stack([x, y, z], -1)),
    OpCase("stack_middle", lambda lib, x, y: lib.stack([x, y], 1), ((2, 3), (2, 3)),
           numpy=lambda np, x, y: np.stack([x, y], 1)),
    OpCase("hstack", lambda lib, x, y: lib.hstack([x, y]), ((2, 3), (2, 1)),
           numpy=lambda np, x, y: np.hstack([x, y]), variants=(((3,), (2,)), ((), ()))),
    OpCase("vstack", lambda lib, x, y: lib.vstack([x, y]), ((3,), (2, 3)),
           numpy=lambda np, x, y: np.vstack([x, y])),
    OpCase("split_int", lambda lib, x: lib.split(x, 2), ((5, 3),),
           numpy=lambda np, x: np_split(x, [2, 2, 1], 0)),
    OpCase("split_int_dim", lambda lib, x: x.split(2, dim=-1), ((2, 3),),
           numpy=lambda np, x: np_split(x, [2, 1], 1)),
    OpCase("split_sizes", lambda lib, x: x.split([1, 0, 3], 1), ((2, 4),),
           numpy=lambda np, x: np_split(x, [1, 0, 3], 1)),
    OpCase("split_big", lambda lib, x: x.split(10), ((3, 2),), numpy=lambda np, x: (x,)),
    OpCase("split_empty", lambda lib, x: x.split(2), ((0, 2),), numpy=lambda np, x: (x,)),
    OpCase("chunk", lambda lib, x: x.chunk(3), ((6, 2),),
           numpy=lambda np, x: np_split(x, [2, 2, 2], 0)),
    OpCase("chunk_uneven", lambda lib, x: lib.chunk(x, 4, 1), ((2, 6),),
           numpy=lambda np, x: np_split(x, [2, 2, 2], 1)),
    OpCase("chunk_last_small", lambda lib, x: x.chunk(3), ((5,),),
           numpy=lambda np, x: np_split(x, [2, 2, 1], 0)),
    OpCase("chunk_empty", lambda lib, x: x.chunk(3), ((0, 2),),
           numpy=lambda np, x: (x, x, x)),
    OpCase("tensor_split_sections", lambda lib, x: lib.tensor_split(x, 3), ((7, 2),),
           numpy=lambda np, x: tuple(np.array_split(x, 3)),
           variants=(((2, 2),), ((0, 2),))),
    OpCase("tensor_split_dim", lambda lib, x: x.tensor_split(4, dim=-1), ((2, 6),),
           numpy=lambda np, x: tuple(np.array_split(x, 4, axis=1))),
    OpCase("tensor_split_indices", lambda lib, x: x.tensor_split([1, 4], 1), ((2, 6),),
           numpy=lambda np, x: tuple(np.array_split(x, [1, 4], axis=1))),
    OpCase("tensor_split_clamped_negative", lambda lib, x: lib.tensor_split(x, (-2, 9)), ((5,),),
           numpy=lambda np, x: (x[:-2], x[-2:], x[5:])),
    OpCase("tensor_split_overlapping", lambda lib, x: lib.tensor_split(x, [3, 1], dim=0),
           ((5, 2),), numpy=lambda np, x: (x[:3], x[3:3], x[1:])),
    # jvp=False below: torch.func.jvp can't read an index tensor's values (.item()) inside its
    # transform; the forward-mode path is the same as the list rows above, which check it.
    OpCase("tensor_split_index_tensor",
           lambda lib, x: x.tensor_split(index_tensor(lib, [2]), 1), ((3, 4),),
           numpy=lambda np, x: (x[:, :2], x[:, 2:]),
           jvp=False),
    OpCase("tensor_split_sections_tensor",
           lambda lib, x: x.tensor_split(index_tensor(lib, 2)), ((3, 4),),
           numpy=lambda np, x: (x[:2], x[2:]),
           jvp=False),
    OpCase("unbind", lambda lib, x: x.unbind(), ((3, 2),),
           numpy=lambda np, x: tuple(x), variants=(((4,),),)),
    OpCase("unbind_dim", lambda lib, x: lib.unbind(x, -1), ((2, 3, 2),),
           numpy=lambda np, x: (x[..., 0], x[..., 1])),
]


globals().update(standard_op_tests(CASES))


# --- one node, several outputs ------------------------------------------------------------------

def test_split_is_one_node_and_unused_pieces_get_zero_gradient():
    x = gradlab.arange(6.0, requires_grad=True)
    a, b, c = x.split(2)
    assert a.grad_fn is b.grad_fn is c.grad_fn and a.grad_fn.op == "split_with_sizes"
    assert [p._out_index for p in (a, b, c)] == [0, 1, 2]
    (b * 3).sum().backward()  # a and c got no gradient: the engine fills in zeros
    assert x.grad.tolist() == [0.0, 0.0, 3.0, 3.0, 0.0, 0.0]


def test_pieces_are_views_of_the_input():
    x = gradlab.arange(6.0)
    for piece in (*x.split(4), *x.chunk(2), *x.reshape(2, 3).unbind(1)):
        assert np.shares_memory(piece.numpy(), x.numpy())
    assert not np.shares_memory(gradlab.cat([x, x]).numpy(), x.numpy())
    assert not np.shares_memory(gradlab.cat([x]).numpy(), x.numpy())


def test_cat_backward_is_split_and_stack_backward_is_unbind():
    x = gradlab.ones(2, requires_grad=True)
    y = gradlab.ones(3, requires_grad=True)
    out = gradlab.cat([x, y])
    assert out.grad_fn.name() == "CatBackward0"
    (out * gradlab.arange(5.0)).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0] and y.grad.tolist() == [2.0, 3.0, 4.0]
    x.grad = None
    s = gradlab.stack([x, x], 1)  # the same tensor twice: both slices' gradients add up
    (s * gradlab.tensor([[1.0, 10.0], [2.0, 20.0]])).sum().backward()
    assert x.grad.tolist() == [11.0, 22.0]


def test_cat_without_grad_inputs_and_mixed_requires_grad():
    x = gradlab.ones(2, requires_grad=True)
    c = gradlab.zeros(2)
    out = gradlab.cat([c, x, c])
    out.backward(gradlab.arange(6.0))
    assert x.grad.tolist() == [2.0, 3.0]
    assert gradlab.cat([c, c]).grad_fn is None


def test_cat_and_stack_give_zero_tangent_to_pieces_without_one():
    """PyTorch treats a missing tangent as zeros: the plain piece's stretch of the output's
    tangent is zero, also when it needed a dtype promotion first (an int piece)."""
    with fwAD.dual_level():
        x = fwAD.make_dual(gradlab.tensor([1.0, 2.0]), gradlab.tensor([0.5, -0.5]))
        plain = gradlab.tensor([7.0, 8.0, 9.0])
        joined = gradlab.cat([plain, x, gradlab.tensor([3, 4])])
        stacked = gradlab.stack([x, plain[:2]], 1)
        halves = x.split(1)  # and a cut: each piece gets its stretch of the tangent
        got = [fwAD.unpack_dual(y).tangent.tolist() for y in (joined, stacked, *halves)]
    assert got == [[0.0, 0.0, 0.0, 0.5, -0.5, 0.0, 0.0], [[0.5, 0.0], [-0.5, 0.0]], [0.5], [-0.5]]


def test_unbind_of_an_empty_dim_is_an_empty_tuple():
    assert gradlab.ones(0, 3).unbind() == ()


# --- dtype promotion ----------------------------------------------------------------------------

PROMOTE = [("int32", "float16"), ("int64", "float32"), ("bool", "int32"), ("float16", "bfloat16"),
           ("float32", "float64"), ("int32", "int64"), ("bool", "bool")]


@needs_torch
@pytest.mark.parametrize("a,b", PROMOTE)
@pytest.mark.parametrize("op", ["cat", "stack"])
def test_dtype_promotion_matches_torch(a, b, op):
    def run(lib):
        return getattr(lib, op)([lib.ones(2, 3, dtype=getattr(lib, a)),
                                 lib.zeros(2, 3, dtype=getattr(lib, b))])
    ours, theirs = run(gradlab), run(torch)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def test_promoted_cat_sends_gradient_back_in_each_inputs_dtype():
    x = gradlab.ones(2, dtype=gradlab.float32, requires_grad=True)
    y = gradlab.ones(1, dtype=gradlab.float64, requires_grad=True)
    out = gradlab.cat([x, y])
    assert out.dtype is gradlab.float64
    out.sum().backward()
    assert x.grad.dtype is gradlab.float32 and y.grad.dtype is gradlab.float64


# --- property-based -----------------------------------------------------------------------------

@needs_torch
@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), data=st.data())
def test_split_then_cat_round_trips_and_grads_match_torch(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    as_list = data.draw(st.booleans())
    if as_list:
        cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
        sections = list(np.diff([0, *cuts, n]))
    else:
        sections = data.draw(st.integers(1, 5))
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    pieces_g = gradlab.split(ours, sections, dim)
    pieces_t = torch.split(theirs, sections, dim)
    assert [tuple(p.shape) for p in pieces_g] == [tuple(p.shape) for p in pieces_t]
    np.testing.assert_array_equal(gradlab.cat(pieces_g, dim).detach().numpy(), x)
    used = data.draw(st.lists(st.integers(0, len(pieces_t) - 1), unique=True, min_size=1))
    weights = [rng.standard_normal(tuple(pieces_t[i].shape)) for i in used]
    sum(((pieces_g[i] * gradlab.tensor(w)).sum() for i, w in zip(used, weights)),
        gradlab.tensor(0.0, dtype=gradlab.float64)).backward()
    sum(((pieces_t[i] * torch.tensor(w)).sum() for i, w in zip(used, weights)),
        torch.tensor(0.0, dtype=torch.float64)).backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=3), count=st.integers(1, 3),
       data=st.data())
def test_stack_then_unbind_round_trips(shape, count, data):
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    arrays = [np.full(shape, float(i)) for i in range(count)]
    stacked = gradlab.stack([gradlab.tensor(a) for a in arrays], dim)
    np.testing.assert_array_equal(stacked.numpy(), np.stack(arrays, dim))
    for got, want in zip(stacked.unbind(dim), arrays):
        np.testing.assert_array_equal(got.numpy(), want)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 7), sections=st.integers(1, 5),
       cuts=st.lists(st.integers(-9, 9), max_size=3))
def test_tensor_split_matches_numpy_array_split(n, sections, cuts):
    """Sections: pieces as equal as can be (the first n % k one longer); indices: Python slices.
    The gradient of each piece lands on its stretch of the input (overlaps add up)."""
    x_np = np.arange(float(n))
    for arg in (sections, cuts):
        x = gradlab.tensor(x_np, requires_grad=True)
        pieces = gradlab.tensor_split(x, arg)
        want = np.array_split(x_np, arg) if isinstance(arg, int) else \
            [x_np[a:b] for a, b in zip([None, *cuts], [*cuts, None])]
        assert len(pieces) == len(want)
        for got, expected in zip(pieces, want):
            np.testing.assert_array_equal(got.detach().numpy(), expected)
        sum(((i + 1) * p).sum() for i, p in enumerate(pieces)).backward()
        expected_grad = np.zeros(n)  # piece i was weighted by i + 1
        bounds = np.array_split(np.arange(n), arg) if isinstance(arg, int) else \
            [slice(a, b) for a, b in zip([None, *cuts], [*cuts, None])]
        for i, where in enumerate(bounds):
            expected_grad[where] += i + 1
        np.testing.assert_array_equal(x.grad.numpy(), expected_grad)


def test_tensor_split_consecutive_pieces_are_one_split_node_of_views():
    x = gradlab.arange(6.0, requires_grad=True)
    pieces = x.tensor_split([2, 5])
    assert {p.grad_fn.name() for p in pieces} == {"SplitBackward0"}
    assert len({id(p.grad_fn) for p in pieces}) == 1
    assert all(np.shares_memory(p.detach().numpy(), x.detach().numpy()) for p in pieces)


# --- errors that teach --------------------------------------------------------------------------

def _m(*shape):
    return gradlab.ones(*shape)


ERRORS = [
    (lambda: gradlab.cat([]), RuntimeError, "non-empty list"),
    (lambda: gradlab.cat(_m(2)), TypeError, r"single Tensor.*cat\(\[a, b\], dim\)"),
    (lambda: gradlab.cat([_m(2), 3.0]), TypeError, "element 1 is a float"),
    (lambda: gradlab.cat([_m(2), gradlab.tensor(1.0)]), RuntimeError,
     "tensor 1 is 0-d.*stack"),
    (lambda: gradlab.cat([gradlab.tensor(1.0)]), RuntimeError, "tensor 0 is 0-d"),
    (lambda: gradlab.cat([_m(2, 3), _m(3)]), RuntimeError,
     r"same number of dims, got \(2, 3\) \(tensor 0\) and \(3,\) \(tensor 1\).*unsqueeze"),
    (lambda: gradlab.cat([_m(2, 3), _m(2, 3), _m(2, 4)]), RuntimeError,
     r"except in dim 0: tensor 2 has size 4 in dim 1 but tensor 0 has 3"),
    (lambda: gradlab.cat([_m(2, 3), _m(2, 3)], 2), IndexError, "dimension 2 is out of range"),
    (lambda: gradlab.stack([]), RuntimeError, "non-empty list"),
    (lambda: gradlab.stack([_m(2, 3), _m(3, 2)]), RuntimeError,
     r"tensor 0 has \(2, 3\) and tensor 1 has \(3, 2\).*cat\(\)"),
    (lambda: gradlab.stack([_m(2), _m(2)], 2), IndexError, "dimension 2 is out of range"),
    (lambda: _m(5).split([2, 2]), RuntimeError, r"add up to 5.*they add up to 4"),
    (lambda: _m(5).split([6, -1]), RuntimeError, "must be >= 0"),
    (lambda: _m(5).split(0), RuntimeError, "split_size must be positive"),
    (lambda: _m(5).split(-1), RuntimeError, "split_size must be positive"),
    (lambda: gradlab.tensor(1.0).split(1), RuntimeError, "0-d tensor has no dim to split"),
    (lambda: _m(5).chunk(0), RuntimeError, "chunks must be > 0"),
    (lambda: gradlab.tensor(1.0).chunk(2), RuntimeError, "0-d tensor has no dim"),
    (lambda: _m(5).tensor_split(0), RuntimeError,
     "number of sections must be larger than 0, got 0"),
    (lambda: _m(5).tensor_split(-1), RuntimeError, "larger than 0, got -1"),
    (lambda: gradlab.tensor(1.0).tensor_split(2), RuntimeError,
     r"at least a 1-D tensor, but got a 0-d one.*reshape\(1\)"),
    (lambda: _m(5).tensor_split(2, 1), IndexError, "dimension 1 is out of range"),
    (lambda: _m(5).tensor_split(gradlab.tensor([[1]])), RuntimeError,
     r"0-d or 1-D tensor, but got one of shape \(1, 1\)"),
    (lambda: _m(5).tensor_split(gradlab.tensor([1.0])), RuntimeError,
     r"dtype int64 \(long\), but got gradlab.float32.*\.long\(\)"),
    (lambda: _m(5).tensor_split(2.5), TypeError, "must be an int.*got float"),
    (lambda: _m(5).tensor_split([1.5]), TypeError, "indices must be ints, got 1.5"),
    (lambda: gradlab.tensor(1.0).unbind(), RuntimeError, "0-d tensor has no dim"),
    (lambda: _m(2, 3).unbind(2), IndexError, "dimension 2 is out of range"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_problem(make, error, match):
    with pytest.raises(error, match=match):
        make()


# --- meshgrid ------------------------------------------------------------------------------

MESHGRID_CASES = [
    OpCase("meshgrid_ij", lambda lib, x, y: lib.meshgrid(x, y, indexing="ij"), ((3,), (4,)),
           numpy=lambda np, x, y: tuple(np.meshgrid(x, y, indexing="ij")),
           variants=(((), (4,)), ((0,), (2,)))),
    OpCase("meshgrid_xy", lambda lib, x, y, z: lib.meshgrid([x, y, z], indexing="xy"),
           ((2,), (3,), (4,)), numpy=lambda np, x, y, z: tuple(np.meshgrid(x, y, z))),
    OpCase("meshgrid_one", lambda lib, x: lib.meshgrid((x,), indexing="xy"), ((3,),),
           numpy=lambda np, x: (x,)),
]

globals().update(standard_op_tests(MESHGRID_CASES, prefix="meshgrid_"))


def test_meshgrid_grids_are_views_whose_gradients_sum_back():
    x = gradlab.arange(3.0, requires_grad=True)
    y = gradlab.arange(4.0, requires_grad=True)
    gx, gy = gradlab.meshgrid(x, y, indexing="ij")
    assert np.shares_memory(gx.detach().numpy(), x.detach().numpy())
    assert gx.grad_fn.name() == "ExpandBackward0"
    assert gx[2].tolist() == [2.0] * 4 and gy[:, 1].tolist() == [1.0] * 3
    (gx * gy).sum().backward()  # d/dx_i = sum_j y_j, d/dy_j = sum_i x_i
    assert x.grad.tolist() == [6.0] * 3 and y.grad.tolist() == [3.0] * 4


@needs_torch
def test_meshgrid_without_indexing_warns_and_means_ij_like_torch():
    with pytest.warns(UserWarning, match="indexing argument"):
        ours = gradlab.meshgrid(gradlab.ones(2), gradlab.ones(3))
    with pytest.warns(UserWarning, match="indexing argument"):
        theirs = torch.meshgrid(torch.ones(2), torch.ones(3))
    assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in theirs] == [(2, 3)] * 2


@pytest.mark.parametrize("make, error, match", [
    (lambda: gradlab.meshgrid(indexing="ij"), RuntimeError, "non-empty list of tensors"),
    (lambda: gradlab.meshgrid(_m(2), _m(2), indexing="ab"), RuntimeError,
     'indexing must be one of "xy" or "ij", but received: ab'),
    (lambda: gradlab.meshgrid(_m(2), _m(2, 2), indexing="ij"), RuntimeError,
     r"0-D or 1-D tensors, but tensor 1 has shape \(2, 2\).*reshape\(-1\)"),
    (lambda: gradlab.meshgrid(_m(2), [1.0], indexing="ij"), TypeError,
     "argument 1 is a list"),
    (lambda: gradlab.meshgrid(_m(2), _m(2).double(), indexing="ij"), RuntimeError,
     r"same dtype and device, but tensor 0 is gradlab.float32 on cpu and tensor 1 is "
     r"gradlab.float64"),
])
def test_meshgrid_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()
