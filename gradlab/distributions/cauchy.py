"""``Cauchy(loc, scale)``: density 1 / (π σ (1 + ((x - μ)/σ)²)), the ratio of two normals.

Its tails are so heavy that it has no mean or variance (``mean`` is NaN and
``variance`` inf, as in PyTorch); the median and mode are μ.

    log p(x) = -log π - log σ - log(1 + ((x - μ)/σ)²)
    cdf(x) = atan((x - μ)/σ)/π + ½        icdf(p) = μ + σ tan(π (p - ½))
    entropy = log(4πσ)

``rsample``: x = μ + σ ε with ε a standard Cauchy draw (``Tensor.cauchy_``).
"""

from __future__ import annotations

import math

from ..ops.creation import empty, full
from .location_scale import LocationScale

__all__ = ["Cauchy"]


class Cauchy(LocationScale):
    """A batch of Cauchy distributions with medians ``loc`` and half-widths ``scale``."""

    def expand(self, batch_shape, _instance=None) -> Cauchy:
        return self._expanded(Cauchy, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                    device=self.loc.device)

    @property
    def variance(self):
        return full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                    device=self.loc.device)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = empty(*shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - \
            (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
