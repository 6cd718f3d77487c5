"""Schedulers made of schedulers: SequentialLR (one after another), ChainedScheduler (together)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ._base import LRScheduler, _check_optimizer
from ._plateau import ReduceLROnPlateau

__all__ = ["SequentialLR", "ChainedScheduler"]

def _check_members(who: str, optimizer: Any, schedulers: Sequence[Any]) -> None:
    if len(schedulers) < 1:
        raise ValueError(f"{who}: needs at least one scheduler, got none")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{who}: schedulers[{i}] is a {type(scheduler).__name__}, not a "
                            f"learning-rate scheduler (it has no .optimizer)")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{who}: schedulers[{i}] is a ReduceLROnPlateau, whose step() needs "
                             f"the metric; step it yourself with scheduler.step(val_loss)")
        if scheduler.optimizer is not optimizer:
            raise ValueError(f"{who}: schedulers[{i}] ({type(scheduler).__name__}) drives a "
                             f"different optimizer; build every scheduler on the same one")


class _CombinedState:
    """state_dict for combinators: their own fields plus each inner scheduler's state_dict."""

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, scheduler_state in zip(self._schedulers, inner, strict=True):
            scheduler.load_state_dict(scheduler_state)


class SequentialLR(_CombinedState, LRScheduler):
    """Run ``schedulers[i]`` from ``milestones[i-1]`` on (e.g. a LinearLR warm-up, then a cosine).

    At each milestone the next scheduler restarts at its epoch 0 (its closed form).
    """

    def __init__(self, optimizer: Any, schedulers: list[LRScheduler], milestones: list[int],
                 last_epoch: int = -1) -> None:
        _check_optimizer("SequentialLR", optimizer)
        _check_members("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: {len(schedulers)} schedulers need "
                             f"{len(schedulers) - 1} milestone(s) (the epochs where the next "
                             f"one takes over), got {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:  # undo what the schedulers' constructors did
            group["lr"] = group["initial_lr"]
        for scheduler in schedulers:
            self._undo_initial_step(scheduler)
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _undo_initial_step(self, scheduler: Any) -> None:
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self._undo_initial_step(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_CombinedState, LRScheduler):
    """Step several chainable schedulers together; their lr factors multiply."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Any = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler: needs at least one scheduler, got none")
        optimizer = optimizer or schedulers[0].optimizer
        _check_members("ChainedScheduler", optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = self._current_lrs()

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._current_lrs()


# --------------------------------------------------------------------------- metric-driven
