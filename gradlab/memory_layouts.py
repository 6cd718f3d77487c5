"""Memory formats: in which order a 4-D (or 5-D) tensor's values lie in memory.

The shape of an image batch is always (N, C, H, W), but its values can lie in
memory in two orders: ``contiguous_format`` (row-major NCHW: all of channel 0,
then channel 1 ...) or ``channels_last`` (NHWC: the C values of each pixel side
by side, what GPU tensor cores like). A channels_last tensor is the same
tensor with other strides: for (N, C, H, W), strides (H·W·C, 1, W·C, C).
NumPy holds it exactly so: an NHWC array, transposed to NCHW (a view).
``channels_last_3d`` is the same for (N, C, D, H, W). ``preserve_format`` keeps
whatever order a tensor has.

Where gradlab differs from PyTorch: an op *on* a channels_last tensor returns
a row-major (contiguous_format) result, since the dispatcher gives every new
result C order (``autograd/raw_results.py``); PyTorch's convolution and
elementwise ops keep channels_last. Values and gradients are the same either way.
"""

from __future__ import annotations

from ._named_constants import NamedConstant
from .autograd.function import Function
from .storage import Storage
from .tensor import Tensor

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]


class memory_format(NamedConstant):  # noqa: N801 - PyTorch's name (torch.memory_format)
    """One memory order (see the module docstring); the four instances are gradlab's."""

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

_RANK = {channels_last: 4, channels_last_3d: 5}


def check_memory_format(op: str, fmt) -> memory_format:
    if fmt is None:
        return preserve_format
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}: memory_format must be one of gradlab.contiguous_format, "
                        f"preserve_format, channels_last, channels_last_3d; got {fmt!r}")
    return fmt


def _channels_last_strides(shape) -> tuple:
    """PyTorch's strides for channels_last(_3d): the channel dim fastest, then W, H (, D), N."""
    strides = [0] * len(shape)
    step = 1
    for d in [1, *range(len(shape) - 1, 1, -1), 0]:
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def is_contiguous_in(tensor: Tensor, fmt=contiguous_format) -> bool:
    """``x.is_contiguous(memory_format=fmt)``: do x's strides match that order? (Size-1 dims
    don't count, as in PyTorch.)"""
    fmt = check_memory_format("is_contiguous", fmt)
    if fmt in (contiguous_format, preserve_format):
        return bool(tensor._data.flags.c_contiguous)
    if tensor.ndim != _RANK[fmt]:
        return False
    want = _channels_last_strides(tuple(tensor.shape))
    return all(n <= 1 or s == w for n, s, w in zip(tensor.shape, tensor.stride(), want))


class ToChannelsLast(Function):
    """A copy laid out channels-last (an NHWC array seen as NCHW).   The values are the
    input's, so the gradient passes through unchanged."""

    name, node_name = "contiguous", "CloneBackward0"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, t):
        # Not a raw op: a raw op's new result would be copied back to C order by the dispatcher.
        xp = t._device.backend.xp
        nhwc = xp.ascontiguousarray(xp.moveaxis(t._data, 1, -1))
        data = xp.moveaxis(nhwc, -1, 1)
        return Tensor._make(data, Storage(nhwc.nbytes, t._device), None, 0, False)

    @staticmethod
    def backward(ctx, grad):
        return grad


def to_memory_format(tensor: Tensor, fmt) -> Tensor:
    """``x.contiguous(memory_format=fmt)``: x itself if already in that order, else a copy in
    it (differentiable: the same values)."""
    fmt = check_memory_format("contiguous", fmt)
    if fmt is preserve_format:
        return tensor
    if is_contiguous_in(tensor, fmt):
        return tensor
    if fmt is contiguous_format:
        return tensor.clone(memory_format=contiguous_format)
    if tensor.ndim != _RANK[fmt]:
        raise RuntimeError(f"required rank {_RANK[fmt]} tensor to use {fmt!r} format, got a "
                           f"{tensor.ndim}-D tensor of shape {tuple(tensor.shape)}")
    return ToChannelsLast.apply(tensor)


def suggest_format(tensor: Tensor) -> memory_format:
    """The format a tensor is laid out in (what ``preserve_format`` keeps)."""
    for fmt in (channels_last, channels_last_3d):
        if tensor.ndim == _RANK[fmt] and not tensor._data.flags.c_contiguous and \
                is_contiguous_in(tensor, fmt):
            return fmt
    return contiguous_format

