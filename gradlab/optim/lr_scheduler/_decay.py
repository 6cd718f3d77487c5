"""Schedules that follow a fixed formula in the epoch: step, exponential, cosine, lambdas..."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ._base import (
    LRScheduler,
    _callables_state,
    _check_int,
    _check_optimizer,
    _check_range,
    _per_group,
)

__all__ = [
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
]

def _lambdas(who: str, optimizer: Any, lr_lambda: Any) -> list[Callable[[int], float]]:
    lambdas = _per_group(who, "lr_lambda", optimizer, lr_lambda)
    for fn in lambdas:
        if not callable(fn):
            raise TypeError(f"{who}: lr_lambda must be a function of the epoch (e.g. lambda "
                            f"epoch: 0.95 ** epoch), got {type(fn).__name__}")
    return lambdas


class _LambdaState:
    """state_dict for schedulers holding ``lr_lambdas``: lambdas are dropped, objects keep state."""

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = _callables_state(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, fn_state in zip(self.lr_lambdas, saved):
            if fn_state is not None:
                fn.__dict__.update(fn_state)


class LambdaLR(_LambdaState, LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)``: any schedule you can write as a function."""

    def __init__(self, optimizer: Any, lr_lambda: Callable | list[Callable],
                 last_epoch: int = -1) -> None:
        _check_optimizer("LambdaLR", optimizer)
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas("LambdaLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """``lr_t = lr_{t-1} * lr_lambda(t)``: a factor per epoch, applied to the current lr."""

    def __init__(self, optimizer: Any, lr_lambda: Callable | list[Callable],
                 last_epoch: int = -1) -> None:
        _check_optimizer("MultiplicativeLR", optimizer)
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas("MultiplicativeLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        if self._is_initial:
            return self._current_lrs()
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


# --------------------------------------------------------------------------- decay schedules


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs: ``base_lr * gamma^(t // step)``."""

    def __init__(self, optimizer: Any, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        _check_int("StepLR", "step_size", step_size, 1)
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each milestone epoch (twice if it is listed twice)."""

    def __init__(self, optimizer: Any, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        milestones = list(milestones)
        for m in milestones:
            _check_int("MultiStepLR", "each milestone", m, 0)
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        return self._scaled(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self) -> list[float]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the lr by ``factor`` for the first ``total_iters`` epochs, then restore it."""

    def __init__(self, optimizer: Any, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        _check_range("ConstantLR", "factor", factor, 0.0, 1.0)
        _check_int("ConstantLR", "total_iters", total_iters, 1)
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return self._scaled(1.0 / self.factor)

    def _get_closed_form_lr(self) -> list[float]:
        f = self.factor if self.last_epoch < self.total_iters else 1.0
        return [base * f for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Ramp the lr factor linearly from ``start_factor`` to ``end_factor`` over ``total_iters``.

    Chainable form: ``lr_t = lr_{t-1} * f(t) / f(t-1)`` with ``f(t) = s + (e - s) * t / T``.
    """

    def __init__(self, optimizer: Any, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        _check_range("LinearLR", "start_factor", start_factor, 0.0, 1.0, low_open=True)
        _check_range("LinearLR", "end_factor", end_factor, 0.0, 1.0)
        _check_int("LinearLR", "total_iters", total_iters, 1)
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return self._scaled(ratio)

    def _get_closed_form_lr(self) -> list[float]:
        t = min(self.total_iters, self.last_epoch)
        f = self.start_factor + (self.end_factor - self.start_factor) * t / self.total_iters
        return [base * f for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch: ``base_lr * gamma^t``."""

    def __init__(self, optimizer: Any, gamma: float, last_epoch: int = -1) -> None:
        _check_range("ExponentialLR", "gamma", gamma, 0.0, math.inf)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        if self._is_initial:
            return self._current_lrs()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay to 0 over ``total_iters``: ``base_lr * (1 - t / T)^power``, then hold."""

    def __init__(self, optimizer: Any, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        _check_int("PolynomialLR", "total_iters", total_iters, 1)
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        t, T = self.last_epoch, self.total_iters
        return self._scaled(((1.0 - t / T) / (1.0 - (t - 1) / T)) ** self.power)

    def _get_closed_form_lr(self) -> list[float]:
        t = min(self.total_iters, self.last_epoch)
        return [base * (1.0 - t / self.total_iters) ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from ``base_lr`` down to ``eta_min`` over ``T_max`` epochs (then back up).

    Closed form: ``eta_min + (base_lr - eta_min) * (1 + cos(pi t / T_max)) / 2``. ``step()`` uses
    the chainable form ``lr_t - eta_min = (lr_{t-1} - eta_min) * (1 + cos(pi t/T)) /
    (1 + cos(pi (t-1)/T))``; where that ratio is 0/0 (just after the minimum) it adds the
    first step up, ``(base_lr - eta_min) * (1 - cos(pi / T)) / 2``, instead.
    """

    def __init__(self, optimizer: Any, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        _check_range("CosineAnnealingLR", "T_max", T_max, 0, math.inf, low_open=True)
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if (t - 1 - T) % (2 * T) == 0:
            return [group["lr"] + (base - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base, group in zip(self.base_lrs, self.optimizer.param_groups)]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (group["lr"] - eta_min) + eta_min for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        c = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * c for base in self.base_lrs]



# --------------------------------------------------------------------------- combinators
