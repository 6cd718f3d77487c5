"""Loss and metric curves: several series, optional smoothing, log scale, steps or epochs."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._common import (
    as_named,
    check_choice,
    finish,
    grid_figure,
    is_tensor,
    new_axes,
    series_style,
    styled,
    to_numpy,
)

__all__ = ["plot_curves", "smooth"]

WHO = "plot_curves"


def smooth(values: Any, weight: float, x: Any = None, unit: float | None = None
           ) -> np.ndarray:
    """Exponential moving average with bias correction (as TensorBoard's smoothing slider).

    ``s_t = w * s_{t-1} + (1 - w) * y_t``, divided by ``1 - w^t`` so the first
    points are not dragged towards zero. With positions ``x``, each point's
    ``w`` is ``weight ** (gap / unit)`` (``unit``: the smallest gap), so a
    sparse series (validation once per epoch) is smoothed over the same span of
    x as a dense one, not over the same number of points. NaNs are skipped.
    """
    y = to_numpy(values, "smooth", "values").ravel()
    if not 0.0 <= weight < 1.0:
        raise ValueError(f"smooth: weight must be in [0, 1) (0: no smoothing, 0.9: strong), "
                         f"got {weight!r}")
    gaps = np.ones_like(y)
    if x is not None:
        x = to_numpy(x, "smooth", "x").ravel()
        gaps[1:] = np.abs(np.diff(x))
        positive = gaps[1:][gaps[1:] > 0]
        unit = unit or (float(positive.min()) if positive.size else 1.0)
        gaps = gaps / unit
        gaps[0] = 1.0
    out = np.empty_like(y)
    avg = norm = 0.0
    for i, v in enumerate(y):
        if np.isfinite(v):
            w = weight ** gaps[i]
            avg = w * avg + (1.0 - w) * v
            norm = w * norm + (1.0 - w)
        out[i] = avg / norm if norm else np.nan
    return out


def _xy(name: str, series: Any, steps_per_epoch: int | None) -> tuple[np.ndarray, np.ndarray]:
    """x and y of one series: bare values are counted 1, 2, ... (converted to epochs if asked)."""
    if isinstance(series, tuple) and len(series) == 2 and not is_tensor(series[0]) and \
            all(isinstance(s, (Sequence, np.ndarray)) or is_tensor(s) for s in series):
        x = to_numpy(series[0], WHO, f"the x values of {name!r}").ravel()
        y = to_numpy(series[1], WHO, f"the values of {name!r}").ravel()
        if len(x) != len(y):
            raise ValueError(f"{WHO}: series {name!r} was given as (x, y) with {len(x)} x values "
                             f"but {len(y)} y values; they must pair up one to one")
        return x, y
    values = to_numpy(series, WHO, f"the values of {name!r}")
    if values.ndim == 2 and values.shape[1] == 2:  # a list of (x, y) pairs, as a recorder keeps
        return values[:, 0].copy(), values[:, 1].copy()
    if values.ndim > 1:
        raise ValueError(f"{WHO}: series {name!r} has shape {values.shape}; pass a 1-D list of "
                         f"values, an (x, y) tuple of two lists, or a list of (x, y) pairs")
    values = values.ravel()
    x = np.arange(1, len(values) + 1, dtype=np.float64)
    if steps_per_epoch is not None:
        x = x / steps_per_epoch
    return x, values


def _draw_panel(ax: Axes, named: dict[str, Any], *, steps_per_epoch: int | None,
                smoothing: float, log_scale: bool) -> None:
    data = {name: _xy(name, series, steps_per_epoch) for name, series in named.items()}
    gaps = [np.diff(x) for x, _ in data.values()]
    gaps = np.concatenate([g[g > 0] for g in gaps]) if gaps else np.zeros(0)
    unit = float(gaps.min()) if gaps.size else 1.0  # the finest spacing: one smoothing step
    for i, (name, (x, y)) in enumerate(data.items()):
        if len(y) == 0:
            raise ValueError(f"{WHO}: series {name!r} is empty; record at least one value")
        if log_scale and np.nanmin(y) <= 0:
            raise ValueError(f"{WHO}: log_scale=True needs positive values, but series {name!r} "
                             f"goes down to {np.nanmin(y):.4g}; plot it on a linear scale "
                             f"(log_scale=False) or shift it (e.g. loss - min + 1e-8)")
        style = series_style(i, len(y), markers=len(data) > 1)
        if smoothing > 0:
            # the raw series stays visible but faint: smoothing must not hide a spike
            ax.plot(x, y, color=style["color"], linestyle=style["linestyle"], alpha=0.25,
                    linewidth=1.0, label="_nolegend_", gid=f"{name}:raw")
            ax.plot(x, smooth(y, smoothing, x, unit), label=name, gid=name, **style)
        else:
            ax.plot(x, y, label=name, gid=name, **style)
    if log_scale:
        ax.set_yscale("log")
    if len(named) > 1:
        ax.legend()


@styled
def plot_curves(series: Any, *, x_axis: str = "step", steps_per_epoch: int | None = None,
                smoothing: float = 0.0, log_scale: bool = False, title: str | None = None,
                ylabel: str | None = None, ax: Axes | None = None,
                path: str | os.PathLike | None = None) -> Figure:
    """Training curves: loss, accuracy, any metric over steps or epochs.

    ``series`` is one list of values, or ``{name: values}`` for several lines on
    one axes, or ``{panel: {name: values}}`` for one axes per metric (e.g.
    ``{"loss": {"train": ..., "val": ...}, "accuracy": {...}}``). Values may be
    numbers or 0-d gradlab tensors (``losses.append(loss)`` works). Bare values
    are counted 1, 2, ...; give ``(x, y)`` or a list of ``(x, y)`` pairs to set
    x yourself. With ``x_axis="epoch"`` and ``steps_per_epoch=k``, bare
    per-step values are placed at ``step / k``, so per-step training loss and
    per-epoch validation loss (``(epochs, values)``) share one axis.

    ``smoothing`` in [0, 1) draws an exponential moving average over a faint
    copy of the raw values; ``log_scale`` puts y on a log axis.
    """
    check_choice(WHO, "x_axis", x_axis, ("step", "epoch"))
    if not (isinstance(smoothing, (int, float)) and 0.0 <= smoothing < 1.0):
        raise ValueError(f"{WHO}: smoothing must be a number in [0, 1) (0: off, 0.6: mild, "
                         f"0.9: strong), got {smoothing!r}")
    if steps_per_epoch is not None:
        if x_axis != "epoch":
            raise ValueError(f"{WHO}: steps_per_epoch={steps_per_epoch} converts steps to "
                             f"epochs; it needs x_axis='epoch'")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch < 1:
            raise ValueError(f"{WHO}: steps_per_epoch must be a positive integer, got "
                             f"{steps_per_epoch!r}")
    named = as_named(WHO, series, ylabel or "loss")
    nested = [isinstance(v, Mapping) for v in named.values()]
    if any(nested) and not all(nested):
        raise TypeError(f"{WHO}: mix of panels and series: either every value is a series "
                        f"({{'train': [...]}}) or every value is a panel of series "
                        f"({{'loss': {{'train': [...]}}, 'accuracy': {{...}}}})")
    options = {"steps_per_epoch": steps_per_epoch, "smoothing": smoothing,
               "log_scale": log_scale}
    if all(nested):
        if ax is not None:
            raise ValueError(f"{WHO}: {len(named)} panels need their own axes, so ax= can't be "
                             f"used; pass one panel's series (e.g. series['loss']) with ax=")
        fig, axes = grid_figure(len(named), ncols=min(len(named), 3), panel=(4.6, 3.4))
        for panel_ax, (panel, panel_series) in zip(axes, named.items()):
            _draw_panel(panel_ax, as_named(WHO, panel_series, panel), **options)
            panel_ax.set_title(panel)
            panel_ax.set_ylabel(panel)
            panel_ax.set_xlabel(x_axis)
        if title:
            fig.suptitle(title)
        return finish(WHO, fig, path)
    fig, ax = new_axes(WHO, ax)
    _draw_panel(ax, named, **options)
    ax.set_xlabel(x_axis)
    ax.set_ylabel(ylabel or ("loss" if len(named) > 1 else next(iter(named))))
    if title:
        ax.set_title(title)
    return finish(WHO, fig, path)
