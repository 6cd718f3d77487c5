"""``Categorical(probs=p)`` or ``Categorical(logits=l)``: one of K categories, P(k) = p_k.

The last dim of the parameter holds the K categories; the dims before it
are the batch. Probabilities need not add up to 1 (they are normalised),
logits are any reals (normalised to log-probabilities: l - logsumexp(l)).

    log p(k) = logits[k]                 (a gather: the policy-gradient log π(a|s))
    entropy  = -Σ_k p_k log p_k

Samples are category indices (int64), drawn by ``gradlab.multinomial``.
"""

from __future__ import annotations

import math

from ..ops.creation import arange, full
from ..ops.repetition import broadcast_shapes
from ..ops.sampling import multinomial
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """A batch of distributions over the categories ``0 .. K-1`` (K = last dim)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        param, is_probs = _one_of(type(self).__name__, probs, logits)
        if not isinstance(param, Tensor):
            raise TypeError(f"{type(self).__name__}: {'probs' if is_probs else 'logits'} must "
                            f"be a Tensor, got {type(param).__name__}")
        if param.dim() < 1:
            raise ValueError(f"`{'probs' if is_probs else 'logits'}` parameter must be at least "
                             f"one-dimensional (the last dim holds the categories), got shape "
                             f"{tuple(param.shape)}. Fix: unsqueeze(-1) is wrong here; "
                             "pass the K category weights as a vector")
        if is_probs:
            self.probs = param / param.sum(-1, keepdim=True)
        else:
            self.logits = param - param.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if is_probs else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = batch_shape + (self._num_events,)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(param_shape))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self):  # a category index has no meaningful mean
        return full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        draws = multinomial(probs_2d, max(sample_shape.numel(), 1), True).T
        return draws[:sample_shape.numel()].reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        batch = broadcast_shapes(tuple(value.shape[:-1]), tuple(self.logits.shape[:-1]))
        log_pmf = self.logits.expand(tuple(batch) + (self._num_events,))
        return log_pmf.gather(-1, value.expand(tuple(batch) + (1,))).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        p_log_p = logits * self.probs  # 0 · (clamped -inf) = 0 for impossible categories
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand: bool = True):
        values = arange(self._num_events, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
