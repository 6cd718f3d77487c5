"""``gradlab.cuda``: is there a GPU, how many, wait for it, how much memory.

CuPy is imported on the first call that needs it, never at ``import gradlab``.
"""

from __future__ import annotations

from .backends import device as _device
from .backends import get_backend
from .memory import max_memory_allocated as _max_allocated
from .memory import memory_allocated as _allocated
from .memory import memory_summary as _summary
from .memory import reset_peak_memory_stats as _reset_peak

__all__ = ["is_available", "device_count", "synchronize", "current_device", "memory_allocated",
           "max_memory_allocated", "reset_peak_memory_stats", "memory_summary", "manual_seed"]


def is_available() -> bool:
    """True when CuPy is installed and sees at least one GPU."""
    return get_backend("cuda").is_available()


def device_count() -> int:
    return get_backend("cuda").device_count()


def current_device() -> int:
    return 0


def _cuda(device) -> _device:
    if device is None:
        return _device("cuda", 0)
    if isinstance(device, int):
        return _device("cuda", device)
    return _device(device)


def synchronize(device=None) -> None:
    """Wait until all queued work on the GPU has finished (for timing)."""
    dev = _cuda(device)
    dev.get_backend().synchronize(dev.index)


def memory_allocated(device=None) -> int:
    return _allocated(_cuda(device))


def max_memory_allocated(device=None) -> int:
    return _max_allocated(_cuda(device))


def reset_peak_memory_stats(device=None) -> None:
    _reset_peak(_cuda(device))


def memory_summary(device=None) -> str:
    return _summary(_cuda(device))


def manual_seed(seed: int) -> None:
    """Seed the default generator of every CUDA device."""
    from .random import get_generator

    for i in range(max(device_count(), 1)):
        get_generator(_device("cuda", i)).manual_seed(seed)


manual_seed_all = manual_seed
