"""PyTorch's small top-level names: math constants, global switches, the default generator.

``gradlab.pi``, ``e``, ``inf``, ``nan`` are Python floats (as ``torch.pi`` ...), and
``newaxis`` is None (``x[:, gradlab.newaxis]`` adds a dim, as NumPy's).

Switches:

* ``set_flush_denormal(mode)``: PyTorch makes the CPU round subnormal floats to 0
  and returns True where it can. NumPy offers no such switch, so gradlab changes
  nothing and returns False ("not supported here") for either mode.
* ``set_warn_always(b)`` / ``is_warn_always_enabled()``: PyTorch's flag that makes
  warnings it gives once per process repeat every time; gradlab keeps the flag
  (its warnings go through Python's ``warnings``, whose filters decide repeats).
"""

from __future__ import annotations

import math

from .autograd.grad_mode import is_inference_mode_enabled
from .random import default_generator
from .tensor import Tensor

__all__ = ["pi", "e", "inf", "nan", "newaxis", "is_inference_mode_enabled",
           "set_flush_denormal", "set_warn_always", "is_warn_always_enabled",
           "default_generator", "get_device"]

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None

_warn_always = False


def set_flush_denormal(mode: bool) -> bool:
    """No-op in gradlab: NumPy can't flush subnormal floats to zero, so this returns False
    (PyTorch returns True where the CPU supports it)."""
    return False


def set_warn_always(b: bool, /) -> None:
    """Remember whether warnings should repeat every time (``is_warn_always_enabled``)."""
    global _warn_always
    _warn_always = bool(b)


def is_warn_always_enabled() -> bool:
    """The flag ``set_warn_always`` set (False by default)."""
    return _warn_always


def get_device(input: Tensor) -> int:
    """``torch.get_device(x)``: the GPU index of a cuda tensor, -1 for a cpu one."""
    if not isinstance(input, Tensor):
        raise TypeError(f"get_device(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return input.get_device()
