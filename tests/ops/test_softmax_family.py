"""softmax, log_softmax and logsumexp: forward vs NumPy, gradcheck, values and gradients vs
PyTorch, stability for large inputs, one node each, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradlab
from tests.ops.test_reduction import check_hessian_vector_product
from tests.oracle import (
    EMPTY,
    SCALAR,
    M,
    OpCase,
    T,
    standard_op_tests,
    torch,
)

INF = math.inf


# --- NumPy references -------------------------------------------------------------------------

def np_softmax(np, x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def np_log_softmax(np, x, dim):
    s = x - x.max(axis=dim, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=dim, keepdims=True))


def np_logsumexp(np, x, axis, keepdims=False):
    m = x.max(axis=axis, keepdims=True)
    out = np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


# --- the table --------------------------------------------------------------------------------

ALL = [
    OpCase("logsumexp_dim", lambda lib, x: x.logsumexp(1), M,
           numpy=lambda np, x: np_logsumexp(np, x, 1), variants=(EMPTY,)),
    OpCase("logsumexp_tuple_keepdim", lambda lib, x: lib.logsumexp(x, (0, -1), keepdim=True), T,
           numpy=lambda np, x: np_logsumexp(np, x, (0, 2), True)),
    OpCase("logsumexp_0d", lambda lib, x: lib.logsumexp(x, 0), SCALAR, numpy=lambda np, x: x),
    OpCase("logsumexp_large", lambda lib, x: x.logsumexp(-1), M,
           numpy=lambda np, x: np_logsumexp(np, x, -1), domain=(500.0, 1000.0)),
    OpCase("softmax_last", lambda lib, x: x.softmax(-1), M,
           numpy=lambda np, x: np_softmax(np, x, -1), variants=(EMPTY,)),
    OpCase("softmax_dim0", lambda lib, x: lib.softmax(x, 0), T,
           numpy=lambda np, x: np_softmax(np, x, 0)),
    OpCase("softmax_0d", lambda lib, x: lib.softmax(x, 0), SCALAR,
           numpy=lambda np, x: np.ones_like(x)),
    OpCase("softmax_dtype", lambda lib, x: lib.softmax(x, 1, dtype=lib.float64), M,
           numpy=lambda np, x: np_softmax(np, x, 1)),
    OpCase("softmax_large", lambda lib, x: x.softmax(1), M,
           numpy=lambda np, x: np_softmax(np, x, 1), domain=(-1000.0, 1000.0), atol=1e-4),
    OpCase("log_softmax_last", lambda lib, x: x.log_softmax(-1), M,
           numpy=lambda np, x: np_log_softmax(np, x, -1), variants=(EMPTY,)),
    OpCase("log_softmax_mid", lambda lib, x: lib.log_softmax(x, -2), T,
           numpy=lambda np, x: np_log_softmax(np, x, 1)),
    OpCase("log_softmax_0d", lambda lib, x: lib.log_softmax(x, -1), SCALAR,
           numpy=lambda np, x: np.zeros_like(x)),
    OpCase("log_softmax_large", lambda lib, x: lib.log_softmax(x, 0), M,
           numpy=lambda np, x: np_log_softmax(np, x, 0), domain=(-1000.0, 1000.0)),
]


globals().update(standard_op_tests(ALL))


# --- large values, graph, dtype ---------------------------------------------------------------

@pytest.mark.parametrize("op", ["softmax", "log_softmax", "logsumexp"])
def test_large_inputs_stay_finite(op):
    vals = [[1000.0, 0.0, -1000.0], [1000.0, 1000.0, 999.0]]
    x = gradlab.tensor(vals, requires_grad=True)
    y = getattr(x, op)(1)
    (y * gradlab.arange(1.0, 1.0 + y.shape[-1])).sum().backward()
    assert np.isfinite(y.detach().numpy()).all() and np.isfinite(x.grad.numpy()).all()
    if op == "softmax":
        np.testing.assert_allclose(y.sum(1).detach().numpy(), [1.0, 1.0], rtol=1e-6)
    if torch is not None:
        t = torch.tensor(vals, requires_grad=True)
        yt = getattr(t, op)(1)
        (yt * torch.arange(1.0, 1.0 + yt.shape[-1])).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_logsumexp_of_all_minus_infinity_is_minus_infinity():
    x = gradlab.tensor([-INF, -INF])
    assert x.logsumexp(0).item() == -INF
    assert gradlab.logsumexp(gradlab.zeros(2, 0), 1).tolist() == [-INF, -INF]


@pytest.mark.parametrize("op,op_name,node", [
    ("softmax", "softmax", "SoftmaxBackward0"),
    ("log_softmax", "log_softmax", "LogSoftmaxBackward0"),
])
def test_softmax_is_one_node(op, op_name, node):
    x = gradlab.randn(2, 3, requires_grad=True)
    y = getattr(gradlab, op)(x, dim=1)
    assert y.grad_fn.op == op_name and y.grad_fn.name() == node
    ((leaf, _),) = y.grad_fn.next_functions[:1]
    assert leaf.name() == "AccumulateGrad"  # straight from x: no exp/sum/div nodes between


def test_dtype_argument_keeps_the_gradient_flowing():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    y = gradlab.softmax(x, 0, dtype=gradlab.float64)
    (y * gradlab.tensor([0.0, 1.0], dtype=gradlab.float64)).sum().backward()
    assert x.grad.dtype is gradlab.float32
    p = 1 / (1 + math.exp(-1))
    np.testing.assert_allclose(x.grad.numpy(), [-p * (1 - p), p * (1 - p)], rtol=1e-5)


# --- errors that teach ------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["softmax", "log_softmax", "logsumexp"])
def test_missing_dim_is_an_error_that_teaches(op):
    with pytest.raises(TypeError, match=rf"{op}: dim is required.*{op}\(x, dim=-1\)"):
        getattr(gradlab, op)(gradlab.ones(2, 3))
    with pytest.raises(TypeError, match="dim is required"):
        getattr(gradlab.ones(2, 3), op)()


# --- properties ------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
       data=st.data(), shift=st.floats(-50, 50))
def test_softmax_sums_to_one_and_ignores_shifts(shape, data, shift):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x_np = np.random.default_rng(0).standard_normal(shape)
    y = gradlab.tensor(x_np).softmax(dim).numpy()
    np.testing.assert_allclose(y.sum(axis=dim), 1.0, rtol=1e-12)
    np.testing.assert_allclose(gradlab.tensor(x_np + shift).softmax(dim).numpy(), y,
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gradlab.tensor(x_np).log_softmax(dim).numpy(), np.log(y),
                               rtol=1e-9, atol=1e-12)


WEIGHTS = np.linspace(-1.0, 2.0, 12).reshape(3, 4)  # softmax sums to 1: weigh it to see H


@pytest.mark.parametrize("f", [
    lambda lib, x: x.logsumexp(1),
    lambda lib, x: lib.logsumexp(x, (0, 1), keepdim=True),
    lambda lib, x: x.softmax(1) * lib.tensor(WEIGHTS),
    lambda lib, x: x.log_softmax(0) * lib.tensor(WEIGHTS),
], ids=["logsumexp", "logsumexp_all", "softmax", "log_softmax"])
def test_forward_over_reverse_gives_hessian_vector_products(f):
    check_hessian_vector_product(f, (3, 4))
