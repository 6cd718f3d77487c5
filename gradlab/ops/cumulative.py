"""Cumulative ops: cumsum, a running sum along one dim.

A reduction summarises a dim into one value; ``cumsum`` keeps every partial
sum, so its output has the input's shape: out_k = Σ_{i<=k} a_i. That makes
it a scan, not a reduction, and its backward is a scan too: each a_i
contributed to every out_k with k >= i, so its gradient is Σ_{k>=i} g_k, a
running sum from the other end (``reverse``).

Forward mode: cumsum is linear, so the tangent is the cumsum of ȧ
(``tangent_rule = "linear"``).
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import numpy_keywords, widened, xp_for
from .reduction import dim_axis

__all__ = ["cumsum"]
TENSOR_METHODS = list(__all__)


class Cumsum(Function):
    """Running sum out_k = Σ_{i<=k} a_i.   d/da_i = Σ_{k>=i} g_k: a cumsum from the other end."""

    raw = True
    tangent_rule = "linear"  # ẏ = cumsum(ȧ)
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, dim, reverse):
        xp = xp_for(a)
        ctx.dim, ctx.reverse = dim, reverse
        if dim is None:  # a 0-d tensor
            return a.copy()
        wide = widened(a)  # half floats add up in float32, as PyTorch's
        if reverse:
            out = xp.ascontiguousarray(xp.flip(xp.cumsum(xp.flip(wide, dim), axis=dim), dim))
        else:
            out = xp.cumsum(wide, axis=dim)
        return out if wide is a else out.astype(a.dtype)  # (integers: int64, as PyTorch)

    @staticmethod
    def backward(ctx, grad):
        return Cumsum.apply(grad, ctx.dim, not ctx.reverse), None, None


@numpy_keywords
def cumsum(input, dim: int | None = None, *, dtype=None) -> Tensor:
    """Running sums along ``dim`` (required); integers and bools sum as int64."""
    if dim is None:
        raise TypeError("cumsum: dim is required (the dim to run along), e.g. cumsum(x, dim=0)")
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype.category < 2 and input.dtype is not _dt.int64:  # bool and integers
        input = input.to(_dt.int64)
    return Cumsum.apply(input, dim_axis(input, dim, "cumsum"), False)
