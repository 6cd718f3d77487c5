"""matrix_exp, matrix_power, pinverse, chain_matmul, addr, vdot: vs NumPy and PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def _well_conditioned(rng, dtype, shapes):
    """Square matrices near 2·I (invertible, moderate powers); other inputs plain normal."""
    out = []
    for s in shapes:
        a = rng.uniform(-0.5, 0.5, s)
        if len(s) >= 2 and s[-1] == s[-2]:
            a = a + 2 * np.eye(s[-1])
        out.append(a.astype(dtype))
    return out


def _numpy_power(n):
    def reference(np, a):
        return np.linalg.matrix_power(a, n)
    return reference


def _numpy_pinv(np, a):
    return np.linalg.pinv(a, rcond=1e-15)


def _numpy_expm(np, a):
    """e^A by the eigendecomposition (fine for the random, diagonalisable test matrices)."""
    values, vectors = np.linalg.eig(a)
    return np.real(vectors @ (np.exp(values)[..., None] * np.linalg.inv(vectors)))


CASES = [
    OpCase("matrix_exp", lambda lib, a: lib.matrix_exp(a), ((3, 3),), numpy=_numpy_expm,
           variants=(((2, 2, 2),), ((1, 1),))),
    OpCase("matrix_exp_large_norm", lambda lib, a: a.matrix_exp(), ((3, 3),),
           numpy=_numpy_expm, domain=(-3, 3), rtol=1e-7, gradgrad=False),
    OpCase("matrix_power_3", lambda lib, a: lib.matrix_power(a, 3), ((2, 3, 3),),
           numpy=_numpy_power(3)),
    OpCase("matrix_power_6", lambda lib, a: a.matrix_power(6), ((3, 3),),
           numpy=_numpy_power(6), inputs=_well_conditioned),
    OpCase("matrix_power_0", lambda lib, a: lib.matrix_power(a, 0), ((2, 3, 3),),
           numpy=_numpy_power(0)),
    OpCase("matrix_power_1", lambda lib, a: lib.matrix_power(a, 1), ((3, 3),),
           numpy=_numpy_power(1)),
    OpCase("matrix_power_neg", lambda lib, a: lib.matrix_power(a, -2), ((3, 3),),
           numpy=_numpy_power(-2), inputs=_well_conditioned),
    OpCase("pinverse_wide", lambda lib, a: lib.pinverse(a), ((3, 4),), numpy=_numpy_pinv),
    OpCase("pinverse_tall_batch", lambda lib, a: a.pinverse(), ((2, 4, 3),),
           numpy=_numpy_pinv),
    OpCase("chain_matmul", lambda lib, a, b, c: lib.chain_matmul(a, b, c),
           ((2, 3), (3, 4), (4, 2)), numpy=lambda np, a, b, c: a @ b @ c),
    OpCase("chain_matmul_one", lambda lib, a: lib.chain_matmul(a), ((2, 3),),
           numpy=lambda np, a: a),
    OpCase("addr", lambda lib, m, u, v: lib.addr(m, u, v), ((3, 4), (3,), (4,)),
           numpy=lambda np, m, u, v: m + np.outer(u, v), variants=(((4,), (3,), (4,)),)),
    OpCase("addr_scaled", lambda lib, m, u, v: m.addr(u, v, beta=0.5, alpha=-2.0),
           ((3, 1), (3,), (4,)), numpy=lambda np, m, u, v: 0.5 * m - 2 * np.outer(u, v)),
    OpCase("addr_beta0", lambda lib, m, u, v: lib.addr(m, u, v, beta=0), ((3, 4), (3,), (4,)),
           numpy=lambda np, m, u, v: np.outer(u, v)),
    OpCase("vdot", lambda lib, u, v: lib.vdot(u, v), ((5,), (5,)),
           numpy=lambda np, u, v: np.vdot(u, v), variants=(((0,), (0,)),)),
    OpCase("vdot_method", lambda lib, u, v: u.vdot(v), ((4,), (4,)),
           numpy=lambda np, u, v: np.vdot(u, v)),
]

globals().update(standard_op_tests(CASES))


@needs_torch
def test_matrix_exp_across_scales_and_special_matrices():
    rng = np.random.default_rng(3)
    for scale in (1e-8, 1e-2, 1.0, 30.0):
        a = rng.standard_normal((3, 4, 4)) * scale
        ours = gradlab.matrix_exp(gradlab.tensor(a)).numpy()
        theirs = torch.matrix_exp(torch.tensor(a)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-300)
    rotation = gradlab.tensor([[0.0, -math.pi / 2], [math.pi / 2, 0.0]], dtype=gradlab.float64)
    # a quarter turn
    np.testing.assert_allclose(gradlab.matrix_exp(rotation).numpy(), [[0, -1], [1, 0]],
                               atol=1e-15)
    assert gradlab.matrix_exp(gradlab.zeros(0, 0)).shape == (0, 0)
    assert gradlab.matrix_exp(gradlab.tensor([[math.inf]])).item() == math.inf


@settings(max_examples=20, deadline=None)
@given(st.integers(-3, 7), st.lists(st.integers(1, 3), max_size=2), st.integers(1, 4))
def test_matrix_power_matches_repeated_products(n, batch, size):
    rng = np.random.default_rng(0)
    a = rng.uniform(-0.5, 0.5, (*batch, size, size)) + 2 * np.eye(size)
    got = gradlab.matrix_power(gradlab.tensor(a), n).numpy()
    np.testing.assert_allclose(got, np.linalg.matrix_power(a, n), rtol=1e-10, atol=1e-12)


def test_integer_matrix_power_and_addr():
    ones = gradlab.ones(2, 2, dtype=gradlab.int64)
    assert gradlab.matrix_power(ones, 3).tolist() == [[4, 4], [4, 4]]
    assert gradlab.matrix_power(ones, 3).dtype is gradlab.int64
    out = gradlab.addr(ones, gradlab.tensor([1, 2]), gradlab.tensor([3, 4]), beta=2, alpha=3)
    assert out.tolist() == [[11, 14], [20, 26]] and out.dtype is gradlab.int64


def test_addr_with_beta_zero_ignores_nan_input_and_passes_it_zero_gradient():
    m = gradlab.full((2, 3), math.nan, requires_grad=True)
    out = gradlab.addr(m, gradlab.ones(2), gradlab.ones(3), beta=0)
    assert out.tolist() == [[1.0] * 3] * 2
    out.sum().backward()
    assert m.grad.tolist() == [[0.0] * 3] * 2


def test_errors_name_the_op_and_the_fix():
    with pytest.raises(RuntimeError, match=r"matrix_exp: expected square matrices.*\(2, 3\)"):
        gradlab.matrix_exp(gradlab.ones(2, 3))
    with pytest.raises(TypeError, match=r"matrix_power: n must be an int, got 0.5.*matrix_exp"):
        gradlab.matrix_power(gradlab.ones(2, 2), 0.5)
    with pytest.raises(RuntimeError, match=r"matrix_power: expected square matrices.*\(2, 3\)"):
        gradlab.matrix_power(gradlab.ones(2, 3), 2)
    with pytest.raises(TypeError, match=r"matrix_power: expected a Tensor, got list"):
        gradlab.matrix_power([[1.0]], 2)
    with pytest.raises(RuntimeError, match=r"matrix_power: the input matrix.*singular"):
        gradlab.matrix_power(gradlab.zeros(2, 2), -1)
    with pytest.raises(RuntimeError, match=r"pinverse: expected a matrix"):
        gradlab.pinverse(gradlab.ones(3))
    with pytest.raises(RuntimeError, match=r"chain_matmul: expected one or more matrices"):
        gradlab.chain_matmul()
    with pytest.raises(RuntimeError, match=r"chain_matmul: every argument must be a 2-D "
                                           r"matrix, but argument 1 has shape \(2,\)"):
        gradlab.chain_matmul(gradlab.ones(2, 2), gradlab.ones(2))
    with pytest.raises(RuntimeError, match=r"chain_matmul: matrices 0 and 1 with shapes "
                                           r"\(2, 2\) and \(3, 2\) can't be multiplied"):
        gradlab.chain_matmul(gradlab.ones(2, 2), gradlab.ones(3, 2))
    with pytest.raises(TypeError, match=r"chain_matmul: argument 0 must be a Tensor"):
        gradlab.chain_matmul([[1.0]], gradlab.ones(1, 1))
    with pytest.raises(RuntimeError, match=r"addr: vec1 must be 1-D.*flatten"):
        gradlab.addr(gradlab.ones(2, 3), gradlab.ones(2, 1), gradlab.ones(3))
    with pytest.raises(RuntimeError, match=r"addr: input of shape \(2, 2\) doesn't broadcast "
                                           r"to the outer product's shape \(2, 3\)"):
        gradlab.addr(gradlab.ones(2, 2), gradlab.ones(2), gradlab.ones(3))
    with pytest.raises(RuntimeError, match=r"addr: for integer tensors.*alpha=0.5"):
        ints = gradlab.ones(2, dtype=gradlab.int64)
        gradlab.addr(gradlab.ones(2, 2, dtype=gradlab.int64), ints, ints, alpha=0.5)
    with pytest.raises(TypeError, match=r"addr: vec2 must be a Tensor"):
        gradlab.addr(gradlab.ones(2, 2), gradlab.ones(2), [1.0, 2.0])
    with pytest.raises(TypeError, match=r"addr: input must be a Tensor"):
        gradlab.addr(1.0, gradlab.ones(2), gradlab.ones(2))
    with pytest.raises(RuntimeError, match=r"vdot: expects two 1-D tensors.*flatten"):
        gradlab.vdot(gradlab.ones(2, 2), gradlab.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"vdot: the vectors have different lengths, 2 and 3"):
        gradlab.vdot(gradlab.ones(2), gradlab.ones(3))
    with pytest.raises(RuntimeError, match=r"vdot: expected both vectors to have the same "
                                           r"dtype.*other.to"):
        gradlab.vdot(gradlab.ones(2), gradlab.ones(2, dtype=gradlab.float64))
    with pytest.raises(TypeError, match=r"vdot: other must be a Tensor"):
        gradlab.vdot(gradlab.ones(2), [1.0, 2.0])
