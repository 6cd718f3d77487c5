"""``InverseGamma(concentration, rate)``: 1/x for x ~ Gamma(α, β), a prior for variances.

    log p(y) = α log β - lgamma(α) - (α + 1) log y - β / y
    mean = β/(α - 1) (α > 1, else inf),  mode = β/(α + 1)
    variance = β² / ((α - 1)² (α - 2)) (α > 2, else inf)
    entropy = α + log β + lgamma(α) - (1 + α) ψ(α)
"""

from __future__ import annotations

import math

from ..ops.gamma_functions import digamma, lgamma
from ..ops.selection import where
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """A batch of inverse-gamma distributions (shape ``concentration``, scale ``rate``)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        a = self.concentration
        return where(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        return where(a > 2, self.rate.pow(2) / ((a - 1).pow(2) * (a - 2)), math.inf)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + lgamma(a) - (1 + a) * digamma(a)
