"""``Independent(base, n)``: treat the n rightmost batch dims of ``base`` as event dims.

``Normal(mu, sigma)`` with ``mu`` of shape (B, D) is B·D separate numbers;
``Independent(Normal(mu, sigma), 1)`` is B distributions over D-vectors
(a diagonal Gaussian), so ``log_prob`` sums over D and returns (B,) — the
shape a VAE's per-example likelihood and KL need:

    log p(x) = Σ over the n dims of base.log_prob(x)      (the same for entropy)
"""

from __future__ import annotations

from ..size import Size
from . import constraints
from .distribution import Distribution

__all__ = ["Independent"]


def _sum_rightmost(value, dim: int):
    """Sum over the ``dim`` rightmost dims (none when dim == 0)."""
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1) if dim \
        else value


class Independent(Distribution):
    """Reinterpret ``reinterpreted_batch_ndims`` batch dims of ``base_distribution`` as
    event dims."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims: int,
                 validate_args=None) -> None:
        if not isinstance(base_distribution, Distribution):
            raise TypeError(f"Independent: base_distribution must be a Distribution, got "
                            f"{type(base_distribution).__name__}")
        n = reinterpreted_batch_ndims
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"Independent: reinterpreted_batch_ndims must be an int >= 0, "
                             f"got {n!r}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = n + len(base_distribution.event_shape)
        if n > len(base_distribution.batch_shape):
            raise ValueError(
                f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {n} vs {len(base_distribution.batch_shape)} (the base "
                f"{type(base_distribution).__name__} has batch_shape "
                f"{tuple(base_distribution.batch_shape)})")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Independent:
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = Size(batch_shape)
        new.base_dist = self.base_dist.expand(
            batch_shape + self._event_shape[:self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        return self.base_dist.has_enumerate_support and not self.reinterpreted_batch_ndims

    @property
    def support(self):
        support = self.base_dist.support
        n = self.reinterpreted_batch_ndims
        return constraints.independent(support, n) if n else support

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True):
        if self.reinterpreted_batch_ndims:
            raise NotImplementedError("Enumeration over cartesian product is not implemented "
                                      "(Independent with reinterpreted_batch_ndims > 0)")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
