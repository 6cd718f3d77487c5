"""Storage: the record behind a tensor's memory, shared by all its views.

A ``Storage`` is what views of one buffer have in common. It carries

* the **version counter**: every in-place change bumps it, and backward
  compares it with the version a node saved, to catch ``x.mul_(2)`` on a
  tensor that a graph still needs;
* the **memory accounting**: its bytes count towards
  ``gradlab.memory_allocated`` from creation until the storage is freed, in
  one category at a time (see :mod:`gradlab.memory`).
"""

from __future__ import annotations

from . import events
from .memory import DeviceMemory, stats_for

__all__ = ["Storage"]


class Storage:
    __slots__ = ("nbytes", "stats", "category", "version", "saved_count", "__weakref__")

    def __init__(self, nbytes: int, device, category: str = "other") -> None:
        self.nbytes = nbytes
        self.version = 0
        self.saved_count = 0
        self.category = category
        stats: DeviceMemory = stats_for(device)
        self.stats = stats
        stats.add(category, nbytes)

    def __del__(self) -> None:
        self.stats.add(self.effective_category, -self.nbytes)

    @property
    def effective_category(self) -> str:
        """``activation`` while a backward node holds it, else its own category."""
        if self.saved_count and self.category == "other":
            return "activation"
        return self.category

    def set_category(self, category: str) -> None:
        """Move this storage's bytes to ``category`` (parameter, gradient, optimizer, ...)."""
        before = self.effective_category
        self.category = category
        self._moved(before)

    def retain_for_backward(self) -> None:
        before = self.effective_category
        self.saved_count += 1
        self._moved(before)

    def release_for_backward(self) -> None:
        before = self.effective_category
        self.saved_count -= 1
        self._moved(before)

    def _moved(self, before: str) -> None:
        after = self.effective_category
        if after != before:
            self.stats.move(before, after, self.nbytes)
            if events.listeners:
                self.stats.announce("retag", self.nbytes, after)
