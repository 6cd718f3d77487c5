"""Random number generators: ``manual_seed`` and ``Generator``, one default per device.

Seeding is per device, as in PyTorch: ``gradlab.manual_seed(0)`` reseeds the
default generator of every device, so a seeded run draws the same numbers
each time it runs on the same device. CPU and CUDA streams differ (NumPy's
PCG64 vs CuPy's XORWOW), as they do in PyTorch.
"""

from __future__ import annotations

import os
import threading

from .backends import device as as_device

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator",
           "get_generator"]

DEFAULT_SEED = 67280421310721  # PyTorch's default initial seed


class Generator:
    """A seeded stream of random numbers on one device (``gradlab.Generator('cpu')``)."""

    def __init__(self, device="cpu") -> None:
        self.device = as_device(device)
        self._seed = DEFAULT_SEED
        self._rng = None

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed``; returns the generator."""
        seed = int(seed)
        if seed < 0:
            seed &= (1 << 64) - 1  # PyTorch accepts negative seeds the same way
        self._seed = seed
        self._rng = None
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        self.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    @property
    def rng(self):
        """The backend's generator object (NumPy ``Generator`` or CuPy's)."""
        rng = self._rng
        if rng is None:
            rng = self._rng = self.device.get_backend().new_generator(self._seed,
                                                                      self.device.index)
        return rng

    def get_state(self) -> dict:
        """The stream's position (CPU: NumPy bit-generator state), for ``set_state``."""
        return {"seed": self._seed, "state": getattr(self.rng, "bit_generator", None)
                and self.rng.bit_generator.state}

    def set_state(self, state: dict) -> Generator:
        self.manual_seed(state["seed"])
        if state.get("state") is not None:
            self.rng.bit_generator.state = state["state"]
        return self

    def __repr__(self) -> str:
        return f"<gradlab.Generator device={self.device} seed={self._seed}>"


_defaults: dict = {}
_lock = threading.Lock()
_seed_state = {"seed": DEFAULT_SEED}  # the last manual_seed, for generators made later


def get_generator(device) -> Generator:
    """The default generator of ``device``."""
    dev = as_device(device)
    gen = _defaults.get(dev)
    if gen is None:
        with _lock:
            gen = _defaults.setdefault(dev, Generator(dev).manual_seed(_seed_state["seed"]))
    return gen


default_generator = get_generator("cpu")


def manual_seed(seed: int) -> Generator:
    """Seed every device's default generator; returns the CPU one."""
    for gen in list(_defaults.values()):
        gen.manual_seed(seed)
    _seed_state["seed"] = int(seed)
    return default_generator


def seed() -> int:
    """Seed all default generators from the operating system; returns the seed."""
    s = default_generator.seed()
    manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()
