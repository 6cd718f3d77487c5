"""Dropout: randomly zeroed activations while training.

Each value is kept with probability 1 - p and zeroed otherwise; the kept
ones are scaled by 1/(1 - p), so the expected output equals the input and
nothing needs rescaling at evaluation time, where dropout is the identity::

    y = x · keep / (1 - p),   keep ~ Bernoulli(1 - p)
    dy/dx = keep / (1 - p)     (the same mask: a zeroed value gets no gradient)
    ẏ = ẋ · keep / (1 - p)     (forward mode: the tangent goes through that mask too)

``dropout1d``/``dropout2d``/``dropout3d`` draw one keep per *channel* and
zero whole feature maps (neighbouring pixels are correlated, so zeroing
single pixels would hardly regularise). ``alpha_dropout`` (for SELU
networks) sets dropped values to SELU's negative limit and then applies an
affine map that keeps mean 0 and variance 1.

The masks come from gradlab's default generator of the input's device, so
``gradlab.manual_seed(s)`` makes a run repeat exactly.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..autograd.function import Function
from ..random import get_generator
from ..tensor import Tensor
from .inplace import apply_inplace

# torch.dropout(input, p, train) takes F.dropout's arguments in the same order.
__all__ = ["dropout", "alpha_dropout", "feature_alpha_dropout"]
# Re-exported by gradlab.nn.functional.
FUNCTIONAL = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
              "feature_alpha_dropout"]
TENSOR_METHODS: list = []

_SELU_ALPHA = 1.7580993408473766  # SELU's negative saturation value is -scale · alpha = -1.758...


class Dropout(Function):
    """y = x · keep · a + shift, keep drawn with shape ``mask_shape`` (broadcast over x).

    Plain dropout: a = 1/(1 - p), shift = 0. Alpha dropout: a and a shift that
    keep mean 0 and variance 1. Either way dy/dx = keep · a.

    jvp: ẏ = ẋ · keep · a, the mask forward drew (so backward's formula: "elementwise").
    """

    raw = True
    name = "dropout"
    node_name = "MulBackward0"  # what PyTorch's graph shows for dropout
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, p, mask_shape, generator, alpha):
        rng = generator.rng
        keep = rng.random(mask_shape, dtype=np.float32) >= p
        if alpha:
            a = 1 / math.sqrt((_SELU_ALPHA ** 2 * p + 1) * (1 - p))
            shift = (keep.astype(x.dtype) - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
            out = x * (keep * a).astype(x.dtype, copy=False) + shift
        else:
            a = 1 / (1 - p)
            out = x * (keep * a).astype(x.dtype, copy=False)
        ctx.save_for_backward(keep)  # a bool mask: 1 byte per value
        ctx.scale = a
        return out

    @staticmethod
    def backward(ctx, grad):
        (keep,) = ctx.saved_tensors
        return grad * keep * ctx.scale, None, None, None, None


def _check_p(op: str, p) -> float:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p} "
                         f"(p is the chance that a value is zeroed, e.g. p=0.1)")
    return float(p)


def _dropout(op: str, input: Tensor, p: float, training: bool, inplace: bool,
             mask_shape: tuple, alpha: bool = False) -> Tensor:
    p = _check_p(op, p)
    if not training or p == 0.0 or input.numel() == 0:
        return input  # the identity, as in PyTorch: no copy, no node
    if p == 1.0:  # everything dropped: 1/(1 - p) would be inf
        return input.mul_(0.0) if inplace else input * 0.0
    generator = get_generator(input.device)
    if inplace:
        return apply_inplace(Dropout, input, p, mask_shape, generator, alpha, convert=False)
    return Dropout.apply(input, p, mask_shape, generator, alpha)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each value with probability ``p`` and scale the rest by 1/(1-p); identity when
    ``training=False``."""
    return _dropout("dropout", input, p, training, inplace, tuple(input.shape))


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: keeps the mean (0) and variance (1) of its input."""
    return _dropout("alpha_dropout", input, p, training, inplace, tuple(input.shape), True)


def _channel_mask_shape(op: str, input: Tensor, spatial: int) -> tuple:
    """The mask shape that zeroes whole channels: (N, C, 1, ...) or (C, 1, ...) unbatched."""
    shape = tuple(input.shape)
    if len(shape) not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{op}: expected a {spatial + 1}D (C, *spatial) or {spatial + 2}D (N, C, *spatial) "
            f"input with {spatial} spatial dim(s), got shape {shape}. Fix: dropout1d/2d/3d "
            f"take inputs with 1/2/3 spatial dims; plain dropout zeroes single values of any "
            f"shape")
    return shape[:len(shape) - spatial] + (1,) * spatial


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``."""
    _check_p("dropout1d", p)
    mask_shape = _channel_mask_shape("dropout1d", input, 1)
    return _dropout("dropout1d", input, p, training, inplace, mask_shape)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) or (C, H, W) input with probability ``p``.

    A 3D input is read as (N, C, L) and its channels dropped, as PyTorch still
    does (with the same warning)."""
    _check_p("dropout2d", p)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: received a 3D input; as in PyTorch it is read as (N, C, L) and whole "
            "channels are dropped. Use dropout1d for that to silence this warning.",
            UserWarning, stacklevel=2)
        mask_shape = tuple(input.shape[:2]) + (1,)
    elif input.ndim == 2:
        warnings.warn(
            "dropout2d: received a 2D input; as in PyTorch each value is dropped on its own. "
            "Use dropout for that to silence this warning.", UserWarning, stacklevel=2)
        mask_shape = tuple(input.shape)
    else:
        mask_shape = _channel_mask_shape("dropout2d", input, 2)
    return _dropout("dropout2d", input, p, training, inplace, mask_shape)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``."""
    _check_p("dropout3d", p)
    mask_shape = _channel_mask_shape("dropout3d", input, 3)
    return _dropout("dropout3d", input, p, training, inplace, mask_shape)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout that drops whole channels (dim 1) of an (N, C, *) input."""
    _check_p("feature_alpha_dropout", p)
    if input.ndim < 2:
        raise RuntimeError(f"feature_alpha_dropout: expected an input of shape (N, C, ...) "
                           f"with at least 2 dims, got {tuple(input.shape)}")
    mask_shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return _dropout("feature_alpha_dropout", input, p, training, inplace, mask_shape, True)
