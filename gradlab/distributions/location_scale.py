"""``LocationScale``: what Normal and Laplace share, x = loc + scale · (a standard draw).

Both are real-valued, parameterised by a location μ (the mean and the mode)
and a positive scale, broadcast together; each subclass adds its density,
its standard draw and its cdf.
"""

from __future__ import annotations

from numbers import Number

from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__: list = []  # a base class, not a distribution of its own


class LocationScale(Distribution):
    """A batch of distributions of ``loc + scale · z``, z from a fixed standard one."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(Size() if numbers else self.loc.size(), validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc
