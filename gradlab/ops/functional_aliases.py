"""``torch.<name>`` spellings of ops gradlab has in ``nn.functional``.

PyTorch exposes the ATen ops under ``nn.functional`` at the top level too, with
the ATen argument lists, which are not always ``F``'s: ``torch.batch_norm`` takes
``(input, weight, bias, running_mean, running_var, training, momentum, eps,
cudnn_enabled)``, ``torch.embedding`` takes the *weight* first, the losses take
``reduction`` as an int (0 none, 1 mean, 2 sum). Library code calls them
positionally, so each name here keeps PyTorch's top-level signature and calls
the ``F`` function (whose node, derivative and errors it shares).
``cudnn_enabled`` is accepted and ignored (gradlab has no cuDNN).
"""

from __future__ import annotations

from ..tensor import Tensor
from . import (
    dropout_family,
    instance_normalization,
    lookup,
    more_losses,
    normalization,
    padding,
    pooling,
)

__all__ = ["batch_norm", "instance_norm", "embedding", "constant_pad_nd", "feature_dropout",
           "feature_dropout_", "poisson_nll_loss", "triplet_margin_loss",
           "max_pool1d_with_indices"]
TENSOR_METHODS: list = []

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(op: str, reduction) -> str:
    if isinstance(reduction, str):
        return reduction
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction={reduction!r} is not one of PyTorch's codes 0 (none), "
                         f"1 (mean), 2 (sum); torch.{op} takes the int, F.{op} the name")
    return _REDUCTIONS[reduction]


def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    """``torch.batch_norm``: ``F.batch_norm`` with ATen's argument order (weight, bias first)."""
    return normalization.batch_norm(input, running_mean, running_var, weight, bias, training,
                                    momentum, eps)


def instance_norm(input: Tensor, weight, bias, running_mean, running_var,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    """``torch.instance_norm``: ``F.instance_norm`` with ATen's argument order (weight, bias
    first, every argument given)."""
    return instance_normalization.instance_norm(input, running_mean, running_var, weight, bias,
                                                use_input_stats, momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``torch.embedding``: the rows of ``weight`` at ``indices`` (weight first, unlike
    ``F.embedding``). ``padding_idx=-1`` means none, as in ATen: a row index >= 0 gets no
    gradient."""
    return lookup.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                            None, 2.0, scale_grad_by_freq, sparse)


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    """``F.pad(input, pad, 'constant', value)``: pad the last dims by ``pad``'s (before,
    after) pairs, last dim first. Derivative: the gradient cut back to the input's place."""
    return padding.pad(input, list(pad), "constant", value)


def _feature_mask_shape(op: str, input: Tensor) -> tuple:
    if input.ndim < 2:
        raise RuntimeError(f"{op}: expected an input of shape (N, C, ...) with at least 2 dims "
                           f"(whole channels are dropped), got shape {tuple(input.shape)}")
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_dropout``: zero whole channels (dim 1 of (N, C, *)) with probability
    ``p``, scale the rest by 1/(1-p) (``dropout2d`` for any number of trailing dims)."""
    dropout_family._check_p("feature_dropout", p)
    return dropout_family._dropout("feature_dropout", input, p, train, False,
                                   _feature_mask_shape("feature_dropout", input))


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``feature_dropout`` written into ``input``."""
    dropout_family._check_p("feature_dropout_", p)
    return dropout_family._dropout("feature_dropout_", input, p, train, True,
                                   _feature_mask_shape("feature_dropout_", input))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """``torch.poisson_nll_loss``: every argument positional, ``reduction`` an int."""
    return more_losses.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                        reduction=_reduction("poisson_nll_loss", reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction: int = 1) -> Tensor:
    """``torch.triplet_margin_loss``: ``reduction`` an int (0 none, 1 mean, 2 sum)."""
    return more_losses.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap,
        reduction=_reduction("triplet_margin_loss", reduction))


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple:
    """``torch.max_pool1d_with_indices``: (values, indices); an empty ``stride`` means the
    kernel size, as in ATen."""
    if isinstance(stride, (tuple, list)) and len(stride) == 0:
        stride = None
    return pooling.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
