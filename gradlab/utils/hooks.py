"""Handles returned by ``register_hook`` and friends."""

from __future__ import annotations

import itertools

__all__ = ["RemovableHandle"]

_ids = itertools.count()


class RemovableHandle:
    """Keeps a hook registered until ``remove()`` (or the end of a ``with`` block)."""

    __slots__ = ("hooks", "id")

    def __init__(self, hooks: dict, hook) -> None:
        self.hooks = hooks
        self.id = next(_ids)
        hooks[self.id] = hook

    def remove(self) -> None:
        self.hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
