"""3-D pools: max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d.

max_pool3d and avg_pool3d are single ops (:mod:`._volumetric_windows`): a
3-D window is separable, so it is reduced in three vectorised passes (along
W, then H, then D), each reading one strided slice of the input per kernel
offset, with no copies of the windows. Their derivatives are written there:

* avg: d/dx = each gradient / its window's divisor (PyTorch's 3-D divisor,
  :func:`_divisor`), spread over its window.
* max: the gradient goes to each window's max. PyTorch scans a window depth
  first, then rows, then columns, and keeps a value if it is greater than the
  best so far or NaN: ties go to the first max, NaN to the last NaN; a window
  with no max (all -inf) keeps its first position inside the input. Passes
  in the order W, H, D that each keep the first max (or last NaN) pick exactly
  that winner. (Depth first would scan rows first and pick a different one.)

The adaptive pools with even windows are the plain pools. With uneven ones,
the mean is separable: one op per axis (:mod:`._adaptive_windows`), with its
adjoint as backward; the max is chosen on raw values (a choice has no
derivative) and the winners read with one flat take whose backward is one
flat scatter-add (:mod:`._gather_weights`).

Speed (forward + backward, (4, 8, 16, 32, 32) float32, one thread, best of
10; PyTorch 2.13 CPU alongside): max_pool3d k=2 11.3 ms before (a composition
of max_pool2d over depth taps) -> 1.8 ms (PyTorch 3.0); k=3, s=2, p=1 28 -> 11
(5.8); avg_pool3d k=2 6.4 -> 1.5 (2.1); k=3, s=2, p=1 10.7 -> 3.8 (3.3);
adaptive_avg_pool3d to (5, 7, 7) 19.6 -> 4.3 (1.4); adaptive_max_pool3d to
(5, 7, 7) 31.5 -> 12.4 (2.2), to (8, 16, 16) (even windows) 11.4 -> 1.8 (3.7).
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._adaptive_windows import AdaptiveMeanAlong, WindowPlan
from ._gather_weights import TapGather, Taps
from ._util import xp_for
from ._volumetric_windows import AvgPool3d, MaxPool3d, geometry_3d
from .adaptive_pooling import _adaptive_sizes, _windows
from .creation import as_tensor
from .pooling import _geometry

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


def _first_max(values, valid):
    """Which candidate along the last dim PyTorch's max pools pick (raw arrays in, a raw
    int index array out, without the last dim).

    Scanning in order, a candidate takes over if it is greater than the best
    so far or NaN; ``valid`` (bool, broadcast against ``values``, or None)
    marks the real candidates. Without the scan: the last NaN if there is one,
    else the first max (``argmax`` keeps the first); a window of -inf has none
    that takes over and keeps candidate 0, its first position.
    """
    xp = xp_for(values)
    if valid is not None:
        values = xp.where(valid, values, -xp.inf)
    nan = xp.isnan(values)
    won = xp.argmax(xp.where(nan, -xp.inf, values), axis=-1)
    last_nan = values.shape[-1] - 1 - xp.argmax(nan[..., ::-1], axis=-1)
    return xp.where(nan.any(axis=-1), last_nan, won)


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
    result = MaxPool3d.apply(x, geometry_3d(geo), bool(return_indices))
    if not return_indices:
        return result.squeeze(0) if unbatched else result
    out, index = result
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
    divisor = _divisor(geo, count_include_pad, divisor_override)
    out = AvgPool3d.apply(x, geometry_3d(geo), divisor)
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """Mean over an ``output_size`` grid of (nearly) equal windows covering D x H x W.

    The mean is separable: over W's windows, then H's, then D's, each one op
    (:class:`~._adaptive_windows.AdaptiveMeanAlong`; d/dx: each gradient /
    its window's length, added onto the window).
    """
    size, out = _adaptive_sizes("adaptive_avg_pool3d", input, output_size, 3)
    if all(s % o == 0 for s, o in zip(size, out)):  # equal windows: a plain average pool
        return avg_pool3d(input, tuple(s // o for s, o in zip(size, out)))
    result = input
    for axis in (-1, -2, -3):  # W, H, D
        n, o = size[axis], out[axis]
        if n != o:  # (n == o: windows of one, the identity)
            result = AdaptiveMeanAlong.apply(result, axis, WindowPlan(n, o), False)
    return result if result is not input else input.clone()


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over an ``output_size`` grid of (nearly) equal windows covering D x H x W.

    Uneven windows: each one read as a row of its D·H·W values in scan order
    (short windows repeat their last position, never chosen), PyTorch's pick
    (:func:`_first_max`) made on those raw values, and the winners read from
    the input by their flat D·H·W index with one flat ``take``
    (:class:`~._gather_weights.TapGather`, whose gradient is one flat
    scatter-add onto the winners). With ``return_indices``, that flat index.
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
        (t._data for t in _windows(s, o, input)) for s, o in zip(size, out))
    # (Do, Ho, Wo, Ld, Lh, Lw) by broadcasting: window (i, j, k), offset (a, b, c)
    dd, hh, ww = dpos[:, None, None, :, None, None], hpos[None, :, None, None, :, None], \
        wpos[None, None, :, None, None, :]
    real = dreal[:, None, None, :, None, None] & hreal[None, :, None, None, :, None] \
        & wreal[None, None, :, None, None, :]
    rows = input.detach()._data[..., dd, hh, ww]  # only to choose: no graph
    rows = rows.reshape(*rows.shape[:-3], -1)                            # (..., Do, Ho, Wo, L)
    won = _first_max(rows, real.reshape(*out, -1))
    xp = xp_for(rows)
    flat = xp.broadcast_to((dd * size[1] + hh) * size[2] + ww, real.shape).reshape(*out, -1)
    index = xp.take_along_axis(xp.broadcast_to(flat, rows.shape), won[..., None], -1)[..., 0]
    lead, volume = tuple(input.shape[:-3]), size[0] * size[1] * size[2]
    planes, points = int(np.prod(lead)), int(np.prod(out))
    taps = Taps(index.reshape(planes, points).astype(xp.int64), volume, 1)
    values = TapGather.apply(input.reshape(planes, 1, volume), taps).reshape(*lead, *out)
    if not return_indices:
        return values
    return values, as_tensor(index.astype(xp.int64), device=input.device)
