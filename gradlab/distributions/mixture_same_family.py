"""``MixtureSameFamily(mixture_distribution, component_distribution)``: a finite mixture.

K components of one family (``Normal``, ``Independent(Normal, 1)``, ...) held as
one distribution whose *rightmost batch dim* has size K, and a ``Categorical``
over those K with weights π. A draw picks a component k ~ π, then draws from
component k. With Gaussian components this is the Gaussian mixture model:

    gmm = MixtureSameFamily(Categorical(logits=w), Normal(mu, sigma))   # mu: (..., K)

    p(x)     = Σ_k π_k p_k(x)
    log p(x) = logsumexp_k (log π_k + log p_k(x))   (never exp of tiny densities)
    cdf(x)   = Σ_k π_k F_k(x)                       (scalar events)
    mean     = Σ_k π_k μ_k
    variance = Σ_k π_k σ²_k + Σ_k π_k (μ_k - mean)²  (law of total variance:
               E[Var(X|k)] + Var(E[X|k]))

``log_prob`` differentiates with respect to the weights and every component
parameter, which is how a GMM or a mixture density network is fit by gradient
descent. A draw is not differentiable (the component index is discrete), so
``has_rsample`` is False. The batch shape is the component batch shape without
K; the mixture's batch shape must broadcast to it.
"""

from __future__ import annotations

from ..size import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class _MixtureSameFamilyConstraint(constraints.Constraint):
    """The component support, checked on a value with the K dim put back (size 1) and
    reduced again: ``x`` is valid where it is in the support of the components."""

    def __init__(self, base_constraint) -> None:
        if not isinstance(base_constraint, constraints.Constraint):
            raise TypeError(f"MixtureSameFamilyConstraint: expected a Constraint, got "
                            f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim

    def check(self, value):
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        keep = value.dim() - self.event_dim
        return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


class MixtureSameFamily(Distribution):
    """A batch of mixtures of K components: ``mixture_distribution`` (a ``Categorical``
    over K) picks the component, ``component_distribution`` (batch shape (..., K))
    holds them."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution,
                 validate_args=None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                f"The Mixture distribution needs to be an instance of "
                f"gradlab.distributions.Categorical (over the K components), got "
                f"{type(mixture_distribution).__name__}. Fix: pass Categorical(probs=weights) "
                "or Categorical(logits=w)")
        if not isinstance(component_distribution, Distribution):
            raise ValueError(f"The Component distribution needs to be an instance of "
                             f"gradlab.distributions.Distribution, got "
                             f"{type(component_distribution).__name__}")
        mdbs = mixture_distribution.batch_shape
        cbs = component_distribution.batch_shape
        if len(cbs) == 0:
            raise ValueError(
                f"component_distribution must have at least one batch dim (its rightmost "
                f"batch dim indexes the K components), got batch_shape {tuple(cbs)} "
                f"({component_distribution!r}). Fix: give its parameters a last dim of size K "
                "(for vector events, wrap a (..., K, D) Normal as Independent(..., 1))")
        cdbs = cbs[:-1]
        incompatible = len(mdbs) > len(cdbs) or any(
            m != 1 and c != 1 and m != c for m, c in zip(reversed(mdbs), reversed(cdbs)))
        if incompatible:
            raise ValueError(
                f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                f"`component_distribution.batch_shape`({cdbs}): the mixture's batch shape "
                "must broadcast to the component batch shape without its last (K) dim")
        km = mixture_distribution._num_events
        kc = cbs[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> MixtureSameFamily:
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        batch_shape = Size(batch_shape)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return _MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad(self, x):
        """Put back the K dim (size 1) in front of the event dims: broadcasts against
        the components' (..., K, *event) shapes."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        """(..., K) mixture weights -> (..., K, 1, ..., 1): one 1 per event dim, so they
        multiply the components' (..., K, *event) moments (batch dims align on the right)."""
        return x.reshape(tuple(x.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # law of total variance: Var(X) = E[Var(X | k)] + Var(E[X | k])
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        comp = self._component_distribution
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * comp.variance).sum(dim)
        var_cond_mean = (probs * (comp.mean - self._pad(self.mean)).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, value):
        cdf_x = self._component_distribution.cdf(self._pad(value))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob_x = self._component_distribution.log_prob(self._pad(value))  # (S, B, K)
        log_mix_prob = self._mixture_distribution.logits.log_softmax(dim=-1)  # (B, K)
        return (log_prob_x + log_mix_prob).logsumexp(dim=-1)  # (S, B)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        batch = tuple(self._batch_shape)
        event = tuple(self._event_shape)
        # one component index per batch member: the mixture is expanded first, so a
        # shared (broadcast) weight vector still gives independent picks
        mixture = self._mixture_distribution
        if tuple(mixture.batch_shape) != batch:
            mixture = mixture.expand(batch)
        index = mixture.sample(sample_shape)  # (S, B)
        comp_samples = self._component_distribution.sample(sample_shape)  # (S, B, K, E)
        gather_dim = len(sample_shape) + len(batch)
        index = index.reshape(tuple(index.shape) + (1,) * (len(event) + 1))
        index = index.expand(tuple(sample_shape) + batch + (1,) + event)
        return comp_samples.detach().gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n  "
                f"{self._component_distribution!r})")

