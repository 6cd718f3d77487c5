"""block_diag, cartesian_prod, combinations, vander, rot90, atleast_1d/2d/3d: forward vs
NumPy, gradients (and double backward, forward mode) vs finite differences and PyTorch,
dtypes, views, and errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def np_block_diag(*arrays):
    blocks = [np.atleast_2d(a) if a.ndim < 2 else a for a in arrays]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def np_cartesian(*arrays):
    return np.array(list(itertools.product(*arrays))).reshape(-1, len(arrays))


def np_combinations(x, r, replace=False):
    pick = itertools.combinations_with_replacement if replace else itertools.combinations
    return np.array(list(pick(x, r)), dtype=x.dtype).reshape(-1, r)


def with_zero(rng, dtype, shapes):
    """A vector holding an exact 0: the powers' gradient must be exact there."""
    x = rng.uniform(-1.5, 1.5, shapes[0]).astype(dtype)
    x[1] = 0.0
    return [x]


def torch_vander(x, N=None, increasing=False):
    """torch.vander's own values, by a route whose backward works: in PyTorch 2.13
    ``torch.vander(x).sum().backward()`` raises (its cumprod writes into its own result,
    'modified by an inplace operation'). ``test_torch_vander_stand_in_is_torch_vander``
    checks the two give the same values."""
    N = x.shape[0] if N is None else N
    if N <= 1:
        return torch.vander(x, N, increasing)
    ones = torch.ones_like(x).unsqueeze(1)
    out = torch.cat([ones, torch.cumprod(x.unsqueeze(1).expand(-1, N - 1), 1)], 1)
    return out if increasing else out.flip(1)


def vander(lib, x, N=None, increasing=False):
    if lib is gradlab:
        return gradlab.vander(x, N, increasing)
    return torch_vander(x, N, increasing)


CASES = [
    OpCase("block_diag", lambda lib, a, b, c: lib.block_diag(a, b, c), ((2, 3), (1,), (2, 2)),
           numpy=lambda np, *a: np_block_diag(*a),
           variants=(((), (3,), (1, 2)), ((), (0, 2), (3, 1)), ((2, 0), (), (0, 2)))),
    OpCase("block_diag_one", lambda lib, a: lib.block_diag(a), ((3, 2),),
           numpy=lambda np, *a: np_block_diag(*a),
           variants=(((),), ((4,),))),
    OpCase("cartesian_prod", lambda lib, a, b, c: lib.cartesian_prod(a, b, c),
           ((3,), (2,), (4,)), numpy=lambda np, *a: np_cartesian(*a),
           variants=(((2,), (0,), (3,)),)),
    OpCase("cartesian_prod_two", lambda lib, a, b: lib.cartesian_prod(a, b), ((3,), (3,)),
           numpy=lambda np, *a: np_cartesian(*a)),
    OpCase("cartesian_prod_one", lambda lib, a: lib.cartesian_prod(a) * 1, ((4,),),
           numpy=lambda np, a: a),
    OpCase("combinations", lambda lib, x: lib.combinations(x), ((5,),),
           numpy=lambda np, x: np_combinations(x, 2), variants=(((1,),), ((0,),))),
    OpCase("combinations_r3", lambda lib, x: lib.combinations(x, r=3), ((5,),),
           numpy=lambda np, x: np_combinations(x, 3), variants=(((2,),),)),
    OpCase("combinations_r1", lambda lib, x: lib.combinations(x, 1), ((4,),),
           numpy=lambda np, x: np_combinations(x, 1)),
    OpCase("combinations_with_replacement",
           lambda lib, x: lib.combinations(x, 3, with_replacement=True), ((4,),),
           numpy=lambda np, x: np_combinations(x, 3, replace=True)),
    OpCase("vander", lambda lib, x: vander(lib, x), ((4,),), numpy=lambda np, x: np.vander(x),
           variants=(((2,),), ((0,),))),
    OpCase("vander_N_increasing", lambda lib, x: vander(lib, x, N=5, increasing=True), ((3,),),
           numpy=lambda np, x: np.vander(x, 5, increasing=True)),
    OpCase("vander_at_zero", lambda lib, x: vander(lib, x, 4), ((3,),), inputs=with_zero,
           numpy=lambda np, x: np.vander(x, 4)),
    OpCase("vander_one_column", lambda lib, x: vander(lib, x, 1), ((3,),), grad=False,
           numpy=lambda np, x: np.vander(x, 1), variants=(((1,),),)),  # ones: no gradient
    OpCase("rot90", lambda lib, x: lib.rot90(x), ((3, 4),), numpy=lambda np, x: np.rot90(x),
           variants=(((0, 3),), ((2, 3, 4),))),
    OpCase("rot90_method_minus1", lambda lib, x: x.rot90(-1), ((3, 4),),
           numpy=lambda np, x: np.rot90(x, -1)),
    OpCase("rot90_k2", lambda lib, x: lib.rot90(x, 2, [1, 2]), ((2, 3, 4),),
           numpy=lambda np, x: np.rot90(x, 2, (1, 2))),
    OpCase("rot90_k3_dims_20", lambda lib, x: lib.rot90(x, 3, (2, 0)), ((2, 3, 4),),
           numpy=lambda np, x: np.rot90(x, 3, (2, 0))),
    OpCase("rot90_k7_negative_dims", lambda lib, x: x.rot90(7, (-1, -3)), ((2, 3, 4),),
           numpy=lambda np, x: np.rot90(x, 7, (-1, -3))),
    OpCase("rot90_k0", lambda lib, x: lib.rot90(x, -8), ((3, 4),),
           numpy=lambda np, x: x),
    OpCase("atleast_1d", lambda lib, x: lib.atleast_1d(x) * 1, ((),),
           numpy=lambda np, x: np.atleast_1d(x), variants=(((3,),), ((2, 3),))),
    OpCase("atleast_2d", lambda lib, x: lib.atleast_2d(x) * 1, ((),),
           numpy=lambda np, x: np.atleast_2d(x), variants=(((3,),), ((2, 3),), ((2, 1, 3),))),
    OpCase("atleast_3d", lambda lib, x: lib.atleast_3d(x) * 1, ((),),
           numpy=lambda np, x: np.atleast_3d(x),
           variants=(((3,),), ((2, 3),), ((2, 1, 3),), ((0, 2),))),
    OpCase("atleast_3d_several", lambda lib, x, y: lib.atleast_3d(x, y), ((4,), (2, 3)),
           numpy=lambda np, x, y: np.atleast_3d(x, y)),
    OpCase("atleast_2d_list", lambda lib, x, y: lib.atleast_2d([x, y]), ((), (4,)),
           numpy=lambda np, x, y: np.atleast_2d(x, y)),
]

globals().update(standard_op_tests(CASES))


# --- the values each op is built from -----------------------------------------------------------

def test_block_diag_each_gradient_is_its_own_block():
    a = gradlab.randn(2, 3, requires_grad=True)
    b = gradlab.randn(4, requires_grad=True)
    grad = gradlab.arange(21.0).reshape(3, 7)
    gradlab.block_diag(a, b).backward(grad)
    np.testing.assert_array_equal(a.grad.numpy(), grad.numpy()[:2, :3])
    np.testing.assert_array_equal(b.grad.numpy(), grad.numpy()[2, 3:])


@needs_torch
@pytest.mark.parametrize("dtypes", [("int32", "bool"), ("int64", "float32"),
                                    ("float32", "float64"), ("bool", "bool")])
def test_block_diag_promotes_dtypes_as_pytorch(dtypes):
    ours = gradlab.block_diag(*(gradlab.ones(2, dtype=getattr(gradlab, d)) for d in dtypes))
    theirs = torch.block_diag(*(torch.ones(2, dtype=getattr(torch, d)) for d in dtypes))
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_block_diag_of_nothing_is_an_empty_matrix():
    out = gradlab.block_diag()
    assert tuple(out.shape) == (1, 0)
    assert out.dtype is gradlab.get_default_dtype()


def test_cartesian_prod_of_one_tensor_is_that_tensor():
    x = gradlab.arange(3.0)
    assert gradlab.cartesian_prod(x) is x


@needs_torch
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_integer_inputs_keep_or_widen_dtype_as_pytorch(dtype):
    values = [1, 0, 3]
    g = gradlab.tensor(values, dtype=getattr(gradlab, dtype))
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    for ours, theirs in [(gradlab.vander(g), torch.vander(t)),
                         (gradlab.vander(g, N=1), torch.vander(t, N=1)),
                         (gradlab.combinations(g, 2), torch.combinations(t, 2)),
                         (gradlab.cartesian_prod(g, g), torch.cartesian_prod(t, t)),
                         (gradlab.rot90(g.reshape(1, 3)), torch.rot90(t.reshape(1, 3)))]:
        assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@needs_torch
def test_empty_results_match_pytorch():
    x, tx = gradlab.arange(3.0), torch.arange(3.0)
    for ours, theirs in [(gradlab.combinations(x, 0), torch.combinations(tx, 0)),
                         (gradlab.combinations(x, 4), torch.combinations(tx, 4)),
                         (gradlab.combinations(x, 4, True), torch.combinations(tx, 4, True)),
                         (gradlab.vander(x, N=0), torch.vander(tx, N=0))]:
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")


@needs_torch
@pytest.mark.parametrize("N, increasing", [(None, False), (5, True), (4, False), (1, False)])
def test_torch_vander_stand_in_is_torch_vander(N, increasing):
    x = torch.tensor([0.5, 0.0, -2.0], dtype=torch.float64)
    torch.testing.assert_close(torch_vander(x, N, increasing), torch.vander(x, N, increasing))
    np.testing.assert_array_equal(gradlab.vander(gradlab.tensor(x.numpy()), N, increasing).numpy(),
                                  torch.vander(x, N, increasing).numpy())


def test_vander_gradient_is_exact_at_zero():
    x = gradlab.tensor([0.0, 2.0], requires_grad=True)
    gradlab.vander(x, N=4).sum().backward()
    # d/dx (x^3 + x^2 + x + 1) = 3x^2 + 2x + 1
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 17.0])


def test_rot90_k0_is_a_copy_not_the_input():
    x = gradlab.arange(6.0).reshape(2, 3)
    y = gradlab.rot90(x, 4)
    x.add_(1)
    np.testing.assert_array_equal(y.numpy(), np.arange(6.0).reshape(2, 3))


def test_atleast_returns_views_or_the_input_itself():
    s, v, m = gradlab.tensor(1.0), gradlab.arange(3.0), gradlab.ones(2, 3)
    one, two, three = gradlab.atleast_1d(s), gradlab.atleast_2d(v), gradlab.atleast_3d(m)
    s.add_(1), v.add_(1), m.add_(1)  # a view sees its base's writes
    np.testing.assert_array_equal(one.numpy(), [2.0])
    np.testing.assert_array_equal(two.numpy(), [[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(three.numpy(), np.full((2, 3, 1), 2.0))
    assert gradlab.atleast_1d(v) is v and gradlab.atleast_2d(m) is m
    t3 = gradlab.ones(1, 2, 3)
    assert gradlab.atleast_3d(t3) is t3


def test_atleast_takes_one_several_or_a_list():
    a, b = gradlab.tensor(1.0), gradlab.ones(2)
    assert isinstance(gradlab.atleast_2d(a), gradlab.Tensor)
    pair = gradlab.atleast_2d(a, b)
    assert isinstance(pair, tuple) and [tuple(p.shape) for p in pair] == [(1, 1), (1, 2)]
    listed = gradlab.atleast_1d([a])
    assert isinstance(listed, tuple) and tuple(listed[0].shape) == (1,)
    assert gradlab.atleast_3d() == ()


# --- properties over shapes, k and dims ---------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=2, max_size=4), k=st.integers(-9, 9),
       data=st.data())
def test_rot90_matches_numpy_and_four_turns_are_the_identity(shape, k, data):
    ndim = len(shape)
    d0 = data.draw(st.integers(-ndim, ndim - 1))
    d1 = data.draw(st.integers(-ndim, ndim - 1).filter(lambda d: d % ndim != d0 % ndim))
    x = np.random.default_rng(0).standard_normal(shape)
    t = gradlab.tensor(x)
    np.testing.assert_array_equal(gradlab.rot90(t, k, (d0, d1)).numpy(),
                                  np.rot90(x, k, (d0, d1)))
    back = gradlab.rot90(gradlab.rot90(t, k, (d0, d1)), -k, (d0, d1))
    np.testing.assert_array_equal(back.numpy(), x)


@settings(max_examples=30, deadline=None)
@given(shapes=st.lists(st.lists(st.integers(0, 3), max_size=2), min_size=1, max_size=4))
def test_block_diag_matches_numpy_and_gradients_are_the_blocks(shapes):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]
    tensors = [gradlab.tensor(a, requires_grad=True) for a in arrays]
    out = gradlab.block_diag(*tensors)
    want = np_block_diag(*arrays)
    np.testing.assert_array_equal(out.detach().numpy(), want)
    grad = rng.standard_normal(want.shape)
    out.backward(gradlab.tensor(grad))
    r = c = 0
    for a, t in zip(arrays, tensors):
        rows, cols = (1, 1) if a.ndim == 0 else (1, a.shape[0]) if a.ndim == 1 else a.shape
        np.testing.assert_array_equal(t.grad.numpy(),
                                      grad[r:r + rows, c:c + cols].reshape(a.shape))
        r, c = r + rows, c + cols


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 6), r=st.integers(1, 4), replace=st.booleans())
def test_combinations_count_and_gradient_count_each_use(n, r, replace):
    x = gradlab.arange(float(n)).requires_grad_()
    out = gradlab.combinations(x, r, with_replacement=replace)
    count = math.comb(n + r - 1, r) if replace else math.comb(n, r)
    assert tuple(out.shape) == (count, r)
    if n:
        out.sum().backward()  # each element's gradient: how often it appears
        uses = np.bincount(np_combinations(np.arange(n), r, replace).ravel(), minlength=n)
        np.testing.assert_array_equal(x.grad.numpy(), uses)


# --- errors that teach -------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.block_diag(gradlab.ones(2), gradlab.ones(1, 2, 3)), RuntimeError,
     r"block_diag: .*2 or fewer dims, but input 1 has shape \(1, 2, 3\)"),
    (lambda: gradlab.block_diag(gradlab.ones(2), [1.0]), TypeError,
     r"block_diag: expected a Tensor, but input 1 is a list"),
    (lambda: gradlab.cartesian_prod(gradlab.ones(2), gradlab.ones(2, 2)), RuntimeError,
     r"cartesian_prod: expects 1-D tensors, but input 1 has shape \(2, 2\).*reshape\(-1\)"),
    (lambda: gradlab.cartesian_prod(), RuntimeError, r"cartesian_prod: .*at least one"),
    (lambda: gradlab.cartesian_prod(gradlab.ones(2), gradlab.ones(2, dtype=gradlab.int64)),
     RuntimeError, r"same dtype"),
    (lambda: gradlab.combinations(gradlab.ones(3), -1), RuntimeError,
     r"combinations: r .* must be >= 0, got r = -1"),
    (lambda: gradlab.combinations(gradlab.ones(2, 2)), RuntimeError,
     r"combinations: expects 1-D tensors, but input 0 has shape \(2, 2\)"),
    (lambda: gradlab.vander(gradlab.ones(2, 2)), RuntimeError,
     r"vander: x must be a 1-D tensor, got shape \(2, 2\)"),
    (lambda: gradlab.vander(gradlab.tensor(1.0)), RuntimeError, r"vander: .*shape \(\)"),
    (lambda: gradlab.vander(gradlab.ones(3), N=-1), RuntimeError,
     r"vander: N .* must be >= 0, got N = -1"),
    (lambda: gradlab.rot90(gradlab.ones(2, 2), 1, (0, 0)), RuntimeError,
     r"rot90: the rotation dims must be different, got dim0 = 0 and dim1 = 0"),
    (lambda: gradlab.ones(2, 2, 2).rot90(1, (1, -2)), RuntimeError,
     r"rot90: the rotation dims must be different, got dim0 = 1 and dim1 = -2"),
    (lambda: gradlab.rot90(gradlab.ones(2, 2), 1, (0,)), RuntimeError,
     r"rot90: expected exactly 2 rotation dims.*dims = \(0,\)"),
    (lambda: gradlab.rot90(gradlab.ones(3)), RuntimeError,
     r"rot90: needs a tensor with at least 2 dims, got shape \(3,\).*atleast_2d"),
    (lambda: gradlab.rot90(gradlab.ones(2, 3), 1, (0, 5)), IndexError, r"rot90"),
    (lambda: gradlab.atleast_2d(3.0), TypeError,
     r"atleast_2d: expected a Tensor, but the input is a float"),
    (lambda: gradlab.atleast_3d([gradlab.ones(1), 2]), TypeError,
     r"atleast_3d: expected a Tensor, but input 1 is a int"),
])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
