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
from .memory import DeviceMemory

__all__ = ["Storage"]


class Storage:
    """Version counter and memory accounting for one buffer (shared by its views)."""

    __slots__ = ("nbytes", "stats", "category", "version", "saved_count", "__weakref__")

    def __init__(self, nbytes: int, device, category: str = "other") -> None:
        # Every op output makes one of these, so the accounting is inlined here.
        self.nbytes = nbytes
        self.version = 0
        self.saved_count = 0
        self.category = category
        stats: DeviceMemory = device.memory
        self.stats = stats
        live = stats.live = stats.live + nbytes
        if live > stats.peak:
            stats.peak = live
        if category != "other":
            stats.by_category[category] += nbytes
        if _listeners:
            stats.announce("alloc", nbytes, category)

    def __del__(self) -> None:
        stats = self.stats
        stats.live -= self.nbytes
        category = self.category  # the effective category, inlined: every op output ends here
        if self.saved_count and category == "other":
            category = "activation"
        if category != "other":
            stats.by_category[category] -= self.nbytes
        if _listeners:
            stats.announce("free", self.nbytes, category)
        # The garbage collector may finalize this before a SavedTensor that holds it
        # (both in one cycle); its later release must then move no bytes.
        self.nbytes = 0

    @property
    def effective_category(self) -> str:
        """``activation`` while a backward node holds it, else its own category."""
        if self.saved_count and self.category == "other":
            return "activation"
        return self.category

    def set_category(self, category: str) -> None:
        """Move this storage's bytes to ``category`` (parameter, gradient, optimizer, ...).

        Every fresh ``.grad`` and every ``.grad = None`` comes here, so the
        effective categories before and after are worked out inline.
        """
        before = own = self.category
        if own == category:
            return
        held = self.saved_count
        if held and own == "other":
            before = "activation"
        self.category = category
        after = "activation" if held and category == "other" else category
        if after != before:
            self.stats.move(before, after, self.nbytes)
            if _listeners:
                self.stats.announce("retag", self.nbytes, after, before)

    def retain_for_backward(self) -> None:
        """A backward node keeps this buffer: its bytes count as ``activation``.

        Every recorded op saves its inputs, so this runs on the hot path: it
        touches one counter (``other`` is derived, see ``DeviceMemory``).
        """
        held = self.saved_count
        self.saved_count = held + 1
        if not held and self.category == "other":
            self.stats.by_category["activation"] += self.nbytes
            if _listeners:
                self.stats.announce("retag", self.nbytes, "activation", "other")

    def release_for_backward(self) -> None:
        held = self.saved_count - 1
        self.saved_count = held
        if not held and self.category == "other":
            self.stats.by_category["activation"] -= self.nbytes
            if _listeners:
                self.stats.announce("retag", self.nbytes, "other", "activation")


_listeners = events.listeners  # the bus's own list: truthy exactly when someone listens
