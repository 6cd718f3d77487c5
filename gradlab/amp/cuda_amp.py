"""``gradlab.cuda.amp``: the old spellings ``torch.cuda.amp.autocast`` and ``GradScaler``.

Older tutorials write ``from torch.cuda.amp import autocast, GradScaler``;
these work, warn that they are deprecated (as PyTorch does), and forward to
:mod:`gradlab.amp` with ``device_type="cuda"``.
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from . import autocast_mode as _mode
from . import grad_scaler as _scaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`gradlab.cuda.amp.{old}(args...)` is deprecated. Please use "
                  f"`gradlab.amp.{new}` instead.", FutureWarning, stacklevel=3)


class autocast(_mode.autocast):  # noqa: N801 - PyTorch's name
    def __init__(self, enabled: bool = True, dtype: _dt.dtype = _dt.float16,
                 cache_enabled: bool = True) -> None:
        _deprecated("autocast", "autocast('cuda', args...)")
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_scaler.GradScaler):
    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        _deprecated("GradScaler", "GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    _deprecated("custom_fwd", "custom_fwd(args..., device_type='cuda')")
    return _mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    _deprecated("custom_bwd", "custom_bwd(args..., device_type='cuda')")
    return _mode.custom_bwd(bwd, device_type="cuda")
