"""The CPU backend: NumPy arrays."""

from __future__ import annotations

import contextlib

import numpy as np

from .base import Backend
from .host_memory import keep_freed_memory

KEEPS_FREED_MEMORY = keep_freed_memory()  # see host_memory.py: saves page faults every step


class NumpyBackend(Backend):
    name = "numpy"
    device_type = "cpu"
    xp = np

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 1

    def device_index_of(self, array):
        return None if not isinstance(array, np.ndarray) else 0

    def asarray(self, obj, np_dtype, index=None, copy=None):
        if copy:
            return np.array(obj, dtype=np_dtype, copy=True)
        if hasattr(obj, "__cuda_array_interface__") and not isinstance(obj, np.ndarray):
            obj = obj.get()  # a CuPy array moving to the host
        return np.asarray(obj, dtype=np_dtype)

    def to_numpy(self, array):
        return array

    def new_generator(self, seed, index=None):
        return np.random.Generator(np.random.PCG64(seed))

    def use_device(self, index):
        return contextlib.nullcontext()
