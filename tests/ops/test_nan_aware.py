"""fmax, fmin (NaN means missing), isposinf, isneginf, isreal: vs NumPy and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import gradlab
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

BIN_VARIANTS = (((), ()), ((0, 3), (3,)), ((2, 1, 4), (3, 1)))


def _one_side_nan(rng, dtype, shapes):
    """NaN in b where a is a number, and in a where b is one (never both: gradcheck's finite
    differences need a number out)."""
    a, b = (rng.uniform(-2, 2, s).astype(dtype) for s in shapes)
    a.flat[::5] = np.nan
    b.flat[2::5] = np.nan
    return [a, b]


def _specials(rng, dtype, shapes):
    x = rng.uniform(-2, 2, shapes[0]).astype(dtype)
    x.flat[::3] = np.inf
    x.flat[1::4] = -np.inf
    x.flat[2::7] = np.nan
    return [x]


CASES = [
    OpCase("fmax", lambda lib, a, b: lib.fmax(a, b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.fmax(a, b), variants=BIN_VARIANTS),
    OpCase("fmin", lambda lib, a, b: a.fmin(b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.fmin(a, b), variants=BIN_VARIANTS),
    OpCase("fmax_nan", lambda lib, a, b: lib.fmax(a, b), ((4, 5), (4, 5)),
           numpy=lambda np, a, b: np.fmax(a, b), inputs=_one_side_nan),
    OpCase("fmin_nan", lambda lib, a, b: lib.fmin(a, b), ((4, 5), (4, 5)),
           numpy=lambda np, a, b: np.fmin(a, b), inputs=_one_side_nan),
    OpCase("isposinf", lambda lib, x: lib.isposinf(x), ((4, 5),),
           numpy=lambda np, x: np.isposinf(x), inputs=_specials, grad=False),
    OpCase("isneginf", lambda lib, x: x.isneginf(), ((4, 5),),
           numpy=lambda np, x: np.isneginf(x), inputs=_specials, grad=False),
    OpCase("isreal", lambda lib, x: lib.isreal(x), ((4, 5),),
           numpy=lambda np, x: np.isreal(x), inputs=_specials, grad=False),
]

globals().update(standard_op_tests(CASES))


@needs_torch
@pytest.mark.parametrize("op", ["fmax", "fmin"])
def test_ties_and_double_nan_gradients_match_torch(op):
    """A tie sends the whole gradient to the first input (maximum would split it); where
    both are NaN the result is NaN and the first input gets the gradient."""
    a = np.array([1.0, 2.0, np.nan, np.nan, 3.0, -1.0])
    b = np.array([1.0, np.nan, 5.0, np.nan, 4.0, -1.0])
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    ours = [gradlab.tensor(v, requires_grad=True) for v in (a, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b)]
    out_g = getattr(gradlab, op)(*ours)
    out_t = getattr(torch, op)(*theirs)
    np.testing.assert_array_equal(out_g.detach().numpy(), out_t.detach().numpy())
    out_g.backward(gradlab.tensor(g))
    out_t.backward(torch.tensor(g))
    for x, y in zip(ours, theirs):
        np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())
    assert ours[0].grad.numpy()[0] == 1.0 and ours[1].grad.numpy()[0] == 0.0  # the tie


def test_fmax_differs_from_maximum_only_at_nan():
    a = gradlab.tensor([np.nan, 1.0, 2.0])
    b = gradlab.tensor([0.5, np.nan, 1.0])
    assert gradlab.fmax(a, b).tolist() == [0.5, 1.0, 2.0]
    assert np.isnan(gradlab.maximum(a, b).numpy()[:2]).all()


def test_integer_inputs_keep_their_dtype_and_promote():
    a = gradlab.tensor([1, 5, 3])
    b = gradlab.tensor([4, 2, 3])
    assert gradlab.fmax(a, b).tolist() == [4, 5, 3] and gradlab.fmax(a, b).dtype is gradlab.int64
    mixed = gradlab.fmin(a, b.double())
    assert mixed.dtype is gradlab.float64 and mixed.tolist() == [1.0, 2.0, 3.0]


def test_infinity_tests_on_integers_are_false_and_isreal_true():
    x = gradlab.tensor([[1, -2], [0, 7]])
    assert not gradlab.isposinf(x).any().item() and not gradlab.isneginf(x).any().item()
    assert gradlab.isreal(x).all().item() and gradlab.isreal(x).dtype is gradlab.bool
    assert gradlab.isposinf(x).shape == (2, 2)


@settings(max_examples=25, deadline=None)
@given(mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
def test_fmax_broadcasts_and_gradients_sum_back(shapes):
    a_shape, b_shape = shapes.input_shapes
    rng = np.random.default_rng(0)
    a = gradlab.tensor(rng.standard_normal(a_shape), requires_grad=True)
    b = gradlab.tensor(rng.standard_normal(b_shape), requires_grad=True)
    out = gradlab.fmax(a, b)
    assert tuple(out.shape) == shapes.result_shape
    out.sum().backward()
    # each output element's gradient goes to exactly one input
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    assert np.isclose(a.grad.sum().item() + b.grad.sum().item(), out.numel())


def test_errors_name_the_op_and_the_fix():
    x = gradlab.ones(3)
    with pytest.raises(TypeError, match=r"fmax: other must be a Tensor, got float.*clamp"):
        gradlab.fmax(x, 1.0)
    with pytest.raises(RuntimeError, match=r"fmin: bool tensors have no order.*logical_or"):
        gradlab.fmin(x > 0, x > 1)
    with pytest.raises(TypeError, match=r"isposinf: input must be a Tensor, got list"):
        gradlab.isposinf([1.0])
    with pytest.raises(TypeError, match=r"isreal: input must be a Tensor"):
        gradlab.isreal(1.0)
    with pytest.raises(RuntimeError, match=r"fmax: shapes \(3,\) and \(2,\) can't be broadcast"):
        gradlab.fmax(x, gradlab.ones(2))
