"""``GeneralizedPareto(loc, scale, concentration)``: the law of the excesses over a high threshold.

Extreme value theory's peaks-over-threshold result: for almost any distribution,
the part of it beyond a high threshold μ, shifted to start at μ, is close to a
generalized Pareto with scale σ > 0 and shape ξ (``concentration``). With
z = (x - μ)/σ:

    survival S(x) = P(X > x) = (1 + ξz)^(-1/ξ)      (e^(-z) at ξ = 0)
    log p(x)      = -log σ - (1/ξ + 1) log1p(ξz)     (-log σ - z at ξ = 0)
    icdf(u)       = μ + σ ((1 - u)^(-ξ) - 1)/ξ       (μ - σ log(1 - u) at ξ = 0)
    mean = μ + σ/(1 - ξ),  variance = σ²/((1 - ξ)² (1 - 2ξ)),  entropy = log σ + ξ + 1

ξ > 0 is a heavy, Pareto-like tail (GeneralizedPareto(σ/ξ, σ, ξ) is Pareto(σ/ξ, 1/ξ));
ξ = 0 is the exponential; ξ < 0 ends at μ - σ/ξ (ξ = -1 is Uniform(μ, μ + σ)). The
support is therefore [μ, ∞) or [μ, μ - σ/ξ], a constraint that depends on the
parameters. ``rsample`` is icdf(u), u ~ Uniform(0, 1), differentiable in all three.

Where |ξ| <= 1e-8 (``isclose(ξ, 0)``, as in PyTorch) the ξ = 0 forms are used, with
their first-order term in ξ kept:

    (1/ξ + 1) log1p(ξz) ≈ z + ξ(z - z²/2),   log1p(ξz)/ξ ≈ z - ξz²/2,
    ((1 - u)^(-ξ) - 1)/ξ ≈ L + ξL²/2   with L = -log(1 - u)

so the values are PyTorch's but the gradient in ξ is the true one there. PyTorch
drops that term, so its gradient in ξ is exactly 0 at ξ = 0, and a fit that starts
from the exponential (ξ = 0) never moves ξ. Two more deliberate differences, for
the cases PyTorch returns NaN: the mean is +inf for ξ >= 1 and the variance +inf
for ξ >= ½ (the integrals diverge to +inf; this also agrees with PyTorch's own
Pareto, the ξ > 0 special case), and the mode is the upper end μ - σ/ξ for ξ < -1,
where the density grows without bound (PyTorch says μ, the least likely point).
"""

from __future__ import annotations

import math
from numbers import Number

from ..ops.comparison import isclose
from ..ops.sampling import rand
from ..ops.selection import where
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """A batch of generalized Pareto distributions: threshold ``loc`` (μ), ``scale`` (σ)
    and shape ``concentration`` (ξ)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(Size() if numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> GeneralizedPareto:
        return self._expanded(GeneralizedPareto, batch_shape, _instance, "loc", "scale",
                              "concentration")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        bounded = self.concentration < 0
        safe = where(bounded, self.concentration, -1.0)  # (no division by ξ >= 0)
        upper = where(bounded, self.loc - self.scale / safe, math.inf)
        return constraints.interval(self.loc, upper)

    def _shape_near_zero(self):
        """(where ξ is taken as 0, ξ with 1 there: safe to divide by)."""
        xi = self.concentration
        eq_zero = isclose(xi, xi.new_zeros(()))
        return eq_zero, where(eq_zero, 1.0, xi)

    def _z(self, x):
        return (x - self.loc) / self.scale

    # --- moments ------------------------------------------------------------------------------

    @property
    def mean(self):
        xi = self.concentration
        finite = xi < 1
        safe = where(finite, xi, 0.5)
        return where(finite, self.loc + self.scale / (1 - safe), math.inf)

    @property
    def variance(self):
        xi = self.concentration
        finite = xi < 0.5
        safe = where(finite, xi, 0.25)
        return where(finite, self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe)),
                     math.inf)

    @property
    def mode(self):
        xi = self.concentration
        unbounded = xi < -1  # the density grows without bound towards the upper end
        safe = where(unbounded, xi, -1.0)
        return where(unbounded, self.loc - self.scale / safe, self.loc)

    def entropy(self):
        """log σ + ξ + 1: -E[log p] with E[log1p(ξZ)] = ξ, since S(X) is uniform."""
        return (self.scale.log() + self.concentration + 1).expand(tuple(self._batch_shape))

    # --- sampling and densities ---------------------------------------------------------------

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(*shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._shape_near_zero()
        power = 1 / safe + 1  # 0 at ξ = -1, the uniform: no 0 · log1p(-1) = 0 · -inf there
        uniform = power == 0
        nonzero = where(uniform, 0.0, power * where(uniform, 0.0, safe * z).log1p())
        near_zero = z + self.concentration * (z - 0.5 * z * z)
        return -self.scale.log() - where(eq_zero, near_zero, nonzero)

    def log_survival_function(self, value):
        """log P(X > x) = -log1p(ξz)/ξ."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._shape_near_zero()
        near_zero = -z + 0.5 * self.concentration * z * z
        return where(eq_zero, near_zero, -(safe * z).log1p() / safe)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero, safe = self._shape_near_zero()
        log_u = (-value).log1p()  # log(1 - u) = -L
        nonzero = self.loc + self.scale / safe * (-safe * log_u).expm1()
        near_zero = self.loc - self.scale * log_u * (1 - 0.5 * self.concentration * log_u)
        return where(eq_zero, near_zero, nonzero)
