"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: a normal with Σ = W Wᵀ + D.

W = ``cov_factor`` is (n, m) with a small rank m, D = diag(``cov_diag``) is
positive: a few shared directions of variation plus independent noise (factor
analysis, the posteriors of SWAG and of low-rank variational inference). The
n × n matrix Σ is never formed; everything goes through the m × m
*capacitance* matrix and its Cholesky factor:

    C = I_m + Wᵀ D⁻¹ W = L_C L_Cᵀ
    log det Σ   = log det C + Σ log D              (matrix determinant lemma)
    xᵀ Σ⁻¹ x    = xᵀ D⁻¹ x - |L_C⁻¹ Wᵀ D⁻¹ x|²       (Woodbury identity)
    log p(x)    = -½ (n log 2π + log det Σ + (x - μ)ᵀ Σ⁻¹ (x - μ))
    entropy     = ½ (n (1 + log 2π) + log det Σ)
    rsample     = μ + W ε_W + √D ⊙ ε_D,   ε_W ~ N(0, I_m), ε_D ~ N(0, I_n)

so log_prob costs O(n m²) instead of O(n³). ``covariance_matrix``,
``precision_matrix`` (Woodbury again), ``scale_tril`` and ``variance``
(diag Σ = Σ_j W²_ij + D_i) are computed on first use. Batch dims broadcast
between the three parameters.

KL divergences with ``MultivariateNormal`` (either side) and between two of
these are registered here, with the same Woodbury expansion of tr(Σq⁻¹ Σp).
"""

from __future__ import annotations

import math

from .. import linalg
from ..ops.creation import eye
from ..ops.diagonals import diag_embed
from ..ops.repetition import broadcast_shapes, broadcast_tensors
from ..ops.sampling import randn
from ..ops.triangular_solvers import solve_triangular
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .kl import register_kl
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _batch_mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _identity_like(matrix: Tensor) -> Tensor:
    return eye(matrix.shape[-1], dtype=matrix.dtype, device=matrix.device)


def _batch_capacitance_tril(W: Tensor, D: Tensor) -> Tensor:  # noqa: N803 - the maths' names
    """Cholesky factor of C = I + Wᵀ D⁻¹ W (m × m, eigenvalues >= 1: always well posed)."""
    K = (W.mT / D.unsqueeze(-2)) @ W  # noqa: N806
    return linalg.cholesky(K + _identity_like(K))


def _batch_lowrank_logdet(W: Tensor, D: Tensor, capacitance_tril: Tensor) -> Tensor:  # noqa: N803
    """log det(W Wᵀ + D) = log det C + log det D (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor,  # noqa: N803
                               capacitance_tril: Tensor) -> Tensor:
    """xᵀ (W Wᵀ + D)⁻¹ x by the Woodbury identity
    (W Wᵀ + D)⁻¹ = D⁻¹ - D⁻¹ W C⁻¹ Wᵀ D⁻¹, so xᵀ Σ⁻¹ x = xᵀ D⁻¹ x - |L_C⁻¹ Wᵀ D⁻¹ x|²."""
    wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


def _batch_trace_xxt(matrix: Tensor) -> Tensor:
    """tr(X Xᵀ) = Σ X²_ij over the last two dims."""
    return matrix.pow(2).sum((-2, -1))


class LowRankMultivariateNormal(Distribution):
    """A batch of n-dimensional normals with mean ``loc`` (..., n) and covariance
    ``cov_factor @ cov_factor.mT + diag(cov_diag)``: ``cov_factor`` (..., n, m),
    ``cov_diag`` (..., n), positive."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None) -> None:
        for name, value in (("loc", loc), ("cov_factor", cov_factor), ("cov_diag", cov_diag)):
            if not isinstance(value, Tensor):
                raise TypeError(f"LowRankMultivariateNormal: {name} must be a Tensor, got "
                                f"{type(value).__name__}")
        if loc.dim() < 1:
            raise ValueError(f"loc must be at least one-dimensional (a mean vector of length "
                             f"n), got shape {tuple(loc.shape)}.")
        event_shape = Size(loc.shape[-1:])
        n = event_shape[0]
        if cov_factor.dim() < 2:
            raise ValueError(f"cov_factor must be at least two-dimensional, with optional "
                             f"leading batch dimensions (an n x m matrix, m the rank), got "
                             f"shape {tuple(cov_factor.shape)}")
        if tuple(cov_factor.shape[-2:-1]) != (n,):
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m, got "
                             f"shape {tuple(cov_factor.shape)} (loc has shape "
                             f"{tuple(loc.shape)})")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {(n,)}, got "
                             f"shape {tuple(cov_diag.shape)}")
        try:  # loc and cov_diag gain the rank dim (size 1) to broadcast with cov_factor
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError):
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}") \
                from None
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)
        # after validation, so a non-positive cov_diag fails as a ValueError, not in cholesky
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)

    def expand(self, batch_shape, _instance=None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape + self._event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, matrix: Tensor) -> Tensor:
        return matrix.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """diag(W Wᵀ + D) = Σ_j W²_ij + D_i."""
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(tuple(self._batch_shape
                                                             + self._event_shape))

    @lazy_property
    def scale_tril(self):
        """Cholesky of Σ as D^½ chol(I + D^-½ W Wᵀ D^-½): the inner matrix has eigenvalues
        >= 1, so its factorisation is well conditioned (GPML, section 3.4.3)."""
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / d_sqrt
        K = dinvsqrt_w @ dinvsqrt_w.mT  # noqa: N806
        return self._full(d_sqrt * linalg.cholesky(K + _identity_like(K)))

    @lazy_property
    def covariance_matrix(self):
        """W Wᵀ + diag(D): n × n, formed only when asked for."""
        W = self._unbroadcasted_cov_factor  # noqa: N806
        return self._full(W @ W.mT + diag_embed(self._unbroadcasted_cov_diag))

    @lazy_property
    def precision_matrix(self):
        """Woodbury: Σ⁻¹ = D⁻¹ - Aᵀ A with A = L_C⁻¹ Wᵀ D⁻¹."""
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, wt_dinv, upper=False)  # noqa: N806
        return self._full(diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_w = randn(*w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self) -> Tensor:
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                     self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, value - self.loc,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + m)

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(tuple(self._batch_shape)) if self._batch_shape else h


# --- KL divergences: ½ (log det Σq - log det Σp + tr(Σq⁻¹ Σp) + Mahalanobis - n) ----------

def _check_event_shapes(p, q, what: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes "
                         f"cannot be computed: {tuple(p.event_shape)} vs "
                         f"{tuple(q.event_shape)}")


def _woodbury_a(q: LowRankMultivariateNormal) -> Tensor:
    """A = L_C⁻¹ Wᵀ D⁻¹ of q, so Σq⁻¹ = D⁻¹ - Aᵀ A."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return solve_triangular(q._capacitance_tril, wt_dinv, upper=False)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    term1 = q._log_det() - p._log_det()
    term3 = _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                       q.loc - p.loc, q._capacitance_tril)
    # tr(Σq⁻¹ Σp) with Σq⁻¹ = qD⁻¹ - Aᵀ A and Σp = pD + pW pWᵀ, one term at a time
    A = _woodbury_a(q)  # noqa: N806
    p_w, p_d, q_d = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, \
        q._unbroadcasted_cov_diag
    term21 = (p_d / q_d).sum(-1)
    term22 = _batch_trace_xxt(p_w * q_d.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_xxt(A * p_d.sqrt().unsqueeze(-2))
    term24 = _batch_trace_xxt(A @ p_w)
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    p_l = p._unbroadcasted_scale_tril
    term1 = q._log_det() - 2 * p_l.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                       q.loc - p.loc, q._capacitance_tril)
    # tr(Σq⁻¹ Σp) = tr((qD⁻¹ - Aᵀ A) Lp Lpᵀ)
    A = _woodbury_a(q)  # noqa: N806
    term21 = _batch_trace_xxt(p_l * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_xxt(A @ p_l)
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    q_l = q._unbroadcasted_scale_tril
    term1 = 2 * q_l.diagonal(dim1=-2, dim2=-1).log().sum(-1) - p._log_det()
    term3 = _batch_mahalanobis(q_l, q.loc - p.loc)
    # tr(Σq⁻¹ Σp) = |Lq⁻¹ pW|² + |Lq⁻¹ pD^½|² (Frobenius norms, by triangular solves)
    batch = tuple(broadcast_shapes(tuple(q_l.shape[:-2]),
                                   tuple(p._unbroadcasted_cov_factor.shape[:-2]),
                                   tuple(p._unbroadcasted_cov_diag.shape[:-1])))
    n = p.event_shape[0]
    q_full = q_l.expand(batch + (n, n))
    p_w = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.shape[-1]))
    p_d = diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_xxt(solve_triangular(q_full, p_w, upper=False))
    term22 = _batch_trace_xxt(solve_triangular(q_full, p_d, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])
