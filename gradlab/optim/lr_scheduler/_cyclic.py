"""Cyclical schedules: CyclicLR, CosineAnnealingWarmRestarts and the one-cycle policy."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ._base import (
    LRScheduler,
    _callables_state,
    _check_int,
    _check_optimizer,
    _check_range,
    _momentum_key,
    _per_group,
    _set_momentum,
)

__all__ = ["CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR"]

class CyclicLR(LRScheduler):
    """Cycle the lr between ``base_lr`` and ``max_lr`` along triangles (step per batch).

    ``x`` is the position in the current cycle; the lr is ``base + (max - base) * h(x) * s``
    with ``h`` the triangle (0 -> 1 over ``step_size_up``, back to 0 over ``step_size_down``)
    and ``s`` the policy's scale (1, halved each cycle, or ``gamma^iteration``).
    Momentum, if cycled, moves the opposite way between ``max_momentum`` and ``base_momentum``.
    """

    def __init__(self, optimizer: Any, base_lr: float | list[float], max_lr: float | list[float],
                 step_size_up: int = 2000, step_size_down: int | None = None,
                 mode: str = "triangular", gamma: float = 1.0,
                 scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9, last_epoch: int = -1) -> None:
        who = "CyclicLR"
        _check_optimizer(who, optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group(who, "base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group(who, "max_lr", optimizer, max_lr)
        _check_int(who, "step_size_up", step_size_up, 1)
        if step_size_down is not None:
            _check_int(who, "step_size_down", step_size_down, 1)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"{who}: mode must be 'triangular', 'triangular2' or 'exp_range' "
                             f"(or pass scale_fn), got {mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"{who}: scale_mode must be 'cycle' or 'iterations', got "
                             f"{scale_mode!r}")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_key(who, optimizer) == "betas"
            self.base_momentums = _per_group(who, "base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group(who, "max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(self.max_momentums, self.base_momentums,
                                              optimizer.param_groups):
                    _set_momentum(group, self.use_beta1, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        # The built-in policies fix scale_mode, as PyTorch's do.
        if self._scale_fn_custom is None and self.mode != "exp_range":
            self.scale_mode = "cycle"
        elif self._scale_fn_custom is None:
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude scale at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            height = x / self.step_ratio
        else:
            height = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * height * scale
               for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, bottom, top in zip(self.optimizer.param_groups, self.base_momentums,
                                          self.max_momentums):
                _set_momentum(group, self.use_beta1, top - (top - bottom) * height * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None else _callables_state([fn])[0]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        fn_state = state.pop("_scale_fn_custom")
        super().load_state_dict(state)
        if fn_state is not None:
            self._scale_fn_custom.__dict__.update(fn_state)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine from ``base_lr`` to ``eta_min`` over ``T_i`` epochs, then jump back up.

    ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``; after each restart
    ``T_i`` grows by ``T_mult``. ``step(epoch)`` accepts a fractional epoch (per-batch use).
    """

    def __init__(self, optimizer: Any, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        _check_int("CosineAnnealingWarmRestarts", "T_0", T_0, 1)
        _check_int("CosineAnnealingWarmRestarts", "T_mult", T_mult, 1)
        _check_range("CosineAnnealingWarmRestarts", "eta_min", eta_min, 0.0, math.inf)
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * c for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts.step: epoch must be >= 0, got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # the restart n with T_0 (T_mult^n - 1) / (T_mult - 1) <= epoch
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = self._current_lrs()


class OneCycleLR(LRScheduler):
    """The 1cycle policy (step per batch): warm up from ``max_lr / div_factor`` to ``max_lr``
    over ``pct_start`` of the run, then anneal to ``initial_lr / final_div_factor``.

    Each phase anneals from its start value to its end value as ``pct`` goes 0 -> 1:
    cos: ``end + (start - end) * (1 + cos(pi pct)) / 2``; linear: ``start + (end - start) pct``.
    Momentum (or Adam's beta1) moves the opposite way. ``three_phase`` comes back down to
    ``initial_lr`` symmetrically before the final anneal.
    """

    def __init__(self, optimizer: Any, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        who = "OneCycleLR"
        _check_optimizer(who, optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            _check_int(who, "total_steps", total_steps, 1)
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            _check_int(who, "epochs", epochs, 1)
            _check_int(who, "steps_per_epoch", steps_per_epoch, 1)
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError(f"{who}: say how long the cycle is: total_steps=..., or epochs=... "
                             f"and steps_per_epoch=len(train_loader)")
        _check_range(who, "pct_start", pct_start, 0.0, 1.0)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{who}: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        _check_range(who, "div_factor", div_factor, 0.0, math.inf, low_open=True)
        _check_range(who, "final_div_factor", final_div_factor, 0.0, math.inf, low_open=True)
        up_end = float(pct_start * self.total_steps) - 1
        phases = [(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum")]
        if three_phase:
            phases.append((float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                           "base_momentum", "max_momentum"))
            phases.append((self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                           "max_momentum"))
        else:
            phases.append((self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                           "max_momentum"))
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases = [dict(zip(keys, phase)) for phase in phases]
        start = 0.0
        for i, phase in enumerate(self._schedule_phases):
            if phase["end_step"] == start:
                raise ValueError(f"{who}: pct_start={pct_start} with total_steps="
                                 f"{self.total_steps} makes phase {i + 1} zero steps long; "
                                 f"pick pct_start so every phase has at least one step")
            start = phase["end_step"]
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group(who, "max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_key(who, optimizer) == "betas"
            tops = _per_group(who, "max_momentum", optimizer, max_momentum)
            bottoms = _per_group(who, "base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(tops, bottoms, optimizer.param_groups):
                    _set_momentum(group, self.use_beta1, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step_num} times but total_steps is "
                             f"{self.total_steps}, so the cycle is over; step once per batch and "
                             f"set total_steps (or epochs * steps_per_epoch) to the whole run")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]],
                                            pct))
                    if self.cycle_momentum:
                        momentum = self._anneal(group[phase["start_momentum"]],
                                                group[phase["end_momentum"]], pct)
                        _set_momentum(group, self.use_beta1, momentum)
                    break
                start_step = end_step
        return lrs
