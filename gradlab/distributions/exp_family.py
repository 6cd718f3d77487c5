"""``ExponentialFamily``: densities of the form h(x) exp(⟨θ, T(x)⟩ - A(θ)).

θ are the natural parameters, T(x) the sufficient statistics, A the log
normaliser (log-partition function). Two facts make the family special:
∇A(θ) = E[T(x)], so the entropy needs no integral,

    H = A(θ) - ⟨θ, ∇A(θ)⟩ - E[log h(x)]

and the KL between two members is the Bregman divergence of A. A subclass
gives ``_natural_params`` (a tuple of tensors), ``_log_normalizer(*θ)`` and
``_mean_carrier_measure`` (E[log h(x)]); ``entropy`` then follows, computed
with autograd.
"""

from __future__ import annotations

from ..autograd import grad
from ..autograd.grad_mode import enable_grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class for exponential families (see the module docstring)."""

    @property
    def _natural_params(self):
        raise NotImplementedError(f"{type(self).__name__} does not define _natural_params")

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError(f"{type(self).__name__} does not define _log_normalizer")

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError(f"{type(self).__name__} does not define "
                                  f"_mean_carrier_measure")

    def entropy(self):
        """A(θ) - ⟨θ, ∇A(θ)⟩ - E[log h(x)], with ∇A from autograd."""
        result = -self._mean_carrier_measure
        with enable_grad():
            params = [p.detach().requires_grad_() for p in self._natural_params]
            log_norm = self._log_normalizer(*params)
            gradients = grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(
                tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
