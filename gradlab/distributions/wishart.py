"""``Wishart(df, covariance_matrix=Σ | precision_matrix=Σ⁻¹ | scale_tril=L)``: random covariances.

If g_1 ... g_ν are independent N(0, Σ) vectors in p dimensions, their scatter
matrix X = Σ_k g_k g_kᵀ is Wishart with ν degrees of freedom and scale Σ: the
distribution of ν times a sample covariance, and the conjugate prior of a
normal's precision matrix. ν need not be a whole number, only ν > p - 1. With
Σ = L Lᵀ (everything goes through the Cholesky factor L, as in
MultivariateNormal):

    log p(X) = (ν-p-1)/2 log|X| - tr(Σ⁻¹X)/2 - νp/2 log 2 - ν log|det L| - log Γ_p(ν/2)
    mean = ν Σ,   mode = (ν - p - 1) Σ (for ν > p + 1),   Var(X_ij) = ν (Σ_ij² + Σ_ii Σ_jj)
    entropy = (p+1)(p/2 log 2 + log|det L|) + log Γ_p(ν/2) - (ν-p-1)/2 ψ_p(ν/2) + νp/2

Γ_p is the multivariate gamma function (``mvlgamma``) and ψ_p(x) = Σ_{j<p} ψ(x - j/2)
its log-derivative. tr(Σ⁻¹X) comes from ``cholesky_solve`` with L, never Σ⁻¹.

Sampling by the Bartlett decomposition: X = (L A)(L A)ᵀ with A lower triangular,

    A_ii = √c_i,  c_i ~ χ²(ν - i)  (i = 0 .. p-1),    A_ij ~ N(0, 1)  (j < i)

exact for every ν > p - 1. The χ² draws differentiate by implicit
reparameterisation (gamma.py), so ``rsample`` carries gradients to ν and Σ.
For p - 1 < ν < p a χ² with ν - (p - 1) < 1 degrees of freedom is often tiny, so
draws can be numerically singular (a warning says so at construction).

``rsample(max_try_correction=...)`` redraws the draws that fail the
positive-definite check, up to that many times, with a warning. That is what
PyTorch 2.13 means to do, but its test is inverted (it calls the *valid* draws
singular: pytorch/pytorch#122021), so it warns "Singular sample detected." on
every call and draws everything twice. Here the warning and the redraw happen
only for a draw that really is singular, which in float64 is essentially never.
"""

from __future__ import annotations

import math
import warnings
from numbers import Number

from .. import linalg
from ..ops.creation import arange, tensor
from ..ops.gamma_functions import digamma, mvlgamma
from ..ops.legacy_linalg import cholesky_inverse, cholesky_solve
from ..ops.repetition import broadcast_shapes
from ..ops.sampling import randn
from ..ops.selection import where
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution, _as_size
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


class _ExactlyOneMatrixError(ValueError, AssertionError):
    """Not exactly one of the three matrices given: a ValueError, as for MultivariateNormal,
    and an AssertionError, the type PyTorch 2.13 raises for Wishart."""


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """ψ_p(x) = Σ_{j<p} ψ(x - j/2), the derivative of log Γ_p(x) (x > (p - 1)/2)."""
    halves = arange(p, dtype=x.dtype, device=x.device) / 2
    return digamma(x.unsqueeze(-1) - halves).sum(-1)


class Wishart(ExponentialFamily):
    """A batch of Wishart distributions over p x p positive-definite matrices: degrees of
    freedom ``df`` (ν > p - 1) and one of the covariance, precision or lower Cholesky
    matrices of the scale (..., p, p)."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict:
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise _ExactlyOneMatrixError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                f"specified, got {[n for n, _ in given] or 'none'}.")
        name, param = given[0]
        if not isinstance(param, Tensor) or param.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading "
                             f"batch dimensions, got shape {tuple(getattr(param, 'shape', ()))}")
        if param.shape[-1] != param.shape[-2]:
            raise ValueError(f"Wishart: {name} must be square (..., p, p), got shape "
                             f"{tuple(param.shape)}")
        p = param.shape[-1]
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(tuple(batch_shape))
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (p, p)))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, Size((p, p)), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self) -> Chi2:
        """χ²(ν - i) for i = 0 .. p-1: the squared diagonal of the Bartlett factor A."""
        p = self._event_shape[-1]
        steps = arange(p, dtype=self._unbroadcasted_scale_tril.dtype,
                       device=self._unbroadcasted_scale_tril.device)
        return Chi2(self.df.unsqueeze(-1) - steps.expand(tuple(self._batch_shape) + (p,)))

    def expand(self, batch_shape, _instance=None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        matrix_shape = tuple(batch_shape + self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(matrix_shape)
        new.df = self.df.expand(tuple(batch_shape))
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        new._dist_chi2 = new._bartlett_chi2()
        return new

    # --- the three forms of the scale ---------------------------------------------------------

    def _full(self, matrix: Tensor) -> Tensor:
        return matrix.expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return self._full(lower @ lower.mT)

    @lazy_property
    def precision_matrix(self):
        return self._full(cholesky_inverse(self._unbroadcasted_scale_tril))

    # --- moments ------------------------------------------------------------------------------

    def _per_matrix(self, value: Tensor) -> Tensor:
        """A batch-shaped value, shaped to scale a batch of matrices."""
        return value.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._per_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        factor = where(factor <= 0, math.nan, factor)  # no mode unless ν > p + 1
        return self._per_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        cov = self.covariance_matrix
        diag = cov.diagonal(dim1=-2, dim2=-1)
        return self._per_matrix(self.df) * (cov.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    # --- sampling -----------------------------------------------------------------------------

    def _bartlett_sampling(self, sample_shape) -> Tensor:
        p = self._event_shape[-1]
        sample_shape = _as_size(sample_shape)
        eps = finfo(self.df.dtype).eps
        diagonal = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        below = randn(*(tuple(sample_shape + self._batch_shape) + (p * (p - 1) // 2,)),
                      dtype=diagonal.dtype, device=diagonal.device)
        factor = diagonal.diag_embed() + vec_to_tril_matrix(below, diag=-1)  # A
        chol = self._unbroadcasted_scale_tril @ factor
        return chol @ chol.mT

    def _singular(self, sample: Tensor) -> Tensor:
        """Per draw (sample dims only): does any matrix of its batch fail the check?"""
        bad = ~self.support.check(sample)
        n = len(self._batch_shape)
        return bad.reshape(tuple(bad.shape[:bad.dim() - n]) + (-1,)).any(-1) if n else bad

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Bartlett draws (module docstring); draws that come out numerically singular are
        drawn again, up to ``max_try_correction`` times (10 by default), with a warning."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = _as_size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(sample_shape)
                matrix_dims = sample.dim() - singular.dim()  # (the batch's and the event's)
                sample = where(singular.reshape(tuple(singular.shape) + (1,) * matrix_dims),
                               fresh, sample)
                singular = self._singular(sample)
                if not bool(singular.any()):
                    break
        return sample

    # --- densities ----------------------------------------------------------------------------

    def _log_det_scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(-1)  # tr(Σ⁻¹ X)
        return (-nu * (p * _LOG_2 / 2 + self._log_det_scale_tril())
                - mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._log_det_scale_tril())
                + mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
                + nu * p / 2)

    # --- exponential family: θ = (-Σ⁻¹/2, (ν-p-1)/2), T(X) = (X, log|X|) ---------------------

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        """A(θ) = ν/2 (log|Σ| + p log 2) + log Γ_p(ν/2), with Σ = (-2x)⁻¹, ν/2 = y + (p+1)/2."""
        p = self._event_shape[-1]
        half_nu = y + (p + 1) / 2
        return half_nu * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + mvlgamma(half_nu, p)
