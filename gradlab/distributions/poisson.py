"""``Poisson(rate)``: counts of events at rate λ, P(k) = λ^k e^(-λ) / k!.

    log p(k) = k log λ - λ - lgamma(k + 1)      (xlogy keeps 0 · log 0 = 0 at λ = 0)
    mean = variance = λ,   mode = floor(λ)

Draws come from ``gradlab.poisson`` (NumPy's / CuPy's sampler); there is no
rsample, as a count is a step function of λ.
"""

from __future__ import annotations

from numbers import Number

from ..autograd.grad_mode import no_grad
from ..ops.discrete_sampling import poisson
from ..ops.gamma_functions import lgamma
from ..ops.special_math import xlogy
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(Distribution):
    """A batch of Poisson distributions with rates ``rate`` >= 0."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Poisson:
        return self._expanded(Poisson, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape).contiguous())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)
