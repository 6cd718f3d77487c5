"""Constraints: the set a parameter or a value must lie in (``constraints.positive`` ...).

A constraint answers one question, ``check(value)``: a bool tensor saying, per
element, whether ``value`` is in the set. A distribution lists one per
parameter in ``arg_constraints`` and one for its values in ``support``;
``validate_args`` runs the checks so a wrong argument fails at the line that
passed it, not as a NaN loss many steps later.

``event_dim`` says how many rightmost dims make up one point of the set: 0
for ``positive`` (each number on its own), 1 for ``simplex`` (a vector adds up
to 1), 2 for ``lower_cholesky`` and ``corr_cholesky`` (a matrix). ``check``
reduces over those dims, so its result has the batch shape. ``independent(c, n)``
turns n more dims of an elementwise constraint into event dims
(``real_vector = independent(real, 1)``).
"""

from __future__ import annotations

from .. import linalg
from ..type_info import finfo

__all__ = ["Constraint", "boolean", "corr_cholesky", "dependent", "dependent_property",
           "greater_than", "greater_than_eq", "half_open_interval", "independent",
           "integer_interval", "interval", "is_dependent", "less_than", "lower_cholesky",
           "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
           "positive_integer", "real", "real_vector", "simplex", "unit_interval"]


class Constraint:
    """A set of valid values. ``check(value)`` -> bool tensor over the batch dims."""

    is_discrete = False  # whole numbers only (integer_interval, boolean, ...)
    event_dim = 0  # rightmost dims that form one element of the set

    def check(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not define check(value)")

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A placeholder: the set depends on other parameters, so it can't be checked alone."""

    def __init__(self, *, is_discrete: bool = False, event_dim: int = 0) -> None:
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def __call__(self, *, is_discrete=None, event_dim=None) -> _Dependent:
        return _Dependent(is_discrete=self.is_discrete if is_discrete is None else is_discrete,
                          event_dim=self.event_dim if event_dim is None else event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint: it depends on "
                         "the distribution's other parameters")


def is_dependent(constraint) -> bool:
    """True for ``dependent`` placeholders (validation skips them)."""
    return isinstance(constraint, _Dependent)


class dependent_property(property):  # noqa: N801 - PyTorch's name
    """A property that is also a dependent constraint (a support computed from parameters)."""

    def __init__(self, fn=None, *, is_discrete: bool = False, event_dim: int = 0) -> None:
        super().__init__(fn)
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def __call__(self, fn):
        return dependent_property(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


class _Real(Constraint):
    """Every number but NaN (x == x is False only for NaN)."""

    def check(self, value):
        return value == value


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """Vectors of 0s and 1s with exactly one 1."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = ((value == 0) | (value == 1)).all(-1)
        return is_boolean & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    """Whole numbers in [lower_bound, upper_bound]."""

    is_discrete = True

    def __init__(self, lower_bound, upper_bound) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (f"IntegerInterval(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _IntegerGreaterThan(Constraint):
    """Whole numbers >= lower_bound."""

    is_discrete = True

    def __init__(self, lower_bound) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _GreaterThan(Constraint):
    """x > lower_bound (strictly)."""

    def __init__(self, lower_bound) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    """x >= lower_bound."""

    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    """x < upper_bound (strictly)."""

    def __init__(self, upper_bound) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """lower_bound <= x <= upper_bound."""

    def __init__(self, lower_bound, upper_bound) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    """lower_bound <= x < upper_bound."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self) -> str:
        return (f"HalfOpenInterval(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _Simplex(Constraint):
    """Vectors of non-negative entries adding up to 1 (within 1e-6): probabilities."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _IndependentConstraint(Constraint):
    """``base`` on each element, with the ``reinterpreted_batch_ndims`` rightmost dims
    checked together (all must hold) as one event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"independent: expected a Constraint, got "
                            f"{type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"independent: reinterpreted_batch_ndims must be an int >= 0, "
                             f"got {reinterpreted_batch_ndims!r}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {n + self.base_constraint.event_dim} "
                             f"but got {value.dim()} (shape {tuple(value.shape)})")
        if n:
            result = result.reshape(tuple(result.shape[:result.dim() - n]) + (-1,)).all(-1)
        return result

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal (Cholesky factors)."""

    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower triangular, positive diagonal, and
    every row of unit length (so L Lᵀ has ones on its diagonal). The row lengths may miss 1
    by 10 · n · eps, the rounding of a row computed from the others."""

    event_dim = 2

    def check(self, value):
        tol = finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = value.detach().pow(2).sum(-1).sqrt()
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _PositiveDefinite(Constraint):
    """Symmetric matrices with a Cholesky factorisation (all eigenvalues > 0). Symmetric as
    PyTorch's ``isclose(value, value.mT, atol=1e-6)``: |a - b| <= 1e-6 + 1e-5 |b|, so the
    rounding of a large product L Lᵀ still counts as symmetric."""

    event_dim = 2

    def check(self, value):
        close = (value - value.mT).abs() <= 1e-6 + 1e-5 * value.mT.abs()
        symmetric = close.reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)
        info = linalg.cholesky_ex(value.detach()).info
        return symmetric & (info == 0)


dependent = _Dependent()
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = _IndependentConstraint(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
independent = _IndependentConstraint
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
positive_definite = _PositiveDefinite()
