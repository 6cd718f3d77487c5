"""``Kumaraswamy(concentration1, concentration0)``: a Beta look-alike with a closed-form cdf.

Density a b xᵃ⁻¹ (1 - xᵃ)ᵇ⁻¹ on (0, 1) (a = concentration1, b =
concentration0), so cdf(x) = 1 - (1 - xᵃ)ᵇ and a draw is
x = (1 - u^(1/b))^(1/a) for uniform u: reparameterisable without the
implicit gradients Beta needs. Moments: E[xⁿ] = b B(1 + n/a, b).

    entropy = (1 - 1/b) + (1 - 1/a) H_b - log a - log b   (H_b = ψ(b + 1) + γ)
"""

from __future__ import annotations

import math

from ..ops.creation import full_like
from ..ops.gamma_functions import digamma, lgamma
from ..ops.selection import where
from . import constraints
from .gumbel import EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Kumaraswamy"]


def _moments(a, b, n: int):
    """E[xⁿ] = b · B(1 + n/a, b), through log-gammas."""
    arg1 = 1 + n / a
    return b * (lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """A batch of Kumaraswamy distributions on (0, 1)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(*batch_shape)
        new.concentration0 = self.concentration0.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        """((a - 1)/(ab - 1))^(1/a) where a, b >= 1 (NaN otherwise: the density is
        unbounded at an end). PyTorch 2.13's formula takes log(1 - b), NaN for every
        b > 1; this is where the density peaks."""
        a, b = self.concentration1, self.concentration0
        return where((a < 1) | (b < 1), math.nan, ((a - 1) / (a * b - 1)) ** a.reciprocal())

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic = digamma(b + 1) + EULER_GAMMA
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - a.log() - b.log()
