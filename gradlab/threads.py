"""How many CPU threads the big ops use: ``set_num_threads`` / ``get_num_threads``.

gradlab's CPU work that is worth parallelising is matrix products
(``matmul``, ``linear``, every convolution), which NumPy hands to its BLAS
library (OpenBLAS, MKL ...); the elementwise ops are single-threaded NumPy
loops. So the thread count PyTorch sets for its own kernels is, in gradlab,
the BLAS thread pool's size. BLAS libraries size that pool once, from
environment variables read at import (``OPENBLAS_NUM_THREADS=1``); changing
it at run time needs the library's own call, which threadpoolctl finds and
makes for whichever BLAS NumPy loaded.

Benchmarks use ``set_num_threads(1)`` to time one core; a data-loading
worker process uses it so N workers do not each start a pool of every core.
"""

from __future__ import annotations

import builtins
import os

__all__ = ["set_num_threads", "get_num_threads"]

_controller = None


def _blas():
    """threadpoolctl's handle on the BLAS libraries NumPy loaded (made on first use)."""
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError as exc:  # a declared dependency; explain if it was removed
            raise RuntimeError("set_num_threads needs threadpoolctl to reach NumPy's BLAS "
                               "library: pip install threadpoolctl") from exc
        import numpy  # noqa: F401 - its BLAS must be loaded before threadpoolctl looks

        _controller = ThreadpoolController().select(user_api="blas")
    return _controller


def set_num_threads(int: int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Use ``int`` threads for matrix products on the CPU (the BLAS pool's size)."""
    if isinstance(int, bool) or not isinstance(int, builtins.int):
        raise TypeError(f"set_num_threads: expected an int, got {type(int).__name__}")
    if int <= 0:
        raise RuntimeError(f"set_num_threads: the number of threads must be positive, got {int}")
    _blas().limit(limits=int)


def get_num_threads() -> int:
    """Threads used for CPU matrix products: the BLAS pool's size (the CPU count if no BLAS
    library was found)."""
    info = _blas().info()
    if info:
        return max(entry["num_threads"] for entry in info)
    return os.cpu_count() or 1
