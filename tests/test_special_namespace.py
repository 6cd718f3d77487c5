"""gradlab.special: torch.special's names, and its three compositions checked as ops."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from gradlab import special
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def _np_ndtr(np, x):
    return 0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2.0))


def _np_xlog1py(np, x, y):
    return np.where(x == 0, 0.0, x * np.log1p(y))


def _with_zeros(rng, dtype, shapes):
    """x with some exact zeros (where the result is 0 whatever y is), y in (-0.9, 3)."""
    x = rng.uniform(-2, 2, shapes[0])
    x[..., ::3] = 0.0
    return [x.astype(dtype), rng.uniform(-0.9, 3.0, shapes[1]).astype(dtype)]


CASES = [
    OpCase("ndtr", lambda lib, x: lib.special.ndtr(x), ((3, 4),), numpy=_np_ndtr,
           domain=(-6.0, 6.0)),
    OpCase("ndtri", lambda lib, p: lib.special.ndtri(p), ((3, 4),), domain=(0.05, 0.95),
           numpy=lambda np, p: np.vectorize(_probit)(p)),
    OpCase("xlog1py", lambda lib, x, y: lib.special.xlog1py(x, y), ((3, 4), (3, 4)),
           numpy=_np_xlog1py, inputs=_with_zeros),
    OpCase("expit", lambda lib, x: lib.special.expit(x), ((5,),),
           numpy=lambda np, x: 1 / (1 + np.exp(-x))),
]


def _probit(p: float) -> float:
    """Φ⁻¹(p) by bisection on math.erfc: an independent reference for ndtri."""
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 0.5 * math.erfc(-mid / math.sqrt(2.0)) < p else (lo, mid)
    return (lo + hi) / 2


globals().update(standard_op_tests(CASES))


def test_aliases_are_gradlabs_own_ops():
    assert special.expit is gradlab.sigmoid
    for name in ("erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "log_softmax", "logit",
                 "logsumexp", "round", "sinc", "softmax", "xlogy", "digamma", "polygamma"):
        assert getattr(special, name) is getattr(gradlab, name), name
    assert special.gammaln is gradlab.lgamma and special.psi is gradlab.digamma
    assert special.multigammaln is gradlab.mvlgamma


@needs_torch
def test_every_name_is_in_torch_special():
    assert [n for n in special.__all__ if not hasattr(torch.special, n)] == []


def test_ndtr_keeps_the_far_left_tail_and_ndtri_inverts_it():
    x = gradlab.tensor([-30.0, -3.0, 0.0, 3.0], dtype=gradlab.float64)
    p = special.ndtr(x).numpy()
    assert p[0] > 0 and abs(p[0] / 4.906713927148187e-198 - 1) < 1e-12  # not rounded to 0
    # (ndtri is √2·erfinv(2p - 1): in the far tails 2p - 1 rounds, so test it inside them)
    np.testing.assert_allclose(special.ndtri(special.ndtr(x[1:])).numpy(), x[1:].numpy(),
                               rtol=1e-9, atol=1e-9)
    assert special.ndtri(gradlab.tensor([0.0, 1.0])).tolist() == [-math.inf, math.inf]


def test_xlog1py_is_zero_with_zero_gradients_where_x_is_zero_and_the_log_is_not_finite():
    x = gradlab.tensor([0.0, 0.0, 2.0], requires_grad=True)
    y = gradlab.tensor([-1.0, -2.0, 1e-12], requires_grad=True)  # log1p(-1) = -inf, (-2): nan
    out = special.xlog1py(x, y)
    assert out.tolist()[:2] == [0.0, 0.0]
    assert out.tolist()[2] == pytest.approx(2e-12, rel=1e-9)  # log1p keeps a tiny y's digits
    out.sum().backward()
    assert x.grad.tolist()[:2] == [0.0, 0.0] and y.grad.tolist()[:2] == [0.0, 0.0]
