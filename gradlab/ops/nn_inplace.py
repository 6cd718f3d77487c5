"""In-place forms of the layer ops: ``F.elu_``, ``F.leaky_relu_``, ``torch.dropout_`` ...

Each is its op with ``inplace=True``, which writes through ``apply_inplace``
(``inplace.py``): the input's memory takes the result, its version goes up
and its history is rebased, so autograd stays right. An activation may go in
place when its backward can do without the old input: relu, leaky_relu and
hardtanh need only the output's sign or range, and the ELUs save a copy of
the old values (the mechanism keeps one when backward needs it).
"""

from __future__ import annotations

from ..tensor import Tensor
from . import activation
from .activation import celu, elu, hardtanh, leaky_relu, selu
from .dropout_family import alpha_dropout, dropout, feature_alpha_dropout

# torch.<name> has these (F too, for the activations).
__all__ = ["celu_", "selu_", "threshold_", "dropout_", "alpha_dropout_", "feature_alpha_dropout_"]
FUNCTIONAL = ["elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_", "threshold_"]
TENSOR_METHODS: list = []


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """elu written into ``input``."""
    return elu(input, alpha, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """celu written into ``input``."""
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """selu written into ``input``."""
    return selu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """leaky_relu written into ``input``."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """hardtanh written into ``input``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """threshold written into ``input``: x where x > threshold, else value."""
    return activation.threshold(input, threshold, value, inplace=True)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout_(x, p, train)``: dropout written into ``x`` (identity if not train)."""
    return dropout(input, p, train, inplace=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout_(x, p, train)``: alpha_dropout written into ``x``."""
    return alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_alpha_dropout_(x, p, train)``: whole channels, written into ``x``."""
    return feature_alpha_dropout(input, p, train, inplace=True)
