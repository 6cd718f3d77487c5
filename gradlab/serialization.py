"""gradlab.save and gradlab.load without pickle (placeholder, being written)."""

from __future__ import annotations

__all__: list[str] = []
