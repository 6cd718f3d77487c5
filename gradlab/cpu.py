"""``gradlab.cpu``: the CPU as a device module, as ``torch.cpu``.

Code written for any accelerator calls ``torch.<device type>.synchronize()``
or ``device_count()``; for the CPU these are trivial (there is one, and work on
it is done when the call returns). ``gradlab.cpu.amp`` holds the deprecated
``autocast``/``GradScaler`` spellings (see :mod:`gradlab.amp`).
"""

from __future__ import annotations

from .amp.legacy import namespace as _amp_namespace

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "is_initialized"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device) -> None:
    """Accepted for PyTorch's interface: there is one CPU device."""


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU work is done when the call returns."""


def is_initialized() -> bool:
    return True


amp = _amp_namespace("cpu", __name__)  # the deprecated gradlab.cpu.amp.autocast ...
