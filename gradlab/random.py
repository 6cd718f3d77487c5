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
           "get_generator", "get_rng_state", "set_rng_state"]

DEFAULT_SEED = 67280421310721  # PyTorch's default initial seed


_draws = [0]  # how many times any generator handed out its stream to draw from


def draw_count() -> int:
    """A count that moves whenever any generator is drawn from (``vmap``'s randomness check)."""
    return _draws[0]


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
        """The backend's generator object (NumPy ``Generator`` or CuPy's), to draw from."""
        _draws[0] += 1
        return self._stream()

    def _stream(self):
        rng = self._rng
        if rng is None:
            rng = self._rng = self.device.get_backend().new_generator(self._seed,
                                                                      self.device.index)
        return rng

    def get_state(self) -> dict:
        """The stream's position (CPU: NumPy bit-generator state), for ``set_state``.
        A stream that drew nothing yet is at its seed (and its device is not touched)."""
        if self._rng is None:
            return {"seed": self._seed, "state": None}
        stream = self._stream()
        return {"seed": self._seed, "state": getattr(stream, "bit_generator", None)
                and stream.bit_generator.state}

    def set_state(self, state: dict) -> Generator:
        self.manual_seed(state["seed"])
        if state.get("state") is not None:
            self._stream().bit_generator.state = state["state"]
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


def default_generators() -> dict:
    """Every device's default generator made so far, by device."""
    return dict(_defaults)


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


# --- the CPU stream's position as a tensor (torch.get_rng_state / set_rng_state) -------------
#
# PyTorch returns its Mersenne Twister state as a uint8 tensor of 5056 bytes.
# gradlab's CPU stream is NumPy's PCG64, whose whole position is two 128-bit
# numbers (state and increment) plus a cached half-draw, so the state is an
# int64 tensor of 14 entries: every number split into 32-bit pieces (low
# first), all non-negative, so it survives any int64 round trip (save/load).
#
#   [format=1, seed (2 pieces), state (4), inc (4), has_uint32, uinteger (2)]

_STATE_FORMAT = 1
_STATE_LAYOUT = (("seed", 2), ("state", 4), ("inc", 4), ("has_uint32", 1), ("uinteger", 2))
_STATE_SIZE = 1 + sum(n for _, n in _STATE_LAYOUT)


def _pieces(value: int, count: int) -> list[int]:
    return [(value >> (32 * i)) & 0xFFFFFFFF for i in range(count)]


def get_rng_state():
    """The CPU default generator's position, as an int64 tensor for ``set_rng_state``.

    Restoring it replays the same random numbers (dropout masks, ``randn`` ...)
    from that point on: save it with a checkpoint to resume a run exactly.
    """
    from .ops.creation import tensor

    bits = default_generator._stream().bit_generator.state
    values = {"seed": default_generator.initial_seed(), "state": bits["state"]["state"],
              "inc": bits["state"]["inc"], "has_uint32": bits["has_uint32"],
              "uinteger": bits["uinteger"]}
    flat = [_STATE_FORMAT]
    for key, count in _STATE_LAYOUT:
        flat += _pieces(int(values[key]), count)
    return tensor(flat, dtype="int64")


def set_rng_state(new_state) -> None:
    """Put the CPU default generator back where ``get_rng_state()`` found it."""
    from .tensor import Tensor

    if not isinstance(new_state, Tensor) or new_state.dtype.name != "int64" or \
            tuple(new_state.shape) != (_STATE_SIZE,):
        what = (f"{new_state.dtype} tensor of shape {tuple(new_state.shape)}"
                if isinstance(new_state, Tensor) else type(new_state).__name__)
        raise RuntimeError(
            f"set_rng_state: expected the int64 tensor of {_STATE_SIZE} entries that "
            f"gradlab.get_rng_state() returns, got a {what}. (A state saved by PyTorch, a "
            "uint8 tensor, describes a different generator and can't be loaded here.)")
    flat = [int(v) for v in new_state.tolist()]
    if flat[0] != _STATE_FORMAT or any(not 0 <= v <= 0xFFFFFFFF for v in flat):
        raise RuntimeError("set_rng_state: this tensor is not a state from "
                           "gradlab.get_rng_state() (bad format tag or pieces)")
    values, pos = {}, 1
    for key, count in _STATE_LAYOUT:
        values[key] = sum(v << (32 * i) for i, v in enumerate(flat[pos:pos + count]))
        pos += count
    default_generator.manual_seed(values["seed"])
    default_generator._stream().bit_generator.state = {
        "bit_generator": "PCG64", "state": {"state": values["state"], "inc": values["inc"]},
        "has_uint32": values["has_uint32"], "uinteger": values["uinteger"]}
