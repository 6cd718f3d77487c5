"""``RelaxedBernoulli(temperature, probs|logits)``: a coin flip made differentiable.

A Bernoulli draw is a step function of its noise, so no gradient passes.
The relaxation (Maddison et al. 2017, "the Concrete distribution") replaces
the step by a sigmoid of temperature τ: with logistic noise L = log u - log(1 - u),

    x = sigmoid((logit(p) + L) / τ)

lands in (0, 1), near 0 or 1 when τ is small, and ``rsample`` differentiates
it. ``LogitRelaxedBernoulli`` is the same before the sigmoid, with density
(d = logit(p) - τ y):

    log p(y) = log τ + d - 2 log(1 + eᵈ)
"""

from __future__ import annotations

from numbers import Number

from ..ops.sampling import rand
from ..size import Size
from . import constraints
from .bernoulli import ChanceOfSuccess
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(ChanceOfSuccess, Distribution):
    """The relaxed coin flip before its sigmoid: values on the real line."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self.temperature = temperature
        _, value, param = self._take_chance(probs, logits)
        super().__init__(Size() if isinstance(param, Number) else value.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LogitRelaxedBernoulli:
        new = self._expanded_chance(LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(*shape))
        u = clamp_probs(rand(*shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        temperature = self.temperature
        log_t = temperature.log() if hasattr(temperature, "log") else \
            logits.new_full((), float(temperature)).log()
        return log_t + diff - 2 * diff.exp().log1p()


class RelaxedParameters:
    """``temperature``, ``logits`` and ``probs`` of a relaxed family: its base's."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(RelaxedParameters, TransformedDistribution):
    """A batch of relaxed coin flips in (0, 1) with temperature ``temperature``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)
