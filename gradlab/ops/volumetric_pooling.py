"""3-D pools: max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d.

Built from the 2-D pools as :mod:`.volumetric` builds conv3d: the input slice
each (output depth, depth tap) reads is gathered once, the 2-D pool does H
and W, and the depth taps are combined with plain tensor ops. No derivative
is written here: backward, double backward, forward mode and CUDA come from
index_select, max_pool2d/avg_pool2d, gather and where.

* avg: a window's sum is the sum over its depth taps of their H·W window
  sums, so the taps are summed first and ONE avg_pool2d (divisor 1) sums the
  planes; then each sum is divided by PyTorch's 3-D divisor.
* max: each depth tap's plane is max-pooled (with its 2-D winner), then the
  tap whose max wins is picked by ``gather``, so the gradient reaches that one
  input only. PyTorch scans a window depth first, then rows, then columns, and
  keeps a value if it is greater than the best so far or NaN: ties go to the
  first max, NaN to the last NaN. The 2-D pool follows that rule inside each
  plane; :func:`_first_max` applies it across the taps, in depth order. (Taking
  the max over depth first and then over the plane would scan rows first and
  pick a different winner on ties.)
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from .adaptive_pooling import _adaptive_sizes, _mean_over_windows, _windows
from .avg_pooling import avg_pool2d
from .comparison import isnan
from .creation import full, tensor
from .gather_scatter import gather
from .pooling import _geometry, max_pool2d
from .selection import where
from .volumetric import depth_positions, depth_taps

__all__ = ["max_pool3d"]
FUNCTIONAL = ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"]
TENSOR_METHODS: list = []


def _pool_geometry(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    """The windows (the 2-D pools' rules and checks, for three dims); a float input."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(input).__name__}")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{op}: expected a 4-D (unbatched) or 5-D (batched) input, got "
                           f"shape {tuple(input.shape)}. Fix: reshape it to (N, C, D, H, W)")
    geo = _geometry(op, input, kernel_size, stride, padding, dilation, ceil_mode, 3)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {input.dtype}. "
                           f"Fix: convert with .float()")
    return geo


def _first_max(values: Tensor, valid, first) -> Tensor:
    """Which candidate along the last dim PyTorch's max pools pick, as an int64 index (keepdim).

    Scanning in order, a candidate takes over if it is greater than the best
    so far or NaN; ``valid`` (a bool tensor, broadcast against ``values``, or
    None) marks the candidates inside the input; ``first`` is the index kept
    when none takes over (PyTorch's: the window's first position in the input).
    """
    values = values.detach()  # the choice is not differentiated; the gather after it is
    best = full(values.shape[:-1], -math.inf, dtype=values.dtype, device=values.device)
    won = first
    for k in range(values.shape[-1]):
        candidate = values[..., k]
        take = (candidate > best) | isnan(candidate)
        if valid is not None:
            take = take & valid[..., k]
        best = where(take, candidate, best)
        won = where(take, k, won)
    return won.expand(best.shape).unsqueeze(-1)


def _batched(input: Tensor):
    return (input.unsqueeze(0), True) if input.ndim == 4 else (input, False)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of (N, C, D, H, W); padding counts as -inf; ties go to the first max.

    With ``return_indices`` also each max's flat index into D·H·W (PyTorch's).
    d/dx: the gradient goes to each window's max (the tap ``gather`` picked,
    then max_pool2d's winner in that plane).
    """
    op = "max_pool3d"
    geo = _pool_geometry(op, input, kernel_size, stride, padding, dilation, ceil_mode)
    x, unbatched = _batched(input)
    n, c, d, h, w = x.shape
    (do, ho, wo), (kd, kh, kw) = geo.out_size, geo.kernel
    positions, valid = depth_positions(d, do, kd, geo.stride[0], geo.dilation[0],
                                       geo.pads[0][0])
    taps = depth_taps(x, positions, valid, -math.inf)                    # (N, C, Do, kd, H, W)
    values, plane_index = max_pool2d(
        taps.reshape(n, c * do * kd, h, w), (kh, kw), geo.stride[1:],
        (geo.pads[1][0], geo.pads[2][0]), geo.dilation[1:], ceil_mode, return_indices=True)
    values = values.reshape(n, c, do, kd, ho, wo).permute(0, 1, 2, 4, 5, 3)  # taps last
    inside = tensor(valid, device=x.device).reshape(do, 1, 1, kd)
    # A window with no max keeps its first tap at or after depth 0, as PyTorch's (even a
    # dilated window that lies wholly in the padding: its value is -inf, its index past the end).
    first = tensor((positions >= 0).argmax(1), device=x.device).reshape(do, 1, 1)
    won = _first_max(values, inside, first)                              # (N, C, Do, Ho, Wo, 1)
    out = gather(values, -1, won).squeeze(-1)
    if not return_indices:
        return out.squeeze(0) if unbatched else out
    plane_index = plane_index.reshape(n, c, do, kd, ho, wo).permute(0, 1, 2, 4, 5, 3)
    depth = tensor(positions[:, :1], device=x.device).reshape(do, 1, 1, 1) \
        + won * geo.dilation[0]
    index = (depth * (h * w) + gather(plane_index, -1, won)).squeeze(-1)
    return (out.squeeze(0), index.squeeze(0)) if unbatched else (out, index)


def _divisor(geo, count_include_pad: bool, divisor_override) -> np.ndarray:
    """PyTorch's divisor of each (Do, Ho, Wo) window sum: the window's size, clipped to the
    padded input (count_include_pad) or to the input itself, or ``divisor_override``."""
    if divisor_override is not None:
        return np.full(geo.out_size, float(divisor_override))
    counts = []
    for d in range(3):
        before = geo.pads[d][0]
        start = np.arange(geo.out_size[d]) * geo.stride[d] - before
        end = np.minimum(start + geo.kernel[d], geo.in_size[d] + before)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, geo.in_size[d])
        counts.append((end - start).astype(float))
    return counts[0][:, None, None] * counts[1][None, :, None] * counts[2][None, None, :]


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Mean over windows of (N, C, D, H, W): the depth taps summed, one avg_pool2d of the sums.

    ``count_include_pad``: whether zero padding counts in the divisor;
    ``divisor_override``: divide every window sum by this number instead.
    d/dx: each gradient / its divisor, spread evenly over its window.
    """
    op = "avg_pool3d"
    geo = _pool_geometry(op, input, kernel_size, stride, padding, 1, ceil_mode)
    if any(n < k for n, k in zip(geo.in_size, geo.kernel)):  # PyTorch's 3-D check, not 2-D's
        raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} is smaller than "
                           f"kernel_size {geo.kernel} (padding does not count here). Fix: "
                           f"use a smaller kernel or a larger input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor_override must be non-zero (got 0); use None for "
                           f"the window size")
    x, unbatched = _batched(input)
    n, c, d, h, w = x.shape
    (do, ho, wo), (kd, kh, kw) = geo.out_size, geo.kernel
    positions, valid = depth_positions(d, do, kd, geo.stride[0], 1, geo.pads[0][0])
    depth_sums = depth_taps(x, positions, valid).sum(3)                  # (N, C, Do, H, W)
    sums = avg_pool2d(depth_sums.reshape(n, c * do, h, w), (kh, kw), geo.stride[1:],
                      (geo.pads[1][0], geo.pads[2][0]), ceil_mode, True, 1)
    divisor = tensor(_divisor(geo, count_include_pad, divisor_override), dtype=x.dtype,
                     device=x.device)
    out = sums.reshape(n, c, do, ho, wo) / divisor
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """Mean over an ``output_size`` grid of (nearly) equal windows covering D x H x W.

    The mean is separable: over W's windows, then H's, then D's (each one
    gather + masked sum / length, :mod:`.adaptive_pooling`'s helper).
    """
    size, out = _adaptive_sizes("adaptive_avg_pool3d", input, output_size, 3)
    if all(s % o == 0 for s, o in zip(size, out)):  # equal windows: a plain average pool
        return avg_pool3d(input, tuple(s // o for s, o in zip(size, out)))
    result = _mean_over_windows(input, size[2], out[2], last=True)      # (..., D, H, Wo)
    result = _mean_over_windows(result, size[1], out[1], last=False)    # (..., D, Ho, Wo)
    lead = tuple(result.shape[:-3])
    result = _mean_over_windows(result.reshape(*lead, size[0], out[1] * out[2]), size[0],
                                out[0], last=False)                     # (..., Do, Ho·Wo)
    return result.reshape(*lead, *out).contiguous()  # (as PyTorch's: view() works on it)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over an ``output_size`` grid of (nearly) equal windows covering D x H x W.

    Uneven windows: each one gathered as a row of its D·H·W values in scan
    order (short windows repeat their last position, never chosen), then
    PyTorch's pick (:func:`_first_max`) and a ``gather``, whose gradient goes
    to the winner. With ``return_indices``, its flat index into D·H·W.
    """
    op = "adaptive_max_pool3d"
    size, out = _adaptive_sizes(op, input, output_size, 3)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {input.dtype}. "
                           f"Fix: convert with .float()")
    if all(s % o == 0 for s, o in zip(size, out)):  # equal windows: a plain max pool
        return max_pool3d(input, tuple(s // o for s, o in zip(size, out)),
                          return_indices=return_indices)
    (dpos, dreal, _), (hpos, hreal, _), (wpos, wreal, _) = (
        _windows(s, o, input) for s, o in zip(size, out))
    # (Do, Ho, Wo, Ld, Lh, Lw) by broadcasting: window (i, j, k), offset (a, b, c)
    dd, hh, ww = dpos[:, None, None, :, None, None], hpos[None, :, None, None, :, None], \
        wpos[None, None, :, None, None, :]
    real = dreal[:, None, None, :, None, None] & hreal[None, :, None, None, :, None] \
        & wreal[None, None, :, None, None, :]
    rows = input[..., dd, hh, ww]
    rows = rows.reshape(*rows.shape[:-3], -1)                            # (..., Do, Ho, Wo, L)
    won = _first_max(rows, real.reshape(*out, -1), 0)
    values = gather(rows, -1, won).squeeze(-1)
    if not return_indices:
        return values
    flat = ((dd * size[1] + hh) * size[2] + ww).expand(real.shape).reshape(*out, -1)
    return values, gather(flat.expand(rows.shape), -1, won).squeeze(-1)
