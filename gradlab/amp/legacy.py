"""``gradlab.cuda.amp`` and ``gradlab.cpu.amp``: the old spellings of autocast and GradScaler.

Older tutorials write ``from torch.cuda.amp import autocast, GradScaler`` (or
``torch.cpu.amp``). These work, warn that they are deprecated (as PyTorch
does), and forward to :mod:`gradlab.amp` with the device type filled in.
Both namespaces are made by ``namespace(device_type)``, so the two spellings
can't drift apart.
"""

from __future__ import annotations

import sys
import types
import warnings

from .. import dtypes as _dt
from . import autocast_mode as _mode
from . import grad_scaler as _scaler

__all__ = ["namespace"]


def _deprecated(device_type: str, old: str, new: str) -> None:
    warnings.warn(f"`gradlab.{device_type}.amp.{old}(args...)` is deprecated. Please use "
                  f"`gradlab.amp.{new}` instead.", FutureWarning, stacklevel=3)


def namespace(device_type: str, package: str) -> types.ModuleType:
    """The module ``<package>.amp`` (e.g. ``gradlab.cuda.amp``), importable by that name."""
    fast = _mode.get_autocast_dtype(device_type)

    class autocast(_mode.autocast):  # noqa: N801 - PyTorch's name
        def __init__(self, enabled: bool = True, dtype: _dt.dtype = fast,
                     cache_enabled: bool = True) -> None:
            _deprecated(device_type, "autocast", f"autocast('{device_type}', args...)")
            super().__init__(device_type, dtype=dtype, enabled=enabled,
                             cache_enabled=cache_enabled)

    class GradScaler(_scaler.GradScaler):
        def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                     backoff_factor: float = 0.5, growth_interval: int = 2000,
                     enabled: bool = True) -> None:
            _deprecated(device_type, "GradScaler", f"GradScaler('{device_type}', args...)")
            super().__init__(device_type, init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)

    def custom_fwd(fwd=None, *, cast_inputs=None):
        _deprecated(device_type, "custom_fwd", f"custom_fwd(args..., device_type='{device_type}')")
        return _mode.custom_fwd(fwd, device_type=device_type, cast_inputs=cast_inputs)

    def custom_bwd(bwd=None):
        _deprecated(device_type, "custom_bwd", f"custom_bwd(args..., device_type='{device_type}')")
        return _mode.custom_bwd(bwd, device_type=device_type)

    name = f"{package}.amp"
    module = types.ModuleType(name, f"``{name}``: deprecated spellings of gradlab.amp for "
                                    f"{device_type!r}.")
    for item in (autocast, GradScaler, custom_fwd, custom_bwd):
        item.__module__ = name
        setattr(module, item.__name__, item)
    module.__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]
    sys.modules[name] = module  # `from gradlab.cuda.amp import autocast` works
    return module
