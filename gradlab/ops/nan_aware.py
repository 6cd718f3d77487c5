"""NaN- and infinity-aware picks and tests: fmax, fmin, isposinf, isneginf, isreal.

``maximum(a, b)`` spreads a NaN: if either value is NaN, so is the result.
``fmax`` treats NaN as *missing*: it returns the other value, and NaN only
when both are NaN (IEEE 754's maxNum; NumPy's ``np.fmax``). That makes it
the right tool to combine partial results where NaN means "no data".

The gradient follows the value that was returned, with PyTorch's rule for
ties: the first input wins a tie outright (``maximum`` splits it in half).

    fmax:  d/da = 1 where a >= b or b is NaN, else 0;   d/db = the rest
    fmin:  d/da = 1 where a <= b or b is NaN, else 0;   d/db = the rest

The losing side gets exactly 0, even for a NaN or inf output gradient
(``where``, not a product with a mask).

``isposinf``, ``isneginf`` and ``isreal`` are tests: bool results, no
gradient. ``isreal`` is True where the imaginary part is 0, so all True for
a real tensor.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import binary_op, tangent_sum, unbroadcast, xp_for
from .comparison import _Compare
from .selection import Where, where

__all__ = ["fmax", "fmin", "isposinf", "isneginf", "isreal"]
TENSOR_METHODS = list(__all__)


class Fmax(Function):
    """max(a, b) ignoring NaN (NaN only if both are).  The first input wins ties."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return xp_for(a).fmax(a, b)

    @staticmethod
    def first_wins(a, b):
        """Where the output is a's value (a tensor test on the saved inputs)."""
        return (a >= b) | b.isnan()

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        first = cls.first_wins(a, b)
        return (None if sa is None else unbroadcast(Where.apply(first, grad, 0.0), sa),
                None if sb is None else unbroadcast(Where.apply(first, 0.0, grad), sb))

    @classmethod
    def jvp(cls, ctx, ta, tb):
        """ẏ = ȧ where a was picked, ḃ elsewhere (a missing tangent is 0)."""
        a, b = ctx.primals
        picked = where(cls.first_wins(a, b), 0.0 if ta is None else ta,
                       0.0 if tb is None else tb)
        return tangent_sum(ctx.results[0].shape, picked)


class Fmin(Fmax):
    """min(a, b) ignoring NaN (NaN only if both are).  The first input wins ties."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return xp_for(a).fmin(a, b)

    @staticmethod
    def first_wins(a, b):
        return (a <= b) | b.isnan()


def _pair(op: str, input, other):
    for name, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}. Fix: "
                            f"gradlab.tensor({value!r}), or clamp(x, min=...) for a number")
        if value.dtype is _dt.bool:
            raise RuntimeError(f"{op}: bool tensors have no order to pick from (shape "
                               f"{tuple(value.shape)}). Fix: logical_or / logical_and for "
                               f"masks, or convert with .int()")


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The larger value elementwise, ignoring NaN: NaN only where both are NaN.

    Unlike ``maximum``, ``fmax(nan, 1.0)`` is 1.0. The gradient goes to the
    value returned (to ``input`` at a tie).
    """
    _pair("fmax", input, other)
    return binary_op(Fmax, input, other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """The smaller value elementwise, ignoring NaN: NaN only where both are NaN."""
    _pair("fmin", input, other)
    return binary_op(Fmin, input, other)


class _InfinityTest(_Compare):
    sign = 1.0

    @classmethod
    def forward(cls, ctx, a):
        xp = xp_for(a)
        if a.dtype.kind not in "fV":  # integers and bools are never infinite
            return xp.zeros(a.shape, dtype=bool)
        return a == xp.asarray(cls.sign * float("inf"), dtype=a.dtype)


class Isposinf(_InfinityTest):
    """x == +inf; a bool tensor (no gradient)."""

    sign = 1.0


class Isneginf(_InfinityTest):
    """x == -inf; a bool tensor (no gradient)."""

    sign = -1.0


def _tensor(op: str, input) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}. Fix: "
                        f"gradlab.tensor(...) first")


def isposinf(input: Tensor) -> Tensor:
    """True where the value is +inf (False for NaN, -inf and every integer)."""
    _tensor("isposinf", input)
    return Isposinf.apply(input)


def isneginf(input: Tensor) -> Tensor:
    """True where the value is -inf (False for NaN, +inf and every integer)."""
    _tensor("isneginf", input)
    return Isneginf.apply(input)


class Isreal(_Compare):
    """Is the value real (its imaginary part 0)?"""

    @staticmethod
    def forward(ctx, a):
        return a.imag == 0 if a.dtype.kind == "c" else xp_for(a).ones(a.shape, dtype=bool)


def isreal(input: Tensor) -> Tensor:
    """True where the imaginary part is 0 (everywhere, for a real tensor)."""
    _tensor("isreal", input)
    return Isreal.apply(input)
