"""``convert_conv2d_weight_memory_format`` / ``..._conv3d_...``: convolution weights in another
memory layout (``gradlab.channels_last``), as PyTorch's ``nn.utils`` helpers.

On a GPU, channels-last (NHWC) convolution kernels can be faster; PyTorch lets
a model convert just its convolution weights. gradlab keeps the layout (the
strides are PyTorch's) and computes the same values; its convolutions copy
into their own column layout either way, so on NumPy this is about matching
PyTorch's tensors, not speed (see ``gradlab/memory_layouts.py``).
"""

from __future__ import annotations

from ..modules.conv import Conv2d, ConvTranspose2d
from ..modules.module import Module
from ..modules.volumetric import Conv3d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module: Module, kinds: tuple, memory_format) -> Module:
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, kinds, memory_format)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """Every ``Conv2d``/``ConvTranspose2d`` weight in ``module`` (nested ones too) laid out as
    ``memory_format``; returns ``module``."""
    return _convert(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """The same for ``Conv3d``/``ConvTranspose3d`` weights (``gradlab.channels_last_3d``)."""
    return _convert(module, (Conv3d, ConvTranspose3d), memory_format)
