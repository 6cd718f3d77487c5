"""``kl_divergence(p, q)`` = KL(p ‖ q) = E_p[log p(x) - log q(x)], and ``register_kl``.

KL is a function of a *pair* of distribution types, so the closed forms
live in a table keyed by (type of p, type of q). ``register_kl(P, Q)``
adds one; ``kl_divergence`` picks the most specific registered pair that
matches (p, q) by subclassing, the way a method call picks the most derived
class, so a user's ``class MyNormal(Normal)`` uses the Normal-Normal formula
until a (MyNormal, Normal) rule is registered. No match -> NotImplementedError
naming the pair. Every formula is built from gradlab ops, so the KL term of a
VAE loss differentiates with respect to both distributions' parameters.

Closed forms here, for same-family pairs (σ: scale, b: Laplace scale):

    Normal        log(σq/σp) + (σp² + (μp - μq)²) / (2σq²) - ½
    Exponential   log(λp/λq) + λq/λp - 1
    Laplace       log(bq/bp) + |μp - μq|/bq + (bp/bq) exp(-|μp - μq|/bp) - 1
    Poisson       λp log(λp/λq) - (λp - λq)
    Uniform       log((hq - lq)/(hp - lp)), inf unless [lp, hp] ⊆ [lq, hq]
    Bernoulli / Categorical / OneHotCategorical   Σ p_k (log p_k - log q_k)
    Gamma / Beta / Dirichlet   lgamma / digamma forms below
    MultivariateNormal  ½ (tr(Σq⁻¹Σp) + (μq - μp)ᵀ Σq⁻¹ (μq - μp) - k + log det Σq/det Σp)
    Independent   the base pair's KL, summed over the reinterpreted dims
    Cauchy        log(((σp + σq)² + (μp - μq)²) / (4 σp σq))
    Gumbel        log(βq/βp) + (μp - μq)/βq + γ(βp/βq - 1) + e^((μq - μp)/βq) Γ(1 + βp/βq) - 1
    Pareto        αq log(sp/sq) - log(αq/αp) + αq/αp - 1, inf where sp < sq
    HalfNormal    the Normal pair's; TransformedDistribution with equal transforms: the
                  bases' (a one-to-one map changes no KL), so LogNormal pairs work too
    ContinuousBernoulli (CB)   E_p[x] (ηp - ηq) + log Cp + log(1-λp) - log Cq - log(1-λq)

and, as in PyTorch, the pairs of different families that involve the continuous
Bernoulli, each -H(p) - E_p[log q(x)] with the expectation in closed form:

    Beta ‖ CB, Uniform ‖ CB   -H(p) - E_p[x] ηq - log(1 - λq) - log Cq
    CB ‖ Exponential          -H(p) - log λ + λ E_p[x]
    CB ‖ Normal               -H(p) + ½ log 2π + log σ + (Var_p + E_p[x]² - 2μ E_p[x] + μ²)/(2σ²)
    CB ‖ Uniform              -H(p) + log(high - low)
    inf   where p puts mass where q has none: CB ‖ Pareto, and Exponential, Gamma, Gumbel,
          Laplace, Normal, Pareto ‖ CB (their supports reach past [0, 1])

Uniform ‖ CB and CB ‖ Uniform are infinite only when one support really sticks out
of the other: Uniform(0, 1) ‖ CB and CB ‖ Uniform(0, 1) are finite. PyTorch 2.13
compares with >= and <= there, so it returns inf for them.
"""

from __future__ import annotations

import math
import warnings
from functools import cache

from ..ops.activation import softplus
from ..ops.creation import full_like
from ..ops.gamma_functions import digamma, lgamma
from ..ops.repetition import broadcast_shapes
from ..ops.selection import where
from ..ops.triangular_solvers import solve_triangular
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import EULER_GAMMA, Gumbel
from .half_distributions import HalfNormal
from .independent import Independent, _sum_rightmost
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> fn(p, q)


def register_kl(type_p, type_q):
    """Decorator: register ``fn(p, q)`` as KL(p ‖ q) for p of ``type_p``, q of ``type_q``."""
    for name, cls in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(cls, type) and issubclass(cls, Distribution)):
            raise TypeError(f"register_kl: expected {name} to be a Distribution subclass but "
                            f"got {cls!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _dispatch_kl.cache_clear()
        return fn

    return decorator


@cache
def _dispatch_kl(type_p, type_q):
    """The most specific registered rule: the match whose classes sit closest to
    (type_p, type_q) in their method resolution orders."""
    matches = [(type_p.__mro__.index(sp) + type_q.__mro__.index(sq), sp, sq)
               for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return None
    matches.sort(key=lambda m: m[0])
    best = matches[0]
    ties = [m for m in matches if m[0] == best[0]
            and _KL_REGISTRY[m[1], m[2]] is not _KL_REGISTRY[best[1], best[2]]]
    if ties:
        names = ", ".join(f"({m[1].__name__}, {m[2].__name__})" for m in [best, *ties])
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}): rules "
                      f"{names} are equally specific; using the first. Register a rule for "
                      f"({type_p.__name__}, {type_q.__name__}) to break the tie.", RuntimeWarning,
                      stacklevel=3)
    return _KL_REGISTRY[best[1], best[2]]


def kl_divergence(p: Distribution, q: Distribution):
    """KL(p ‖ q), one value per element of the (broadcast) batch shape."""
    fn = _dispatch_kl(type(p), type(q))
    if fn is None:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p of type {type(p).__name__} and q of type "
            f"{type(q).__name__}. Register one with @register_kl({type(p).__name__}, "
            f"{type(q).__name__}), or estimate it from samples: "
            "(p.log_prob(x) - q.log_prob(x)).mean() for x = p.sample((n,))")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, where(q.probs == 0, math.inf, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, where(q.probs == 1, math.inf, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    shape = t.shape
    t = where((q.probs == 0).expand(shape), math.inf, t)
    t = where((p.probs == 0).expand(shape), 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sum_p)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sum_q - sum_p) * digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two Multivariate Normals with different event "
                         f"shapes cannot be computed: {tuple(p.event_shape)} vs "
                         f"{tuple(q.event_shape)}")
    p_l, q_l = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (q_l.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - p_l.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    n = p.event_shape[0]
    batch = tuple(broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape)))
    q_full = q_l.expand(batch + (n, n))
    p_full = p_l.expand(batch + (n, n))
    term2 = solve_triangular(q_full, p_full, upper=False).pow(2).sum((-2, -1))  # tr(Σq⁻¹Σp)
    term3 = _batch_mahalanobis(q_l, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            f"KL between Independent distributions with different reinterpreted_batch_ndims "
            f"({p.reinterpreted_batch_ndims} vs {q.reinterpreted_batch_ndims}) is not "
            "implemented")
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError(
            "kl_divergence of two TransformedDistributions is implemented when they share "
            "their transforms (then it is the KL of the bases); estimate it from samples "
            "otherwise: (p.log_prob(x) - q.log_prob(x)).mean() for x = p.sample((n,))")
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * EULER_GAMMA
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + t2 + t3 - (1 + EULER_GAMMA)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return where(p.scale < q.scale, math.inf, result)  # p has mass where q has none



# --- the continuous Bernoulli, with itself and with other families ------------------------

def _infinite_like(tensor):
    """KL = inf: p puts mass where q has none."""
    return full_like(tensor, math.inf)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


def _minus_expected_log_continuous_bernoulli(mean, q):
    """-E_p[log q(x)] for a continuous Bernoulli q, from p's mean alone (log q is linear
    in x: x ηq + log(1 - λq) + log Cq)."""
    return -mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _minus_expected_log_continuous_bernoulli(p.mean, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() + _minus_expected_log_continuous_bernoulli(p.mean, q)
    outside = (p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)
    return where(outside, math.inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).pow(2)) + q.scale.log()
    t3 = (p.variance + p.mean.pow(2) - 2.0 * q.loc * p.mean) / (2.0 * q.scale.pow(2))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)
    return where(outside, math.inf, result)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)


@register_kl(Exponential, ContinuousBernoulli)
def _kl_exponential_continuous_bernoulli(p, q):
    return _infinite_like(p.rate)


@register_kl(Gamma, ContinuousBernoulli)
def _kl_gamma_continuous_bernoulli(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Normal, ContinuousBernoulli)
def _kl_real_line_continuous_bernoulli(p, q):
    return _infinite_like(p.loc)


@register_kl(Pareto, ContinuousBernoulli)
def _kl_pareto_continuous_bernoulli(p, q):
    return _infinite_like(p.scale)
