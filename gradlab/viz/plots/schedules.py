"""Learning-rate schedules: run a scheduler on a throwaway optimizer and draw its lrs."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._common import finish, is_tensor, new_axes, series_style, styled, to_numpy

__all__ = ["lr_schedule", "plot_lr_schedule"]

WHO = "plot_lr_schedule"


def _is_scheduler(obj: Any) -> bool:
    return hasattr(obj, "get_last_lr") and hasattr(obj, "optimizer")


def _default_optimizer(params: list, lr: float):
    from gradlab.optim import SGD

    # momentum is there for schedulers that cycle it (OneCycleLR, CyclicLR)
    return SGD(params, lr=lr, momentum=0.9)


def _step(scheduler, metrics: Sequence[float] | None, t: int) -> None:
    from gradlab.optim.lr_scheduler import ReduceLROnPlateau

    if isinstance(scheduler, ReduceLROnPlateau):
        if metrics is None:
            raise ValueError(f"{WHO}: ReduceLROnPlateau changes the lr from a measured metric; "
                             f"pass metrics=[...] (one validation loss per step) to see its "
                             f"schedule")
        if t >= len(metrics):
            raise ValueError(f"{WHO}: metrics has {len(metrics)} values but the schedule runs "
                             f"{t + 1}+ steps; pass one metric per step")
        scheduler.step(float(metrics[t]))
    else:
        scheduler.step()


def lr_schedule(schedule: Any, steps: int | None = None, *, lr: float = 0.1,
                optimizer: Callable[[list], Any] | None = None,
                metrics: Sequence[float] | None = None) -> np.ndarray:
    """The lr of every param group at steps 0 .. steps-1, as an array (steps, groups).

    ``schedule`` is a list of lrs (returned as they are), a scheduler (stepped
    ``steps`` times: it changes its optimizer's lrs, as in training), or a
    factory ``lambda opt: Scheduler(opt, ...)`` that gets a fresh optimizer over
    one dummy parameter with initial lr ``lr`` (SGD with momentum, or
    ``optimizer(params)`` if given). ``metrics`` feeds ReduceLROnPlateau.
    """
    if isinstance(schedule, np.ndarray) or is_tensor(schedule) or \
            (isinstance(schedule, Sequence) and not isinstance(schedule, str)):
        lrs = to_numpy(schedule, WHO, "a list of learning rates")
        lrs = lrs.reshape(len(lrs), -1) if lrs.ndim else lrs.reshape(1, 1)
        return lrs[:steps] if steps is not None else lrs
    if steps is None or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"{WHO}: steps must be a positive integer (how many scheduler steps to "
                         f"run), got {steps!r}")
    if _is_scheduler(schedule):
        scheduler, own_optimizer = schedule, False
    elif callable(schedule):
        import gradlab

        params = [gradlab.nn.Parameter(gradlab.zeros(1))]
        opt = optimizer(params) if optimizer is not None else _default_optimizer(params, lr)
        scheduler, own_optimizer = schedule(opt), True
        if not _is_scheduler(scheduler):
            raise TypeError(f"{WHO}: the factory must return an lr scheduler (e.g. lambda opt: "
                            f"gradlab.optim.lr_scheduler.StepLR(opt, step_size=10)), but it "
                            f"returned {type(scheduler).__name__}")
    else:
        raise TypeError(f"{WHO}: expected a list of lrs, an lr scheduler, or a factory "
                        f"lambda opt: Scheduler(opt, ...); got {type(schedule).__name__}")
    out = []
    for t in range(steps):
        out.append([group["lr"] for group in scheduler.optimizer.param_groups])
        if t == steps - 1:
            break
        if own_optimizer:
            scheduler.optimizer.step()  # no gradients: nothing moves, but the order is right
            _step(scheduler, metrics, t)
        else:  # the user's optimizer: never step it; only hush the order warning
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler.step")
                _step(scheduler, metrics, t)
    return np.asarray(out, dtype=np.float64)


@styled
def plot_lr_schedule(schedule: Any, steps: int | None = None, *, lr: float = 0.1,
                     optimizer: Callable[[list], Any] | None = None,
                     metrics: Sequence[float] | None = None, log_scale: bool = False,
                     xlabel: str = "step", title: str | None = None, ax: Axes | None = None,
                     path: str | os.PathLike | None = None) -> Figure:
    """Draw how the learning rate moves over ``steps`` scheduler steps.

    ``schedule`` is anything :func:`lr_schedule` takes, or ``{name: schedule}``
    to compare several on one axes, e.g.::

        plot_lr_schedule({"one-cycle": lambda opt: OneCycleLR(opt, max_lr=1, total_steps=100),
                          "cosine": lambda opt: CosineAnnealingLR(opt, T_max=100)}, steps=100)

    An optimizer with several param groups gives one line per group.
    """
    named = dict(schedule) if isinstance(schedule, Mapping) else {None: schedule}
    if not named:
        raise ValueError(f"{WHO}: got an empty mapping; pass at least one schedule")
    fig, ax = new_axes(WHO, ax)
    i = 0
    for name, sched in named.items():
        lrs = lr_schedule(sched, steps, lr=lr, optimizer=optimizer, metrics=metrics)
        if log_scale and np.nanmin(lrs) <= 0:
            raise ValueError(f"{WHO}: log_scale=True needs positive lrs, but "
                             f"{name or 'the schedule'} reaches {np.nanmin(lrs):.4g}; use "
                             f"log_scale=False (or eta_min > 0)")
        for g in range(lrs.shape[1]):
            label = name or "lr"
            if lrs.shape[1] > 1:
                label = f"{label} (group {g})" if name else f"group {g}"
            ax.plot(np.arange(len(lrs)), lrs[:, g], label=label, gid=label,
                    drawstyle="steps-post", **series_style(i, len(lrs)))
            i += 1
    if log_scale:
        ax.set_yscale("log")
    if i > 1:
        ax.legend()
    ax.set_xlabel(xlabel)
    ax.set_ylabel("learning rate")
    if title:
        ax.set_title(title)
    return finish(WHO, fig, path)
