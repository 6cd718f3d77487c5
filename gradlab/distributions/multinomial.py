"""``Multinomial(total_count=n, probs=p)`` (or ``logits=l``): counts of n categorical draws.

Draw n times from ``Categorical(p)`` over K categories and count how often
each came up: a value is a vector x of K counts (``event_shape`` (K,)).

    P(x)     = n! / (x_1! ... x_K!) p_1^x_1 ... p_K^x_K
    log p(x) = lgamma(Σx + 1) - Σ lgamma(x_k + 1) + Σ x_k log p_k
    mean = n p,   variance = n p (1 - p)   (per category: each count is Binomial(n, p_k))

``log_prob`` takes n from the value (Σx), as PyTorch does, so one
distribution scores count vectors of any total; for the same reason its
support only checks x >= 0 and Σx <= n (PyTorch's ``constraints.multinomial``).
Like ``Categorical``, probabilities are normalised and logits shifted so
logsumexp(l) = 0. ``total_count`` is one Python int for the whole batch.

    entropy = n H(p) - log n! + Σ_k Σ_{j=1..n} Binomial(n, p_k)(j) log j!

(-E log P(x) with E[x_k] = n p_k, and E[log x_k!] summed over each count's
binomial marginal.) Draws use conditional binomials: x_1 ~ Binomial(n, p_1),
then x_2 ~ Binomial(n - x_1, p_2/(p_2 + ... + p_K)), and so on; the last
category takes what is left. That is K ``gradlab.binomial`` calls, whatever
n is (PyTorch draws n categories and counts them: the same distribution).
"""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..ops.creation import full
from ..ops.discrete_sampling import binomial
from ..ops.gamma_functions import lgamma
from ..ops.joining import stack
from ..ops.selection import where
from ..size import Size
from ..type_info import finfo
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["Multinomial"]


class _Multinomial(constraints.Constraint):
    """Count vectors with x >= 0 and Σx <= upper_bound (PyTorch's weaker check: it does not
    ask for whole numbers, nor for Σx == upper_bound)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Multinomial(upper_bound={self.upper_bound})"


class Multinomial(Distribution):
    """A batch of multinomials: counts of ``total_count`` draws over K categories (last dim)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        if isinstance(total_count, bool) or not isinstance(total_count, int):
            raise NotImplementedError(
                f"inhomogeneous total_count is not supported: Multinomial takes one Python int "
                f"for the whole batch, got {type(total_count).__name__}. Fix: int(total_count), "
                "or one Multinomial per count")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits, validate_args=False)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def _check_parameters(self) -> None:
        if self.total_count < 0:
            raise ValueError(f"Expected parameter total_count of distribution {self!r} to be a "
                             f"whole number >= 0 (a number of draws), got {self.total_count} "
                             "(Multinomial: pass validate_args=False to skip this check)")
        super()._check_parameters()

    def expand(self, batch_shape, _instance=None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return _Multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @lazy_property
    def _binomial(self) -> Binomial:
        """Each count's marginal, Binomial(n, p_k): batch shape batch_shape + (K,)."""
        return Binomial(total_count=self.total_count, probs=self.probs, validate_args=False)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            probs = self.probs.detach().expand(shape)
            # tail_k = p_k + ... + p_K >= p_k, so each ratio is in [0, 1] (1 for the last
            # category with any mass: it takes what is left)
            tail = probs.flip(-1).cumsum(-1).flip(-1)
            ratio = (probs / tail.clamp(min=finfo(probs.dtype).tiny)).clamp(max=1.0)
            ratio = ratio.reshape(-1, shape[-1])  # (flat: 0-d tensors trip gradlab.binomial)
            left = full((ratio.shape[0],), float(self.total_count), dtype=probs.dtype,
                        device=probs.device)
            counts = []
            for k in range(shape[-1]):
                count = binomial(left, ratio[:, k].contiguous())
                counts.append(count)
                left = left - count
            return stack(counts, -1).reshape(shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        # x_k = 0 of an impossible category (logit -inf): 0 · (-inf) would be NaN, p^0 = 1
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers

    def entropy(self):
        n = self.total_count
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]  # j = 1 .. n
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = lgamma(support + 1)
        term2 = (binomial_probs * weights).sum((0, -1))
        return term1 + term2
