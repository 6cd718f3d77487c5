"""``Exponential(rate)``: waiting times, density λ exp(-λx) for x >= 0.

    log p(x) = log λ - λx      entropy = 1 - log λ      mean = 1/λ, variance = 1/λ²
    cdf(x)   = 1 - exp(-λx)    icdf(p) = -log1p(-p) / λ

``rsample`` is x = e / λ with e a standard exponential draw (``exponential_``),
so dx/dλ = -x/λ.
"""

from __future__ import annotations

from numbers import Number

from ..ops.creation import empty, zeros_like
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(Distribution):
    """A batch of exponential distributions with rates ``rate`` (mean 1/rate)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Exponential:
        return self._expanded(Exponential, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        e = empty(*shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()
