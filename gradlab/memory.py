"""Memory accounting: live bytes per device and category, peaks, summaries.

Every :class:`~gradlab.storage.Storage` adds its bytes here when it is made
and takes them away when it is freed, so these figures are exact for
gradlab's tensors (NumPy's and CuPy's own allocator caches are reported
separately, by the backend). Categories:

``parameter``   weights of ``nn.Module``s
``gradient``    ``.grad`` of leaves
``activation``  buffers a backward node saved (kept alive by the graph)
``optimizer``   optimizer state (momentum, Adam's moments, ...)
``other``       everything else: inputs, intermediate results
"""

from __future__ import annotations

import threading

from . import events

__all__ = [
    "CATEGORIES", "DeviceMemory", "memory_allocated", "max_memory_allocated",
    "reset_peak_memory_stats", "memory_stats", "memory_summary", "stats_for", "all_device_stats",
]

CATEGORIES = ("parameter", "gradient", "activation", "optimizer", "other")


class DeviceMemory:
    """Running totals for one device (``device.memory``).

    ``other`` is not stored: it is whatever part of ``live`` no other category
    claims, which spares the allocation fast path one update.
    """

    __slots__ = ("device", "live", "peak", "by_category")

    def __init__(self, device) -> None:
        self.device = device
        self.live = 0
        self.peak = 0
        self.by_category = {c: 0 for c in CATEGORIES if c != "other"}

    def category_bytes(self) -> dict[str, int]:
        out = dict(self.by_category)
        out["other"] = self.live - sum(self.by_category.values())
        return out

    def move(self, before: str, after: str, nbytes: int) -> None:
        if before != "other":
            self.by_category[before] -= nbytes
        if after != "other":
            self.by_category[after] += nbytes

    def announce(self, action: str, nbytes: int, category: str,
                 previous: str | None = None) -> None:
        events.emit(events.Memory(events.next_seq(), action, str(self.device), nbytes,
                                  category, self.live, self.peak, previous))


_stats: dict = {}
_lock = threading.Lock()


def stats_for(device) -> DeviceMemory:
    stats = _stats.get(device)
    if stats is None:
        with _lock:
            stats = _stats.setdefault(device, DeviceMemory(device))
    return stats


def all_device_stats() -> tuple[DeviceMemory, ...]:
    """The running totals of every device that has held a tensor so far."""
    with _lock:
        return tuple(_stats.values())


def _device_stats(device) -> DeviceMemory:
    from .backends import cpu
    from .backends import device as as_device

    return stats_for(cpu if device is None else as_device(device))


def memory_allocated(device=None) -> int:
    """Bytes held by live gradlab tensors on ``device`` (default: the CPU)."""
    return _device_stats(device).live


def max_memory_allocated(device=None) -> int:
    """The highest ``memory_allocated(device)`` since start or the last reset."""
    return _device_stats(device).peak


def reset_peak_memory_stats(device=None) -> None:
    """Start peak tracking afresh from the current live total."""
    stats = _device_stats(device)
    stats.peak = stats.live


def memory_stats(device=None) -> dict[str, int]:
    """A flat dict of figures: live and peak bytes, bytes per category, allocator figures."""
    stats = _device_stats(device)
    out = {"allocated_bytes": stats.live, "peak_bytes": stats.peak}
    out.update({f"{cat}_bytes": n for cat, n in stats.category_bytes().items()})
    backend = stats.device.backend
    if backend is not None:
        out.update(backend.pool_stats(stats.device.index))
    return out


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


def memory_summary(device=None) -> str:
    """A small table of where the bytes are, for printing."""
    stats = _device_stats(device)
    lines = [f"gradlab memory on {stats.device}",
             f"  {'allocated':<12}{_human(stats.live):>12}",
             f"  {'peak':<12}{_human(stats.peak):>12}"]
    lines += [f"  {cat:<12}{_human(n):>12}" for cat, n in stats.category_bytes().items()]
    backend = stats.device.backend
    if backend is not None:
        lines += [f"  {k:<12}{_human(v):>12}" for k, v in
                  backend.pool_stats(stats.device.index).items()]
    return "\n".join(lines)
