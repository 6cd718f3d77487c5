"""Undoing and varying max pooling: max_unpool1d/2d/3d, lp_pool1d/2d/3d, and the
``*_with_indices`` names of the max pools.

``max_unpool`` is max pooling's partial inverse. A max pool keeps one value
per window and, with ``return_indices=True``, where it was: a flat index
into its (N, C) plane (H·W for 2-D). Unpooling puts each value back at that
index of a zero plane; everything the pool dropped stays 0::

    out.view(N, C, -1)[n, c, indices[n, c, k]] = input[n, c, k]   (a scatter)

The output size is the pool's input size: ``(in - 1)·stride + kernel -
2·padding`` per dim, or ``output_size`` when the pool's floor lost a row
(it must then lie within one stride of that). The op is linear in the
input, and its derivative only picks values back out: d/d input is a
gather of the gradient at the same indices (the indices get none). That
gather's own derivative is a scatter-add, so double backward comes free.
One code path serves 1-, 2- and 3-D: the indices are flat per plane. (Two
values with one index, possible after overlapping windows, hold the same
number; one of them is written, as in PyTorch.)

``lp_pool`` is the power mean of each window, scaled to a p-norm::

    out = (Σ_window x^p)^(1/p) = (avg_pool(x^p) · kernel_size)^(1/p)

written, as PyTorch writes it, as ``(sign(a) · relu(|a|) · k)^(1/p)`` with
a = avg_pool(x^p): a composition of existing ops, so its gradient is theirs.
p = inf is the max of |x| (a max pool).
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .adaptive_pooling import adaptive_max_pool1d, adaptive_max_pool2d
from .avg_pooling import avg_pool1d, avg_pool2d
from .convolution import _tuple
from .pooling import max_pool1d, max_pool2d
from .unary import relu, sign

__all__: list = []
FUNCTIONAL = ["max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d",
              "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
              "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
              "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]
TENSOR_METHODS: list = []


# --- max_unpool -------------------------------------------------------------------------------

class MaxUnpool(Function):
    """Each value written at its flat index of a zero (N, C, *output_size) plane.

    d/d input = the gradient gathered at the same indices. Linear in the
    input, so jvp: the tangent unpooled the same way.
    """

    raw = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, x, indices, output_size):
        xp = xp_for(x)
        planes, per_plane = x.shape[0] * x.shape[1], math.prod(x.shape[2:])
        out = xp.zeros((planes, math.prod(output_size)), dtype=x.dtype)
        rows = xp.arange(planes)[:, None]  # plane k's values go to row k
        out[rows, indices.reshape(planes, per_plane)] = x.reshape(planes, per_plane)
        ctx.save_for_backward(indices)
        return out.reshape(x.shape[:2] + tuple(output_size))

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        n, c = indices.shape[:2]
        per_plane = math.prod(indices.shape[2:])
        plane = math.prod(grad.shape[2:])
        picked = grad.reshape(n, c, plane).gather(2, indices.reshape(n, c, per_plane))
        return picked.reshape(indices.shape), None, None


class MaxUnpool1d(MaxUnpool):
    name, node_name = "max_unpool1d", "MaxUnpool2DBackward0"  # PyTorch runs 1-D as 2-D


class MaxUnpool2d(MaxUnpool):
    name, node_name = "max_unpool2d", "MaxUnpool2DBackward0"


class MaxUnpool3d(MaxUnpool):
    name, node_name = "max_unpool3d", "MaxUnpool3DBackward0"


def _unpool_output_size(op, input, kernel, stride, padding, output_size, spatial) -> tuple:
    """PyTorch's rule: the pool's input size, ``(in - 1)·stride + kernel - 2·padding``, or
    ``output_size``, which must lie strictly within one stride of it."""
    size = tuple(input.shape[-spatial:])
    default = [(n - 1) * s + k - 2 * p for n, k, s, p in zip(size, kernel, stride, padding)]
    if output_size is None:
        result = default
    else:
        given = [output_size] if isinstance(output_size, int) else [int(v) for v in output_size]
        if len(given) == spatial + 2:  # a whole size, e.g. x.size() of the pool's input
            given = given[2:]
        if len(given) != spatial:
            raise ValueError(
                f"{op}: output_size should be a sequence of {spatial} or {spatial + 2} ints "
                f"(the pooled input's spatial size, or its whole size), but it has "
                f"{len(given)}: {tuple(given)}")
        for d, (want, s) in enumerate(zip(given, stride)):
            low, high = default[d] - s, default[d] + s
            if not low < want < high:
                raise ValueError(
                    f"{op}: invalid output_size {tuple(given)}: dim {d} must be between {low} "
                    f"and {high} (exclusive), since an input of size {size[d]} pooled with "
                    f"kernel_size {kernel[d]}, stride {s} and padding {padding[d]} came from "
                    f"a size within one stride of {default[d]}")
        result = given
    for d, o in enumerate(result):
        if o < 0:
            raise ValueError(
                f"{op}: the output size {tuple(result)} is negative in dim {d}: kernel_size "
                f"{kernel} and padding {padding} don't fit an input of spatial size {size}. "
                f"Fix: use the kernel_size, stride and padding of the max pool it undoes")
    return tuple(result)


def _check_unpool_input(op, input, indices, spatial) -> None:
    if not isinstance(input, Tensor) or not isinstance(indices, Tensor):
        raise TypeError(f"{op}: input and indices must be tensors, got "
                        f"{type(input).__name__} and {type(indices).__name__}")
    dims = {1: "L", 2: "HW", 3: "DHW"}[spatial]
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{op}: expected a {spatial + 1}-D (C, {', '.join(dims)}) or {spatial + 2}-D "
            f"(N, C, {', '.join(dims)}) input, got shape {tuple(input.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {input.dtype}. "
                           f"Fix: convert with .float()")
    if indices.dtype is not _dt.int64:
        raise RuntimeError(
            f"{op}: indices must be an int64 tensor (what max_pool{spatial}d(..., "
            f"return_indices=True) returns), got {indices.dtype}. Fix: indices.long()")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"{op}: indices must have the input's shape {tuple(input.shape)} (one index per "
            f"pooled value), got {tuple(indices.shape)}")
    if input.device != indices.device:
        raise RuntimeError(f"{op}: input is on {input.device} but indices on "
                           f"{indices.device}. Fix: indices.to(input.device)")
    if any(n == 0 for n in input.shape[-spatial - 1:]):
        raise RuntimeError(
            f"{op}: expected an input with non-zero size in every dim but the batch dim, got "
            f"shape {tuple(input.shape)}")


def _check_index_range(op, indices, output_size) -> None:
    """Every index must point into an output plane (costs one sync on a GPU, as PyTorch's)."""
    data = indices._data
    if not data.size:
        return
    plane = math.prod(output_size)
    low, high = int(data.min()), int(data.max())
    if low < 0 or high >= plane:
        bad = low if low < 0 else high
        raise RuntimeError(
            f"{op}: found an invalid max index {bad}: the output planes are "
            f"{'x'.join(map(str, output_size))}, so an index must lie in [0, {plane}). Fix: pass "
            f"the indices that max_pool(..., return_indices=True) returned, with its "
            f"kernel_size, stride and padding (or output_size=the pooled input's size)")


def _max_unpool(fn, op, input, indices, kernel_size, stride, padding, output_size, spatial):
    _check_unpool_input(op, input, indices, spatial)
    kernel = _tuple(kernel_size, spatial, "kernel_size", op)
    stride = kernel if stride is None else _tuple(stride, spatial, "stride", op)
    padding = _tuple(padding, spatial, "padding", op)
    for what, values in (("kernel_size", kernel), ("stride", stride)):
        if any(v <= 0 for v in values):
            raise RuntimeError(f"{op}: {what} must be positive, got {values}. Fix: use the "
                               f"{what} of the max pool this undoes")
    size = _unpool_output_size(op, input, kernel, stride, padding, output_size, spatial)
    unbatched = input.ndim == spatial + 1
    if unbatched:
        input, indices = input.unsqueeze(0), indices.unsqueeze(0)
    _check_index_range(op, indices, size)
    out = fn.apply(input, indices, size)
    return out.squeeze(0) if unbatched else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """max_pool1d's partial inverse: (N, C, L) values back at their indices, zeros elsewhere."""
    return _max_unpool(MaxUnpool1d, "max_unpool1d", input, indices, kernel_size, stride,
                       padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """max_pool2d's partial inverse: each value back at its flat H·W index, zeros elsewhere."""
    return _max_unpool(MaxUnpool2d, "max_unpool2d", input, indices, kernel_size, stride,
                       padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """max_pool3d's partial inverse: each value back at its flat D·H·W index."""
    return _max_unpool(MaxUnpool3d, "max_unpool3d", input, indices, kernel_size, stride,
                       padding, output_size, 3)


# --- lp_pool ----------------------------------------------------------------------------------

def _lp_pool(op, avg_pool, max_pool, input, norm_type, kernel_size, stride, ceil_mode,
             spatial) -> Tensor:
    """(Σ_window x^p)^(1/p), composed exactly as PyTorch composes it (see the module doc)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(input).__name__}")
    kernel = _tuple(kernel_size, spatial, "kernel_size", op)
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == 0:
        raise ValueError(f"{op}: norm_type must be non-zero (the result is a power 1/p); use "
                         f"1 for sums of |x|, 2 for the Euclidean norm, inf for the max |x|")
    power_mean = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    # sign(a)·relu(|a|) is a itself; it is written so because PyTorch writes it so: the
    # same ops give the same gradient, down to where it is 0 or nan
    return (sign(power_mean) * relu(power_mean.abs())).mul(math.prod(kernel)).pow(
        1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """The p-norm of each window of (N, C, L): (Σ x^p)^(1/p); d/dx = x^(p-1) / out^(p-1)."""
    return _lp_pool("lp_pool1d", avg_pool1d, max_pool1d, input, norm_type, kernel_size,
                    stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """The p-norm of each window of (N, C, H, W): p=1 sums, p=2 is the root of Σx², inf max."""
    return _lp_pool("lp_pool2d", avg_pool2d, max_pool2d, input, norm_type, kernel_size,
                    stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """The p-norm of each window of (N, C, D, H, W)."""
    from .volumetric_pooling import avg_pool3d, max_pool3d  # (written after this module)

    return _lp_pool("lp_pool3d", avg_pool3d, max_pool3d, input, norm_type, kernel_size,
                    stride, ceil_mode, 3)


# --- the *_with_indices names -----------------------------------------------------------------

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool1d(..., return_indices=True)``: (values, indices), whatever return_indices."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool2d(..., return_indices=True)``: (values, indices), whatever return_indices."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool3d(..., return_indices=True)``: (values, indices), whatever return_indices."""
    from .volumetric_pooling import max_pool3d  # (written after this module)

    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d(..., return_indices=True)``: (values, indices)."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d(..., return_indices=True)``: (values, indices)."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool3d(..., return_indices=True)``: (values, indices)."""
    from .volumetric_pooling import adaptive_max_pool3d  # (written after this module)

    return adaptive_max_pool3d(input, output_size, True)
