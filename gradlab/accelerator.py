"""``gradlab.accelerator``: the device-neutral way to ask "is there a GPU, and which?".

PyTorch 2.6 added ``torch.accelerator`` so tutorials stop spelling out every
vendor (``"cuda" if torch.cuda.is_available() else "mps" if ...``); the
quickstart now writes::

    device = torch.accelerator.current_accelerator().type \\
        if torch.accelerator.is_available() else "cpu"

gradlab has one kind of accelerator, a CUDA GPU reached through CuPy, so
every answer here is ``gradlab.cuda``'s answer under the neutral name. One
difference on purpose: PyTorch's ``current_accelerator()`` names the
accelerator the build *supports* even when no GPU is present; gradlab has no
separate build, so it names CUDA only when CuPy actually sees a GPU.
"""

from __future__ import annotations

from . import cuda as _cuda
from .backends import device as _device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "synchronize"]


def is_available() -> bool:
    """True when a GPU can be used (CuPy installed and at least one GPU visible)."""
    return _cuda.is_available()


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device(type='cuda')`` when a GPU can be used, else None (gradlab's only accelerator).

    ``check_available`` is accepted for PyTorch's signature; gradlab always checks.
    """
    return _device("cuda") if is_available() else None


def device_count() -> int:
    """How many GPUs CuPy sees (0 without CuPy or a GPU)."""
    return _cuda.device_count()


def current_device_index() -> int:
    """The index of the GPU ops go to by default: always 0 (gradlab has no current-device state)."""
    return _cuda.current_device()


def set_device_index(device) -> None:
    """Only GPU 0 can be the default: gradlab keeps no per-thread current device.

    Choose another GPU per tensor instead: ``x.to("cuda:1")``.
    """
    index = device.index if isinstance(device, _device) else int(device)
    if index != 0:
        raise RuntimeError(
            f"accelerator.set_device_index({index}): gradlab has no current-device state, so "
            f"the default GPU is always 0. Fix: put tensors on it directly, "
            f"x.to('cuda:{index}'), or model.to('cuda:{index}')")


def synchronize(device=None) -> None:
    """Wait until all queued work on the GPU has finished (before reading a timer)."""
    _cuda.synchronize(device)
