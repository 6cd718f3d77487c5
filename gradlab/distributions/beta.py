"""``Beta(concentration1, concentration0)``: random probabilities, density ∝ x^(a-1) (1-x)^(b-1).

A Beta is a two-category Dirichlet on (x, 1 - x) with α = (a, b), so
log_prob, entropy and sampling are the Dirichlet's:

    log p(x) = (a - 1) log x + (b - 1) log(1 - x) + lgamma(a + b) - lgamma(a) - lgamma(b)
    mean = a/(a + b),  variance = ab / ((a + b)² (a + b + 1)),  mode = (a - 1)/(a + b - 2)

``rsample`` is the Dirichlet's first coordinate, x = g_a/(g_a + g_b) with
g_a ~ Gamma(a, 1), g_b ~ Gamma(b, 1): implicit reparameterisation (see gamma.py).
"""

from __future__ import annotations

from numbers import Number

from ..ops.joining import stack
from ..size import Size
from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(Distribution):
    """A batch of beta distributions with concentrations ``concentration1`` (a, for x)
    and ``concentration0`` (b, for 1 - x)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(stack([c1, c0], -1), validate_args=False)
        numbers = isinstance(concentration1, Number) and isinstance(concentration0, Number)
        super().__init__(Size() if numbers else self._dirichlet.batch_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, Size(batch_shape), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    def __repr__(self) -> str:
        c1, c0 = self.concentration1, self.concentration0
        return (f"Beta(concentration1: {c1 if c1.numel() == 1 else c1.size()}, "
                f"concentration0: {c0 if c0.numel() == 1 else c0.size()})")
