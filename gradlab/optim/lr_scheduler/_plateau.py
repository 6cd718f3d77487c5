"""ReduceLROnPlateau: lower the lr when a watched metric stops improving."""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

from ._base import LRScheduler, _check_int, _check_optimizer, _per_group

__all__ = ["ReduceLROnPlateau"]

class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` when a metric has not improved for ``patience`` epochs.

    Improvement means beating the best value by ``threshold`` (relative: ``best * (1 -+ thr)``,
    absolute: ``best -+ thr``). After a cut, ``cooldown`` epochs pass before bad epochs count.
    """

    def __init__(self, optimizer: Any, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0, eps: float = 1e-8) -> None:
        who = "ReduceLROnPlateau"
        _check_optimizer(who, optimizer)
        if not (isinstance(factor, Real) and 0 <= factor < 1):
            raise ValueError(f"{who}: factor must be in [0, 1) (new_lr = lr * factor), got "
                             f"{factor!r}; e.g. factor=0.1 cuts the lr tenfold")
        _check_int(who, "patience", patience, 0)
        _check_int(who, "cooldown", cooldown, 0)
        self.factor = factor
        self.optimizer = optimizer
        self.min_lrs = _per_group(who, "min_lr", optimizer, min_lr)
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else min_lr
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = self._current_lrs()
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: Any, epoch: int | None = None) -> None:
        """Record this epoch's metric (e.g. validation loss) and cut the lr if it has stalled."""
        if epoch is not None:
            raise TypeError("ReduceLROnPlateau.step(metrics, epoch): the epoch argument is "
                            "deprecated in PyTorch and not supported here; call step(metrics)")
        try:
            current = float(metrics)
        except (TypeError, ValueError):
            raise TypeError(f"ReduceLROnPlateau.step: metrics must be a number (e.g. "
                            f"step(val_loss.item())), got {type(metrics).__name__}") from None
        self.last_epoch += 1
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during cooldown don't count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current_lrs()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"ReduceLROnPlateau: the optimizer now has {len(groups)} "
                                   f"param groups but min_lr had {len(self.min_lrs)} values; "
                                   f"set scheduler.min_lrs to one value per group")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:  # changes smaller than eps are not worth making
                group["lr"] = new_lr

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            if self.threshold_mode == "rel":
                return a < best * (1.0 - self.threshold)
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' (a loss) or 'max' (an "
                             f"accuracy), got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


# --------------------------------------------------------------------------- cyclic schedules
