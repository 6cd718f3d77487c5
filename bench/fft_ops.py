"""Fourier transforms: gradlab.fft beside PyTorch's torch.fft and NumPy's pocketfft.

gradlab's transforms call NumPy's FFT (CuPy's cuFFT on a GPU), so the
forward should cost what NumPy's does plus the op's bookkeeping; a backward
is one more transform of the same size (the adjoint) plus, for the real
transforms, a pad or a weighting. Cases, float32 (complex64), each
contestant in its own process with one thread:

* ``rfft``: the half spectra of 64 signals of 4096 samples, forward only;
* ``filter step``: a learned filter in the frequency domain,
  ``irfft(rfft(x) * w, n)`` and a squared error, forward and backward (three
  transforms: rfft, irfft, and in backward their adjoints);
* ``fft2``: the 2-D spectrum of 16 complex 128x128 images, forward and
  backward.

NumPy runs the forwards only (it has no gradients): the floor for the
transform itself. Its process gets the malloc settings gradlab makes when
imported (``gradlab/backends/host_memory.py``), so both reuse freed memory
rather than one of them paying page faults for every fresh output array.

    python bench/fft_ops.py [--device cuda] [--markdown]
"""

from __future__ import annotations

import argparse
import sys

import _harness as h
import numpy as np

SIGNALS, LENGTH = 64, 4096
IMAGES, SIDE = 16, 128
CASES = {"rfft": f"rfft of {SIGNALS}x{LENGTH}, forward (ms)",
         "filter": f"irfft(rfft(x) * w) + loss, {SIGNALS}x{LENGTH}, fwd+bwd (ms)",
         "fft2": f"fft2 of {IMAGES}x{SIDE}x{SIDE} complex, fwd+bwd (ms)"}


def _data():
    rng = np.random.default_rng(0)
    signal = rng.standard_normal((SIGNALS, LENGTH)).astype(np.float32)
    target = rng.standard_normal((SIGNALS, LENGTH)).astype(np.float32)
    weights = (rng.standard_normal(LENGTH // 2 + 1) +
               1j * rng.standard_normal(LENGTH // 2 + 1)).astype(np.complex64)
    images = (rng.standard_normal((IMAGES, SIDE, SIDE)) +
              1j * rng.standard_normal((IMAGES, SIDE, SIDE))).astype(np.complex64)
    return signal, target, weights, images


def _cases(lib, opts) -> dict:
    """The same code for gradlab and PyTorch (their fft namespaces share names)."""
    dev = opts.device
    sync = lib.cuda.synchronize if dev == "cuda" else None
    timing = dict(min_time=opts.min_time, repeat=opts.repeat, sync=sync)
    signal, target, weights, images = _data()
    x, y = lib.tensor(signal, device=dev), lib.tensor(target, device=dev)
    w = lib.tensor(weights, device=dev, requires_grad=True)
    z = lib.tensor(images, device=dev, requires_grad=True)

    def forward():
        with lib.no_grad():
            lib.fft.rfft(x)

    def filter_step():
        out = lib.fft.irfft(lib.fft.rfft(x) * w, n=LENGTH)
        ((out - y) ** 2).mean().backward()
        w.grad = None

    def image_step():
        lib.fft.fft2(z).abs().sum().backward()
        z.grad = None

    return {"rfft": h.measure(forward, **timing), "filter": h.measure(filter_step, **timing),
            "fft2": h.measure(image_step, **timing)}


def worker_gradlab(opts) -> dict:
    return {"cases": _cases(h.import_gradlab(opts.device), opts)}


def worker_torch(opts) -> dict:
    torch = h.import_torch(opts.device)
    return {"cases": _cases(torch, opts), "versions": {"torch": torch.__version__}}


def worker_numpy(opts) -> dict:
    """Forwards only: NumPy's FFT of the same arrays (no gradient, no wrapper)."""
    if opts.device != "cpu":
        return {"cases": {}}
    h.import_gradlab("cpu")  # for its malloc settings only (see the module docstring)
    signal, _, weights, images = _data()
    timing = dict(min_time=opts.min_time, repeat=opts.repeat)
    return {"cases": {"rfft": h.measure(lambda: np.fft.rfft(signal), **timing),
                      "filter": h.measure(lambda: np.fft.irfft(np.fft.rfft(signal) * weights,
                                                               n=LENGTH), **timing),
                      "fft2": h.measure(lambda: np.fft.fft2(images), **timing)},
            "versions": h.versions("numpy")}


WORKERS = {"gradlab": worker_gradlab, "torch": worker_torch, "numpy": worker_numpy}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=5, min_time=0.05)
    return p


def collect(opts: argparse.Namespace) -> dict:
    return h.run_contestants(__file__, list(WORKERS), h.passed_on(opts), rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    sec = h.Section(f"Fourier transforms: gradlab.fft vs torch.fft ({opts.device}, float32)")
    tab = h.Table(["case", "gradlab", "PyTorch", "NumPy (forward only)", "gradlab/PyTorch",
                   "gradlab/NumPy"])
    for case, label in CASES.items():
        g, t, n = (h.case_time(results[k], case) for k in ("gradlab", "torch", "numpy"))
        tab.add(label, h.status_cell(results["gradlab"], case, "ms"),
                h.status_cell(results["torch"], case, "ms"),
                h.status_cell(results["numpy"], case, "ms"), h.fmt_ratio(g, t),
                h.fmt_ratio(g, n))
    sec.table("Time per call; NumPy's column is the transforms alone, with no backward, so "
              "gradlab/NumPy for a fwd+bwd case counts the backward's transforms too:", tab)
    return h.close_section(sec, results, opts, "Each column runs in its own process.")


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
