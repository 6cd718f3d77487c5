"""``gradlab.cuda``: is there a GPU, how many, wait for it, how much memory.

CuPy is imported on the first call that needs it, never at ``import gradlab``.
"""

from __future__ import annotations

from .amp.legacy import namespace as _amp_namespace
from .backends import device as _device
from .backends import get_backend
from .memory import max_memory_allocated as _max_allocated
from .memory import memory_allocated as _allocated
from .memory import memory_summary as _summary
from .memory import reset_peak_memory_stats as _reset_peak

__all__ = ["is_available", "device_count", "synchronize", "current_device", "get_device_name",
           "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats", "memory_summary",
           "empty_cache", "manual_seed"]


amp = _amp_namespace("cuda", __name__)  # the deprecated gradlab.cuda.amp.autocast ...


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


def get_device_name(device=None) -> str:
    """The GPU's model name, e.g. 'NVIDIA H100 80GB HBM3' (``device`` defaults to cuda:0)."""
    dev = _cuda(device)
    if dev.type != "cuda":
        raise ValueError(f"get_device_name: expected a cuda device, but got {dev}. Fix: pass "
                         "'cuda:0' or an index, or leave it out")
    backend = dev.get_backend()
    backend.check_device(dev.index)  # no CuPy or no GPU: one error that says how to get them
    name = backend.xp.cuda.runtime.getDeviceProperties(dev.index or 0)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


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


def empty_cache() -> None:
    """Give CuPy's cached, unused GPU memory blocks back to the driver (so ``nvidia-smi``
    and other processes see them free). Live tensors keep their memory; without a GPU
    this does nothing."""
    if not is_available():
        return
    cupy = get_backend("cuda").xp
    for i in range(device_count()):
        with cupy.cuda.Device(i):
            cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()


def manual_seed(seed: int) -> None:
    """Seed the default generator of every CUDA device."""
    from .random import get_generator

    for i in range(max(device_count(), 1)):
        get_generator(_device("cuda", i)).manual_seed(seed)


manual_seed_all = manual_seed
