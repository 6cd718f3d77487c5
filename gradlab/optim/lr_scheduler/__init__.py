"""Learning-rate schedulers: how each ``group["lr"]`` changes from one epoch (or batch) to the next.

A scheduler owns no tensors. It reads and writes ``optimizer.param_groups`` and nothing else, so
any optimizer with PyTorch's param-group dicts works. The loop is always::

    for epoch in range(n):
        train(...)              # optimizer.step() once or many times
        scheduler.step()        # then move the schedule one tick

Most schedulers here are *chainable*: ``get_lr`` computes the new lr from the group's *current* lr
(``lr_t = lr_{t-1} * ratio_t``) rather than from ``base_lrs``. Two schedulers on one optimizer then
compose: each multiplies in its own ratio. The closed forms (from ``base_lrs``) are kept for
``SequentialLR``, which restarts a scheduler at epoch 0 when its milestone comes.

Differences from PyTorch, on purpose: ``step(epoch)`` (deprecated there since 1.4) is refused
with an error that says what to do instead (``CosineAnnealingWarmRestarts.step(epoch)`` with a
fractional epoch is supported, as PyTorch documents it); learning rates are Python floats.
"""

from ._base import LRScheduler, _LRScheduler  # _LRScheduler: PyTorch's older name
from ._composite import ChainedScheduler, SequentialLR
from ._cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from ._decay import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from ._plateau import ReduceLROnPlateau

__all__ = [
    "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
    "LinearLR", "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
    "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR",
]
