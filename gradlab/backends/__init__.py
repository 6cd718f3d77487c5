"""Devices and the one small interface behind them.

Everything that differs between the CPU (NumPy) and CUDA (CuPy) lives in this
package. Code elsewhere asks a tensor's ``device.backend`` for what it needs
(``backend.xp`` is the array module) and never tests which device it is on.
"""

from __future__ import annotations

import threading

from ..memory import stats_for
from .base import Backend

__all__ = ["Backend", "device", "get_backend", "backend_for_array", "cpu", "default_device",
           "set_default_device"]

_BACKENDS: dict[str, Backend] = {}
_lock = threading.Lock()


def get_backend(kind: str) -> Backend:
    """The backend for a device type (``"cpu"`` or ``"cuda"``), created on first use."""
    backend = _BACKENDS.get(kind)
    if backend is None:
        with _lock:
            backend = _BACKENDS.get(kind)
            if backend is None:
                if kind == "cpu":
                    from .numpy_backend import NumpyBackend as cls
                elif kind == "cuda":
                    from .cupy_backend import CupyBackend as cls
                else:
                    raise RuntimeError(
                        f"unknown device type {kind!r}; gradlab knows 'cpu' and 'cuda' "
                        "(e.g. 'cuda:1')"
                    )
                backend = _BACKENDS[kind] = cls()
    return backend


class device:  # noqa: N801 - PyTorch's spelling: gradlab.device("cuda:0")
    """Where a tensor lives: ``device("cpu")``, ``device("cuda")``, ``device("cuda", 1)``.

    Devices are interned, so ``a.device is b.device`` is the cheap test the op
    dispatcher uses to catch mixed-device ops.
    """

    __slots__ = ("type", "index", "backend", "memory", "_str")
    _interned: dict[tuple[str, int | None], device] = {}

    def __new__(cls, spec="cpu", index: int | None = None):
        if isinstance(spec, device):
            return spec
        if isinstance(spec, int):  # PyTorch accepts a bare CUDA ordinal
            spec, index = "cuda", spec
        if not isinstance(spec, str):
            raise TypeError(f"device: expected a string like 'cpu' or 'cuda:0', got {spec!r}")
        kind = spec
        if ":" in spec:
            kind, _, idx = spec.partition(":")
            if index is not None:
                raise ValueError(f"device: index given twice in {spec!r} and index={index}")
            if not idx.isdigit():
                raise ValueError(f"device: bad index in {spec!r}; write e.g. 'cuda:0'")
            index = int(idx)
        if kind == "cpu":
            index = None  # gradlab has one CPU device
        elif kind == "cuda":
            index = 0 if index is None else int(index)
            if index < 0:
                raise ValueError(f"device: index must be >= 0, got {index}; write e.g. 'cuda:0'")
        else:
            raise RuntimeError(
                f"unknown device type {kind!r}; gradlab knows 'cpu' and 'cuda' (e.g. 'cuda:1')"
            )
        key = (kind, index)
        obj = cls._interned.get(key)
        if obj is None:
            obj = object.__new__(cls)
            obj.type = kind
            obj.index = index
            obj.backend = None  # resolved lazily: CUDA imports CuPy only when used
            obj._str = kind if index is None else f"{kind}:{index}"
            obj.memory = stats_for(obj)  # live bytes by category (gradlab.memory)
            cls._interned[key] = obj
        return obj

    def get_backend(self) -> Backend:
        """This device's backend; for CUDA this is where CuPy is first imported."""
        backend = self.backend
        if backend is None:
            backend = get_backend(self.type)
            backend.check_device(self.index)
            self.backend = backend
        return backend

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self._str

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (ValueError, RuntimeError):
                return False
        return self is other

    def __hash__(self) -> int:
        return hash(self._str)

    def __reduce__(self):
        return (device, (self._str,))


cpu = device("cpu")
cpu.backend = get_backend("cpu")

_default = [cpu]  # where creation functions put a tensor when no device= is given


def default_device() -> device:
    """Where ``zeros``, ``tensor``, ``randn`` ... put a tensor without ``device=``
    (the CPU unless ``set_default_device`` said otherwise)."""
    return _default[0]


def set_default_device(where) -> None:
    """Make ``where`` (``"cuda"``, ``"cuda:1"``, a ``device``; ``None`` for the CPU) the
    device of new tensors made without ``device=``, as ``torch.set_default_device``.

    One setting for the whole process (PyTorch's is per thread). A CUDA device is
    checked at the first tensor made there, with the usual error if there is no GPU.
    """
    _default[0] = cpu if where is None else (where if isinstance(where, device) else
                                              device(where))


def backend_for_array(array) -> tuple[device, Backend]:
    """The device and backend holding a raw NumPy or CuPy array."""
    if type(array).__module__.startswith("numpy"):
        return cpu, cpu.backend
    for kind in ("cuda",):
        backend = get_backend(kind)
        index = backend.device_index_of(array)
        if index is not None:
            dev = device(kind, index)
            return dev, dev.get_backend()
    raise TypeError(f"gradlab cannot hold an array of type {type(array).__name__}")
