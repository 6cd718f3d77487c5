"""``MultivariateNormal(loc, covariance_matrix=Σ | precision_matrix=Σ⁻¹ | scale_tril=L)``.

Everything goes through the Cholesky factor L (Σ = L Lᵀ, lower triangular,
positive diagonal), computed once from whichever matrix was given:

    log p(x) = -½ (k log 2π + |L⁻¹(x - μ)|²) - Σ log diag(L)
    entropy  = ½ k (1 + log 2π) + Σ log diag(L)
    rsample  = μ + L ε,  ε ~ N(0, I_k)

|L⁻¹(x - μ)|² (the Mahalanobis distance) uses a triangular solve, never Σ⁻¹,
and ½ log det Σ = Σ log diag(L). All of it is differentiable, so gradients
reach μ and the given matrix. The other two matrices are computed on first
use. Batch dims broadcast between ``loc`` and the matrix.
"""

from __future__ import annotations

import math

from .. import linalg
from ..ops.creation import eye
from ..ops.legacy_linalg import cholesky_inverse
from ..ops.repetition import broadcast_shapes
from ..ops.sampling import randn
from ..ops.triangular_solvers import solve_triangular
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(matrix: Tensor, vector: Tensor) -> Tensor:
    """matrix @ vector over broadcast batch dims."""
    return (matrix @ vector.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """|L⁻¹ diff|², with L and diff broadcast over their batch dims."""
    n = diff.shape[-1]
    batch = broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1]))
    L = scale_tril.expand(tuple(batch) + (n, n))  # noqa: N806 - the maths' name
    d = diff.expand(tuple(batch) + (n,))
    return solve_triangular(L, d.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    """L with L Lᵀ = P⁻¹, without inverting P: the Cholesky factor of P with rows and
    columns reversed, flipped back, is an upper triangular U with P = U Uᵀ. Then
    Σ = P⁻¹ = U⁻ᵀ U⁻¹, so L = U⁻ᵀ = solve(Uᵀ, I), lower triangular."""
    lf = linalg.cholesky(precision.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).transpose(-2, -1)  # Uᵀ, lower
    identity = eye(precision.shape[-1], dtype=precision.dtype, device=precision.device)
    return solve_triangular(l_inv, identity.expand(l_inv.shape), upper=False)


class MultivariateNormal(Distribution):
    """A batch of k-dimensional normals: mean vector ``loc`` (..., k) and one of the
    covariance, precision or lower Cholesky matrices (..., k, k)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if not isinstance(loc, Tensor) or loc.dim() < 1:
            raise ValueError(f"loc must be at least one-dimensional (a mean vector of length "
                             f"k), got {type(loc).__name__} of shape "
                             f"{tuple(getattr(loc, 'shape', ()))}")
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril "
                             f"may be specified, got {[n for n, _ in given] or 'none'}.")
        name, matrix = given[0]
        if not isinstance(matrix, Tensor) or matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             f"leading batch dimensions, got shape "
                             f"{tuple(getattr(matrix, 'shape', ()))}")
        k = loc.shape[-1]
        if tuple(matrix.shape[-2:]) != (k, k):
            raise ValueError(f"MultivariateNormal: {name} must be ({k}, {k}) to match loc of "
                             f"shape {tuple(loc.shape)}, got {tuple(matrix.shape)}")
        batch_shape = Size(broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (k, k)))
        self.loc = loc.expand(tuple(batch_shape) + (k,))
        super().__init__(batch_shape, Size((k,)), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        k = self._event_shape[0]
        new.loc = self.loc.expand(tuple(batch_shape) + (k,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(tuple(batch_shape) + (k, k)))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, matrix: Tensor) -> Tensor:
        return matrix.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril  # noqa: N806
        return self._full(L @ L.mT)

    @lazy_property
    def precision_matrix(self):
        return self._full(cholesky_inverse(self._unbroadcasted_scale_tril))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape + self._event_shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self._event_shape[0]
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(tuple(self._batch_shape)) if self._batch_shape else h
