"""A progress bar for training loops (placeholder, being written)."""

from __future__ import annotations

__all__: list[str] = []
