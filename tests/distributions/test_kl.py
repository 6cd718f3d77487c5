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
           "LogNormal", "HalfNormal", "Cauchy", "Gumbel", "Pareto", "ContinuousBernoulli_probs",
           "ContinuousBernoulli_logits"]


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


# --- the continuous Bernoulli against other families -------------------------------------

def _params(lib, arrays):
    return [lib.tensor(np.asarray(a, dtype=np.float64), dtype=lib.float64, requires_grad=True)
            for a in arrays]


CB_PROBS = [0.15, 0.4996, 0.8]  # (the middle one is where the Taylor series serve)
CROSS_PAIRS = [  # (name, make p, p's parameters, make q, q's parameters)
    ("beta_cb", lambda D, a, b: D.Beta(a, b), [[0.7, 2.0, 3.5], [1.5, 2.0, 0.8]],
     lambda D, p: D.ContinuousBernoulli(p), [CB_PROBS]),
    ("cb_exponential", lambda D, p: D.ContinuousBernoulli(p), [CB_PROBS],
     lambda D, rate: D.Exponential(rate), [[0.5, 1.0, 3.0]]),
    ("cb_normal", lambda D, p: D.ContinuousBernoulli(logits=p), [[-2.0, 0.001, 1.0]],
     lambda D, loc, scale: D.Normal(loc, scale), [[0.2, 0.5, -1.0], [0.3, 1.0, 2.0]]),
    ("cb_uniform", lambda D, p: D.ContinuousBernoulli(p), [CB_PROBS],
     lambda D, low, high: D.Uniform(low, high), [[-1.0, -0.5, -0.1], [1.5, 2.0, 1.1]]),
    ("uniform_cb", lambda D, low, high: D.Uniform(low, high), [[0.1, 0.3, 0.05],
                                                                [0.9, 0.4, 0.95]],
     lambda D, p: D.ContinuousBernoulli(p), [CB_PROBS]),
]


@needs_torch
@pytest.mark.parametrize("name, make_p, p_arrays, make_q, q_arrays", CROSS_PAIRS,
                         ids=[c[0] for c in CROSS_PAIRS])
def test_continuous_bernoulli_cross_family_kl_matches_torch(name, make_p, p_arrays, make_q,
                                                            q_arrays):
    results = []
    for lib, module in ((gradlab, gd), (torch, torch.distributions)):
        p_params, q_params = _params(lib, p_arrays), _params(lib, q_arrays)
        kl = module.kl_divergence(make_p(module, *p_params), make_q(module, *q_params))
        kl.sum().backward()
        results.append([kl] + [t.grad for t in p_params + q_params])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-7,
                                   atol=1e-10)
    assert bool((results[0][0] > 0).all())


@needs_torch
@pytest.mark.parametrize("make_p, p_arrays", [
    (lambda D, rate: D.Exponential(rate), [[0.5, 2.0, 1.0]]),
    (lambda D, a, b: D.Gamma(a, b), [[0.5, 2.0, 1.0], [1.0, 1.0, 3.0]]),
    (lambda D, loc, scale: D.Gumbel(loc, scale), [[0.5, 0.2, 0.4], [1.0, 0.1, 3.0]]),
    (lambda D, loc, scale: D.Laplace(loc, scale), [[0.5, 0.2, 0.4], [1.0, 0.1, 3.0]]),
    (lambda D, loc, scale: D.Normal(loc, scale), [[0.5, 0.2, 0.4], [1.0, 0.1, 3.0]]),
    (lambda D, scale, alpha: D.Pareto(scale, alpha), [[0.5, 0.2, 0.4], [1.0, 0.1, 3.0]]),
], ids=["exponential", "gamma", "gumbel", "laplace", "normal", "pareto"])
def test_kl_to_a_continuous_bernoulli_is_infinite_from_a_wider_support(make_p, p_arrays):
    for lib, module in ((gradlab, gd), (torch, torch.distributions)):
        q = module.ContinuousBernoulli(lib.tensor(CB_PROBS, dtype=lib.float64))
        p = make_p(module, *_params(lib, p_arrays))
        kl = module.kl_divergence(p, q)
        assert tuple(kl.shape) == (3,) and bool((kl == float("inf")).all())
    p = gd.ContinuousBernoulli(gradlab.tensor(CB_PROBS, dtype=gradlab.float64))
    kl = kl_divergence(p, gd.Pareto(gradlab.tensor(0.01), gradlab.tensor(2.0)))
    assert bool((kl == float("inf")).all())  # Pareto has no mass on [0, 0.01)


@needs_torch
def test_kl_between_uniform_and_continuous_bernoulli_on_a_shared_boundary_is_finite():
    """Uniform(0, 1) and the continuous Bernoulli share their support [0, 1]: both KLs are
    finite. PyTorch 2.13 tests the boundary with >= / <= and returns inf; away from the
    boundary the two agree."""
    probs = gradlab.tensor(CB_PROBS, dtype=gradlab.float64)
    cb = gd.ContinuousBernoulli(probs)
    low = gradlab.tensor([0.0, 0.0, -0.5], dtype=gradlab.float64)
    high = gradlab.tensor([1.0, 2.0, 1.0], dtype=gradlab.float64)
    uniform = gd.Uniform(low, high)
    forward, backward = kl_divergence(cb, uniform), kl_divergence(gd.Uniform(0.0, 1.0), cb)
    np.testing.assert_allclose(forward.numpy(), (-cb.entropy() + (high - low).log()).numpy())
    # E_U[log q(x)] for U = Uniform(0, 1): a midpoint rule on the density itself
    grid = gradlab.tensor((np.arange(20000) + 0.5) / 20000, dtype=gradlab.float64)
    expected = -cb.log_prob(grid.unsqueeze(-1)).mean(0)
    np.testing.assert_allclose(backward.numpy(), expected.numpy(), rtol=1e-8)
    t_cb = torch.distributions.ContinuousBernoulli(torch.tensor(CB_PROBS, dtype=torch.float64))
    t_uniform = torch.distributions.Uniform(torch.tensor(low.numpy()), torch.tensor(high.numpy()))
    assert torch.isinf(torch.distributions.kl_divergence(t_cb, t_uniform)).tolist() == \
        [True, True, True]
    outside = gd.Uniform(gradlab.tensor([0.5, -0.1]), gradlab.tensor([2.0, 0.9]))
    q = gd.ContinuousBernoulli(gradlab.tensor([0.3, 0.3]))
    assert kl_divergence(q, outside).isinf().tolist() == [True, True]
    assert kl_divergence(outside, q).isinf().tolist() == [True, True]
