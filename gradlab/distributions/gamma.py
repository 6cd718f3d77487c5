"""``Gamma(concentration, rate)``: density β^α x^(α-1) e^(-βx) / Γ(α) for x > 0.

    log p(x) = α log β + (α - 1) log x - βx - lgamma(α)
    entropy  = α - log β + lgamma(α) + (1 - α) digamma(α)
    mean = α/β,  variance = α/β²,  mode = max(α - 1, 0)/β

Draws: x = g / β with g ~ Gamma(α, 1) from the backend generator's
``standard_gamma`` (NumPy's / CuPy's), so ``gradlab.manual_seed`` repeats
them. ``rsample`` differentiates them by implicit reparameterisation: g is
made by rejection sampling, so it is not a smooth function of α and some
noise, but its CDF value u = P(α, g) can be held fixed instead, which gives
dg/dα = -(∂P/∂α)/(∂P/∂g) (see gradlab/ops/gamma_sampling.py). ``Beta`` and
``Dirichlet`` are normalised gamma draws, so their gradients follow.
"""

from __future__ import annotations

from numbers import Number

from ..ops.gamma_functions import digamma, lgamma
from ..ops.gamma_sampling import _standard_gamma
from ..ops.incomplete_gamma import gammainc
from ..ops.special_math import xlogy
from ..size import Size
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Gamma"]


def _clamp_keeping_gradient(value, low, high=None):
    """``value`` clamped to [low, high] in value only: the gradient stays the unclamped one
    (PyTorch clamps its draws in place on a detached view, which autograd does not see)."""
    plain = value.detach()  # (no gradient and no forward-mode tangent)
    return value + (plain.clamp(min=low, max=high) - plain)  # + 0 where nothing was clamped


class Gamma(Distribution):
    """A batch of gamma distributions: shape ``concentration`` (α), ``rate`` (β)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        numbers = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(Size() if numbers else self.concentration.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Gamma:
        return self._expanded(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        """x = g/β, g ~ Gamma(α, 1); dx/dα = (dg/dα)/β by implicit reparameterisation."""
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return _clamp_keeping_gradient(value, finfo(value.dtype).tiny)  # an underflowed x/β

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return xlogy(a, b) + xlogy(a - 1, value) - b * value - lgamma(a)

    def cdf(self, value):
        """P(a, rate·x), the regularised lower incomplete gamma function (differentiable in
        ``rate`` and ``value``, not in ``concentration``, as in PyTorch)."""
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)
