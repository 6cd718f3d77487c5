"""``FisherSnedecor(df1, df2)``: the F distribution, (X₁/d₁)/(X₂/d₂) for X_i ~ χ²(d_i)
(the ratio of two variance estimates, as in ANOVA).

Drawn as a ratio of gamma draws (each reparameterisable). With a = d₁/2, b = d₂/2:

    log p(x) = lgamma(a + b) - lgamma(a) - lgamma(b) + a log(d₁/d₂)
               + (a - 1) log x - (a + b) log(1 + d₁ x / d₂)
    mean = d₂/(d₂ - 2) (d₂ > 2, else NaN)
    mode = (d₁ - 2)/d₁ · d₂/(d₂ + 2) (d₁ > 2, else NaN)
    variance = 2 d₂² (d₁ + d₂ - 2) / (d₁ (d₂ - 2)² (d₂ - 4)) (d₂ > 4, else NaN)
"""

from __future__ import annotations

import math
from numbers import Number

from ..ops.selection import where
from ..size import Size
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """A batch of F distributions with ``df1`` and ``df2`` degrees of freedom."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        numbers = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(Size() if numbers else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> FisherSnedecor:
        new = self._expanded(FisherSnedecor, batch_shape, _instance, "df1", "df2")
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        d2 = where(self.df2 > 2, self.df2, math.nan)
        return d2 / (d2 - 2)

    @property
    def mode(self):
        d1, d2 = self.df1, self.df2
        return where(d1 > 2, (d1 - 2) / d1 * d2 / (d2 + 2), math.nan)

    @property
    def variance(self):
        d1 = self.df1
        d2 = where(self.df2 > 4, self.df2, math.nan)
        return 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)  # χ²(d₁)/d₁
        x2 = self._gamma2.rsample(sample_shape).reshape(shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = (a + b).lgamma() - a.lgamma() - b.lgamma()
        t2 = a * ratio.log() + (a - 1) * value.log()
        t3 = (a + b) * (ratio * value).log1p()
        return t1 + t2 - t3
