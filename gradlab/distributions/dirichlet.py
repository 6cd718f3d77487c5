"""``Dirichlet(concentration)``: random probability vectors, density ∝ Π x_i^(α_i - 1).

With α0 = Σ α_i and K the number of categories (the last dim):

    log p(x) = Σ (α_i - 1) log x_i + lgamma(α0) - Σ lgamma(α_i)
    entropy  = Σ lgamma(α_i) - lgamma(α0) - (K - α0) ψ(α0) - Σ (α_i - 1) ψ(α_i)
    mean = α/α0,  variance_i = α_i (α0 - α_i) / (α0² (α0 + 1))

A draw normalises K independent Gamma(α_i, 1) draws: x = g / Σ g, and
``rsample``'s gradient is that of this formula, with each dg_i/dα_i from
implicit reparameterisation (see gamma.py). PyTorch uses another pathwise
gradient (``_dirichlet_grad``, through each coordinate's Beta marginal):
the two differ per draw but have the same expectation, the gradient of
E[f(x)], which is what a reparameterised draw is for.
"""

from __future__ import annotations

from ..ops.gamma_functions import digamma, lgamma
from ..ops.lookup import one_hot
from ..ops.selection import where
from ..ops.special_math import xlogy
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .gamma import _clamp_keeping_gradient, _standard_gamma

__all__ = ["Dirichlet"]


class Dirichlet(Distribution):
    """A batch of Dirichlet distributions over the simplex of the last dim of ``concentration``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None) -> None:
        if not isinstance(concentration, Tensor) or concentration.dim() < 1:
            shape = tuple(getattr(concentration, "shape", ()))
            raise ValueError(f"`concentration` parameter must be at least one-dimensional (the "
                             f"last dim holds the K categories), got {type(concentration).__name__}"
                             f" of shape {shape}")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self._event_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        """(α - 1)/Σ(α - 1) with α - 1 clamped at 0; the largest α's corner when every α < 1."""
        excess = (self.concentration - 1).clamp(min=0.0)
        mode = excess / excess.sum(-1, keepdim=True)
        corner = one_hot(self.concentration.argmax(dim=-1), self.concentration.shape[-1])
        all_below_one = (self.concentration < 1).all(-1, keepdim=True)
        return where(all_below_one, corner.to(mode.dtype), mode)

    @property
    def variance(self):
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def rsample(self, sample_shape=()):
        """x = g/Σg, g_i ~ Gamma(α_i, 1), each dg_i/dα_i by implicit reparameterisation."""
        shape = self._extended_shape(sample_shape)
        g = _standard_gamma(self.concentration.expand(shape))
        x = g / g.sum(-1, keepdim=True)
        info = finfo(x.dtype)
        return _clamp_keeping_gradient(x, info.tiny, 1 - info.eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return xlogy(a - 1.0, value).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)

    def entropy(self):
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return (lgamma(a).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((a - 1.0) * digamma(a)).sum(-1))
