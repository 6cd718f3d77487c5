"""Activation layers: each a thin Module around its op in ``gradlab.nn.functional``.

The layer holds the op's settings (``negative_slope``, ``dim``, ``inplace``)
so that they print in the model's repr, as in PyTorch.
"""

from __future__ import annotations

import warnings

from ...ops import activation as F
from ...ops.inplace import relu_
from ...ops.softmax_family import log_softmax, softmax
from ...ops.unary import relu, sigmoid, tanh
from ...tensor import Tensor
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
           "Sigmoid", "Tanh", "Softplus", "Hardtanh", "Hardswish", "Hardsigmoid", "LogSigmoid",
           "Softmax", "LogSoftmax"]


def _inplace_repr(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class _InplaceActivation(Module):
    """An activation whose only setting is ``inplace`` (write into the input's memory)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class ReLU(_InplaceActivation):
    """max(x, 0)."""

    def forward(self, input: Tensor) -> Tensor:
        return relu_(input) if self.inplace else relu(input)


class SiLU(_InplaceActivation):
    """x·σ(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, self.inplace)


class Mish(_InplaceActivation):
    """x·tanh(softplus(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, self.inplace)


class SELU(_InplaceActivation):
    """Scaled ELU with the constants that keep activations normalised."""

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)


class Hardswish(_InplaceActivation):
    """x·hardsigmoid(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""  # PyTorch prints no settings for Hardswish and Hardsigmoid


class Hardsigmoid(Hardswish):
    """0 below -3, 1 above 3, x/6 + ½ between."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Hardtanh(Module):
    """x clipped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__()
        if min_val >= max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) must be less than max_val "
                             f"({max_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        suffix = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{suffix}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class LeakyReLU(Module):
    """x for x ≥ 0, negative_slope·x below."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class ELU(Module):
    """x for x > 0, α(eˣ - 1) below."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """x for x > 0, α(e^(x/α) - 1) below."""

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """x·Φ(x); ``approximate='tanh'`` uses the tanh formula."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Sigmoid(Module):
    """1 / (1 + e⁻ˣ)."""

    def forward(self, input: Tensor) -> Tensor:
        return sigmoid(input)


class Tanh(Module):
    """tanh x."""

    def forward(self, input: Tensor) -> Tensor:
        return tanh(input)


class LogSigmoid(Module):
    """log σ(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softplus(Module):
    """log(1 + e^(βx))/β, and x itself where βx > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


def _legacy_dim(op: str, ndim: int) -> int:
    """PyTorch's old rule when no dim is given: 0 for 0-, 1- and 3-D input, else 1."""
    warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Module):
    """e^x / Σ e^x along ``dim``: each slice along dim becomes a probability distribution."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        dim = self.dim if self.dim is not None else _legacy_dim("softmax", input.ndim)
        return softmax(input, dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log softmax along ``dim`` (stable: x - logsumexp(x))."""

    def forward(self, input: Tensor) -> Tensor:
        dim = self.dim if self.dim is not None else _legacy_dim("log_softmax", input.ndim)
        return log_softmax(input, dim)

