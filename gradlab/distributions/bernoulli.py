"""``Bernoulli(probs=p)`` or ``Bernoulli(logits=l)``: 1 with probability p, else 0.

    log p(x) = x log p + (1 - x) log(1 - p) = -BCEWithLogits(l, x)
    entropy  = -p log p - (1 - p) log(1 - p) = BCEWithLogits(l, p)

Both are computed from the logits with ``binary_cross_entropy_with_logits``,
which stays finite and exact for large |logits| (a policy that is nearly
sure of an action). Give exactly one of ``probs`` and ``logits``; the other
is computed on first use.
"""

from __future__ import annotations

from numbers import Number

from ..ops.creation import arange
from ..ops.discrete_sampling import bernoulli
from ..ops.losses import binary_cross_entropy_with_logits
from ..ops.selection import where
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


def _one_of(name: str, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"Either `probs` or `logits` must be specified, but not both "
                         f"({name}(probs=...) or {name}(logits=...)).")
    return (probs, True) if probs is not None else (logits, False)


class ChanceOfSuccess:
    """What the families built on one chance of success share (Bernoulli, Binomial,
    Geometric, NegativeBinomial, LogitRelaxedBernoulli): the chance given as ``probs``
    or as ``logits``, the other form computed on first use. A mixin, before
    ``Distribution`` in the bases."""

    def _take_chance(self, probs, logits, *others):
        """Keep whichever of probs / logits was given, broadcast with the ``others``
        parameters; returns (the broadcast others, the parameter tensor, as given)."""
        param, is_probs = _one_of(type(self).__name__, probs, logits)
        *rest, value = broadcast_all(*others, param)
        if is_probs:
            self.probs = value
        else:
            self.logits = value
        self._param = value
        return rest, value, param

    def _expanded_chance(self, cls, batch_shape, _instance, *names):
        """``expand`` for these families: ``names`` and the chance, expanded."""
        new = self._expanded(cls, batch_shape, _instance, *names, "probs", "logits")
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()


class Bernoulli(ChanceOfSuccess, Distribution):
    """A batch of coin flips: 1 with probability ``probs`` (or ``sigmoid(logits)``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        _, value, param = self._take_chance(probs, logits)
        super().__init__(Size() if isinstance(param, Number) else value.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Bernoulli:
        return self._expanded_chance(Bernoulli, batch_shape, _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return where(self.probs == 0.5, float("nan"), mode)  # a fair coin has two modes

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return bernoulli(self.probs.detach().expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
