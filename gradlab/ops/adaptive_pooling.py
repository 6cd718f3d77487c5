"""Adaptive pools: adaptive_avg_pool1d/2d and adaptive_max_pool1d/2d.

An adaptive pool is told the output size, not the kernel: it covers the
input with ``output_size`` windows of (nearly) equal length, PyTorch's
windows ``[⌊i·n/out⌋, ⌈(i+1)·n/out⌉)``. When the input size is a multiple
of the output size those are plain pools (kernel = stride = the ratio);
otherwise the average is separable: gather each window along one spatial
dim, mean, then along the other.
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from ..tensor import Tensor
from .avg_pooling import avg_pool1d, avg_pool2d
from .pooling import max_pool1d, max_pool2d
from .selection import where

__all__ = ["adaptive_avg_pool1d", "adaptive_max_pool1d"]
FUNCTIONAL = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
              "adaptive_max_pool2d"]
TENSOR_METHODS: list = []


def _adaptive_sizes(op, input, output_size, spatial) -> tuple:
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{op}: expected a {spatial + 1}-D or {spatial + 2}-D input, got "
                           f"shape {tuple(input.shape)}")
    size = tuple(input.shape[-spatial:])
    if isinstance(output_size, Integral) or output_size is None:
        output_size = (output_size,) * spatial
    output_size = tuple(output_size)
    if not all(o is None or isinstance(o, Integral) for o in output_size):
        raise TypeError(f"{op}: output_size must be ints (or None to keep a size), got "
                        f"{output_size}")
    output_size = tuple(s if o is None else int(o) for o, s in zip(output_size, size))
    if len(output_size) != spatial or any(o <= 0 for o in output_size):
        raise RuntimeError(f"{op}: output_size must be {spatial} positive ints, got "
                           f"{output_size}")
    return size, output_size


def _windows(n: int, out: int, like: Tensor):
    """PyTorch's adaptive windows [⌊i·n/out⌋, ⌈(i+1)·n/out⌉) along a dim of size n, as
    tensors on ``like``'s device: the (out, longest) positions (a short window repeats
    its last one), a mask of the real ones, and each window's length."""
    from .creation import tensor

    starts = np.arange(out) * n // out
    lengths = -(-(np.arange(1, out + 1) * n) // out) - starts
    offsets = np.arange(lengths.max())
    positions = np.minimum(starts[:, None] + offsets, (starts + lengths - 1)[:, None])
    return (tensor(positions, device=like.device), tensor(offsets < lengths[:, None],
                                                         device=like.device),
            tensor(lengths, dtype=like.dtype, device=like.device))


def _mean_over_windows(x: Tensor, n: int, out: int, last: bool) -> Tensor:
    """The mean of each adaptive window along the last dim (or the one before it): the
    windows gathered, the padding masked out with where (not weighted by 0, which would
    turn a NaN or inf next to a window into NaN), summed and divided by their lengths."""
    positions, real, lengths = _windows(n, out, x)
    if last:
        return where(real, x[..., positions], 0.0).sum(-1) / lengths
    return where(real.unsqueeze(-1), x[..., positions, :], 0.0).sum(-2) / lengths.unsqueeze(-1)


def _adaptive_avg(op, input, output_size, spatial) -> Tensor:
    """Mean over adaptive windows, one spatial dim after the other (it is separable)."""
    size, out = _adaptive_sizes(op, input, output_size, spatial)
    if all(n % o == 0 for n, o in zip(size, out)):  # equal windows: a plain average pool
        kernel = tuple(n // o for n, o in zip(size, out))
        pool = avg_pool2d if spatial == 2 else avg_pool1d
        return pool(input, kernel)
    result = _mean_over_windows(input, size[-1], out[-1], last=True)
    if spatial == 2:
        result = _mean_over_windows(result, size[0], out[0], last=False)
    return result.contiguous()  # the gathers leave a transposed layout; PyTorch's is C order


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """Mean over ``output_size`` windows of (nearly) equal length covering (N, C, L)."""
    return _adaptive_avg("adaptive_avg_pool1d", input, output_size, 1)


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Mean over an ``output_size`` grid of windows covering H x W (1 for a global mean)."""
    return _adaptive_avg("adaptive_avg_pool2d", input, output_size, 2)


def _adaptive_max(op, input, output_size, return_indices, spatial):
    size, out = _adaptive_sizes(op, input, output_size, spatial)
    if all(n % o == 0 for n, o in zip(size, out)):  # equal windows: a plain max pool
        kernel = tuple(n // o for n, o in zip(size, out))
        pool = max_pool2d if spatial == 2 else max_pool1d
        return pool(input, kernel, return_indices=return_indices)
    if spatial == 1:  # a 1-D pool is a 2-D one of height 1
        result = _max_over_windows(input.unsqueeze(-2), (1, size[0]), (1, out[0]),
                                   return_indices)
        return tuple(r.squeeze(-2) for r in result) if return_indices else result.squeeze(-2)
    return _max_over_windows(input, size, out, return_indices)


def _max_over_windows(x: Tensor, size, out, return_indices):
    """The max of each (uneven) adaptive window of the last two dims: every window
    gathered as one row of its H·W values (the padding of short windows masked with
    -inf), then ``max`` along it, whose gradient goes to the winner. With
    ``return_indices``, the winner's flat position in the H·W plane, as PyTorch's."""
    rows, real_rows, _ = _windows(size[0], out[0], x)
    cols, real_cols, _ = _windows(size[1], out[1], x)
    r, c = rows[:, None, :, None], cols[None, :, None, :]  # (oh, ow, Lh, Lw) by broadcasting
    real = real_rows[:, None, :, None] & real_cols[None, :, None, :]
    picked = where(real, x[..., r, c], -math.inf)
    flat = picked.reshape(*picked.shape[:-2], -1)
    values, winner = flat.max(-1)
    if values.isnan().any():  # PyTorch lets the window's *last* NaN win (max took the first)
        nan = flat.isnan()
        last_nan = (flat.shape[-1] - 1) - nan.flip(-1).int().argmax(-1)
        winner = where(nan.any(-1), last_nan, winner)
        values = flat.gather(-1, winner.unsqueeze(-1)).squeeze(-1)  # its gradient goes there
    if not return_indices:
        return values
    plane = (r * size[1] + c).expand(real.shape).reshape(*out, -1)
    return values, plane.expand(flat.shape).gather(-1, winner.unsqueeze(-1)).squeeze(-1)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max over ``output_size`` windows of (nearly) equal length covering (N, C, L)."""
    return _adaptive_max("adaptive_max_pool1d", input, output_size, return_indices, 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over an ``output_size`` grid of (nearly) equal windows covering H x W."""
    return _adaptive_max("adaptive_max_pool2d", input, output_size, return_indices, 2)

