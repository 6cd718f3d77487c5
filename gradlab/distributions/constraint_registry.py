"""``biject_to(constraint)`` and ``transform_to(constraint)``: from the reals onto a constraint.

To fit a parameter that must stay positive, or on the simplex, with plain
gradient steps, optimise an unconstrained tensor u and use t(u), where t maps
the reals onto the constraint:

    scale = biject_to(constraints.positive)(u)        # exp(u)
    probs = transform_to(constraints.simplex)(u)     # softmax(u)
    corr = biject_to(constraints.corr_cholesky)(u)   # a correlation's Cholesky factor

``biject_to`` gives a one-to-one map (so a density can be carried across by
the change of variables, as in variational inference); ``transform_to`` only
needs *a* map onto the set, which may be cheaper (softmax instead of stick
breaking). Both look the constraint's type up in a registry; ``register``
adds a rule for a constraint of your own.
"""

from __future__ import annotations

from numbers import Number

from . import constraints
from .transforms import (
    AffineTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StickBreakingTransform,
    identity_transform,
)

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint type -> a function making the transform for a constraint of that type."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._registry: dict = {}

    def register(self, constraint, factory=None):
        """``register(constraint_type_or_instance, factory)``, or as a decorator."""
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"{self._name}.register: expected a Constraint subclass or "
                            f"instance, got {constraint!r}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        for kind in type(constraint).__mro__:
            factory = self._registry.get(kind)
            if factory is not None:
                return factory(constraint)
        raise NotImplementedError(
            f"{self._name}: no transform is registered for {type(constraint).__name__} "
            f"constraints ({constraint!r}); discrete sets have none. Add one with "
            f"{self._name}.register(type_of_constraint, factory)")


biject_to = ConstraintRegistry("biject_to")
transform_to = ConstraintRegistry("transform_to")


def _real(_constraint):
    return identity_transform


def _independent(registry):
    def make(constraint):
        base = registry(constraint.base_constraint)
        return IndependentTransform(base, constraint.reinterpreted_batch_ndims)
    return make


def _greater_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, Number) and isinstance(upper, Number) and lower == 0 and upper == 1:
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lower, upper - lower)])


for _registry in (biject_to, transform_to):
    _registry.register(constraints._Real, _real)
    _registry.register(constraints._IndependentConstraint, _independent(_registry))
    _registry.register(constraints._GreaterThan, _greater_than)  # positive, greater_than_eq
    _registry.register(constraints._LessThan, _less_than)
    _registry.register(constraints._Interval, _interval)  # unit_interval, half_open_interval
    _registry.register(constraints._CorrCholesky, lambda c: CorrCholeskyTransform())
biject_to.register(constraints._Simplex, lambda c: StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda c: SoftmaxTransform())
transform_to.register(constraints._LowerCholesky, lambda c: LowerCholeskyTransform())
transform_to.register(constraints._PositiveDefinite, lambda c: PositiveDefiniteTransform())
del _registry
