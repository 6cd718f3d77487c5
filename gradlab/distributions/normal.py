"""``Normal(loc, scale)``: the Gaussian, density exp(-(x - μ)² / 2σ²) / (σ √(2π)).

    log p(x) = -(x - μ)² / (2σ²) - log σ - ½ log 2π
    entropy  = ½ + ½ log 2π + log σ
    cdf(x)   = ½ (1 + erf((x - μ) / (σ √2)))       icdf(p) = μ + σ √2 erfinv(2p - 1)

``rsample`` is the reparameterisation trick: x = μ + σ ε with ε ~ N(0, 1)
drawn by ``gradlab.randn``, so dx/dμ = 1 and dx/dσ = ε.
"""

from __future__ import annotations

import math
from numbers import Number

from ..ops.error_function import erfinv
from ..ops.sampling import randn
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Normal"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class Normal(Distribution):
    """A batch of normal distributions with means ``loc`` and standard deviations ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(Size() if numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Normal:
        return self._expanded(Normal, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - self.scale.log() \
            - _HALF_LOG_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _HALF_LOG_2PI + self.scale.log()
