"""``RelaxedOneHotCategorical(temperature, probs|logits)``: Gumbel-softmax, a differentiable
stand-in for a one-hot draw.

The Gumbel-max trick draws a category as argmax(logits + g) with g standard
Gumbel noise; argmax has no useful gradient, so the relaxation (Jang et al.
2017; Maddison et al. 2017) takes a softmax at temperature τ instead:

    y = softmax((logits + g) / τ)

a point of the simplex that approaches a one-hot vector as τ -> 0.
``ExpRelaxedCategorical`` is its log (log-softmax of the same scores), with
density (K categories, s = logits - τ y):

    log p(y) = lgamma(K) + (K - 1) log τ + Σ_k s_k - K logsumexp(s)
"""

from __future__ import annotations

from ..ops.creation import full_like
from ..ops.sampling import rand
from ..size import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .relaxed_bernoulli import RelaxedParameters
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a Gumbel-softmax draw: vectors y with Σ exp(y) = 1."""

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.independent(constraints.real, 1)
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> ExpRelaxedCategorical:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand(*shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self._categorical._num_events
        logits, value = broadcast_all(self.logits, value)
        temperature = self.temperature
        if not hasattr(temperature, "log"):
            temperature = logits.new_full((), float(temperature))
        log_scale = full_like(temperature, k).lgamma() - temperature.log() * -(k - 1)
        score = logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(RelaxedParameters, TransformedDistribution):
    """A batch of Gumbel-softmax distributions on the simplex, temperature ``temperature``."""

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)
