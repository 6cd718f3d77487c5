"""Keep freed host memory for reuse, as a caching allocator would (Linux, glibc).

A training step allocates the same large temporaries every time (im2col
columns, activations, gradients: hundreds of KB to MBs each). glibc's
``malloc`` serves blocks above its *mmap threshold* (128 KB at first) with
fresh ``mmap`` calls and hands them back to the kernel on ``free``, so each
step pays thousands of page faults to get zeroed pages again: measured on
LeNet-5 at batch 64, about 3,000 faults and 40% of the step's CPU time in
the kernel. PyTorch avoids this with its own allocator; NumPy has none.

``keep_freed_memory()`` raises the mmap threshold to 32 MB and the trim
threshold to 256 MB through glibc's ``mallopt``, so those blocks come from
the heap and stay there after ``free`` for the next step. The cost is that
the process keeps up to that much freed memory instead of returning it to
the OS. gradlab calls it once, when the CPU backend is imported; set the
environment variable ``GRADLAB_KEEP_FREED_MEMORY=0`` to leave malloc alone.
It changes nothing on other platforms or C libraries.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD = -1  # from glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20


def keep_freed_memory() -> bool:
    """Tune glibc's malloc as described above; True if it was done."""
    if os.environ.get("GRADLAB_KEEP_FREED_MEMORY", "1") == "0" or \
            not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
