"""Memory over time, by category: a stacked area of what the bytes are for.

The input is the ``gradlab.events.Memory`` events of a run (what a debug
session records; other events in the list are skipped, except ``Phase``
events, which become vertical markers), or plain ``{category: [bytes, ...]}``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._common import (
    CATEGORY_COLORS,
    CATEGORY_HATCHES,
    COLORS,
    HATCHES,
    finish,
    new_axes,
    styled,
    to_numpy,
)

__all__ = ["memory_timeline", "plot_memory"]

WHO = "plot_memory"
CATEGORIES = ("parameter", "optimizer", "gradient", "activation", "other")  # bottom to top
NAMED = CATEGORIES[:-1]  # "other" is derived: live bytes that no named category claims
PHASE_STYLES = {"backward_begin": (":", "backward"), "step": ("-.", "optimizer step")}


def _guess_source(totals: dict[str, int], after: str, nbytes: int) -> str:
    """Where a "retag"ged storage came from (the event names only where it went).

    To ``other``: a backward node let go of it (``activation``) or a ``.grad``
    was replaced (``gradient``). To anything else: a fresh tensor (``other``).
    """
    if after != "other":
        return "other"
    for candidate in ("activation", "gradient"):
        if totals[candidate] >= nbytes:
            return candidate
    return "other"


def memory_timeline(events: Sequence[Any], *, device: str | None = None,
                    initial: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Replay Memory events into bytes per category after each event.

    Returns ``{"seq": array, "live": array, "peak": array, "phases": [(index,
    kind, iteration)], "categories": {category: array}}``; arrays have one entry
    per Memory event of ``device`` (needed only when the events span several
    devices). Bytes that existed before the first event count as ``other``
    unless ``initial`` says what they were (``gradlab.memory_stats()`` taken
    when recording began, or ``{category: bytes}``).
    """
    from gradlab.events import Memory, Phase

    memory = [e for e in events if isinstance(e, Memory)]
    if not memory:
        raise ValueError(f"{WHO}: no gradlab.events.Memory events in the {len(events)} given; "
                         f"record them with gradlab.events.subscribe(events.append) around the "
                         f"code to measure, or pass {{category: [bytes, ...]}}")
    devices = sorted({e.device for e in memory})
    if device is None and len(devices) > 1:
        raise ValueError(f"{WHO}: the events cover several devices ({', '.join(devices)}); "
                         f"pick one with device=...")
    device = devices[0] if device is None else str(device)
    memory = [e for e in memory if e.device == device]
    if not memory:
        raise ValueError(f"{WHO}: no Memory events for device {device!r}; the events are for "
                         f"{', '.join(devices)}")
    totals = {c: 0 for c in NAMED}
    for cat in NAMED:
        if initial is not None:
            totals[cat] = int(initial.get(f"{cat}_bytes", initial.get(cat, 0)))
    seq, live, peak = [], [], []
    rows = {c: [] for c in CATEGORIES}
    for e in memory:
        if e.action == "alloc" and e.category != "other":
            totals[e.category] += e.nbytes
        elif e.action == "free" and e.category != "other":
            totals[e.category] = max(0, totals[e.category] - e.nbytes)
        elif e.action == "retag":
            before = getattr(e, "previous_category", None) or \
                _guess_source(totals, e.category, e.nbytes)
            if before != "other":
                totals[before] = max(0, totals[before] - e.nbytes)
            if e.category != "other":
                totals[e.category] += e.nbytes
        seq.append(e.seq)
        live.append(e.live_bytes)
        peak.append(e.peak_bytes)
        for c in NAMED:
            rows[c].append(totals[c])
        rows["other"].append(max(0, e.live_bytes - sum(totals.values())))
    seq_array = np.asarray(seq)
    phases = [(int(np.searchsorted(seq_array, e.seq)), e.kind, e.iteration)
              for e in events if isinstance(e, Phase) and e.kind in PHASE_STYLES]
    return {"seq": seq_array, "live": np.asarray(live, dtype=np.float64),
            "peak": np.asarray(peak, dtype=np.float64), "phases": phases,
            "categories": {c: np.asarray(v, dtype=np.float64) for c, v in rows.items()}}


def _from_lists(data: Mapping[str, Any]) -> dict[str, Any]:
    if not data:
        raise ValueError(f"{WHO}: got an empty dict; pass {{category: [bytes, ...]}}")
    cats = {str(k): to_numpy(v, WHO, f"the bytes of {k!r}").ravel() for k, v in data.items()}
    lengths = {k: len(v) for k, v in cats.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"{WHO}: every category needs one value per time point, got lengths "
                         f"{lengths}")
    order = [c for c in CATEGORIES if c in cats] + [c for c in cats if c not in CATEGORIES]
    cats = {c: cats[c] for c in order}
    live = np.sum(list(cats.values()), axis=0)
    return {"seq": None, "live": live, "peak": np.maximum.accumulate(live), "phases": [],
            "categories": cats}


def _unit(max_bytes: float) -> tuple[str, float]:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if max_bytes >= scale:
            return unit, float(scale)
    return "bytes", 1.0


def _downsample(n: int, total: np.ndarray, max_points: int) -> np.ndarray:
    """Indices to keep: in each bucket the row with the highest total, so peaks survive."""
    if n <= max_points:
        return np.arange(n)
    edges = np.linspace(0, n, max_points + 1).astype(int)
    return np.array([lo + int(np.argmax(total[lo:hi])) for lo, hi in zip(edges, edges[1:])
                     if hi > lo])


@styled
def plot_memory(data: Any, *, device: str | None = None, initial: Mapping[str, int] | None = None,
                x: Sequence[float] | None = None, xlabel: str | None = None,
                max_points: int = 4000, title: str | None = None, ax: Axes | None = None,
                path: str | os.PathLike | None = None) -> Figure:
    """Bytes held over time, stacked by category, with the live total and its peak.

    ``data`` is a list of events (the ``Memory`` ones are drawn, ``Phase``
    "backward_begin" and "step" events become vertical markers), or
    ``{category: [bytes, ...]}`` with one value per time point (``x`` gives
    their positions, default 0, 1, ...). Categories stack bottom to top:
    parameter, optimizer, gradient, activation, other; each has its own colour
    and hatch, so the stack reads in grayscale too.
    """
    if isinstance(data, Mapping):
        timeline = _from_lists(data)
        xs = np.arange(len(timeline["live"]), dtype=np.float64) if x is None else \
            to_numpy(x, WHO, "x").ravel()
        if len(xs) != len(timeline["live"]):
            raise ValueError(f"{WHO}: x has {len(xs)} values but there are "
                             f"{len(timeline['live'])} time points")
        xlabel = xlabel or "time"
    elif isinstance(data, Sequence) and not isinstance(data, str):
        if x is not None:
            raise ValueError(f"{WHO}: x= is for plain lists; events are placed by their order")
        timeline = memory_timeline(data, device=device, initial=initial)
        xs = np.arange(len(timeline["live"]), dtype=np.float64)
        xlabel = xlabel or "memory event"
    else:
        raise TypeError(f"{WHO}: expected a list of gradlab.events.Memory events or a dict "
                        f"{{category: [bytes, ...]}}, got {type(data).__name__}")
    cats = timeline["categories"]
    total = timeline["live"]
    keep = _downsample(len(xs), total, max_points)
    unit, scale = _unit(max(float(total.max()), float(timeline["peak"].max()), 1.0))
    fig, ax = new_axes(WHO, ax, figsize=(8.4, 4.2))
    colors = [CATEGORY_COLORS.get(c, COLORS[i % len(COLORS)]) for i, c in enumerate(cats)]
    areas = ax.stackplot(xs[keep], *[v[keep] / scale for v in cats.values()], labels=list(cats),
                         colors=colors, step="post", edgecolor="black", linewidth=0.4)
    for i, (area, cat) in enumerate(zip(areas, cats)):
        area.set_hatch(CATEGORY_HATCHES.get(cat, HATCHES[i % len(HATCHES)]))
        area.set_gid(cat)
    ax.plot(xs[keep], total[keep] / scale, color="black", linewidth=1.0, drawstyle="steps-post",
            label="total", gid="total")
    peak = float(timeline["peak"].max())
    ax.axhline(peak / scale, color="black", linestyle="--", linewidth=0.8, gid="peak",
               label=f"peak {peak / scale:.3g} {unit}")
    seen = set()
    for index, kind, _iteration in timeline["phases"]:
        style, label = PHASE_STYLES[kind]
        ax.axvline(min(index, len(xs) - 1), color="0.3", linestyle=style, linewidth=0.9,
                   label=label if kind not in seen else "_nolegend_", gid=f"phase:{kind}")
        seen.add(kind)
    ax.set_xlim(xs[0], xs[-1] if len(xs) > 1 else xs[0] + 1)
    ax.set_ylim(0, peak / scale * 1.12 if peak > 0 else 1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"memory ({unit})")
    # the stack's legend reads top to bottom like the stack itself, then the lines
    handles, labels = ax.get_legend_handles_labels()
    n = len(cats)
    order = list(range(n - 1, -1, -1)) + list(range(n, len(handles)))
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0)
    if title:
        ax.set_title(title)
    return finish(WHO, fig, path)
