"""The CUDA backend: CuPy arrays, imported only when a CUDA device is used.

``import cupy`` succeeds on machines without a GPU; the first real call then
raises a ``RuntimeError`` subclass. Both cases end here in one error that says
what is missing and how to get it.
"""

from __future__ import annotations

import numpy as np

from .base import Backend

INSTALL_HINT = (
    "install the CUDA extra with `pip install 'gradlab[cuda]'` (CuPy for CUDA 12) "
    "on a machine with an NVIDIA GPU and driver, or use device='cpu'"
)


def _import_cupy():
    try:
        import cupy
    except ImportError as exc:
        raise RuntimeError(f"CUDA is not available: CuPy is not installed; {INSTALL_HINT}") \
            from exc
    return cupy


class CupyBackend(Backend):
    name = "cupy"
    device_type = "cuda"

    def __init__(self) -> None:
        self._cupy = None
        self._count: int | None = None

    @property
    def xp(self):
        if self._cupy is None:
            self._cupy = _import_cupy()
        return self._cupy

    def device_count(self) -> int:
        if self._count is None:
            try:
                cupy = _import_cupy()
                self._count = int(cupy.cuda.runtime.getDeviceCount())
            except Exception:  # no CuPy, no driver, no GPU: all mean "none"
                self._count = 0
        return self._count

    def is_available(self) -> bool:
        return self.device_count() > 0

    def check_device(self, index):
        cupy = _import_cupy()
        count = self.device_count()
        if count == 0:
            raise RuntimeError(
                f"CUDA is not available: CuPy {cupy.__version__} found no usable GPU "
                f"(no NVIDIA driver or device); {INSTALL_HINT}"
            )
        if index is not None and not 0 <= index < count:
            raise RuntimeError(
                f"cuda:{index} does not exist: this machine has {count} CUDA device(s), "
                f"cuda:0 to cuda:{count - 1}"
            )

    def device_index_of(self, array):
        try:
            import cupy
        except ImportError:
            return None
        if isinstance(array, cupy.ndarray):
            return int(array.device.id)
        return None

    def use_device(self, index):
        return self.xp.cuda.Device(index or 0)

    def asarray(self, obj, np_dtype, index=None, copy=None):
        cupy = self.xp
        with cupy.cuda.Device(index or 0):
            if isinstance(obj, cupy.ndarray):
                out = obj.astype(np_dtype, copy=bool(copy))
                return out if out.device.id == (index or 0) else cupy.array(out, copy=True)
            return cupy.asarray(np.asarray(obj, dtype=np_dtype))

    def to_numpy(self, array):
        return self.xp.asnumpy(array)

    def synchronize(self, index=None):
        with self.xp.cuda.Device(index or 0):
            self.xp.cuda.get_current_stream().synchronize()

    def new_generator(self, seed, index=None):
        cupy = self.xp
        with cupy.cuda.Device(index or 0):
            return cupy.random.Generator(cupy.random.XORWOW(seed))

    def pool_stats(self, index=None):
        cupy = self.xp
        with cupy.cuda.Device(index or 0):
            pool = cupy.get_default_memory_pool()
            return {"pool_used_bytes": int(pool.used_bytes()),
                    "pool_total_bytes": int(pool.total_bytes())}
