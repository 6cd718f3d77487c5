"""Transforms: smooth maps y = f(x) with the log-determinant of their Jacobian.

If x has density p(x) and y = f(x) is one-to-one, then y has density

    log q(y) = log p(x) - log |det ∂y/∂x|,    x = f⁻¹(y)

(the change of variables: f stretches space by |det ∂y/∂x| at x, thinning the
density there by as much). A ``Transform`` knows the three pieces: ``f``
(``__call__``), ``f⁻¹`` (``inv``) and ``log_abs_det_jacobian(x, y)``. That is
all ``TransformedDistribution`` needs to turn a simple distribution into a
new one: a LogNormal is exp of a Normal, a Gumbel is -log(-log U), a policy
for bounded actions (SAC) is tanh of a Normal.

    ExpTransform          y = eˣ                     log|dy/dx| = x
    AffineTransform       y = loc + scale · x        log|scale|
    SigmoidTransform      y = 1 / (1 + e⁻ˣ)          -softplus(-x) - softplus(x)
    TanhTransform         y = tanh x                 2 (log 2 - x - softplus(-2x))
    SoftplusTransform     y = log(1 + eˣ)            -softplus(-x)
    PowerTransform        y = xᵉ                     log|e · y / x|
    StickBreakingTransform   a K-vector to a point of the (K+1)-simplex
    CorrCholeskyTransform    a D(D-1)/2-vector to the Cholesky factor of a D x D
                             correlation matrix (signed stick breaking, row by row)

``event_dim`` says how many rightmost dims form one point the transform acts
on together: 0 for the elementwise ones (their log-det is per element), 1 for
the stick-breaking map of a vector. ``domain`` and ``codomain`` are the
constraints x and y live in, so ``biject_to(constraint)`` can find the
transform from unconstrained reals onto a constraint (``biject_to(positive)``
is eˣ, as ``ComposeTransform([ExpTransform(), AffineTransform(0, 1)])``, the
rule for every ``greater_than(bound)``): the way to optimise a parameter that
must stay positive, or on the simplex, with plain gradient steps.

``cache_size=1`` remembers the last (x, y) pair, so ``t.inv(t(x))`` returns
x itself instead of computing it back (atanh of a tanh that rounded to ±1 is
inf; SAC uses ``TanhTransform(cache_size=1)`` for that reason).
"""

from __future__ import annotations

import math
import operator
import weakref
from functools import reduce
from numbers import Number

from ..ops.activation import logsigmoid, softplus
from ..ops.creation import eye
from ..ops.padding import pad
from ..ops.repetition import broadcast_shapes
from ..ops.selection import clamp
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .independent import _sum_rightmost
from .utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "identity_transform"]


class Transform:
    """An invertible (or at least computable) map with a log-det Jacobian; see the module
    docstring. Subclasses define ``_call``, ``_inverse`` and ``log_abs_det_jacobian``."""

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError(f"{type(self).__name__}: cache_size must be 0 or 1, got "
                             f"{cache_size!r}")
        self._cache_size = cache_size
        self._cached_x_y = (None, None)
        self._inv = None

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError(f"{type(self).__name__}: domain and codomain have different "
                         f"event_dims ({self.domain.event_dim} and "
                         f"{self.codomain.event_dim}); ask for domain.event_dim or "
                         f"codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform, y -> x (the same object each time while it is alive)."""
        inverse = None if self._inv is None else self._inv()
        if inverse is None:
            inverse = _InverseTransform(self)
            self._inv = weakref.ref(inverse)
        return inverse

    @property
    def sign(self):
        """+1 or -1: whether the (one-dimensional, monotone) map rises or falls."""
        raise NotImplementedError(f"{type(self).__name__} has no sign (it is not a monotone "
                                  f"map of numbers)")

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__} does not implement its map")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__} does not implement its inverse")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__} does not implement "
                                  f"log_abs_det_jacobian")

    def forward_shape(self, shape):
        """The shape of y for an x of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The shape of x for a y of ``shape``."""
        return shape

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """``t.inv``: the same transform run backwards (its log-det is minus the forward one)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform  # a strong reference: the inverse keeps its forward alive

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size: int = 1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """``parts[-1] ∘ ... ∘ parts[0]``: apply the parts in order; the log-dets add up (each
    summed over the dims that are event dims of the whole but not of the part)."""

    def __init__(self, parts, cache_size: int = 0) -> None:
        parts = list(parts)
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        for part in parts:
            if not isinstance(part, Transform):
                raise TypeError(f"ComposeTransform: every part must be a Transform, got "
                                f"{type(part).__name__}")
        self.parts = parts

    def __eq__(self, other) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim  # the largest event any part needs
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(part.bijective for part in self.parts)

    @property
    def sign(self):
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self):
        inverse = None if self._inv is None else self._inv()
        if inverse is None:
            inverse = ComposeTransform([part.inv for part in reversed(self.parts)])
            self._inv = weakref.ref(inverse)
            inverse._inv = weakref.ref(self)
        return inverse

    def with_cache(self, cache_size: int = 1):
        return self if self._cache_size == cache_size else \
            ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x.new_zeros(tuple(x.shape)) if isinstance(x, Tensor) else 0.0
        values = [x]
        for part in self.parts[:-1]:
            values.append(part(values[-1]))
        values.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, values[:-1], values[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b),
                                        event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(part) for part in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)" if self.parts else \
            f"{type(self).__name__}()"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more dims counted as one event:
    the same map, its log-det summed over those dims."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1):
        return self if self._cache_size == cache_size else IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError(f"IndependentTransform: the input has too few dims "
                             f"({tuple(x.shape)}) for event_dim {self.domain.event_dim}")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError(f"IndependentTransform: the input has too few dims "
                             f"({tuple(y.shape)}) for event_dim {self.codomain.event_dim}")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")


class ReshapeTransform(Transform):
    """Reshape the rightmost dims from ``in_shape`` to ``out_shape`` (same number of values):
    moves no mass, so its log-det is 0."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError(f"ReshapeTransform: in_shape {tuple(self.in_shape)} and out_shape "
                             f"{tuple(self.out_shape)} hold different numbers of values")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1):
        return self if self._cache_size == cache_size else ReshapeTransform(
            self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.new_zeros(batch)

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)

    @staticmethod
    def _swap(shape, old, new):
        shape = tuple(shape)
        cut = len(shape) - len(old)
        if cut < 0 or shape[cut:] != tuple(old):
            raise ValueError(f"ReshapeTransform: shape {shape} does not end in {tuple(old)}")
        return shape[:cut] + tuple(new)


class ExpTransform(Transform):
    """y = eˣ, from the reals onto the positive numbers.   log|dy/dx| = x."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = xᵉ on the positive numbers.   log|dy/dx| = log|e xᵉ⁻¹| = log|e · y / x|."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size: int = 1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent,
                                                                          cache_size)

    @property
    def sign(self):
        return self.exponent.sign() if isinstance(self.exponent, Tensor) else \
            (1 if self.exponent > 0 else -1 if self.exponent < 0 else 0)

    def __eq__(self, other) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        same = self.exponent == other.exponent
        return bool(same.all()) if isinstance(same, Tensor) else bool(same)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(getattr(self.exponent, "shape", ())))

    def inverse_shape(self, shape):
        return self.forward_shape(shape)


def _clipped_sigmoid(x):
    """sigmoid(x) kept inside (0, 1) by the dtype's tiny and eps, so its log stays finite."""
    info = finfo(x.dtype)
    return clamp(x.sigmoid(), min=info.tiny, max=1.0 - info.eps)


class SigmoidTransform(Transform):
    """y = 1 / (1 + e⁻ˣ), from the reals into (0, 1).   log|dy/dx| = log y(1 - y)
    = -softplus(-x) - softplus(x)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        info = finfo(y.dtype)
        y = clamp(y, min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + eˣ), from the reals onto the positive numbers.   log|dy/dx| = log σ(x)
    = -softplus(-x); inverse x = log(eʸ - 1) = y + log(1 - e⁻ʸ)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class TanhTransform(Transform):
    """y = tanh x, from the reals into (-1, 1).   log|dy/dx| = log(1 - tanh²x)
    = 2 (log 2 - x - softplus(-2x)), a form that stays finite for large |x|."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()  # inf at ±1: keep cache_size=1 to get x back instead

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x|, onto the non-negative numbers. Not one-to-one: ``inv`` returns y itself
    (the positive preimage), and there is no log-det."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale · x.   log|dy/dx| = log|scale| per element (with ``event_dim``,
    summed over each event's rightmost dims)."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else \
            constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    def with_cache(self, cache_size: int = 1):
        return self if self._cache_size == cache_size else AffineTransform(
            self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            same = mine == theirs
            if not (bool(same.all()) if isinstance(same, Tensor) else bool(same)):
                return False
        return self._event_dim == other._event_dim

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, Number):
            result = x.new_full(shape, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        if self._event_dim:
            result = result.reshape(tuple(result.shape[:result.dim() - self._event_dim]) +
                                    (-1,)).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(*shape)

    def forward_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                tuple(getattr(self.scale, "shape", ())))

    def inverse_shape(self, shape):
        return self.forward_shape(shape)


class SoftmaxTransform(Transform):
    """Vectors of reals to probability vectors, y = exp(x) / Σ exp(x). Not one-to-one
    (adding a constant to x changes nothing): ``inv`` gives log y, one preimage."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
    """K reals to a point of the (K+1)-simplex, one-to-one: break a stick of length 1,
    keeping the fraction z_k = σ(x_k - log(K + 1 - k)) of what is left at each step
    (the shift makes x = 0 the simplex's centre).

        y_k = z_k Π_{j<k} (1 - z_j),   y_{K+1} = Π_j (1 - z_j)
        log|det| = Σ_k (-x'_k + log σ(x'_k) + log y_k),   x'_k = x_k - log(K + 1 - k)
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _offset_log(n: int, like: Tensor) -> Tensor:
        """log(K + 1 - k) for k = 1 .. K (n = K), the shift that centres x = 0."""
        return (n + 1 - like.new_ones(n).cumsum(-1)).log()

    def _call(self, x):
        z = _clipped_sigmoid(x - self._offset_log(x.shape[-1], x))
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = (y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)).log()
        rest = clamp(1 - y_crop.cumsum(-1), min=finfo(y.dtype).tiny)
        return y_crop.log() - rest.log() + offset

    def log_abs_det_jacobian(self, x, y):
        shifted = x - self._offset_log(x.shape[-1], x)
        return (-shifted + logsigmoid(shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"StickBreakingTransform: too few dims in {tuple(shape)}")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"StickBreakingTransform: too few dims in {tuple(shape)}")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Any square matrix to a lower-triangular one with a positive diagonal (a Cholesky
    factor): keep the strict lower triangle, exponentiate the diagonal."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class CorrCholeskyTransform(Transform):
    """D(D-1)/2 reals to the Cholesky factor L of a D x D correlation matrix, one-to-one:
    L is lower triangular with a positive diagonal and rows of unit length, so L Lᵀ has a
    unit diagonal. Row i is a *signed* stick breaking of its i free entries:

        r = tanh(x), laid row by row below the diagonal (vec_to_tril_matrix)
        L_ij = r_ij · √(1 - Σ_{k<j} L_ik²) = r_ij Π_{k<j} √(1 - r_ik²)     (j < i)
        L_ii = √(1 - Σ_{k<i} L_ik²)            (what the row's length has left)

    Each r_ij in (-1, 1) takes that fraction (with its sign) of the stick still left in
    row i, and the diagonal gets the rest. Inverse: r_ij = L_ij / √(1 - Σ_{k<j} L_ik²),
    x = atanh(r). L lives on a D(D-1)/2-dimensional surface of the D x D matrices, so the
    log-det is that of the square Jacobian from x to L's free coordinates, its strictly
    lower entries (tril_matrix_to_vec(L, -1)); ∂L_ij/∂r_ij is the stick left, a
    triangular Jacobian:

        log|det| = Σ_{j<i} [½ log(1 - Σ_{k<j} L_ik²) + log(1 - tanh² x_ij)]

    (the first sum runs over j >= 1 only, where the stick is shorter than 1: the entries
    of 1 - cumsum(L²) on the second sub-diagonal and below). tanh(x) is clamped to
    ±(1 - eps) first, so a huge |x| still gives a row with a positive diagonal.
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # L_ij = r_ij · (the stick left before column j), which is Π_{k<j} √(1 - r_ik²)
        stick_left = (1 - r.pow(2)).sqrt().cumprod(-1)
        n = r.shape[-1]
        r = r + eye(n, dtype=r.dtype, device=r.device)  # r_ii = 1 takes all that is left
        return r * pad(stick_left[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        stick_left = pad(1 - (y * y).cumsum(-1)[..., :-1], [1, 0], value=1)
        r = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(stick_left, diag=-1).sqrt()
        return (r.log1p() - (-r).log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y):
        # 1 - cumsum(L²) on the diagonal -2 and below is the stick left before each entry
        # (j >= 1) of the rows: no shift needed; it is empty for a 2 x 2 matrix.
        stick_left = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        stick_breaking_logdet = 0.5 * stick_left.log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"CorrCholeskyTransform: the input needs at least one dim (a "
                             f"vector of D(D-1)/2 reals), got shape {tuple(shape)}")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError(f"CorrCholeskyTransform: the input's last dim ({n}) is not "
                             f"D(D-1)/2 for any D (1, 3, 6, 10, ...): it must hold the "
                             f"strictly lower triangle of a D x D matrix")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError(f"CorrCholeskyTransform: the input needs at least two dims (a "
                             f"D x D matrix), got shape {tuple(shape)}")
        if shape[-2] != shape[-1]:
            raise ValueError(f"CorrCholeskyTransform: the input must be square, got "
                             f"{shape[-2]} x {shape[-1]}")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


class PositiveDefiniteTransform(Transform):
    """Any square matrix to a positive-definite one, L Lᵀ with L = LowerCholeskyTransform(x)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        from ..linalg import cholesky

        return LowerCholeskyTransform().inv(cholesky(y))


class CatTransform(Transform):
    """Different transforms on consecutive pieces of one dim: ``tseq[i]`` on a slice of
    ``lengths[i]`` entries along ``dim``, the results put back together."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        tseq = list(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.lengths = [1] * len(tseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"CatTransform: {len(self.transforms)} transforms but "
                             f"{len(self.lengths)} lengths")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    def with_cache(self, cache_size: int = 1):
        return self if self._cache_size == cache_size else CatTransform(
            self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, x):
        start = 0
        for transform, length in zip(self.transforms, self.lengths):
            yield transform, x.narrow(self.dim, start, length)
            start += length

    def _check_length(self, x) -> None:
        if x.shape[self.dim] != sum(self.lengths):
            raise ValueError(f"CatTransform: dim {self.dim} of the input has "
                             f"{x.shape[self.dim]} entries, the lengths add up to "
                             f"{sum(self.lengths)}")

    def _call(self, x):
        from ..ops.joining import cat

        self._check_length(x)
        return cat([t(piece) for t, piece in self._pieces(x)], dim=self.dim)

    def _inverse(self, y):
        from ..ops.joining import cat

        self._check_length(y)
        return cat([t.inv(piece) for t, piece in self._pieces(y)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        from ..ops.joining import cat

        self._check_length(x)
        terms = []
        for (t, xs), (_, ys) in zip(self._pieces(x), self._pieces(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim if self.dim >= 0 else self.dim + x.dim()
        if dim >= x.dim() - self.event_dim:  # the pieces lie inside one event: add them up
            return reduce(operator.add, terms)
        return cat(terms, dim=self.dim)

    @property
    def domain(self):
        return _CatConstraint([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return _CatConstraint([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Different transforms on the slices ``x.select(dim, i)``, the results stacked."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        tseq = list(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = tseq, dim

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    def with_cache(self, cache_size: int = 1):
        return self if self._cache_size == cache_size else StackTransform(
            self.transforms, self.dim, cache_size)

    def _slices(self, x):
        if x.shape[self.dim] != len(self.transforms):
            raise ValueError(f"StackTransform: dim {self.dim} of the input has "
                             f"{x.shape[self.dim]} slices for {len(self.transforms)} "
                             f"transforms")
        return [x.select(self.dim, i) for i in range(x.shape[self.dim])]

    def _call(self, x):
        from ..ops.joining import stack

        return stack([t(s) for t, s in zip(self.transforms, self._slices(x))], dim=self.dim)

    def _inverse(self, y):
        from ..ops.joining import stack

        return stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))],
                     dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        from ..ops.joining import stack

        return stack([t.log_abs_det_jacobian(a, b) for t, a, b in
                      zip(self.transforms, self._slices(x), self._slices(y))], dim=self.dim)

    @property
    def domain(self):
        return _StackConstraint([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return _StackConstraint([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = F(x), a distribution's cdf, onto (0, 1) (the probability integral transform:
    F(X) is uniform when X follows the distribution).   log|dy/dx| = log p(x)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size: int = 1):
        return self if self._cache_size == cache_size else \
            CumulativeDistributionTransform(self.distribution, cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class _CatConstraint(constraints.Constraint):
    """Constraints on consecutive pieces of one dim (CatTransform's domain and codomain)."""

    def __init__(self, cseq, dim: int, lengths) -> None:
        self.cseq, self.dim, self.lengths = list(cseq), dim, list(lengths)

    @property
    def event_dim(self) -> int:
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        from ..ops.joining import cat

        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return cat(checks, self.dim)


class _StackConstraint(constraints.Constraint):
    """Constraints on the slices of one dim (StackTransform's domain and codomain)."""

    def __init__(self, cseq, dim: int) -> None:
        self.cseq, self.dim = list(cseq), dim

    @property
    def event_dim(self) -> int:
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        from ..ops.joining import stack

        return stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)],
                     self.dim)
