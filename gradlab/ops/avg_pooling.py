"""Average pooling: avg_pool1d/2d, the mean of each window.

out = Σ window / divisor, where the divisor is the window's size (clipped
at the padding and the input's edge as PyTorch clips it), or
``divisor_override``. The sum is separable, like the max: along H (``kh``
strided slices), then along W.

Linear, so its backward is its adjoint: each gradient divided by its
divisor and spread evenly back over its window (overlapping windows add).
The adjoint of that is avg pooling again, so double backward is free.
Forward mode too: a linear op's tangent is the op applied to the input's
tangent (``tangent_rule = "linear"``).
The window geometry and its checks are shared with max pooling
(:mod:`.pooling`).
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .pooling import _as_2d, _from_2d, _from_buffer, _geometry, _offset, _run, _to_buffer

__all__ = ["avg_pool1d"]
FUNCTIONAL = ["avg_pool1d", "avg_pool2d"]
TENSOR_METHODS: list = []


def _window_sums(xp, buf, geo):
    """Σ over each window: along H (runs of rows), then along W (separable)."""
    for axis in (2, 3):
        parts = [_offset(buf, axis, k, geo) for k in range(geo.kernel[axis - 2])]
        if len(parts) > 1:
            buf = parts[0] + parts[1]
            for part in parts[2:]:
                buf += part
        else:
            buf = parts[0]
    return buf.copy() if geo.kernel == (1, 1) else buf


def _spread(xp, grad, geo):
    """The adjoint of ``_window_sums``: add each value onto every element of its window."""
    n, c = grad.shape[:2]
    hb, wb = geo.buffer
    for axis, size in ((3, (grad.shape[2], wb)), (2, (hb, wb))):
        out = xp.zeros((n, c) + size, dtype=grad.dtype)
        for k in range(geo.kernel[axis - 2]):
            _offset(out, axis, k, geo)[...] += grad
        grad = out
    return grad


def _divisor(geo, count_include_pad, divisor_override):
    """PyTorch's divisor per output (Oh, Ow): the window's size, clipped as PyTorch clips it."""
    if divisor_override is not None:
        return np.full(geo.out_size, float(divisor_override))
    counts = []
    for d in range(2):
        start = np.arange(geo.out_size[d]) * geo.stride[d] - geo.pads[d][0]
        end = np.minimum(start + geo.kernel[d], geo.in_size[d] + geo.pads[d][0])
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, geo.in_size[d])
        counts.append(end - start)
    return np.outer(counts[0], counts[1]).astype(float)


class AvgPool(Function):
    """Σ window / divisor.   d/dx = each gradient / its divisor, spread over its window.

    jvp: ẏ = Σ window of ẋ / divisor (linear).
    """

    raw = True
    tangent_rule = "linear"
    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, geo, divisor):
        xp = xp_for(x)
        out = _window_sums(xp, _to_buffer(xp, _as_2d(x, geo), geo, 0), geo)
        out *= xp.asarray(1.0 / divisor, dtype=x.dtype)
        ctx.geo, ctx.divisor = geo, divisor
        return _from_2d(out, geo)

    @staticmethod
    def backward(ctx, grad):
        return AvgPoolBackward.apply(grad, ctx.geo, ctx.divisor), None, None


class AvgPool1d(AvgPool):
    name = "avg_pool1d"


class AvgPool2d(AvgPool):
    name = "avg_pool2d"


class AvgPoolBackward(Function):
    """avg pool's backward (its adjoint); its own backward is avg pool again. Linear."""

    raw = True
    tangent_rule = "linear"
    name, node_name = "avg_pool_backward", "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, geo, divisor):
        xp = xp_for(grad)
        scaled = _as_2d(grad, geo) * xp.asarray(1.0 / divisor, dtype=grad.dtype)
        ctx.geo, ctx.divisor = geo, divisor
        return _from_2d(_from_buffer(xp, _spread(xp, scaled, geo), geo), geo)

    @staticmethod
    def backward(ctx, grad):
        return AvgPool.apply(grad, ctx.geo, ctx.divisor), None, None


# --- the public functions --------------------------------------------------------------------

def _avg_pool(fn, op, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, spatial):
    geo = _geometry(op, input, kernel_size, stride, padding, 1, ceil_mode, spatial)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {input.dtype}. "
                           f"Fix: convert with .float()")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor_override must be non-zero (got 0); use None for "
                           f"the window size")
    return _run(fn, input, spatial, geo, _divisor(geo, count_include_pad, divisor_override))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True) -> Tensor:
    """Mean over windows of (N, C, L); ``stride`` defaults to ``kernel_size``."""
    return _avg_pool(AvgPool1d, "avg_pool1d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None, 1)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Mean over windows of (N, C, H, W).

    ``count_include_pad``: whether zero padding counts in the divisor;
    ``divisor_override``: divide every window sum by this number instead.
    """
    return _avg_pool(AvgPool2d, "avg_pool2d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override, 2)
