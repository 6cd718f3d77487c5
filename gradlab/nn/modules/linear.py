"""Linear layers: ``Linear`` (y = x Wᵀ + b), ``Bilinear`` and ``Identity``."""

from __future__ import annotations

import math

from ...ops.dense import bilinear, linear
from ...tensor import Tensor
from .. import init
from ._parameters import register_weight_and_bias, reset_fan_in_uniform
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged (a placeholder layer); ignores any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x Wᵀ + b`` with W of shape (out_features, in_features), as in PyTorch.

    Initialised as PyTorch does: W ~ U(-1/√in, 1/√in) (``kaiming_uniform_`` with
    a = √5 works out to exactly that) and b ~ U(-1/√in, 1/√in).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        register_weight_and_bias(self, (out_features, in_features), (out_features,), bias=bias,
                                 device=device, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_fan_in_uniform(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y_k = x1ᵀ W_k x2 + b_k``: W of shape (out, in1, in2), inputs (..., in1), (..., in2)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        register_weight_and_bias(self, (out_features, in1_features, in2_features),
                                 (out_features,), bias=bias, device=device, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        if input1.shape[-1] != self.in1_features or input2.shape[-1] != self.in2_features:
            raise RuntimeError(
                f"Bilinear: expected inputs with last dims {self.in1_features} and "
                f"{self.in2_features}, got shapes {tuple(input1.shape)} and "
                f"{tuple(input2.shape)}")
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
