"""Resizing images and signals: ``interpolate`` (nearest, linear, bilinear, bicubic, trilinear).

Resizing is separable: each output pixel along one axis is a weighted sum
of a few input pixels along that axis (its *taps*), and a 2-D resize is a
resize of the rows, then of the columns. So every mode is described by,
per spatial axis, an index array ``idx[k, o]`` and a weight array
``w[k, o]``::

    nearest     1 tap:  idx = floor(o · in/out),                  w = 1
    linear      2 taps: src = (o + ½) · in/out − ½ (clamped at 0),
                        idx = floor(src), floor(src) + 1,          w = 1 − λ, λ  (λ = src − floor)
    cubic       4 taps: idx = floor(src) − 1 ... + 2 (clamped),   w = Keys' cubic kernel (A = −¾)

(with ``align_corners=True``, src = o · (in − 1)/(out − 1): the corner pixels
line up exactly). The forward gathers the taps and adds them up, axis by
axis. Resizing is linear in x, so its backward is the *adjoint* map: each
output gradient is sent back to the input pixels it came from, times the
same weight (a scatter-add, done as one small matrix product per axis).
The adjoint is an op too, whose own backward is the resize again, so
double backward works. Linear also means forward mode is free: the
tangent is resized like the value (``tangent_rule = "linear"``). The index
formulas are PyTorch's, so results match it exactly, including for
non-integer scales.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import add_at, check_float, xp_for

__all__: list[str] = []  # PyTorch has no torch.interpolate
FUNCTIONAL = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]
TENSOR_METHODS: list = []

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_LINEAR_MODES = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}  # mode: spatial dims
_NODE = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
         "bilinear": "Bilinear", "bicubic": "Bicubic", "trilinear": "Trilinear"}


# --- the taps of one axis: PyTorch's index formulas --------------------------------------------

def _scale(in_size: int, out_size: int, scale, align_corners: bool, real):
    """How far apart, in input pixels, two neighbouring output pixels sit."""
    if align_corners:
        return real((in_size - 1) / (out_size - 1)) if out_size > 1 else real(0)
    if scale is not None and scale > 0:
        return real(1.0 / scale)  # the scale_factor the user gave, not out/in
    return real(in_size) / real(out_size)


def _nearest_taps(in_size, out_size, scale, exact: bool):
    """floor(o · s) (or floor((o + ½) · s) for nearest-exact), in float32 as PyTorch."""
    o = np.arange(out_size, dtype=np.float32)
    if not exact and out_size == in_size:
        return np.arange(out_size)[None], None
    if not exact and out_size == 2 * in_size:
        return (np.arange(out_size) >> 1)[None], None
    s = _scale(in_size, out_size, scale, False, np.float32)
    src = np.floor(((o + np.float32(0.5)) if exact else o) * s).astype(np.int64)
    return np.minimum(src, in_size - 1)[None], None


def _source(in_size, out_size, scale, align_corners, real, cubic: bool):
    s = _scale(in_size, out_size, scale, align_corners, real)
    o = np.arange(out_size, dtype=real)
    if align_corners:
        return o * s
    src = s * (o + real(0.5)) - real(0.5)
    return src if cubic else np.maximum(src, real(0))


def _linear_taps(in_size, out_size, scale, align_corners, real):
    src = _source(in_size, out_size, scale, align_corners, real, cubic=False)
    i0 = src.astype(np.int64)  # src >= 0, so truncation is floor
    i1 = i0 + (i0 < in_size - 1)
    lam = src - i0.astype(real)
    return np.stack([i0, i1]), np.stack([1 - lam, lam])


def _cubic_taps(in_size, out_size, scale, align_corners, real):
    """Keys' cubic convolution with A = -0.75, taps at floor(src) - 1 ... floor(src) + 2."""
    a = real(-0.75)
    src = _source(in_size, out_size, scale, align_corners, real, cubic=True)
    base = np.floor(src)
    t = src - base

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    idx = np.stack([base.astype(np.int64) + k for k in (-1, 0, 1, 2)])
    weights = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)])
    return np.clip(idx, 0, in_size - 1), weights


# --- the op: gather the taps along each axis; its adjoint scatters them back --------------------

def _apply_taps(xp, x, taps):
    for ax, (idx, w, _) in taps:
        if w is None:
            x = xp.take(x, xp.asarray(idx[0]), axis=ax)
            continue
        shape = [1] * x.ndim
        shape[ax] = idx.shape[1]
        out = None
        for k in range(idx.shape[0]):
            term = xp.take(x, xp.asarray(idx[k]), axis=ax) * \
                xp.asarray(w[k], dtype=x.dtype).reshape(shape)
            out = term if out is None else out + term
        x = out
    return x


def _apply_adjoint(xp, g, taps):
    """Σ over taps of weight · g, added into the input pixel each tap read: Mᵀ g per axis.

    As a product with the dense matrix M (one tensordot per axis, fast), unless g
    holds a NaN or inf: M's zeros would spread it (0·inf is NaN) to pixels no tap
    read, so such a g is scattered back tap by tap instead, as PyTorch does.
    """
    exact = not bool(xp.isfinite(g).all())
    for ax, (idx, w, in_size) in reversed(taps):
        g = (_scatter_taps if exact else _dense_adjoint)(xp, g, ax, idx, w, in_size)
    return xp.ascontiguousarray(g)


def _dense_adjoint(xp, g, ax, idx, w, in_size):
    out_size = idx.shape[1]
    matrix = xp.zeros((in_size, out_size), dtype=g.dtype)  # matrix[i, o]: weight of i in o
    cols = xp.broadcast_to(xp.arange(out_size), idx.shape)
    add_at(matrix, (xp.asarray(idx), cols),
           xp.ones(idx.shape, g.dtype) if w is None else xp.asarray(w, dtype=g.dtype))
    return xp.moveaxis(xp.tensordot(matrix, g, axes=([1], [ax])), 0, ax)


def _scatter_taps(xp, g, ax, idx, w, in_size):
    shape = list(g.shape)
    shape[ax] = in_size
    out = xp.zeros(shape, dtype=g.dtype)
    weight_shape = [1] * g.ndim
    weight_shape[ax] = idx.shape[1]
    for k in range(idx.shape[0]):
        term = g if w is None else g * xp.asarray(w[k], dtype=g.dtype).reshape(weight_shape)
        add_at(out, (slice(None),) * ax + (xp.asarray(idx[k]),), term)
    return out


class _Resample(Function):
    """y = M x along each spatial axis (M: the taps' weights).   dL/dx = Mᵀ dL/dy.

    jvp: ẏ = M ẋ.
    """

    raw = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, x, taps, kind):
        ctx.taps, ctx.kind = taps, kind
        return _apply_taps(xp_for(x), x, taps)

    @staticmethod
    def backward(ctx, grad):
        return _ADJOINTS[ctx.kind].apply(grad, ctx.taps, ctx.kind), None, None


class _ResampleAdjoint(Function):
    """g_x = Mᵀ g_y: each output gradient sent back to its taps.   Its backward is M again.

    jvp: ġ_x = Mᵀ ġ_y.
    """

    raw = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, grad, taps, kind):
        ctx.taps, ctx.kind = taps, kind
        return _apply_adjoint(xp_for(grad), grad, taps)

    @staticmethod
    def backward(ctx, grad):
        return _RESAMPLES[ctx.kind].apply(grad, ctx.taps, ctx.kind), None, None


def _node_classes():
    """One op class per mode and dimension, so the graph shows PyTorch's node names."""
    resamples, adjoints = {}, {}
    for mode, word in _NODE.items():
        for d in (1, 2, 3):
            base = f"Upsample{word}{d}D"
            op = "upsample_" + mode.replace("-", "_") + f"{d}d"
            resamples[mode, d] = type(base, (_Resample,), {
                "name": op, "node_name": f"{base}Backward0", "__doc__": _Resample.__doc__})
            adjoints[mode, d] = type(base + "Backward", (_ResampleAdjoint,), {
                "name": op + "_backward", "node_name": f"{base}BackwardBackward0",
                "__doc__": _ResampleAdjoint.__doc__})
    return resamples, adjoints


_RESAMPLES, _ADJOINTS = _node_classes()


# --- the public function ------------------------------------------------------------------------

def _per_dim(value, dims: int, what: str, input: Tensor):
    if isinstance(value, (list, tuple)):
        if len(value) != dims:
            raise ValueError(
                f"Input and {what} must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and {what} of "
                f"{tuple(value)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                f"and {what} with one entry per spatial dim (K = {dims}).")
        return list(value)
    return [value] * dims


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, d1, ...) to ``size``, or by ``scale_factor``.

    ``mode``: nearest, nearest-exact, linear (3-D input), bilinear and bicubic
    (4-D), trilinear (5-D), area (adaptive average pooling). The output size
    is floor(in · scale_factor); unless ``recompute_scale_factor=True`` the
    given scale (not out/in) places the samples, as in PyTorch.
    """
    if mode not in _MODES or input.ndim not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
            f"nearest-exact (got {mode})")
    dims = input.ndim - 2
    if mode in _LINEAR_MODES:
        if _LINEAR_MODES[mode] != dims:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{_LINEAR_MODES[mode] + 2}D input")
        align_corners = bool(align_corners)
    elif align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by gradlab; "
                                  "resize without it, or blur first with avg_pool2d")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    in_sizes = list(input.shape[2:])
    scales = [None] * dims
    if size is not None:
        out_sizes = [int(s) for s in _per_dim(size, dims, "output size", input)]
    else:
        scales = [float(s) for s in _per_dim(scale_factor, dims, "scale_factor", input)]
        out_sizes = [math.floor(n * s) for n, s in zip(in_sizes, scales)]
        if recompute_scale_factor:
            scales = [None] * dims
    if min(in_sizes + out_sizes) <= 0:
        names = "DHW"[3 - dims:]
        shown = ", ".join(f"{c}: {n}" for c, n in zip(names, in_sizes))
        got = ", ".join(f"{c}: {n}" for c, n in zip(names, out_sizes))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({shown}) output ({got})")
    check_float("interpolate", input)
    if mode == "area":
        return _area(input, out_sizes)
    real = np.float64 if input.dtype is _dt.float64 else np.float32  # PyTorch's math type
    taps = []
    for ax, (n, out, s) in enumerate(zip(in_sizes, out_sizes, scales), start=2):
        if mode in ("nearest", "nearest-exact"):
            idx, w = _nearest_taps(n, out, s, exact=mode == "nearest-exact")
        elif mode == "bicubic":
            idx, w = _cubic_taps(n, out, s, align_corners, real)
        else:
            idx, w = _linear_taps(n, out, s, align_corners, real)
        taps.append((ax, (idx, w, n)))
    return _RESAMPLES[mode, dims].apply(input, tuple(taps), (mode, dims))


def _area(input: Tensor, out_sizes: list) -> Tensor:
    """mode='area': each output pixel is the mean of the input pixels it covers."""
    from .adaptive_pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

    if input.ndim == 3:
        return adaptive_avg_pool1d(input, out_sizes[0])
    if input.ndim == 4:
        return adaptive_avg_pool2d(input, out_sizes)
    raise NotImplementedError("interpolate: mode='area' on 5-D input is not supported by "
                              "gradlab; use trilinear, or pool each depth slice")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None) -> Tensor:
    """Deprecated alias of :func:`interpolate` (kept for old code, as PyTorch)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
