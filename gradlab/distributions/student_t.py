"""``StudentT(df, loc, scale)``: a normal whose variance is itself uncertain (heavy tails).

x = μ + σ z / √(v / ν) with z ~ N(0, 1) and v ~ χ²(ν) (ν = df), which is how
``rsample`` draws it (both parts reparameterisable). With y = (x - μ)/σ:

    log p(x) = -(ν + 1)/2 · log(1 + y²/ν) - log σ - ½ log ν - log B(½, ν/2)
    mean = μ (ν > 1, else NaN),  variance = σ² ν/(ν - 2) (ν > 2; inf for 1 < ν <= 2)
    entropy = log σ + (ν + 1)/2 (ψ((ν + 1)/2) - ψ(ν/2)) + ½ log ν + log B(½, ν/2)
"""

from __future__ import annotations

import math
from numbers import Number

from ..ops.gamma_functions import digamma, lgamma
from ..ops.sampling import randn
from ..ops.selection import where
from ..size import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """A batch of Student's t distributions with ``df`` degrees of freedom."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        numbers = all(isinstance(v, Number) for v in (df, loc, scale))
        super().__init__(Size() if numbers else self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> StudentT:
        new = self._expanded(StudentT, batch_shape, _instance, "df", "loc", "scale")
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / where(df > 2, df - 2, 1.0)
        return where(df > 2, finite, where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        z = randn(*shape, dtype=self.df.dtype, device=self.df.device)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * (v / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        df = self.df
        normaliser = self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + \
            lgamma(0.5 * df) - lgamma(0.5 * (df + 1.0))
        return -0.5 * (df + 1.0) * (y.pow(2) / df).log1p() - normaliser

    def entropy(self):
        df = self.df
        log_beta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return self.scale.log() + 0.5 * (df + 1) * (digamma(0.5 * (df + 1)) -
                                                    digamma(0.5 * df)) + \
            0.5 * df.log() + log_beta
