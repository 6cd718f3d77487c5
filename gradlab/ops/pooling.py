"""Pooling: max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool2d (placeholder, being written)."""

from __future__ import annotations

# Exported as gradlab.<name> (only what PyTorch also has at torch.<name>).
__all__: list[str] = []
# Re-exported by gradlab.nn.functional.
FUNCTIONAL: list[str] = []
TENSOR_METHODS: list = []
