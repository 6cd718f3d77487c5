"""Indexing: ``x[i]``, ``x[mask]``, ``x[idx] = v``, gather, index_select, masked_fill.

(Being written: see the engine issue. Basic and advanced indexing with
gradients that accumulate over repeated indices.)
"""

from __future__ import annotations

__all__: list[str] = []
TENSOR_METHODS: list = []
