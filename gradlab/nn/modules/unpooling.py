"""MaxUnpool1d/2d/3d, LPPool1d/2d/3d and ChannelShuffle.

No parameters: each stores its arguments under PyTorch's names (so ``repr``
matches) and calls its op in :mod:`gradlab.ops.unpooling` or
:mod:`gradlab.ops.pairwise`. A MaxUnpool undoes the MaxPool whose
kernel_size, stride and padding it was given, from the indices that pool
returned (``return_indices=True``).
"""

from __future__ import annotations

from ...ops import pairwise as P
from ...ops import unpooling as U
from ...tensor import Tensor
from .module import Module

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "ChannelShuffle"]


def _ntuple(value, n: int) -> tuple:
    """PyTorch's _single/_pair/_triple: an int repeated n times; a sequence as a tuple."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _MaxUnpoolNd(Module):
    spatial = 0
    op = None

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self.spatial)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self.spatial)
        self.padding = _ntuple(padding, self.spatial)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return type(self).op(input, indices, self.kernel_size, self.stride, self.padding,
                             output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Undo MaxPool1d: (N, C, L) values back at their indices, zeros elsewhere."""

    spatial, op = 1, staticmethod(U.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Undo MaxPool2d: each value back at its flat H·W index; ``output_size`` when the pool's
    input size was odd."""

    spatial, op = 2, staticmethod(U.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """Undo MaxPool3d: each value back at its flat D·H·W index."""

    spatial, op = 3, staticmethod(U.max_unpool3d)


class _LPPoolNd(Module):
    op = None

    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self).op(input, float(self.norm_type), self.kernel_size, self.stride,
                             self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """The p-norm of each window of (N, C, L): (Σ x^p)^(1/p)."""

    op = staticmethod(U.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """The p-norm of each window of (N, C, H, W): p = 1 sums, p = inf takes the max |x|."""

    op = staticmethod(U.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """The p-norm of each window of (N, C, D, H, W)."""

    op = staticmethod(U.lp_pool3d)


class ChannelShuffle(Module):
    """Deal the channels of (N, C, *) out of ``groups`` groups (ShuffleNet's mixing step)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return P.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
