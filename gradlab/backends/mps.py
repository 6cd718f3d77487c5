"""``gradlab.backends.mps``: Apple's Metal GPUs, which gradlab does not support.

Tutorials pick a device with ``"cuda" if torch.cuda.is_available() else "mps"
if torch.backends.mps.is_available() else "cpu"``. gradlab runs on NumPy (CPU)
and CuPy (NVIDIA GPUs) only, so both answers are False and such code falls
through to the CPU, as it would with a PyTorch built without MPS. (This module
sits beside the numpy and cupy backends only because PyTorch puts it at
``torch.backends.mps``; it is not a backend.)
"""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """False: gradlab has no Metal backend (use 'cuda' on an NVIDIA GPU, or 'cpu')."""
    return False


def is_built() -> bool:
    """False: gradlab was not built with MPS support (there is no such build)."""
    return False
