"""Joining and splitting: cat, stack, split, chunk, unbind.

(Being written.)
"""

from __future__ import annotations

__all__: list[str] = []
TENSOR_METHODS: list = []
