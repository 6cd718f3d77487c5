"""The table of distributions under test: one row per way of building one.

A row's ``make(D, *params)`` runs unchanged with ``D = gradlab.distributions``
and ``D = torch.distributions`` (the same names), so every test builds the
pair from one lambda and the same float64 parameters. ``params(rng)`` gives
NumPy parameters inside the constraints, ``values(rng)`` values inside the
support (shaped to broadcast against the batch).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class Dist:
    name: str
    make: Callable  # make(D, *tensors) -> distribution
    params: Callable  # rng -> list of float64 arrays
    values: Callable  # rng -> array of values in the support
    batch_shape: tuple
    event_shape: tuple = ()
    props: tuple = ("mean", "variance", "stddev", "mode")
    entropy: bool = True
    cdf: bool = False  # also cdf and icdf
    rsample: bool = False
    discrete: bool = False
    moments: bool = True  # finite mean and variance that sample averages estimate
    rtol: float = 1e-7  # against PyTorch
    torch_float64: bool = False  # PyTorch's own code needs float64 as its default dtype


def _pos(rng, shape, lo=0.5, hi=2.0):
    return rng.uniform(lo, hi, shape)


def _probs(rng, shape):
    p = rng.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def _spd(rng, k=3, batch=()):
    a = rng.normal(size=batch + (k, k))
    return a @ np.swapaxes(a, -1, -2) + np.eye(k)


def _tril(rng, k=3, batch=()):
    a = np.tril(rng.normal(size=batch + (k, k)), -1)
    return a + np.eye(k) * rng.uniform(0.5, 1.5, batch + (k,))[..., None]


def _corr_cholesky(rng, batch=(), k=3):
    """Cholesky factors of correlation matrices: lower triangular, positive diagonal, unit
    rows."""
    a = np.tril(rng.normal(size=batch + (k, k)))
    a[..., range(k), range(k)] = np.abs(a[..., range(k), range(k)]) + 0.1
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


def _uniform_params(rng):
    return [rng.uniform(-2.0, -1.5, (3,)), rng.uniform(0.0, 1.0, (3,))]


DISTS = [
    Dist("Normal", lambda D, loc, scale: D.Normal(loc, scale),
         lambda r: [r.normal(size=(3,)), _pos(r, (3,))], lambda r: r.normal(size=(2, 3)),
         (3,), cdf=True, rsample=True),
    Dist("Normal_broadcast", lambda D, loc, scale: D.Normal(loc, scale),
         lambda r: [r.normal(size=(2, 1)), _pos(r, (3,))], lambda r: r.normal(size=(3,)),
         (2, 3), cdf=True, rsample=True),
    Dist("Laplace", lambda D, loc, scale: D.Laplace(loc, scale),
         lambda r: [r.normal(size=(3,)), _pos(r, (3,))], lambda r: r.normal(size=(2, 3)),
         (3,), cdf=True, rsample=True),
    Dist("Exponential", lambda D, rate: D.Exponential(rate), lambda r: [_pos(r, (3,))],
         lambda r: _pos(r, (2, 3), 0.1, 3.0), (3,), cdf=True, rsample=True),
    Dist("Uniform", lambda D, low, high: D.Uniform(low, high), _uniform_params,
         lambda r: np.linspace(-1.4, -0.1, 6).reshape(2, 3), (3,),
         props=("mean", "variance", "stddev"), cdf=True, rsample=True),
    Dist("Poisson", lambda D, rate: D.Poisson(rate), lambda r: [_pos(r, (3,), 0.5, 5.0)],
         lambda r: r.integers(0, 6, (2, 3)).astype(float), (3,), entropy=False,
         discrete=True),
    Dist("Bernoulli_probs", lambda D, p: D.Bernoulli(probs=p),
         lambda r: [r.uniform(0.05, 0.95, (3,))],
         lambda r: r.integers(0, 2, (2, 3)).astype(float), (3,), discrete=True,
         props=("mean", "variance", "stddev")),
    Dist("Bernoulli_logits", lambda D, logit: D.Bernoulli(logits=logit),
         lambda r: [r.normal(size=(3,)) * 3], lambda r: r.integers(0, 2, (2, 3)).astype(float),
         (3,), discrete=True, props=("mean", "variance", "stddev", "mode")),
    Dist("Categorical_probs", lambda D, p: D.Categorical(probs=p), lambda r: [_probs(r, (4, 3))],
         lambda r: r.integers(0, 3, (2, 4)).astype(float), (4,), discrete=True,
         props=("mode",)),
    Dist("Categorical_logits", lambda D, logit: D.Categorical(logits=logit),
         lambda r: [r.normal(size=(4, 3))], lambda r: r.integers(0, 3, (4,)).astype(float),
         (4,), discrete=True, props=("mode",)),
    Dist("OneHotCategorical", lambda D, logit: D.OneHotCategorical(logits=logit),
         lambda r: [r.normal(size=(4, 3))], lambda r: np.eye(3)[r.integers(0, 3, (2, 4))],
         (4,), (3,), discrete=True, props=("mean", "variance", "mode")),
    Dist("Gamma", lambda D, a, b: D.Gamma(a, b), lambda r: [_pos(r, (3,), 0.5, 4.0),
                                                            _pos(r, (3,))],
         lambda r: _pos(r, (2, 3), 0.1, 3.0), (3,), rsample=True),
    Dist("Beta", lambda D, a, b: D.Beta(a, b), lambda r: [_pos(r, (3,), 1.2, 4.0),
                                                          _pos(r, (3,), 1.2, 4.0)],
         lambda r: r.uniform(0.05, 0.95, (2, 3)), (3,), rsample=True),
    Dist("Dirichlet", lambda D, a: D.Dirichlet(a), lambda r: [_pos(r, (2, 3), 1.2, 4.0)],
         lambda r: _probs(r, (4, 2, 3)), (2,), (3,), rsample=True),
    Dist("MultivariateNormal_cov", lambda D, mu, cov: D.MultivariateNormal(mu, cov),
         lambda r: [r.normal(size=(2, 3)), _spd(r)], lambda r: r.normal(size=(4, 2, 3)),
         (2,), (3,), props=("mean", "variance", "stddev", "mode"), rsample=True),
    Dist("MultivariateNormal_precision",
         lambda D, mu, prec: D.MultivariateNormal(mu, precision_matrix=prec),
         lambda r: [r.normal(size=(3,)), _spd(r, batch=(2,))], lambda r: r.normal(size=(2, 3)),
         (2,), (3,), rsample=True),
    Dist("MultivariateNormal_tril",
         lambda D, mu, tril: D.MultivariateNormal(mu, scale_tril=tril),
         lambda r: [r.normal(size=(2, 3)), _tril(r)], lambda r: r.normal(size=(2, 3)),
         (2,), (3,), rsample=True),
    Dist("LogNormal", lambda D, loc, scale: D.LogNormal(loc, scale),
         lambda r: [r.normal(size=(3,)) * 0.5, _pos(r, (3,), 0.3, 1.0)],
         lambda r: _pos(r, (2, 3), 0.2, 3.0), (3,), cdf=True, rsample=True),
    Dist("HalfNormal", lambda D, scale: D.HalfNormal(scale), lambda r: [_pos(r, (3,))],
         lambda r: _pos(r, (2, 3), 0.1, 3.0), (3,), cdf=True, rsample=True),
    Dist("HalfCauchy", lambda D, scale: D.HalfCauchy(scale), lambda r: [_pos(r, (3,))],
         lambda r: _pos(r, (2, 3), 0.1, 3.0), (3,), cdf=True, rsample=True,
         moments=False),
    Dist("Cauchy", lambda D, loc, scale: D.Cauchy(loc, scale),
         lambda r: [r.normal(size=(3,)), _pos(r, (3,))], lambda r: r.normal(size=(2, 3)),
         (3,), cdf=True, rsample=True,
         moments=False),
    Dist("Gumbel", lambda D, loc, scale: D.Gumbel(loc, scale),
         lambda r: [r.normal(size=(3,)), _pos(r, (3,))], lambda r: r.normal(size=(2, 3)),
         (3,), cdf=True, rsample=True),
    Dist("Weibull", lambda D, scale, k: D.Weibull(scale, k),
         lambda r: [_pos(r, (3,)), _pos(r, (2, 1), 1.5, 3.0)],
         lambda r: _pos(r, (2, 3), 0.2, 2.0), (2, 3), cdf=True, rsample=True),
    Dist("Pareto", lambda D, scale, alpha: D.Pareto(scale, alpha),
         lambda r: [_pos(r, (3,), 0.5, 1.0), _pos(r, (3,), 4.5, 6.0)],
         lambda r: _pos(r, (2, 3), 1.0, 3.0), (3,), cdf=True, rsample=True),
    Dist("StudentT", lambda D, df, loc, scale: D.StudentT(df, loc, scale),
         lambda r: [_pos(r, (3,), 4.5, 8.0), r.normal(size=(3,)), _pos(r, (3,))],
         lambda r: r.normal(size=(2, 3)), (3,), rsample=True),
    Dist("StudentT_heavy_tails", lambda D, df: D.StudentT(df),
         lambda r: [np.array([0.5, 1.5, 3.0])], lambda r: r.normal(size=(2, 3)), (3,),
         rsample=True,
         moments=False),
    Dist("Chi2", lambda D, df: D.Chi2(df), lambda r: [_pos(r, (3,), 1.0, 5.0)],
         lambda r: _pos(r, (2, 3), 0.2, 4.0), (3,), rsample=True),
    Dist("InverseGamma", lambda D, a, b: D.InverseGamma(a, b),
         lambda r: [np.array([1.5, 2.5, 4.0]), _pos(r, (3,))],
         lambda r: _pos(r, (2, 3), 0.2, 3.0), (3,), rsample=True,
         moments=False),
    Dist("FisherSnedecor", lambda D, d1, d2: D.FisherSnedecor(d1, d2),
         lambda r: [np.array([1.5, 4.5, 8.0]), np.array([3.0, 5.5, 9.0])],
         lambda r: _pos(r, (2, 3), 0.2, 3.0), (3,), entropy=False, rsample=True,
         moments=False),
    Dist("Kumaraswamy", lambda D, a, b: D.Kumaraswamy(a, b),
         lambda r: [_pos(r, (3,), 1.2, 3.0), _pos(r, (3,), 1.2, 3.0)],
         lambda r: r.uniform(0.05, 0.95, (2, 3)), (3,), props=("mean", "variance", "stddev"),
         cdf=True, rsample=True),
    Dist("LogisticNormal", lambda D, loc, scale: D.LogisticNormal(loc, scale),
         lambda r: [r.normal(size=(2, 3)), _pos(r, (2, 3))], lambda r: _probs(r, (5, 2, 4)),
         (2,), (4,), props=(), entropy=False, rsample=True,
         moments=False),
    Dist("RelaxedBernoulli", lambda D, t, p: D.RelaxedBernoulli(t, probs=p),
         lambda r: [np.array(0.7), r.uniform(0.1, 0.9, (3,))],
         lambda r: r.uniform(0.05, 0.95, (2, 3)), (3,), props=(), entropy=False, rsample=True,
         moments=False),
    Dist("RelaxedBernoulli_logits", lambda D, t, logit: D.RelaxedBernoulli(t, logits=logit),
         lambda r: [np.array(1.5), r.normal(size=(3,))],
         lambda r: r.uniform(0.05, 0.95, (3,)), (3,), props=(), entropy=False, rsample=True,
         moments=False),
    Dist("RelaxedOneHotCategorical",
         lambda D, t, logit: D.RelaxedOneHotCategorical(t, logits=logit),
         lambda r: [np.array(0.5), r.normal(size=(4, 3))], lambda r: _probs(r, (2, 4, 3)),
         (4,), (3,), props=(), entropy=False, rsample=True,
         moments=False),
    Dist("VonMises", lambda D, loc, k: D.VonMises(loc, k),
         lambda r: [r.uniform(-3.0, 3.0, (3,)), _pos(r, (3,), 0.3, 8.0)],
         lambda r: r.uniform(-3.1, 3.1, (2, 3)), (3,), props=("mean", "mode", "variance"),
         entropy=False, rtol=1e-6,
         moments=False),
    Dist("ContinuousBernoulli_probs", lambda D, p: D.ContinuousBernoulli(probs=p),
         lambda r: [r.uniform([0.1, 0.3, 0.7], [0.2, 0.4, 0.9])],
         lambda r: r.uniform(0.02, 0.98, (2, 3)), (3,),
         props=("mean", "variance", "stddev"), cdf=True, rsample=True),
    Dist("ContinuousBernoulli_logits", lambda D, logit: D.ContinuousBernoulli(logits=logit),
         lambda r: [r.uniform([-2.0, 0.0005, 2.0], [-1.0, 0.0025, 3.0])],
         lambda r: r.uniform(0.02, 0.98, (2, 3)), (3,), props=("mean", "variance", "stddev"),
         rsample=True),  # (λ = sigmoid(~0.0015) is within 0.001 of ½: the Taylor series
    # serve, and PyTorch's cdf there is the uniform's, so cdf is compared elsewhere)
    Dist("GeneralizedPareto",
         lambda D, loc, scale, xi: D.GeneralizedPareto(loc, scale, xi),
         lambda r: [r.uniform(-1.0, -0.5, (3,)), _pos(r, (3,), 0.5, 1.0),
                    np.array([-0.3, 0.05, -0.1])],
         lambda r: r.uniform(-0.45, 0.6, (2, 3)), (3,), cdf=True, rsample=True,
         torch_float64=True),
    Dist("GeneralizedPareto_broadcast",
         lambda D, loc, scale, xi: D.GeneralizedPareto(loc, scale, xi),
         lambda r: [np.array(0.5), _pos(r, (2, 1)), np.array([-0.2, 0.1, -0.05])],
         lambda r: r.uniform(0.6, 2.0, (2, 3)), (2, 3), cdf=True, rsample=True,
         torch_float64=True),
    Dist("Wishart_cov", lambda D, df, cov: D.Wishart(df, covariance_matrix=cov),
         lambda r: [np.array([4.5, 6.0]), _spd(r) * 0.03], lambda r: _spd(r, batch=(4, 2)),
         (2,), (3, 3), rsample=True),
    Dist("Wishart_tril", lambda D, df, tril: D.Wishart(df, scale_tril=tril),
         lambda r: [np.array(5.0), _tril(r, batch=(2,)) * 0.15], lambda r: _spd(r, batch=(2,)),
         (2,), (3, 3), rsample=True),
    Dist("Wishart_precision", lambda D, df, prec: D.Wishart(df, precision_matrix=prec),
         lambda r: [np.array([[3.5], [7.0]]), _spd(r, k=2, batch=(3,))],
         lambda r: _spd(r, k=2, batch=(3,)), (2, 3), (2, 2), rsample=True),
    Dist("LKJCholesky", lambda D, eta: D.LKJCholesky(3, eta),
         lambda r: [_pos(r, (2,), 0.5, 3.0)], lambda r: _corr_cholesky(r, (4, 2)), (2,), (3, 3),
         props=(), entropy=False, moments=False),
    Dist("LKJCholesky_dim2", lambda D, eta: D.LKJCholesky(2, eta), lambda r: [np.array(1.7)],
         lambda r: _corr_cholesky(r, (5,), k=2), (), (2, 2), props=(), entropy=False,
         moments=False),
    Dist("LKJCholesky_dim5", lambda D, eta: D.LKJCholesky(5, eta),
         lambda r: [np.array([0.8, 1.0, 4.0])], lambda r: _corr_cholesky(r, (3,), k=5), (3,),
         (5, 5), props=(), entropy=False, moments=False),
    Dist("Independent_Normal",
         lambda D, loc, scale: D.Independent(D.Normal(loc, scale), 1),
         lambda r: [r.normal(size=(2, 3)), _pos(r, (2, 3))], lambda r: r.normal(size=(4, 2, 3)),
         (2,), (3,), rsample=True),
]

BY_NAME = {d.name: d for d in DISTS}
