"""Global switches PyTorch scripts set: default device, float32 matmul precision,
inter-op threads, deterministic algorithms.

gradlab accepts each and says honestly what it changes:

* **default device**: the CPU unless ``set_default_device`` names another;
  the creation functions (``tensor``, ``zeros``, ``randn``, ``arange`` ...)
  put a tensor there when no ``device=`` is given.
* **float32 matmul precision** (``'highest'``, ``'high'``, ``'medium'``):
  PyTorch may use TF32 or bfloat16 internally on GPUs for ``'high'`` and
  ``'medium'``. gradlab's matrix products are NumPy's (CuPy's) in full
  float32 whatever the setting: it is remembered and has no effect.
* **inter-op threads**: PyTorch may run independent ops in parallel.
  gradlab runs ops one after another on the calling thread (the thread
  count that matters is BLAS's, ``set_num_threads``); the number is
  remembered and has no effect.
* **deterministic algorithms**: gradlab's CPU ops are deterministic already
  (the same inputs and seed give the same bits every run: no atomics, no
  racing threads), so the flag is remembered and nothing needs to change.
"""

from __future__ import annotations

import builtins
import warnings

from .backends import default_device, set_default_device

__all__ = ["get_default_device", "set_default_device", "set_float32_matmul_precision",
           "get_float32_matmul_precision",
           "set_num_interop_threads", "get_num_interop_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]

_state = {"matmul_precision": "highest", "interop_threads": 1, "deterministic": False,
          "warn_only": False}
_PRECISIONS = ("highest", "high", "medium")
_DEBUG_MODES = ("default", "warn", "error")


def get_default_device():
    """Where tensors go when no ``device=`` is given (see ``set_default_device``)."""
    return default_device()


def set_float32_matmul_precision(precision: str) -> None:
    """Remember ``'highest'``, ``'high'`` or ``'medium'`` (no effect in gradlab: matrix
    products always run in full float32)."""
    if precision not in _PRECISIONS:
        warnings.warn(f"set_float32_matmul_precision: {precision!r} is not one of 'highest', "
                      "'high', or 'medium'; the call has no effect", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]


def _positive_int(op: str, value) -> int:
    if isinstance(value, builtins.bool) or not isinstance(value, builtins.int):
        raise TypeError(f"{op}: expected an int, got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{op}: the number of threads must be positive, got {value}")
    return value


def set_num_interop_threads(int: int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Remember the inter-op thread count (no effect: gradlab runs ops one at a time; use
    ``set_num_threads`` for the matrix products' threads)."""
    _state["interop_threads"] = _positive_int("set_num_interop_threads", int)


def get_num_interop_threads() -> int:
    """1 unless set: gradlab runs one op at a time."""
    return _state["interop_threads"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Remember the flag. gradlab's ops are deterministic on the CPU already, so there is
    nothing to switch and nothing to warn about."""
    if not isinstance(mode, builtins.bool):
        raise TypeError(f"use_deterministic_algorithms: expected a bool, got "
                        f"{type(mode).__name__}")
    _state["deterministic"] = mode
    _state["warn_only"] = builtins.bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """``'default'`` (0), ``'warn'`` (1) or ``'error'`` (2): ``use_deterministic_algorithms``
    in another spelling."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"set_deterministic_debug_mode: invalid mode {debug_mode!r}; "
                               "expected 'default', 'warn' or 'error' (or 0, 1, 2)")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    if debug_mode not in (0, 1, 2) or isinstance(debug_mode, builtins.bool):
        raise RuntimeError(f"set_deterministic_debug_mode: invalid mode {debug_mode!r}; "
                           "expected 'default', 'warn' or 'error' (or 0, 1, 2)")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2
