"""dist, frobenius_norm, nuclear_norm: vs NumPy and PyTorch (values and gradients)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import gradlab
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

BIN = ((3, 4), (3, 4))
BCAST = ((2, 1, 4), (3, 1))


def _dist_numpy(p):
    def reference(np, a, b):
        d = np.abs(a - b).ravel()
        if p == 0:
            return np.count_nonzero(d) * 1.0
        if math.isinf(p):
            return d.max() if p > 0 else d.min()
        return (d ** p).sum() ** (1 / p)
    return reference


def _dist(p):
    # p = 0 counts nonzeros: no gradient, and PyTorch's node hands back none at all (its
    # autograd.grad fails on it), so that row checks values; the test below checks the grad
    return OpCase(f"dist_p{p}", lambda lib, a, b: lib.dist(a, b, p), BIN,
                  numpy=_dist_numpy(p), variants=(BCAST,), grad=p != 0)


def _quiet(fn):
    """PyTorch warns that frobenius_norm is deprecated; the warning is not under test."""
    def run(lib, *xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib, *xs)
    return run


CASES = [
    OpCase("dist", lambda lib, a, b: lib.dist(a, b), BIN, numpy=_dist_numpy(2),
           variants=(((), ()), BCAST)),
    OpCase("dist_method", lambda lib, a, b: a.dist(b, 3), BIN, numpy=_dist_numpy(3)),
    *[_dist(p) for p in (1, 0, math.inf, -math.inf, -1.5)],
    OpCase("frobenius_norm", _quiet(lambda lib, x: lib.frobenius_norm(x, (0, 1))), ((3, 4),),
           numpy=lambda np, x: np.sqrt((x * x).sum())),
    OpCase("frobenius_norm_dims", _quiet(lambda lib, x: lib.frobenius_norm(x, (1, -1), True)),
           ((2, 3, 4),), numpy=lambda np, x: np.sqrt((x * x).sum((1, 2), keepdims=True))),
    OpCase("frobenius_norm_one_dim", _quiet(lambda lib, x: lib.frobenius_norm(x, 0)),
           ((3, 4),), numpy=lambda np, x: np.sqrt((x * x).sum(0))),
    OpCase("nuclear_norm", _quiet(lambda lib, x: lib.nuclear_norm(x)), ((3, 4),),
           numpy=lambda np, x: np.linalg.svd(x, compute_uv=False).sum(), jvp=False),
    # (jvp=False: linalg.svdvals, which the nuclear norm is built on, has no tangent rule yet)
    OpCase("nuclear_norm_dims", _quiet(lambda lib, x: lib.nuclear_norm(x, (0, 2), keepdim=True)),
           ((3, 2, 4),), jvp=False,
           numpy=lambda np, x: np.linalg.svd(x.transpose(1, 0, 2), compute_uv=False)
           .sum(-1)[None, :, None]),
]

globals().update(standard_op_tests(CASES))


@needs_torch
@pytest.mark.parametrize("p", [-1.0, -math.inf, 2.0, math.inf])
def test_dist_at_a_zero_difference_matches_torch(p):
    """A zero difference: 0 with gradient 0 for p = 2 and p < 0; a tie for p = ±inf splits
    the gradient evenly."""
    a = np.array([1.0, -2.0, 2.0, 0.5])
    b = np.array([1.0, 0.0, 0.0, 0.5])
    ours = gradlab.tensor(a, requires_grad=True)
    theirs = torch.tensor(a, requires_grad=True)
    out_g = gradlab.dist(ours, gradlab.tensor(b), p)
    out_t = torch.dist(theirs, torch.tensor(b), p)
    assert out_g.item() == pytest.approx(out_t.item(), rel=1e-14)
    out_g.backward()
    out_t.backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-14)


def test_dist_with_p_zero_passes_no_gradient():
    a = gradlab.tensor([1.0, 2.0, 0.0], requires_grad=True)
    out = gradlab.dist(a, gradlab.tensor([1.0, 0.0, 3.0]), 0)
    assert out.item() == 2.0
    (grad,) = gradlab.autograd.grad(out, a, allow_unused=True)
    assert grad is None or not grad.any().item()


def test_dist_promotes_and_nuclear_norm_takes_keepdim_as_second_argument():
    a = gradlab.tensor([3.0, 0.0], dtype=gradlab.float32)
    assert gradlab.dist(a, gradlab.tensor([0.0, 4.0], dtype=gradlab.float64)).dtype \
        is gradlab.float64
    m = gradlab.tensor([[3.0, 0.0], [0.0, -4.0]])
    assert gradlab.nuclear_norm(m, True).shape == (1, 1)
    assert gradlab.nuclear_norm(m).item() == pytest.approx(7.0)
    assert gradlab.frobenius_norm(m, ()).item() == pytest.approx(5.0)


@settings(max_examples=20, deadline=None)
@given(mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
def test_dist_is_the_norm_of_the_broadcast_difference(shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s) for s in shapes.input_shapes)
    got = gradlab.dist(gradlab.tensor(a), gradlab.tensor(b)).item()
    assert got == pytest.approx(np.sqrt(((a - b) ** 2).sum()), rel=1e-12, abs=1e-300)


def test_errors_name_the_op_and_the_fix():
    x = gradlab.ones(3)
    with pytest.raises(TypeError, match=r"dist: other must be a Tensor, got float"):
        gradlab.dist(x, 1.0)
    with pytest.raises(TypeError, match=r"dist: p must be a number.*'fro'"):
        gradlab.dist(x, x, "fro")
    with pytest.raises(RuntimeError, match=r"dist: expected floating point.*int64.*\.float\(\)"):
        gradlab.dist(gradlab.tensor([1, 2]), gradlab.tensor([3, 4]))
    with pytest.raises(RuntimeError, match=r"dist: shapes \(3,\) and \(2,\) don't broadcast"):
        gradlab.dist(x, gradlab.ones(2))
    with pytest.raises(RuntimeError, match=r"dist: p is NaN"):
        gradlab.dist(x, x, math.nan)
    with pytest.raises(RuntimeError, match=r"frobenius_norm: dim takes at most 2 dims.*"
                                           r"vector_norm"):
        gradlab.frobenius_norm(gradlab.ones(2, 2, 2), (0, 1, 2))
    with pytest.raises(TypeError, match=r"frobenius_norm: dim must be an int or a tuple"):
        gradlab.frobenius_norm(x, "all")
    with pytest.raises(TypeError, match=r"frobenius_norm: input must be a Tensor"):
        gradlab.frobenius_norm([1.0], 0)
    with pytest.raises(RuntimeError, match=r"frobenius_norm: expected a floating point"):
        gradlab.frobenius_norm(gradlab.tensor([1, 2]), 0)
    with pytest.raises(RuntimeError, match=r"nuclear_norm: needs a matrix.*\(3,\)"):
        gradlab.nuclear_norm(x)
    with pytest.raises(RuntimeError, match=r"nuclear_norm: dim must name 2 dims"):
        gradlab.nuclear_norm(gradlab.ones(2, 2), (0,))
    with pytest.raises(TypeError, match=r"nuclear_norm: input must be a Tensor"):
        gradlab.nuclear_norm([[1.0]])
