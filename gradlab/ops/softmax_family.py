"""Normalising exponentials along a dim: softmax, log_softmax and logsumexp.

softmax turns scores into probabilities, exp(a_i) / Σ_j exp(a_j);
log_softmax is its log, and logsumexp = log Σ_j exp(a_j) is the log of the
normaliser they share (log_softmax = a - logsumexp(a)). exp overflows
float32 beyond about 88, so each subtracts the max m first: the shift
cancels in the ratio, and log Σ exp(a_j) = m + log Σ exp(a_j - m).

softmax and log_softmax are one node each, with their own derivative,
rather than the exp, sum and div they could be composed from: the graph a
student sees says ``softmax``, and the backward needs only the output.
So does forward mode: softmax's tangent is y·(ȧ - Σ_j y_j ȧ_j).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import check_float, numpy_keywords, widened, xp_for
from .complex_parts import conj
from .reduction import dim_axis, expand_reduced, reduce_dims, reduced_shape, sum_reduced

__all__ = ["softmax", "log_softmax", "logsumexp"]
TENSOR_METHODS = list(__all__)


def _dim_required(op: str, dim) -> None:
    if dim is None:
        raise TypeError(f"{op}: dim is required: which dim should it work along? For logits "
                        f"of shape (batch, classes) that is the last one: {op}(x, dim=-1)")


class Logsumexp(Function):
    """log Σ exp(a_i) = m + log Σ exp(a_i - m), m = max: nothing overflows.

    d/da_i = exp(a_i - out) = softmax(a)_i. Complex a: m is the largest real part
    (only |exp| can overflow), and the derivative, holomorphic, is conjugated.
    """

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        xp = xp_for(a)
        ctx.dims, ctx.keepdim = dims, keepdim
        shape = reduced_shape(a.shape, dims, keepdim)
        if a.size == 0:  # log of an empty sum = log 0
            out = xp.full(shape, -math.inf, dtype=a.dtype)
        else:
            wide = widened(a)  # half floats: summed in float32
            m = (wide.real if wide.dtype.kind == "c" else wide).max(axis=dims, keepdims=True)
            m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))  # all -inf: shift by 0 instead
            with np.errstate(divide="ignore"):  # log 0 = -inf is the right answer here
                out = (xp.log(xp.exp(wide - m).sum(axis=dims, keepdims=True)) + m).reshape(
                    shape).astype(a.dtype, copy=False)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        shape, dims, keepdim = ctx.input_shapes[0], ctx.dims, ctx.keepdim
        softmax_a = (a - expand_reduced(out, shape, dims, keepdim)).exp()
        return expand_reduced(grad, shape, dims, keepdim) * conj(softmax_a), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: ẏ = Σ_i softmax(a)_i·ȧ_i = Σ_i exp(a_i - out)·ȧ_i."""
        a, out = ctx.primals[0], ctx.results[0]
        softmax_a = (a - expand_reduced(out, a.shape, ctx.dims, ctx.keepdim)).exp()
        return sum_reduced(ctx, softmax_a * t)


@numpy_keywords
def logsumexp(input, dim=None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over ``dim`` (required), without overflow; integers become float."""
    _dim_required("logsumexp", dim)
    if input.dtype.category < 2:  # bool and integers (complex: the op decides)
        input = input.to(_dt.get_default_dtype())
    return Logsumexp.apply(input, reduce_dims(input, dim, "logsumexp"), keepdim)


class Softmax(Function):
    """y_i = exp(a_i - m) / Σ_j exp(a_j - m), m = max.   Backward: dx = y · (g - Σ_j g_j y_j)."""

    raw = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        wide = widened(a)  # half floats: summed in float32 (PyTorch's accumulator)
        e = xp_for(a).exp(wide - wide.max(axis=dim, keepdims=True)) if a.size else wide.copy()
        out = (e / e.sum(axis=dim, keepdims=True)).astype(a.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * (grad - (grad * y).sum(ctx.dim, keepdim=True)), None

    @staticmethod
    def jvp(ctx, t, _):
        """jvp: ẏ = y·(ȧ - Σ_j y_j ȧ_j) (the Jacobian is symmetric: backward's formula)."""
        y = ctx.results[0]
        return y * (t - (t * y).sum(ctx.dim, keepdim=True))


class LogSoftmax(Function):
    """y_i = a_i - m - log Σ_j exp(a_j - m), m = max.   Backward: dx = g - softmax · Σ_j g_j."""

    raw = True
    name = "log_softmax"

    @staticmethod
    def forward(ctx, a, dim):
        xp = xp_for(a)
        ctx.dim = dim
        if a.size == 0:
            out = a.copy()
        else:
            wide = widened(a)  # half floats: summed in float32
            shifted = wide - wide.max(axis=dim, keepdims=True)
            out = (shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))).astype(
                a.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad - y.exp() * grad.sum(ctx.dim, keepdim=True), None

    @staticmethod
    def jvp(ctx, t, _):
        """jvp: ẏ = ȧ - Σ_j softmax_j·ȧ_j (the transpose of backward's Jacobian)."""
        y = ctx.results[0]
        return t - (y.exp() * t).sum(ctx.dim, keepdim=True)


def _normalize(fn, op, input, dim, dtype):
    _dim_required(op, dim)
    if dtype is not None:
        input = input.to(dtype)
    check_float(op, input)
    return fn.apply(input, dim_axis(input, dim, op))


@numpy_keywords
def softmax(input, dim: int | None = None, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (required): values in [0, 1] that sum to 1."""
    return _normalize(Softmax, "softmax", input, dim, dtype)


@numpy_keywords
def log_softmax(input, dim: int | None = None, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim`` (required), in one stable step."""
    return _normalize(LogSoftmax, "log_softmax", input, dim, dtype)
