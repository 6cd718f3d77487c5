"""``Uniform(low, high)``: every value in [low, high) equally likely.

    log p(x) = -log(high - low) inside, -inf outside     entropy = log(high - low)
    cdf(x)   = clamp((x - low) / (high - low), 0, 1)     icdf(p) = low + p (high - low)

``rsample`` is x = low + u (high - low) with u ~ Uniform[0, 1) (``gradlab.rand``),
so gradients reach both ends: dx/dlow = 1 - u, dx/dhigh = u.
"""

from __future__ import annotations

from numbers import Number

from ..ops.sampling import rand
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """A batch of uniform distributions on ``[low, high)``."""

    has_rsample = True

    @property
    def arg_constraints(self) -> dict:
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None) -> None:
        self.low, self.high = broadcast_all(low, high)
        numbers = isinstance(low, Number) and isinstance(high, Number)
        super().__init__(Size() if numbers else self.low.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Uniform:
        return self._expanded(Uniform, batch_shape, _instance, "low", "high")

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return float("nan") * self.high  # every point of the interval is a mode

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = rand(*shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value) & (value < self.high)
        return inside.to(self.low.dtype).log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return self.low + value * (self.high - self.low)

    def entropy(self):
        return (self.high - self.low).log()
