"""attention (placeholder, being written)."""

from __future__ import annotations

# Exported as gradlab.<name> (only what PyTorch also has at torch.<name>).
__all__: list[str] = []
# Re-exported by gradlab.nn.functional.
FUNCTIONAL: list[str] = []
TENSOR_METHODS: list = []
