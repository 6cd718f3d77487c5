"""The interface every backend implements (NumPy for cpu, CuPy for cuda)."""

from __future__ import annotations

from typing import Any


class Backend:
    """What gradlab needs from an array library, and nothing more.

    ``xp`` is the NumPy-compatible array module; ops compute with it directly
    (``xp.exp(a)``), so most differences vanish. The methods below cover the
    rest: moving data, random numbers, synchronisation and memory figures.
    """

    name: str = "?"
    device_type: str = "?"
    xp: Any = None

    def is_available(self) -> bool:
        raise NotImplementedError

    def device_count(self) -> int:
        raise NotImplementedError

    def check_device(self, index: int | None) -> None:
        """Raise a clear error when ``index`` cannot be used."""

    def device_index_of(self, array) -> int | None:
        """The device index of ``array`` if it belongs to this backend, else None."""
        raise NotImplementedError

    def asarray(self, obj, np_dtype, index: int | None, copy: bool | None = None):
        """An array of this backend on device ``index`` holding ``obj``."""
        raise NotImplementedError

    def to_numpy(self, array):
        """A host NumPy array with the same values (no copy on the CPU)."""
        raise NotImplementedError

    def synchronize(self, index: int | None) -> None:
        """Wait for queued work on the device to finish."""

    def new_generator(self, seed: int, index: int | None):
        """A NumPy-``Generator``-like object (random, standard_normal, integers)."""
        raise NotImplementedError

    def pool_stats(self, index: int | None) -> dict[str, int]:
        """Allocator figures beyond gradlab's own accounting (CuPy's memory pool)."""
        return {}

    def from_dlpack(self, obj):
        return self.xp.from_dlpack(obj)

    def use_device(self, index: int | None):
        """A context manager making ``index`` current for kernels (no-op on the CPU)."""
        raise NotImplementedError
