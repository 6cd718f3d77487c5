"""``LKJCholesky(dim, concentration=η)``: random correlation matrices, as Cholesky factors.

The LKJ distribution (Lewandowski, Kurowicka & Joe, 2009) is the usual prior on
a correlation matrix M (unit diagonal, positive definite): density ∝ det(M)^(η-1).
η = 1 is uniform over correlation matrices, η > 1 favours M near the identity
(weak correlations), η < 1 strong ones. This class gives the lower Cholesky factor
L of M = L Lᵀ instead (rows of unit length, positive diagonal), the form a model
uses: ``MultivariateNormal(loc, scale_tril=sigma[..., None] * L)``.

Density. det(M) = Π L_ii², and the change of variables from M to L's free
(strictly lower) entries has Jacobian Π_{i>=2} L_ii^(D-i), so with rows i = 2..D

    log p(L) = Σ_{i=2}^{D} (D - i + 2η - 2) log L_ii - log c_D(η)
    log c_D(η) = (D-1)/2 log π + log Γ_{D-1}(η + (D-2)/2) - (D-1) lgamma(η + (D-1)/2)

(Γ_{D-1} the multivariate gamma function, ``mvlgamma``).

Sampling, the onion method (ibid., section 3.2), one row at a time: row i
(0-based, i >= 1) is w_i = √y_i · u_i followed by its diagonal √(1 - |w_i|²), with
u_i uniform on the unit sphere of R^i and

    y_i ~ Beta(i/2, η + (D-2)/2 - (i-1)/2)

(all rows at once here: the Beta draws are vectorised, and u_i is a normal vector
normalised). This is where PyTorch 2.13 has a bug: it draws y_i ~ Beta(i - ½, ...),
which is right for rows 0 and 1 only, so for D >= 3 its samples do not follow the
density above (every off-diagonal correlation of an LKJ matrix has the same
marginal, (r + 1)/2 ~ Beta(η - 1 + D/2, η - 1 + D/2); PyTorch's later rows have
too wide a spread). gradlab uses i/2; log_prob is PyTorch's and agrees.

Draws are not differentiable (``has_rsample`` is False, as in PyTorch). The
distribution has no mean, variance or entropy here (PyTorch has none either).
"""

from __future__ import annotations

import math

from ..ops.creation import arange
from ..ops.gamma_functions import lgamma, mvlgamma
from ..ops.padding import pad
from ..ops.sampling import randn
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """A batch of LKJ distributions over the Cholesky factors of ``dim`` x ``dim``
    correlation matrices, with shape ``concentration`` (η > 0)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        super().__init__(self.concentration.size(), Size((dim, dim)),
                         validate_args=validate_args)
        self._beta = self._onion_beta()  # (after the check of η, which makes it valid)

    def _onion_beta(self) -> Beta:
        """Beta(i/2, η + (D-2)/2 - (i-1)/2) for row i = 1 .. D-1 (and an unused row 0)."""
        eta = self.concentration
        offset = pad(arange(self.dim - 1, dtype=eta.dtype, device=eta.device), [1, 0])
        concentration1 = 0.5 * offset + 0.5  # i/2 for i >= 1
        concentration0 = (eta + 0.5 * (self.dim - 2)).unsqueeze(-1) - 0.5 * offset
        return Beta(concentration1, concentration0, validate_args=False)

    def expand(self, batch_shape, _instance=None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()) -> Tensor:
        """The onion method (module docstring), all rows at once."""
        y = self._beta.sample(sample_shape).unsqueeze(-1)  # (..., D, 1): row i's radius²
        normal = randn(*self._extended_shape(sample_shape), dtype=y.dtype,
                       device=y.device).tril(-1)
        norms = normal.pow(2).sum(-1, keepdim=True).sqrt()
        first_row = arange(self.dim, device=y.device).reshape(self.dim, 1) == 0
        norms = norms.masked_fill(first_row, 1.0)  # row 0 has no entries: 0/1, not 0/0
        w = y.sqrt() * (normal / norms)  # u_i uniform on the sphere of R^i, times √y_i
        diagonal = (1 - w.pow(2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
        return w + diagonal.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        eta = self.concentration
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]  # L_ii, i = 2 .. D (1-based)
        order = 2 * (eta - 1).unsqueeze(-1) + self.dim - arange(
            2, self.dim + 1, dtype=eta.dtype, device=eta.device)
        unnormalized = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = eta + 0.5 * dm1
        normalizer = (0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1)
                      - lgamma(alpha) * dm1)
        return unnormalized - normalizer
