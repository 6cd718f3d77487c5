"""Scratch benchmark: gradlab's convolution and pooling ops vs PyTorch at LeNet-5's shapes.

Each library runs in its own process with one BLAS/OpenMP thread; times are
process CPU time (user + system), best of 5 runs, in microseconds (float32,
batch 64)::

    python bench/conv_ops.py [--keep-memory]

``--keep-memory`` tells glibc's malloc to keep freed memory (mmap threshold
32 MiB, no trimming): without it, the big temporaries (im2col columns of
several MB) are mapped and unmapped on every call, and the page faults
(system time) can cost as much as the arithmetic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

CASES = ["conv1 fwd", "conv1 fwd+bwd(w,b)", "conv2 fwd", "conv2 fwd+bwd(x,w,b)",
         "pool1 fwd", "pool1 fwd+bwd", "pool2 fwd+bwd", "avgpool1 fwd+bwd"]


def _time(fn, calls=50) -> float:
    for _ in range(5):
        fn()
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - start) / calls)
    return best * 1e6


def keep_memory() -> None:
    """glibc only: serve big arrays from the heap and never give it back (see the docstring)."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
    libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD


def worker(name: str) -> dict:
    import numpy as np

    if name == "torch":
        import torch as lib

        lib.set_num_threads(1)
    else:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import gradlab as lib
    F = lib.nn.functional
    rng = np.random.default_rng(0)

    def t(*shape, grad=True):
        return lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=grad)

    x, w1, b1 = t(64, 1, 28, 28, grad=False), t(6, 1, 5, 5), t(6)
    p1, w2, b2 = t(64, 6, 12, 12), t(16, 6, 5, 5), t(16)
    a1, a2 = t(64, 6, 24, 24), t(64, 16, 8, 8)

    def fwd_bwd(make):
        def run():
            y = make()
            y.backward(lib.ones_like(y))
        return run

    fns = {
        "conv1 fwd": lambda: F.conv2d(x, w1, b1).detach(),
        "conv1 fwd+bwd(w,b)": fwd_bwd(lambda: F.conv2d(x, w1, b1)),
        "conv2 fwd": lambda: F.conv2d(p1, w2, b2).detach(),
        "conv2 fwd+bwd(x,w,b)": fwd_bwd(lambda: F.conv2d(p1, w2, b2)),
        "pool1 fwd": lambda: F.max_pool2d(a1, 2).detach(),
        "pool1 fwd+bwd": fwd_bwd(lambda: F.max_pool2d(a1, 2)),
        "pool2 fwd+bwd": fwd_bwd(lambda: F.max_pool2d(a2, 2)),
        "avgpool1 fwd+bwd": fwd_bwd(lambda: F.avg_pool2d(a1, 2)),
    }
    return {case: _time(fn) for case, fn in fns.items()}


def main() -> None:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    results = {}
    for name in ("gradlab", "torch"):
        flags = ["--keep-memory"] if "--keep-memory" in sys.argv else []
        out = subprocess.run([sys.executable, __file__, "--worker", name] + flags, env=env,
                             capture_output=True, text=True, check=True).stdout
        results[name] = json.loads(out.strip().splitlines()[-1])
    print(f"{'case':24} {'gradlab us':>11} {'torch us':>9} {'ratio':>6}")
    for case in CASES:
        g, t = results["gradlab"].get(case), results["torch"].get(case)
        print(f"{case:24} {g:11.0f} {t:9.0f} {g / t:6.2f}")
    total_g = sum(results["gradlab"][c] for c in CASES if "bwd" in c and "avg" not in c)
    total_t = sum(results["torch"][c] for c in CASES if "bwd" in c and "avg" not in c)
    print(f"{'LeNet conv+pool fwd+bwd':24} {total_g:11.0f} {total_t:9.0f} {total_g / total_t:6.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        if "--keep-memory" in sys.argv:
            keep_memory()
        print(json.dumps(worker(sys.argv[2])))
    else:
        main()
