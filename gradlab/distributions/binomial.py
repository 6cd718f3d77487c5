"""``Binomial(total_count=n, probs=p)`` (or ``logits=l``): successes in n independent flips.

    P(k)     = C(n, k) p^k (1 - p)^(n - k),   k = 0 .. n
    log p(k) = lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) + k l - n log(1 + e^l)

with l = log(p / (1 - p)): k log p + (n - k) log(1 - p) = k l + n log(1 - p),
and -log(1 - p) = log(1 + e^l) = max(l, 0) + log(1 + e^-|l|), which stays
finite and exact for large |l| (PyTorch's form; its max(l, 0) has gradient ½
at l = 0, kept here).

    mean = n p,   variance = n p (1 - p),   mode = min(floor((n + 1) p), n)
    entropy = -Σ_k P(k) log P(k)   (a sum over the n + 1 values: one n for the batch)

``total_count`` may be a number or a tensor (broadcast with the parameter);
its support, the integers 0 .. n, depends on it (a ``dependent_property``).
Draws come from ``gradlab.binomial``; there is no rsample (a count is a step
function of p).
"""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..ops.creation import arange, full_like
from ..ops.discrete_sampling import binomial
from ..ops.gamma_functions import lgamma
from ..ops.selection import where
from . import constraints
from .bernoulli import ChanceOfSuccess
from .distribution import Distribution
from .kl import register_kl
from .poisson import Poisson

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0) with gradient ½ at x = 0 (PyTorch's choice, so gradients agree there)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _homogeneous_count(dist, what: str) -> int:
    """The one total_count of the batch, for sums over the values 0 .. n."""
    total_count = int(dist.total_count.max())
    if not float(dist.total_count.min()) == total_count:
        raise NotImplementedError(
            f"Inhomogeneous total count not supported by `{what}` (total_count ranges from "
            f"{float(dist.total_count.min())} to {float(dist.total_count.max())}: the values "
            "0 .. n must be the same for the whole batch). Fix: one Binomial per total_count")
    return total_count


class Binomial(ChanceOfSuccess, Distribution):
    """A batch of binomial distributions: ``total_count`` flips of chance ``probs``."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        (total_count,), value, _ = self._take_chance(probs, logits, total_count)
        self.total_count = total_count.type_as(value)
        super().__init__(value.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Binomial:
        return self._expanded_chance(Binomial, batch_shape, _instance, "total_count")

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)


    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():  # (flat: gradlab.binomial of 0-d tensors fails in NumPy's output)
            draws = binomial(self.total_count.detach().expand(shape).reshape(-1),
                             self.probs.detach().expand(shape).reshape(-1))
            return draws.reshape(shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = lgamma(n + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(n - value + 1)
        # n log(1 + e^l) = n max(l, 0) + n log(1 + e^-|l|), minus log n! for the C(n, k)
        normalize_term = (n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
                          - log_factorial_n)
        return value * logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        _homogeneous_count(self, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True):
        total_count = _homogeneous_count(self, "enumerate_support")
        values = arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    """n [p (logit p - logit q) + log(1 - p) - log(1 - q)] for equal n; inf where n_p > n_q
    (p puts mass on counts q can't reach)."""
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Poisson, Binomial)
def _kl_poisson_binomial(p, q):
    """A Poisson puts mass on every count, a binomial on 0 .. n only: KL = inf."""
    return full_like(p.rate, math.inf)
