"""``Normal(loc, scale)``: the Gaussian, density exp(-(x - μ)² / 2σ²) / (σ √(2π)).

    log p(x) = -(x - μ)² / (2σ²) - log σ - ½ log 2π
    entropy  = ½ + ½ log 2π + log σ
    cdf(x)   = ½ (1 + erf((x - μ) / (σ √2)))       icdf(p) = μ + σ √2 erfinv(2p - 1)

``rsample`` is the reparameterisation trick: x = μ + σ ε with ε ~ N(0, 1)
drawn by ``gradlab.randn``, so dx/dμ = 1 and dx/dσ = ε.
"""

from __future__ import annotations

import math

from ..ops.error_function import erfinv
from ..ops.sampling import randn
from .location_scale import LocationScale

__all__ = ["Normal"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class Normal(LocationScale):
    """A batch of normal distributions with means ``loc`` and standard deviations ``scale``."""

    def expand(self, batch_shape, _instance=None) -> Normal:
        return self._expanded(Normal, batch_shape, _instance, "loc", "scale")

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
