"""The scheduler base class, LRScheduler, and the argument checks all schedulers share."""

from __future__ import annotations

import functools
import types
import warnings
import weakref
from collections.abc import Callable, Iterable
from numbers import Integral, Real
from typing import Any

__all__ = ["LRScheduler", "_LRScheduler"]

# --------------------------------------------------------------------------- argument checks


def _check_optimizer(who: str, optimizer: Any) -> None:
    groups = getattr(optimizer, "param_groups", None)
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise TypeError(f"{who}: expected an optimizer with param_groups (a list of dicts with "
                        f"'lr'), e.g. gradlab.optim.SGD(model.parameters(), lr=0.1); got "
                        f"{type(optimizer).__name__}")


def _check_int(who: str, name: str, value: Any, minimum: int) -> None:
    if not isinstance(value, Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{who}: {name} must be an integer >= {minimum}, got {value!r}")


def _check_range(who: str, name: str, value: Any, low: float, high: float,
                 low_open: bool = False) -> None:
    ok = isinstance(value, Real) and (low < value if low_open else low <= value) and value <= high
    if not ok:
        bracket = "(" if low_open else "["
        raise ValueError(f"{who}: {name} must be a number in {bracket}{low}, {high}], "
                         f"got {value!r}")


def _per_group(who: str, name: str, optimizer: Any, value: Any) -> list:
    """One value per param group: a list is checked against the group count, a scalar repeated."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{who}: {name} has {len(value)} values but the optimizer has {n} "
                             f"param group(s); pass one value per group, or a single value")
        return list(value)
    return [value] * n


def _momentum_key(who: str, optimizer: Any) -> str:
    """``"betas"`` (Adam family: momentum is beta1) or ``"momentum"`` (SGD, RMSprop)."""
    defaults = getattr(optimizer, "defaults", None) or optimizer.param_groups[0]
    if "betas" in defaults:
        return "betas"
    if "momentum" in defaults:
        return "momentum"
    raise ValueError(f"{who}: cycle_momentum=True needs an optimizer with 'momentum' or 'betas' "
                     f"(SGD, Adam, ...); {type(optimizer).__name__} has neither: pass "
                     f"cycle_momentum=False")


def _set_momentum(group: dict, use_beta1: bool, value: float) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _callables_state(fns: Iterable[Callable]) -> list:
    """Lambdas and functions can't be saved; callable objects save their ``__dict__``."""
    return [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in fns]


def _watch_optimizer_step(optimizer: Any) -> None:
    """Wrap ``optimizer.step`` once, so a scheduler can tell if it ran before ``scheduler.step``.

    The wrapper holds the optimizer weakly, so it adds no reference cycle.
    """
    step = optimizer.step
    if getattr(step, "_wrapped_by_lr_sched", False):
        return
    func = getattr(step, "__func__", None)
    opt_ref = weakref.ref(optimizer)

    @functools.wraps(func or step)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opt = opt_ref()
        opt._opt_called = True
        return func(opt, *args, **kwargs) if func is not None else step(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


# --------------------------------------------------------------------------- the base class


class LRScheduler:
    """Base class: subclasses write ``get_lr()`` (the lrs for epoch ``last_epoch``).

    On first construction (``last_epoch=-1``) each group gets ``"initial_lr"`` (kept if already
    there, so a second scheduler on the same optimizer sees the same base), ``base_lrs`` copies
    them, and one initial step sets the lrs of epoch 0.
    """

    # True during the constructor's step: a scheduler resumed at last_epoch=k must not move the
    # lr (already at epoch k's value) one step further, so chainable get_lr()s keep it as is.
    _is_initial: bool = False
    _get_lr_called_within_step: bool = False

    def __init__(self, optimizer: Any, last_epoch: int = -1) -> None:
        who = type(self).__name__
        _check_optimizer(who, optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"{who}: resuming with last_epoch={last_epoch} needs "
                                   f"param_groups[{i}]['initial_lr']; load the optimizer's "
                                   f"state_dict first, or start fresh with last_epoch=-1")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _watch_optimizer_step(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Everything in the scheduler except the optimizer (save that one separately)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float]:
        """The lrs set by the last ``step()``, one per param group."""
        return self._last_lr

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__}: a scheduler must define get_lr()")

    def _warn_if_called_directly(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=3)

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule one epoch (call it after ``optimizer.step()``)."""
        if epoch is not None:
            raise TypeError(f"{type(self).__name__}.step(epoch): the epoch argument is "
                            f"deprecated in PyTorch and not supported here; call step() once per "
                            f"epoch. To resume at epoch k, load a saved state_dict() (or build "
                            f"the scheduler with last_epoch=k-1)")
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`: "
                          "call optimizer.step() first, or the first value of the schedule is "
                          "skipped.", UserWarning, stacklevel=2)
        self._step_count += 1
        self._update_lr()

    def _update_lr(self, epoch: int | None = None) -> None:
        """Set the lrs for the next epoch, or for ``epoch`` from the closed form if there is one."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", self.get_lr)
                values = closed_form()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def _scaled(self, factor: float) -> list[float]:
        return [group["lr"] * factor for group in self.optimizer.param_groups]


class _LRScheduler(LRScheduler):
    """The pre-2.0 name of :class:`LRScheduler`, kept so old subclasses still work."""


# --------------------------------------------------------------------------- lambda schedulers
