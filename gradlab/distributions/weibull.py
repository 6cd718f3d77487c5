"""``Weibull(scale, concentration)``: lifetimes whose failure rate grows (k > 1) or falls.

Built from an Exponential(1) draw e: y = λ e^(1/k) (λ = scale, k =
concentration). With Γ the gamma function:

    mean = λ Γ(1 + 1/k),  variance = λ² (Γ(1 + 2/k) - Γ(1 + 1/k)²)
    mode = λ ((k - 1)/k)^(1/k)
    entropy = γ (1 - 1/k) + log(λ/k) + 1      (γ: Euler's constant)
"""

from __future__ import annotations

from ..ops.creation import ones_like
from ..ops.gamma_functions import lgamma
from . import constraints
from .exponential import Exponential
from .gumbel import EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """A batch of Weibull distributions with scales ``scale`` and shapes ``concentration``."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(*batch_shape)
        new.concentration = self.concentration.expand(*batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * (lgamma(1 + 2 * self.concentration_reciprocal).exp() -
                                    lgamma(1 + self.concentration_reciprocal).exp().pow(2))

    def entropy(self):
        return EULER_GAMMA * (1 - self.concentration_reciprocal) + \
            (self.scale * self.concentration_reciprocal).log() + 1
