"""Parameter: a tensor that a Module learns (placeholder, being written)."""

from __future__ import annotations

__all__: list[str] = []
