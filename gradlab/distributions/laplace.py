"""``Laplace(loc, scale)``: density exp(-|x - μ| / b) / (2b), a normal with fatter tails.

    log p(x) = -log 2b - |x - μ| / b          entropy = 1 + log 2b
    cdf(x)   = ½ - ½ sign(x - μ) expm1(-|x - μ| / b)
    icdf(p)  = μ - b sign(p - ½) log1p(-2|p - ½|)

``rsample`` inverts the cdf at u ~ Uniform(-1, 1): x = μ - b sign(u) log1p(-|u|).
"""

from __future__ import annotations

import math

from ..ops.sampling import rand
from ..type_info import finfo
from .location_scale import LocationScale

__all__ = ["Laplace"]


class Laplace(LocationScale):
    """A batch of Laplace distributions with location ``loc`` and scale ``scale``."""

    def expand(self, batch_shape, _instance=None) -> Laplace:
        return self._expanded(Laplace, batch_shape, _instance, "loc", "scale")

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = finfo(self.loc.dtype).eps
        u = rand(*shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) - (1 - eps)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
