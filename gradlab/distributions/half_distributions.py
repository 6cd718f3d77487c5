"""``HalfNormal(scale)`` and ``HalfCauchy(scale)``: |x| for x centred at 0.

Folding the density at 0 doubles it on the positive side:

    log p(y) = base.log_prob(y) + log 2  for y >= 0  (and -inf below)
    cdf(y) = 2 · base.cdf(y) - 1,   icdf(p) = base.icdf((p + 1) / 2)
    entropy = base entropy - log 2

HalfNormal: mean σ√(2/π), variance σ²(1 - 2/π); a common prior for a scale
parameter. HalfCauchy: heavier-tailed, with no finite mean or variance.
"""

from __future__ import annotations

import math

from ..ops.selection import where
from . import constraints
from .cauchy import Cauchy
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal", "HalfCauchy"]


class _Folded(TransformedDistribution):
    """|x| for x from a base symmetric about 0 (see the module docstring)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return self.scale.new_zeros(tuple(self.scale.shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """|x| for x ~ Normal(0, ``scale``)."""

    def __init__(self, scale, validate_args=None) -> None:
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """|x| for x ~ Cauchy(0, ``scale``)."""

    def __init__(self, scale, validate_args=None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale.new_full(tuple(self._extended_shape()), math.inf)

    @property
    def variance(self):
        return self.scale.new_full(tuple(self._extended_shape()), math.inf)
