"""var, std, var_mean, std_mean and norm: forward vs NumPy, gradcheck, values and gradients vs
PyTorch, the points where PyTorch defines the gradient specially, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from tests.ops.test_reduction import check_hessian_vector_product
from tests.oracle import (
    EMPTY,
    SCALAR,
    M,
    OpCase,
    T,
    away_from_zero_small,
    needs_torch,
    standard_op_tests,
    torch,
)

INF = math.inf


def np_norm(np, x, p, axis=None, keepdims=False):
    a = np.abs(x)
    if p == INF:
        return a.max(axis=axis, keepdims=keepdims)
    if p == -INF:
        return a.min(axis=axis, keepdims=keepdims)
    if p == 0:
        return (x != 0).sum(axis=axis, keepdims=keepdims).astype(x.dtype)
    return (a ** p).sum(axis=axis, keepdims=keepdims) ** (1 / p)


# --- the table --------------------------------------------------------------------------------

SPREAD = [
    OpCase("var_all", lambda lib, x: x.var(), M, numpy=lambda np, x: x.var(ddof=1)),
    OpCase("var_dim_biased", lambda lib, x: x.var(1, unbiased=False), M,
           numpy=lambda np, x: x.var(1)),
    OpCase("var_positional_unbiased", lambda lib, x: lib.var(x, -1, False, True), T,
           numpy=lambda np, x: x.var(-1, keepdims=True)),
    OpCase("var_correction_tuple", lambda lib, x: x.var((0, -1), correction=2, keepdim=True),
           T, numpy=lambda np, x: x.var((0, 2), ddof=2, keepdims=True)),
    OpCase("std_all", lambda lib, x: x.std(), M, numpy=lambda np, x: x.std(ddof=1)),
    OpCase("std_dim_correction0", lambda lib, x: lib.std(x, 0, correction=0), M,
           numpy=lambda np, x: x.std(0)),
    OpCase("std_tuple_keepdim", lambda lib, x: x.std((1, 2), keepdim=True), T,
           numpy=lambda np, x: x.std((1, 2), ddof=1, keepdims=True)),
    OpCase("var_mean", lambda lib, x: lib.var_mean(x, 1), M,
           numpy=lambda np, x: (x.var(1, ddof=1), x.mean(1))),
    OpCase("std_mean_keepdim", lambda lib, x: lib.std_mean(x, (0, 2), keepdim=True), T,
           numpy=lambda np, x: (x.std((0, 2), ddof=1, keepdims=True),
                                x.mean((0, 2), keepdims=True))),
]


NORM = [
    OpCase("norm_default", lambda lib, x: x.norm(), M,
           numpy=lambda np, x: np.sqrt((x * x).sum()), variants=(SCALAR, EMPTY)),
    OpCase("norm_fro_dim", lambda lib, x: lib.norm(x, "fro", dim=1), M,
           numpy=lambda np, x: np_norm(np, x, 2, 1)),
    OpCase("norm_2_tuple_keepdim", lambda lib, x: x.norm(2, dim=(0, -1), keepdim=True), T,
           numpy=lambda np, x: np_norm(np, x, 2, (0, 2), True)),
    OpCase("norm_1", lambda lib, x: x.norm(1, dim=0), M, numpy=lambda np, x: np_norm(np, x, 1, 0),
           inputs=away_from_zero_small),
    OpCase("norm_3", lambda lib, x: x.norm(3, -1), T, numpy=lambda np, x: np_norm(np, x, 3, -1),
           inputs=away_from_zero_small),
    OpCase("norm_half", lambda lib, x: x.norm(0.5), M, numpy=lambda np, x: np_norm(np, x, 0.5),
           inputs=away_from_zero_small),
    OpCase("norm_inf", lambda lib, x: x.norm(INF, dim=1), M,
           numpy=lambda np, x: np_norm(np, x, INF, 1), variants=(EMPTY,)),
    OpCase("norm_neg_inf", lambda lib, x: x.norm(-INF), M,
           numpy=lambda np, x: np_norm(np, x, -INF), inputs=away_from_zero_small),
    # gradgrad=False: a count sends no gradient at all (as PyTorch), so there is no
    # second derivative to check.
    OpCase("norm_0", lambda lib, x: x.norm(0, dim=0), M,
           numpy=lambda np, x: np_norm(np, x, 0, 0), inputs=away_from_zero_small, gradgrad=False),
    # torch.norm hands these to linalg.vector_norm / linalg.matrix_norm
    OpCase("norm_negative", lambda lib, x: x.norm(-1.5, dim=1), M,
           numpy=lambda np, x: (np.abs(x) ** -1.5).sum(1) ** (1 / -1.5),
           inputs=away_from_zero_small),
    OpCase("norm_nuc", lambda lib, x: lib.norm(x, "nuc"), M,
           numpy=lambda np, x: np.linalg.svd(x, compute_uv=False).sum(), variants=()),
    OpCase("norm_nuc_dims_keepdim", lambda lib, x: x.norm("nuc", dim=(0, 2), keepdim=True), T,
           numpy=lambda np, x: np.linalg.svd(x.transpose(1, 0, 2), compute_uv=False)
           .sum(-1)[None, :, None], variants=()),
]


ALL = SPREAD + NORM


globals().update(standard_op_tests(ALL))


# --- where the gradient is defined specially --------------------------------------------------

@pytest.mark.parametrize("p", [2, "fro", 1, 3, 0.5, INF, -INF, 0])
def test_norm_gradient_at_zero_vector_is_zero(p):
    x = gradlab.zeros(4, dtype=gradlab.float64, requires_grad=True)
    x.norm(p).backward()
    if p == 0:  # a count is flat: no gradient flows at all, as in PyTorch
        assert x.grad is None
    else:
        assert x.grad.tolist() == [0.0] * 4
    if torch is not None:
        t = torch.zeros(4, dtype=torch.float64, requires_grad=True)
        t.norm(p).backward()
        assert (t.grad is None) == (x.grad is None)
        assert t.grad is None or t.grad.tolist() == [0.0] * 4


def test_std_gradient_of_constant_input_is_zero_like_torch():
    x = gradlab.full((3,), 2.0, requires_grad=True)
    x.std().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


# --- var/std forms and degrees of freedom -----------------------------------------------------

@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"unbiased": False}, {"correction": 0}, {"dim": 1},
                                    {"dim": 0, "correction": 2, "keepdim": True}])
def test_var_std_mean_match_torch(kwargs):
    x = np.random.default_rng(3).standard_normal((4, 3))
    for op in ("var_mean", "std_mean"):
        ours = getattr(gradlab, op)(gradlab.tensor(x), **kwargs)
        theirs = getattr(torch, op)(torch.tensor(x), **kwargs)
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12)


def test_var_old_positional_unbiased_form():
    x = gradlab.tensor([1.0, 2.0, 3.0, 4.0])
    assert x.var(False).item() == pytest.approx(1.25)
    assert x.var(True).item() == pytest.approx(5 / 3)


def test_too_few_values_warn_and_give_nan_or_inf_like_torch():
    one_each = gradlab.tensor([[1.0], [2.0]])
    with pytest.warns(UserWarning, match=r"var: degrees of freedom <= 0: correction=1 with only 1"):
        assert np.isnan(one_each.var(1).numpy()).all()  # 0 / 0
    pair = gradlab.tensor([[1.0, 2.0]])
    with pytest.warns(UserWarning, match=r"std: degrees of freedom <= 0: correction=2"):
        assert pair.std(1, correction=2).tolist() == [INF]  # 0.5 / 0


# --- errors that teach ------------------------------------------------------------------------

def test_unbiased_and_correction_together_is_an_error():
    with pytest.raises(TypeError, match="var: pass unbiased= or correction=, not both"):
        gradlab.ones(3).var(unbiased=True, correction=0)


def test_unsupported_norm_order():
    with pytest.raises(ValueError, match=r"norm: p='max' is not supported; use 'fro', 'nuc'"):
        gradlab.ones(3).norm("max")


def test_nuclear_norm_of_a_batch_asks_for_the_matrix_dims():
    with pytest.raises(RuntimeError, match=r"norm: p='nuc' is a matrix norm; a 3-D input "
                                           r"\(shape \(2, 3, 3\)\) needs dim=\(row_dim, col_dim\)"):
        gradlab.ones(2, 3, 3).norm("nuc")


@pytest.mark.parametrize("f", [
    lambda lib, x: x.var(1),
    lambda lib, x: x.std(0),
    lambda lib, x: x.norm(dim=1),
    lambda lib, x: x.norm(3),
], ids=["var", "std", "norm", "norm_3"])
def test_forward_over_reverse_gives_hessian_vector_products(f):
    check_hessian_vector_product(f, (3, 4))
