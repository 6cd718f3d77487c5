"""3-D layers: Conv3d, ConvTranspose3d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d.

Each is its 2-D sibling's class with three spatial dims and the 3-D op of
:mod:`gradlab.ops.volumetric` / :mod:`gradlab.ops.volumetric_pooling`: the
arguments, init, ``repr``, ``state_dict`` keys and padding modes (Conv3d's
'reflect', 'replicate' and 'circular' go through ``F.pad``, which pads any
number of dims) are the 2-D classes' code.
"""

from __future__ import annotations

from ...ops.volumetric import conv3d, conv_transpose3d
from ...ops.volumetric_pooling import (
    adaptive_avg_pool3d,
    adaptive_max_pool3d,
    avg_pool3d,
    max_pool3d,
)
from ...tensor import Tensor
from .conv import _Conv, _ConvTranspose
from .pooling import _AdaptiveMaxPool, _AdaptivePool, _AvgPoolNd, _MaxPoolNd

__all__ = ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool3d"]


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W): weight (C_out, C_in/groups, kd, kh, kw)."""

    _spatial = 3
    _op = staticmethod(conv3d)


class ConvTranspose3d(_ConvTranspose):
    """The adjoint of Conv3d (learned 3-D upsampling): weight (C_in, C_out/groups, kd, kh, kw)."""

    _spatial = 3
    _op = staticmethod(conv_transpose3d)


class MaxPool3d(_MaxPoolNd):
    """Max over windows of (N, C, D, H, W): ``MaxPool3d(2)`` halves depth, height and width."""

    def forward(self, input: Tensor):
        return max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(_AvgPoolNd):
    """Mean over windows of (N, C, D, H, W); see ``count_include_pad`` and ``divisor_override``."""

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Mean over an ``output_size`` grid of windows: ``AdaptiveAvgPool3d(1)`` is a global mean."""

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max over an ``output_size`` grid of (nearly) equal windows of D x H x W."""

    def forward(self, input: Tensor):
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)
