"""clip_grad_norm_ and clip_grad_value_ (placeholder, being written)."""

from __future__ import annotations

__all__: list[str] = []
