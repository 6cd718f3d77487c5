"""``VonMises(loc, concentration)``: the normal distribution of the circle (angles, headings).

Density e^(κ cos(x - μ)) / (2π I₀(κ)) on [-π, π), with I₀ the modified Bessel
function (computed as log I₀(κ) = log i0e(κ) + κ, which cannot overflow):

    log p(x) = κ cos(x - μ) - log 2π - log I₀(κ)
    mean = mode = μ,   circular variance = 1 - I₁(κ)/I₀(κ)

Draws use Best and Fisher's rejection sampler (1979): a wrapped-Cauchy
proposal accepted with the right probability, so there is no ``rsample``.
"""

from __future__ import annotations

import math
from numbers import Number

import numpy as np

from ..autograd.grad_mode import no_grad
from ..ops.creation import tensor
from ..ops.modified_bessel import i0e, i1e
from ..ops.sampling import rand
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["VonMises"]


class VonMises(Distribution):
    """A batch of von Mises distributions: mean direction ``loc``, ``concentration`` κ."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        numbers = isinstance(loc, Number) and isinstance(concentration, Number)
        super().__init__(Size() if numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> VonMises:
        return self._expanded(VonMises, batch_shape, _instance, "loc", "concentration")

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        kappa = self.concentration
        log_i0 = i0e(kappa).log() + kappa
        return kappa * (value - self.loc).cos() - math.log(2 * math.pi) - log_i0

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 1 - i1e(self.concentration) / i0e(self.concentration)

    def sample(self, sample_shape=()):
        """Best-Fisher rejection sampling, in float64, repeated until every draw is in."""
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            loc = np.broadcast_to(self.loc.detach().cpu().numpy().astype(np.float64), shape)
            kappa = np.broadcast_to(
                self.concentration.detach().cpu().numpy().astype(np.float64), shape)
            tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
            rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(kappa < 1e-5, 1 / kappa, (1 + rho ** 2) / (2 * rho))
            angle = np.zeros(shape)
            todo = np.ones(shape, dtype=bool)
            while todo.any():
                u1, u2, u3 = rand(3, *shape, dtype=self.loc.dtype).double().numpy()
                z = np.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                with np.errstate(divide="ignore", invalid="ignore"):
                    accept = (c * (2 - c) - u2 > 0) | (np.log(c / u2) + 1 - c >= 0)
                theta = np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1))
                take = todo & accept
                angle = np.where(take, theta, angle)
                todo = todo & ~accept
            wrapped = np.mod(angle + loc + math.pi, 2 * math.pi) - math.pi
        return tensor(wrapped, dtype=self.loc.dtype, device=self.loc.device)
