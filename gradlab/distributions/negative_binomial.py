"""``NegativeBinomial(total_count=r, probs=p)`` (or ``logits=l``): successes before r failures.

Flip coins that succeed with probability p until the r-th failure; k counts
the successes (k = 0, 1, 2, ...):

    P(k)     = C(k + r - 1, k) p^k (1 - p)^r = Γ(k + r) / (k! Γ(r)) p^k (1 - p)^r
    log p(k) = r logsigmoid(-l) + k logsigmoid(l) - [lgamma(1 + k) + lgamma(r) - lgamma(r + k)]
    mean = r p/(1 - p) = r e^l,   variance = mean/(1 - p),   mode = floor((r - 1) e^l) ∨ 0

with l = log(p/(1 - p)), so log p = logsigmoid(l) and log(1 - p) = logsigmoid(-l).
The Γ form lets r be any real >= 0 (the overdispersed-count model of
e.g. RNA-seq data). r = 0 puts all the mass on k = 0; the bracket is then
lgamma(0) - lgamma(0) = inf - inf, so it is set to 0 there, as in PyTorch
(whose gradient in r is NaN there; here it is d/dr log (1 - p)^r = log(1 - p)).

Draws: a Poisson whose rate is gamma distributed, λ ~ Gamma(r, rate = e^-l),
k ~ Poisson(λ), is negative binomial (the gamma-Poisson mixture). There is
no entropy (PyTorch has none: an infinite sum) and no enumerate_support.
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..ops.activation import logsigmoid
from ..ops.discrete_sampling import poisson
from ..ops.gamma_functions import lgamma
from ..ops.selection import where
from . import constraints
from .bernoulli import ChanceOfSuccess
from .distribution import Distribution
from .gamma import Gamma
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(ChanceOfSuccess, Distribution):
    """A batch of negative binomials: successes (chance ``probs``) before ``total_count``
    failures."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None) -> None:
        (total_count,), value, _ = self._take_chance(probs, logits, total_count)
        self.total_count = total_count.type_as(value)
        super().__init__(value.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> NegativeBinomial:
        return self._expanded_chance(NegativeBinomial, batch_shape, _instance, "total_count")

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self) -> Gamma:
        # not validated: total_count may be 0, which Gamma's positive concentration rejects
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=()):
        with no_grad():
            rate = self._gamma.sample(sample_shape)
            return poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r, logits = self.total_count, self.logits
        log_unnormalized_prob = r * logsigmoid(-logits) + value * logsigmoid(logits)
        # r = k = 0: probability 1, but lgamma(0) = inf makes the bracket inf - inf, so
        # there r is swapped for 1 (bracket 0, no NaN in value or gradient) and masked
        r_plus_k_zero = r + value == 0.0
        r = where(r_plus_k_zero, 1.0, r)
        log_normalization = -lgamma(r + value) + lgamma(1.0 + value) + lgamma(r)
        log_normalization = log_normalization.masked_fill(r_plus_k_zero, 0.0)
        return log_unnormalized_prob - log_normalization
