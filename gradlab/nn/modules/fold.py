"""Unfold and Fold: the sliding-window ops (im2col, col2im) as layers.

They hold no parameters: each stores its arguments (as PyTorch does, so
``repr`` matches) and calls its op in :mod:`gradlab.ops.sliding_windows`.
``Linear`` applied to ``Unfold``'s columns (moved last) is a convolution;
``Fold`` puts columns back into an image, adding where windows overlap.
"""

from __future__ import annotations

from ...ops import sliding_windows as W
from ...tensor import Tensor
from .module import Module

__all__ = ["Unfold", "Fold"]


class Unfold(Module):
    """Every sliding window of (N, C, H, W) as a column: (N, C·kh·kw, L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return W.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Columns (N, C·kh·kw, L) added back onto their windows of (N, C, *output_size)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return W.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
