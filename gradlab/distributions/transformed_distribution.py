"""``TransformedDistribution(base, transforms)``: the distribution of y = f(x), x ~ base.

Draw x from the base distribution and push it through the transforms
(``transforms.py``) in order. The density of y is the base density at
x = f⁻¹(y), corrected by how much f stretches space there:

    log q(y) = log p(f⁻¹(y)) - Σ_t log|det J_t|       (each t's log-det at its input)

so a new family costs a line: ``LogNormal`` is Normal then exp, ``Gumbel`` is
Uniform then -log(-log u), a tanh-squashed Gaussian policy (SAC) is
``TransformedDistribution(Normal(mu, sigma), [TanhTransform(cache_size=1)])``.
``rsample`` works whenever the base has one (the transforms are smooth), and
``cdf``/``icdf`` whenever every transform is monotone (its ``sign``).
"""

from __future__ import annotations

from ..size import Size
from . import constraints
from .distribution import Distribution
from .independent import Independent, _sum_rightmost
from .transforms import ComposeTransform, Transform

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    """The distribution of ``transforms[-1](... transforms[0](x))`` for x ~
    ``base_distribution``."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("TransformedDistribution: transforms must be a Transform or "
                                 "a list of Transforms, got a list holding " +
                                 ", ".join(type(t).__name__ for t in transforms))
            self.transforms = transforms
        else:
            raise ValueError(f"TransformedDistribution: transforms must be a Transform or a "
                             f"list of Transforms, got {type(transforms).__name__}")
        if not isinstance(base_distribution, Distribution):
            raise TypeError(f"TransformedDistribution: base_distribution must be a "
                            f"Distribution, got {type(base_distribution).__name__}")
        # The shapes: push the base's batch + event shape through the transforms, and count
        # as event dims as many as the transforms need (they may join batch dims into events).
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"TransformedDistribution: the base distribution's shape "
                             f"{tuple(base_shape)} has fewer dims than the transforms' event "
                             f"dims ({transform.domain.event_dim})")
        forward_shape = transform.forward_shape(base_shape)
        expanded_base_shape = transform.inverse_shape(forward_shape)
        if tuple(base_shape) != tuple(expanded_base_shape):
            base_batch = tuple(expanded_base_shape)[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch)
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        event_dim = transform.codomain.event_dim + max(base_event_dim -
                                                       transform.domain.event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(Size(tuple(forward_shape)[:cut]), Size(tuple(forward_shape)[cut:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> TransformedDistribution:
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        base_batch = tuple(shape)[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support,
                                              len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        x = self.base_dist.sample(sample_shape)  # (no graph: the base samples under no_grad)
        for t in self.transforms:
            x = t(x)
        return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        """The base log-density at f⁻¹(y), minus each transform's log-det (module
        docstring), each summed over the dims that are event dims here but not for it."""
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y),
                                                 event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y),
                                         event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """A probability seen through the transforms' direction: unchanged where they rise
        together (sign +1), 1 - value where they fall."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        """P(Y <= y): the base cdf at f⁻¹(y) (1 minus it where f falls)."""
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        """The y with P(Y <= y) = value: f applied to the base's icdf."""
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value
