"""Reductions: many values in, fewer out.

The backward of a reduction sends each output's gradient back to the inputs
it summarised: ``sum`` copies it to every input (expand), ``mean`` also
divides by the count, ``max`` sends it only to the winner.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dims

__all__ = ["sum", "mean"]
TENSOR_METHODS = ["sum", "mean"]


def _reduced_shape(shape, dims, keepdim):
    if dims is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def expand_reduced(grad: Tensor, shape, dims, keepdim) -> Tensor:
    """Broadcast a reduction's gradient back over the input ``shape``.

    Without ``keepdim`` the reduced dims are gone from ``grad``; put them back
    as size-1 dims, then expand (a view: no copy).
    """
    if not keepdim:
        grad = grad.reshape(_reduced_shape(shape, dims, True))
    return grad.expand(shape)


class Sum(Function):
    """sum over dims.   d/da_i = 1 for every element: the gradient is copied back."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        ctx.dims, ctx.keepdim = dims, keepdim
        if dtype is None and a.dtype.kind in "biu":
            dtype = "int64"  # PyTorch sums integers and bools as int64
        return a.sum(axis=dims, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        (shape, _, _, _) = ctx.input_shapes
        return expand_reduced(grad, shape, ctx.dims, ctx.keepdim), None, None, None


def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001
    """Sum of all elements, or over ``dim`` (an int or a tuple of ints)."""
    dims = wrap_dims(dim, input.ndim, "sum")
    if dims == () and dim is not None and input.ndim:
        dims = None
    return Sum.apply(input, dims, keepdim, None if dtype is None else _np_dtype(dtype))


class Mean(Function):
    """mean over dims.   d/da_i = 1/n for each of the n averaged elements."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        ctx.dims, ctx.keepdim = dims, keepdim
        out = a.mean(axis=dims, keepdims=keepdim)
        ctx.count = a.size // max(out.size, 1) if a.size else 0
        return out.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (shape, _, _) = ctx.input_shapes
        return expand_reduced(grad / max(ctx.count, 1), shape, ctx.dims, ctx.keepdim), None, None


def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Average of all elements, or over ``dim``. Needs a floating point tensor."""
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"mean: expected a floating point tensor, got {input.dtype} with shape "
            f"{tuple(input.shape)}. Fix: x.float().mean(), or pass dtype=gradlab.float32"
        )
    dims = wrap_dims(dim, input.ndim, "mean")
    return Mean.apply(input, dims, keepdim)


def _np_dtype(dtype):
    from ..dtypes import to_dtype

    return to_dtype(dtype).np
