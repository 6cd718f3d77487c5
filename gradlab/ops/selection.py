"""Choosing between values: clamp, maximum, minimum, where.

The gradient follows the choice: it flows to whichever input was picked
(for ``where``, by the condition; for ``maximum``, to the larger value, ties
split in half as in PyTorch; for ``clamp``, only where the value was inside
the bounds). Forward mode follows the same choice: the output's tangent is
the tangent of the input that was picked.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import as_operand, binary_op, keep_where, promote, tangent_sum, unbroadcast, xp_for

__all__ = ["clamp", "clip", "clamp_min", "clamp_max", "maximum", "minimum", "where"]
TENSOR_METHODS = ["clamp", "clip", "clamp_min", "clamp_max", "maximum", "minimum"]


class Clamp(Function):
    """clamp(a, lo, hi).   d/da = 1 where lo <= a <= hi, else 0."""

    raw = True
    node_name = "ClampBackward1"  # PyTorch's overload with number bounds
    tangent_rule = "elementwise"  # ẏ = ȧ inside the bounds, 0 outside

    @staticmethod
    def forward(ctx, a, lo, hi):
        ctx.save_for_backward(a)
        ctx.bounds = (lo, hi)
        return xp_for(a).clip(a, lo, hi).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        inside = a >= lo if lo is not None else None
        if hi is not None:
            inside = a <= hi if inside is None else inside & (a <= hi)
        # where, not grad * inside: outside, exactly 0 even for a NaN or inf grad (PyTorch)
        return Where.apply(inside, grad, 0.0), None, None


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A002 - PyTorch's names
    """Limit values to ``[min, max]`` (either bound may be None, a number or a tensor)."""
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = input
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
        return out
    if not input.dtype.is_floating_point and (isinstance(min, float) or isinstance(max, float)):
        input = input.to(_dt.get_default_dtype())
    elif input.dtype is _dt.bool:  # bools clamped by numbers are counted: int64, as PyTorch
        input = input.to(_dt.int64)
    return Clamp.apply(input, min, max)


clip = clamp


class ClampMin(Clamp):
    """``clamp_min``: Clamp with a lower bound only, under PyTorch's names."""

    name, node_name = "clamp_min", "ClampMinBackward0"


class ClampMax(Clamp):
    """``clamp_max``: Clamp with an upper bound only."""

    name, node_name = "clamp_max", "ClampMaxBackward0"


def clamp_min(input, min) -> Tensor:  # noqa: A002 - PyTorch's name
    """``clamp(input, min=min)`` as its own op (a tensor bound goes through maximum)."""
    if isinstance(min, Tensor) or not input.dtype.is_floating_point:
        return clamp(input, min=min)
    return ClampMin.apply(input, min, None)


def clamp_max(input, max) -> Tensor:  # noqa: A002 - PyTorch's name
    """``clamp(input, max=max)`` as its own op (a tensor bound goes through minimum)."""
    if isinstance(max, Tensor) or not input.dtype.is_floating_point:
        return clamp(input, max=max)
    return ClampMax.apply(input, None, max)


class Maximum(Function):
    """max(a, b) elementwise.  The larger input gets the gradient; ties split it in half."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return xp_for(a).maximum(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split_grad(ctx, grad, a < b, a > b, a == b)

    @staticmethod
    def jvp(ctx, ta, tb):
        """jvp: ẏ = ȧ where a > b, ḃ where a < b, (ȧ + ḃ)/2 at ties."""
        a, b = ctx.primals
        return _split_tangent(ctx, ta, tb, a < b, a == b)


class Minimum(Function):
    """min(a, b) elementwise.  The smaller input gets the gradient; ties split it in half."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return xp_for(a).minimum(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split_grad(ctx, grad, a > b, a < b, a == b)

    @staticmethod
    def jvp(ctx, ta, tb):
        """jvp: ẏ = ȧ where a < b, ḃ where a > b, (ȧ + ḃ)/2 at ties."""
        a, b = ctx.primals
        return _split_tangent(ctx, ta, tb, a > b, a == b)


def _split_grad(ctx, grad, a_loses, b_loses, tie):
    """PyTorch's rule: each input gets the gradient (half at a tie) unless it lost, and
    then exactly 0, even for a NaN grad. Where a NaN made both comparisons false, both
    inputs get it all."""
    sa, sb = ctx.input_shapes
    shared = Where.apply(tie, grad * 0.5, grad)
    return (None if sa is None else unbroadcast(Where.apply(a_loses, 0.0, shared), sa),
            None if sb is None else unbroadcast(Where.apply(b_loses, 0.0, shared), sb))


def _split_tangent(ctx, ta, tb, a_loses, tie):
    share_a = where(a_loses, 0.0, where(tie, 0.5, 1.0))  # a NaN comparison: a's tangent
    return tangent_sum(ctx.results[0].shape, None if ta is None else ta * share_a,
                       None if tb is None else tb * (1 - share_a))


def maximum(input, other) -> Tensor:
    return binary_op(Maximum, input, other)


def minimum(input, other) -> Tensor:
    return binary_op(Minimum, input, other)


class Where(Function):
    """cond ? a : b.   The gradient goes to a where cond holds, to b elsewhere."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        xp = xp_for(cond)
        # where(cond, grad, 0), every masked gradient (clamp, maximum, where's own backward):
        # picked on the bits (keep_where). NumPy's where branches per element, ~10x slower
        # on a mask with no pattern.
        if _is_plus_zero(b) and _fits_mask(a, cond):
            return keep_where(xp, a, cond)
        if _is_plus_zero(a) and _fits_mask(b, cond):
            return keep_where(xp, b, ~cond)
        return xp.where(cond, a, b)

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        _, sa, sb = ctx.input_shapes
        return (None,
                None if sa is None else unbroadcast(Where.apply(cond, grad, 0.0), sa),
                None if sb is None else unbroadcast(Where.apply(cond, 0.0, grad), sb))

    @staticmethod
    def jvp(ctx, _, ta, tb):
        """jvp: ẏ = cond ? ȧ : ḃ (linear in a and b together; a missing tangent is 0)."""
        picked = Where.apply(ctx.primals[0], 0.0 if ta is None else ta, 0.0 if tb is None else tb)
        return tangent_sum(ctx.results[0].shape, picked)


def _is_plus_zero(value) -> bool:
    """A Python 0 or +0.0 (not -0.0, which where must keep)."""
    return type(value) in (int, float) and value == 0 and math.copysign(1.0, value) > 0


def _fits_mask(values, cond) -> bool:
    """A floating array of the condition's shape (so where returns its dtype and shape)."""
    if getattr(values, "shape", None) != cond.shape:
        return False
    return values.dtype.kind == "f" or values.dtype == _dt.bfloat16.np


def where(condition, input=None, other=None) -> Tensor:
    """Pick ``input`` where ``condition`` holds, else ``other`` (tensors or numbers).

    With only ``condition``, returns the indices of its nonzero entries (``nonzero``).
    """
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        condition = as_operand(condition)
    if condition.dtype is not _dt.bool:
        condition = condition.to(_dt.bool)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # Two numbers: PyTorch gives the default float (or int64) dtype, on the
        # condition's device (promote alone would make a CPU tensor).
        from .creation import tensor
        input = tensor(input, device=condition.device)
    a, b = promote(input, other)
    return Where.apply(condition, a, b)
