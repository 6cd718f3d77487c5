"""kl_divergence: every same-family closed form against PyTorch (values and gradients),
dispatch to the most specific registered pair, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.distributions as gd
from gradlab.distributions import Normal, kl_divergence, register_kl
from gradlab.distributions.kl import _KL_REGISTRY, _dispatch_kl
from tests.oracle import needs_torch, torch

from .cases import BY_NAME

KL_ROWS = ["Normal", "Normal_broadcast", "Bernoulli_probs", "Bernoulli_logits",
           "Categorical_probs", "Categorical_logits", "OneHotCategorical", "Exponential",
           "Laplace", "Poisson", "Gamma", "Beta", "Dirichlet", "MultivariateNormal_cov",
           "MultivariateNormal_tril", "MultivariateNormal_precision", "Independent_Normal",
           "LogNormal", "HalfNormal", "Cauchy", "Gumbel", "Pareto"]


def _build(lib, case, arrays):
    params = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    module = gd if lib is gradlab else torch.distributions
    return case.make(module, *params), params


def _kl_pair(lib, case, p_arrays, q_arrays):
    p, p_params = _build(lib, case, p_arrays)
    q, q_params = _build(lib, case, q_arrays)
    return lib.distributions.kl_divergence(p, q) if lib is torch else kl_divergence(p, q), \
        p_params + q_params


def _compare(case, p_arrays, q_arrays):
    g_kl, g_params = _kl_pair(gradlab, case, p_arrays, q_arrays)
    t_kl, t_params = _kl_pair(torch, case, p_arrays, q_arrays)
    assert tuple(g_kl.shape) == tuple(t_kl.shape)
    np.testing.assert_allclose(g_kl.detach().numpy(), t_kl.detach().numpy(), rtol=1e-7,
                               atol=1e-10)
    w = np.random.default_rng(3).normal(size=tuple(t_kl.shape))
    finite = np.isfinite(t_kl.detach().numpy())
    (g_kl.nan_to_num(posinf=0.0) * gradlab.tensor(np.where(finite, w, 0.0))).sum().backward()
    (t_kl.nan_to_num(posinf=0.0) * torch.tensor(np.where(finite, w, 0.0))).sum().backward()
    for g, t in zip(g_params, t_params):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-9)
    return g_kl


@needs_torch
@pytest.mark.parametrize("name", KL_ROWS)
def test_kl_matches_torch_values_and_gradients(name):
    case = BY_NAME[name]
    kl = _compare(case, case.params(np.random.default_rng(0)),
                  case.params(np.random.default_rng(1)))
    assert tuple(kl.shape) == case.batch_shape and bool((kl > 0).all())


@needs_torch
def test_kl_uniform_is_finite_only_when_q_covers_p():
    p = ([-1.0, -1.0, 0.0], [1.0, 1.0, 2.0])
    q = ([-2.0, -0.5, -3.0], [1.5, 1.0, 3.0])  # the second q misses [-1, -0.5)
    case = BY_NAME["Uniform"]
    _compare(case, [np.array(a) for a in p], [np.array(a) for a in q])
    kl = kl_divergence(gd.Uniform(*map(gradlab.tensor, p)), gd.Uniform(*map(gradlab.tensor, q)))
    assert np.isfinite(kl.numpy()).tolist() == [True, False, True]


@needs_torch
def test_kl_with_zero_probabilities_matches_torch():
    p = np.array([[0.0, 0.5, 0.5], [0.2, 0.3, 0.5]])
    q = np.array([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]])  # row 2: q misses what p can do -> inf
    _compare(BY_NAME["Categorical_probs"], [p], [q])
    bp, bq = np.array([0.0, 1.0, 0.3]), np.array([0.4, 0.4, 1.0])
    _compare(BY_NAME["Bernoulli_probs"], [bp], [bq])


def test_kl_of_a_distribution_with_itself_is_zero():
    loc, scale = gradlab.randn(4, dtype=gradlab.float64), gradlab.rand(4, dtype=gradlab.float64)
    p = Normal(loc, scale + 0.5)
    assert np.allclose(kl_divergence(p, p).numpy(), 0.0)


class _MyNormal(Normal):
    pass


def test_register_kl_dispatches_to_the_most_specific_pair():
    p, q = _MyNormal(0.0, 1.0), Normal(1.0, 2.0)
    inherited = kl_divergence(p, q)  # the (Normal, Normal) rule serves a subclass
    assert np.isclose(float(inherited), float(kl_divergence(Normal(0.0, 1.0), q)))
    try:
        @register_kl(_MyNormal, Normal)
        def _kl_mine(p, q):
            return gradlab.tensor(-7.0)

        assert float(kl_divergence(p, q)) == -7.0  # more specific than (Normal, Normal)
        assert float(kl_divergence(q, p)) == pytest.approx(
            float(kl_divergence(q, Normal(0.0, 1.0))))  # (Normal, _MyNormal): the generic rule
    finally:
        _KL_REGISTRY.pop((_MyNormal, Normal), None)
        _dispatch_kl.cache_clear()
    assert float(kl_divergence(p, q)) == pytest.approx(float(inherited))


def test_kl_errors_name_the_pair_and_the_fix():
    with pytest.raises(NotImplementedError, match=r"p of type Normal and q of type Gamma.*"
                                                  r"register_kl\(Normal, Gamma\)"):
        kl_divergence(Normal(0.0, 1.0), gd.Gamma(1.0, 1.0))
    with pytest.raises(TypeError, match="expected type_q to be a Distribution subclass"):
        register_kl(Normal, int)
    p = gd.Independent(gd.Normal(gradlab.zeros(2, 3), gradlab.ones(2, 3)), 1)
    q = gd.Independent(gd.Normal(gradlab.zeros(2, 3), gradlab.ones(2, 3)), 2)
    with pytest.raises(NotImplementedError, match="different reinterpreted_batch_ndims"):
        kl_divergence(p, q)
    m2 = gd.MultivariateNormal(gradlab.zeros(2), gradlab.eye(2))
    m3 = gd.MultivariateNormal(gradlab.zeros(3), gradlab.eye(3))
    with pytest.raises(ValueError, match=r"different event shapes.*\(2,\) vs \(3,\)"):
        kl_divergence(m2, m3)
