"""Memory and optimizer state over a run, for the debugger (bounded, cheap per event).

:class:`MemoryTracker` keeps, per device, a timeline of live bytes: from
``Memory`` events while every event is recorded, from ``gradlab.memory``'s
running totals (:meth:`MemoryTracker.sample`) while the debugger listens
lightly. Samples closer than ``interval`` seconds share one point (the
highest value), so a burst of allocations costs one point, not thousands.

:class:`OptimizerTracker` keeps each optimizer's groups and, per parameter,
the last update: learning rate, step, gradient and update norms, and the
norms of the state arrays (momentum, Adam's moments).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..memory import all_device_stats
from ..ops._util import array_norm
from .snapshot import DeviceMemorySnapshot, MemorySample, OptimizerSnapshot, ParamStateSnapshot

__all__ = ["MemoryTracker", "OptimizerTracker", "state_norm"]


class _Device:
    __slots__ = ("name", "stats", "live", "peak", "timeline")

    def __init__(self, name: str, stats, points: int) -> None:
        self.name = name
        self.stats = stats  # gradlab.memory.DeviceMemory: exact totals by category
        self.live = self.peak = 0
        self.timeline: deque = deque(maxlen=points)  # [time, live bytes] pairs


def _stats_of(name: str):
    from ..backends import device

    try:
        return device(name).memory
    except (RuntimeError, ValueError, TypeError):
        return None


class MemoryTracker:
    """Live and peak bytes per device, by category, with a bounded timeline."""

    def __init__(self, *, points: int = 600, interval: float = 0.05, start: float = 0.0) -> None:
        self.points = points
        self.interval = interval
        self.start = start
        self.devices: dict[str, _Device] = {}

    def _device(self, name: str) -> _Device:
        record = self.devices.get(name)
        if record is None:
            record = self.devices[name] = _Device(name, _stats_of(name), self.points)
        return record

    def _add(self, record: _Device, now: float, live: int) -> None:
        timeline = record.timeline
        if timeline and now - timeline[-1][0] < self.interval:
            last = timeline[-1]
            if live > last[1]:
                last[1] = live
        else:
            timeline.append([now, live])

    def on_event(self, event, now: float) -> None:
        """A ``Memory`` event: the device's totals after the change."""
        record = self.devices.get(event.device) or self._device(event.device)
        record.live = event.live_bytes
        record.peak = event.peak_bytes
        self._add(record, now, event.live_bytes)

    def sample(self, now: float) -> None:
        """Read every device's totals from ``gradlab.memory`` now (light listening)."""
        for stats in all_device_stats():
            record = self._device(str(stats.device))
            if record.stats is None:
                record.stats = stats
            record.live, record.peak = stats.live, stats.peak
            self._add(record, now, stats.live)

    def snapshot(self) -> tuple[DeviceMemorySnapshot, ...]:
        out = []
        for record in list(self.devices.values()):
            stats = record.stats
            if stats is not None:
                live, peak, by_category = stats.live, stats.peak, stats.category_bytes()
                pool = {}
                backend = stats.device.backend
                if stats.device.type != "cpu" and backend is not None:
                    try:
                        pool = dict(backend.pool_stats(stats.device.index))
                    except Exception:  # a pool we cannot read is left out, never fatal
                        pool = {}
            else:
                live, peak, by_category, pool = record.live, record.peak, {}, {}
            timeline = tuple([MemorySample(t - self.start, n) for t, n in list(record.timeline)])
            out.append(DeviceMemorySnapshot(record.name, live, peak, by_category, timeline, pool))
        return tuple(out)


def state_norm(array) -> float:
    """The 2-norm of a state array (a host copy), accumulated in float64."""
    return array_norm(np.asarray(array))


class _Optimizer:
    __slots__ = ("name", "source", "steps", "groups", "params")

    def __init__(self, name: str, source: int) -> None:
        self.name = name
        self.source = source
        self.steps = 0
        self.groups: dict[int, dict] = {}
        self.params: dict[int, ParamStateSnapshot] = {}


class OptimizerTracker:
    """What ``Phase("step")`` and ``OptimizerStep`` events say about each optimizer."""

    def __init__(self, *, max_optimizers: int = 16, max_params: int = 10_000) -> None:
        self.max_optimizers = max_optimizers
        self.max_params = max_params
        self.optimizers: dict[int, _Optimizer] = {}

    def _get(self, source: int, name: str | None) -> _Optimizer:
        opt = self.optimizers.get(source)
        if opt is None:
            if len(self.optimizers) >= self.max_optimizers:
                self.optimizers.pop(next(iter(self.optimizers)))
            opt = self.optimizers[source] = _Optimizer(name or "optimizer", source)
        elif name is not None and opt.name == "optimizer":
            opt.name = name
        return opt

    def name_of(self, source: int | None) -> str | None:
        opt = self.optimizers.get(source)
        return None if opt is None or opt.name == "optimizer" else opt.name

    def on_step(self, event) -> None:
        """``Phase("step")``: optimizer ``source`` begins its ``iteration``-th step."""
        if event.source is None:
            return
        opt = self._get(event.source, None)
        opt.steps = event.iteration if event.iteration is not None else opt.steps + 1

    def on_update(self, event, name: str) -> ParamStateSnapshot:
        """``OptimizerStep``: one parameter's update; ``name`` is what to call the parameter."""
        source = event.source if event.source is not None else 0
        opt = self._get(source, event.optimizer)
        opt.groups[event.group] = event.options
        norms: dict[str, float] = {}
        scalars: dict[str, float] = {}
        for key, value in event.state_after.items():
            if isinstance(value, (bool, int, float, np.number)):
                scalars[key] = float(value)
            elif hasattr(value, "shape"):
                norms[key] = state_norm(value)
        step = scalars.get("step")
        param = event.param
        state = ParamStateSnapshot(
            name, tuple(param.shape), event.group, float(event.lr),
            int(step) if step is not None else (opt.steps or None),
            event.grad_norm, event.update_norm, norms, scalars)
        params = opt.params
        if param.id not in params and len(params) >= self.max_params:
            params.pop(next(iter(params)))
        params[param.id] = state
        return state

    def snapshot(self) -> tuple[OptimizerSnapshot, ...]:
        return tuple([
            OptimizerSnapshot(opt.name, opt.source, opt.steps,
                              tuple([opt.groups[i] for i in sorted(opt.groups)]),
                              tuple(opt.params.values()))
            for opt in list(self.optimizers.values())])
