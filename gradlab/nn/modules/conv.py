"""Convolution layers: Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d.

Each holds a weight (and a bias) and calls its op in
:mod:`gradlab.ops.convolution`. Attributes, defaults, initialisation,
``repr`` and ``state_dict`` keys are PyTorch's.
"""

from __future__ import annotations

from ...ops.convolution import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from ...ops.padding import pad
from ...tensor import Tensor
from ._parameters import register_weight_and_bias, reset_fan_in_uniform
from .module import Module

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]

PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    """What every convolution layer shares: arguments, parameters, init and repr."""

    _spatial = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        super().__init__()
        name, n = type(self).__name__, self._spatial
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups}")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) must be divisible by groups "
                             f"({groups})")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels ({out_channels}) must be divisible by "
                             f"groups ({groups})")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: padding must be 'same', 'valid', an int or a tuple, "
                                 f"got {padding!r}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError(f"{name}: padding='same' is not supported for strided "
                                 f"convolutions (stride={stride}). Fix: use stride=1")
        if padding_mode not in PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {PADDING_MODES}, got "
                             f"{padding_mode!r}")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts for the non-zero padding modes: (left, right) pairs, last dim first.
        if padding == "same":
            totals = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            pairs = [(t // 2, t - t // 2) for t in totals]
        elif padding == "valid":
            pairs = [(0, 0)] * n
        else:
            pairs = [(p, p) for p in self.padding]
        self._reversed_padding_repeated_twice = [p for pair in reversed(pairs) for p in pair]
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        register_weight_and_bias(self, shape, (out_channels,), bias=bias, device=device,
                                 dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's init: W and b ~ U(±1/√fan_in)."""
        reset_fan_in_uniform(self.weight, self.bias)

    def extra_repr(self) -> str:
        n = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _op = staticmethod(conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias) -> Tensor:
        if self.padding_mode != "zeros":  # pad with copies of the input, then convolve
            return self._op(pad(input, self._reversed_padding_repeated_twice,
                                mode=self.padding_mode),
                            weight, bias, self.stride, 0, self.dilation, self.groups)
        return self._op(input, weight, bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L): weight (C_out, C_in/groups, k)."""

    _spatial = 1
    _op = staticmethod(conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W): weight (C_out, C_in/groups, kh, kw).

    ``Conv2d(1, 6, 5)`` is LeNet's first layer: 6 filters of 5x5 over one channel.
    """


class _ConvTranspose(_ConvNd):
    _op = staticmethod(conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, output_padding=0, groups: int = 1, bias: bool = True,
                 dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f"Only 'zeros' padding mode is supported for "
                             f"{type(self).__name__}, got {padding_mode!r}")
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple, got "
                             f"{padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """The output_padding that gives ``output_size`` (PyTorch's rule), or the layer's own."""
        if output_size is None:
            return self.output_padding
        n = len(self.kernel_size)
        wanted = tuple(output_size)[-n:]
        size = input.shape[-n:]
        result = []
        for d in range(n):
            smallest = ((size[d] - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            largest = smallest + self.stride[d] - 1
            if not smallest <= wanted[d] <= largest:
                raise ValueError(
                    f"{type(self).__name__}: requested an output size of {tuple(wanted)}, but "
                    f"valid sizes for input shape {tuple(input.shape)} range from "
                    f"{smallest} to {largest} in dim {d}")
            result.append(wanted[d] - smallest)
        return tuple(result)

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        return self._op(input, self.weight, self.bias, self.stride, self.padding,
                        self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """The adjoint of Conv1d (learned upsampling): weight (C_in, C_out/groups, k)."""

    _spatial = 1
    _op = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """The adjoint of Conv2d (learned upsampling): weight (C_in, C_out/groups, kh, kw)."""
