"""Loss modules: each holds its settings and calls the loss of the same name in ``F``.

``criterion = nn.CrossEntropyLoss(); loss = criterion(logits, labels)`` is
``F.cross_entropy(logits, labels)`` with the constructor's arguments filled
in. Class weights (``weight``, ``pos_weight``) are buffers, so they follow
the module through ``.to(device)`` and appear in its ``state_dict``, as in
PyTorch. The math lives in :mod:`gradlab.ops.losses`.
"""

from __future__ import annotations

import warnings

from ...ops import losses as F
from ...ops._loss_reduction import reduction_mode
from ...tensor import Tensor
from .module import Module

__all__ = ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss",
           "NLLLoss2d", "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiMarginLoss",
           "KLDivLoss", "MarginRankingLoss", "CosineEmbeddingLoss"]


class _Loss(Module):
    """Holds ``reduction`` ('none' | 'mean' | 'sum'), set from the deprecated pair if given."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = reduction_mode(type(self).__name__, reduction, size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with per-class weights, kept as the buffer ``weight`` (None when not given)."""

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error, (x - y)²."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error, |x - y|."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic for |x - y| < beta, linear beyond."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic for |x - y| < delta, delta-scaled linear beyond."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"HuberLoss: delta must be a float or int, got "
                            f"{type(delta).__name__}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities."""

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100,
                 reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities at class indices."""

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated name for NLLLoss from when NLLLoss took no (N, C, H, W) input:
    the same loss (NLLLoss takes (N, C, d1, d2, ...) with targets (N, d1, d2, ...)).
    Constructing it warns (a FutureWarning, as PyTorch's; a subclass does not)."""

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100,
                 reduce=None, reduction: str = "mean") -> None:
        if type(self) is NLLLoss2d:
            warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                          "drop-in replacement: it takes (N, C, H, W) input and (N, H, W) "
                          "targets the same way", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities in [0, 1]."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of sigmoid(logits), computed stably from the logits."""

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """x where y = 1, max(0, margin - x) where y = -1."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss on (N, C) scores."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p = 1 and p = 2 are supported, got p={p}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or a 1-D tensor (one "
                             f"per class), got {weight.ndim}-D")
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class KLDivLoss(_Loss):
    """KL divergence of log-probabilities from a target distribution; prefer 'batchmean'."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_Loss):
    """max(0, -y (x1 - x2) + margin)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)
