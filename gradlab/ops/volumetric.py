"""3-D convolutions: conv3d and conv_transpose3d, built from the 2-D ones.

No new derivative is written here. A 3-D convolution is a 2-D one once the
depth axis is dealt with, and the depth axis is plain indexing:

    y[n,o,d] = Σ_kd W[o,:,kd] ⋆ x[n,:,d·s + kd·dil − pad]      (⋆ = conv2d over H, W)

conv3d gathers, for every output depth ``d`` and depth tap ``kd``, the input
slice it reads (one ``index_select``; slices in the padding are zeros), puts
output depths into the batch and taps next to their channels, and runs ONE
conv2d whose weight is W with its depth taps folded into the channels::

    (N, C, Do, kd, H, W)  ->  (N·Do, C·kd, H, W)    W: (Co, C/g, kd, kh, kw) -> (Co, C/g·kd, kh, kw)

conv_transpose3d runs one conv_transpose2d per input depth slice (depths in
the batch, the taps in the output channels), then adds each tap's result at
the output depth it lands on (``index_add``).

Because these are compositions of differentiable ops (index_select, where,
conv2d, index_add, reshape), backward, double backward, forward mode and
CUDA all come from those ops. :mod:`.volumetric_pooling` builds the 3-D pools
the same way.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._util import autocast_inputs
from .convolution import (
    _batched_operands,
    _check_bias,
    _check_channels,
    _check_transposed_groups,
    _output_size,
    _padding,
    _transposed_output_size,
    _transposed_padding,
    conv2d,
    conv_transpose2d,
)
from .creation import tensor, zeros
from .gather_scatter import index_add, index_select
from .selection import where

__all__ = ["conv3d", "conv_transpose3d"]
FUNCTIONAL = ["conv3d", "conv_transpose3d"]
TENSOR_METHODS: list = []


def depth_positions(size: int, out: int, kernel: int, stride: int, dilation: int,
                    before: int):
    """The input depth each (output depth, tap) reads: ``d·stride + k·dilation − before``,
    a NumPy (out, kernel) array, and whether it lies inside the input (not in padding)."""
    positions = (np.arange(out)[:, None] * stride - before
                 + np.arange(kernel)[None, :] * dilation)
    return positions, (positions >= 0) & (positions < size)


def depth_taps(x: Tensor, positions, valid, fill=0.0) -> Tensor:
    """x (N, C, D, H, W) gathered at ``positions`` (Do, kd) along depth: (N, C, Do, kd, H, W).

    Taps in the padding read a clipped position and are replaced by ``fill``
    (with ``where``: their gradient is exactly 0, whatever flows back).
    """
    n, c, d, h, w = x.shape
    out, kernel = positions.shape
    index = tensor(np.clip(positions, 0, d - 1).reshape(-1), device=x.device)
    taps = index_select(x, 2, index).reshape(n, c, out, kernel, h, w)
    if valid.all():
        return taps
    inside = tensor(valid, device=x.device).reshape(out, kernel, 1, 1)
    return where(inside, taps, fill)


def _check_rank(op: str, input) -> None:
    """4-D (C, D, H, W) or 5-D (N, C, D, H, W), checked first so the message names 3-D dims."""
    if isinstance(input, Tensor) and input.ndim not in (4, 5):
        raise RuntimeError(f"{op}: expected a 4-D (unbatched) or 5-D (batched) input "
                           f"(N, C, D, H, W), got shape {tuple(input.shape)}. Fix: reshape "
                           f"it, e.g. x.unsqueeze(1) to add a channel dim")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-D convolution (cross-correlation) of (N, C, D, H, W) by (out, C/groups, kd, kh, kw).

    ``padding``: an int, a triple, 'valid' or 'same' (stride 1 only). Out
    size per dim: ⌊(n + 2p − d·(k−1) − 1) / s⌋ + 1. Its gradients are
    conv2d's, taken through the depth gather (see the module docstring).
    """
    op = "conv3d"
    input, weight, bias = autocast_inputs("convolution", input, weight, bias)
    _check_rank(op, input)
    x, shape, unbatched, stride, dilation = _batched_operands(op, input, weight, bias, stride,
                                                              dilation, 3)
    n, c, *size = x.shape
    co, cg, *kernel = weight.shape
    _check_channels(op, x, shape, weight, bias, groups)
    pads = _padding(op, padding, kernel, stride, dilation, 3)
    out = _output_size(op, shape, size, kernel, stride, pads, dilation, dims=" (D, H, W)")
    positions, valid = depth_positions(size[0], out[0], kernel[0], stride[0], dilation[0],
                                       pads[0][0])
    taps = depth_taps(x, positions, valid)                               # (N, C, Do, kd, H, W)
    folded = taps.permute(0, 2, 1, 3, 4, 5).reshape(n * out[0], c * kernel[0], *size[1:])
    hw_padding = "same" if padding == "same" else (pads[1][0], pads[2][0])
    y = conv2d(folded, weight.reshape(co, cg * kernel[0], *kernel[1:]), bias, stride[1:],
               hw_padding, dilation[1:], groups)                         # (N·Do, Co, Ho, Wo)
    # contiguous, as PyTorch's output is: ``y.view(n, -1)`` after a conv layer must work
    y = y.reshape(n, out[0], co, out[1], out[2]).permute(0, 2, 1, 3, 4).contiguous()
    return y.squeeze(0) if unbatched else y


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1) -> Tensor:
    """The adjoint of conv3d (its input gradient), with weight (Cin, out/groups, kd, kh, kw).

    Out size per dim: (n − 1)·s − 2p + d·(k − 1) + output_padding + 1. Input
    depth i, tap k lands on output depth i·s + k·d − p (one conv_transpose2d
    for all of them, then an index_add along depth).
    """
    op = "conv_transpose3d"
    input, weight, bias = autocast_inputs("conv_transpose", input, weight, bias)
    _check_rank(op, input)
    x, shape, unbatched, stride, dilation = _batched_operands(op, input, weight, bias, stride,
                                                              dilation, 3)
    padding, output_padding = _transposed_padding(op, padding, output_padding, 3)
    n, c, *size = x.shape
    cin, cog, *kernel = weight.shape
    co = _check_transposed_groups(op, weight, groups)
    if c != cin:
        raise RuntimeError(
            f"{op}: weight of shape {tuple(weight.shape)} (in_channels, out_channels/groups, "
            f"kd, kh, kw) expects input with {cin} channels, but the input of shape {shape} "
            f"has {c}. Fix: in_channels must equal the input's channel dim")
    _check_bias(op, bias, co)
    out = _transposed_output_size(op, shape, size, kernel, stride, padding, dilation,
                                  output_padding)
    depth, kd = size[0], kernel[0]
    folded = x.permute(0, 2, 1, 3, 4).reshape(n * depth, c, *size[1:])
    planes = conv_transpose2d(folded, weight.reshape(cin, cog * kd, *kernel[1:]), None,
                              stride[1:], padding[1:], output_padding[1:], groups,
                              dilation[1:])                              # (N·D, Co·kd, Ho, Wo)
    planes = planes.reshape(n, depth, co, kd, out[1], out[2]).permute(0, 1, 3, 2, 4, 5)
    planes = planes.reshape(n, depth * kd, co, out[1], out[2])           # (i, k) pairs
    lands, inside = depth_positions(out[0], depth, kd, stride[0], dilation[0], padding[0])
    lands, inside = lands.reshape(-1), inside.reshape(-1)
    if not inside.all():  # taps that land in the cropped padding add nothing
        planes = index_select(planes, 1, tensor(np.flatnonzero(inside), device=x.device))
    y = index_add(zeros(n, out[0], co, out[1], out[2], dtype=x.dtype, device=x.device), 1,
                  tensor(lands[inside], device=x.device), planes)
    y = y.permute(0, 2, 1, 3, 4).contiguous()
    if bias is not None:
        y = y + bias.reshape(co, 1, 1, 1)
    return y.squeeze(0) if unbatched else y
