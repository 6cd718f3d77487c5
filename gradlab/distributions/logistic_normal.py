"""``LogisticNormal(loc, scale)``: a Gaussian pushed onto the probability simplex.

A K-vector x ~ Normal(loc, scale) becomes a (K+1)-vector of probabilities by
the stick-breaking map (``StickBreakingTransform``): a distribution over
mixtures (topic proportions, say) with the Gaussian's correlations and
``rsample``, which the Dirichlet lacks. Its density comes from the change of
variables; its moments have no closed form.
"""

from __future__ import annotations

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """A batch of logistic-normal distributions on the (K+1)-simplex (K = loc's last dim)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
