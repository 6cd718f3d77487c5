"""The last of PyTorch's loss modules: CTCLoss, MultiLabelMarginLoss,
TripletMarginWithDistanceLoss.

Each holds its settings and calls the function of the same name (the math is
in :mod:`gradlab.ops.ctc` and :mod:`gradlab.ops.margin_losses`); the shared
``_Loss`` base (``reduction``) is in ``loss.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from ...ops import ctc as _ctc
from ...ops import margin_losses as _margin
from ...tensor import Tensor
from .loss import _Loss
from .simple_layers import PairwiseDistance

__all__ = ["CTCLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss"]


class CTCLoss(_Loss):
    """Connectionist temporal classification: -log of the probability of all alignments
    of a target sequence to (T, N, C) log-probabilities."""

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths,
                target_lengths) -> Tensor:
        return _ctc.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                             self.reduction, self.zero_infinity)


class MultiLabelMarginLoss(_Loss):
    """A hinge between each target class (listed up to the first -1) and each other class."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _margin.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) for a distance function d
    (default: a ``PairwiseDistance()`` submodule, which the repr shows, as in PyTorch)."""

    def __init__(self, *, distance_function: Callable | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return _margin.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)
