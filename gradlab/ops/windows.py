"""Window functions: ``hann_window``, ``hamming_window``, ``blackman_window``,
``bartlett_window``, ``kaiser_window``.

A window is a 1-D taper, 0 (or nearly) at the ends and 1 in the middle, that
a signal is multiplied by before a Fourier transform so that its cut-off
ends don't smear the spectrum. Each is a formula in ``n = 0 .. N - 1``:

    hamming   alpha - beta · cos(2πn / (N - 1))        (alpha 0.54, beta 0.46)
    hann      the hamming formula with alpha = beta = 0.5
    blackman  0.42 - 0.5 · cos(2πn / (N - 1)) + 0.08 · cos(4πn / (N - 1))
    bartlett  1 - |2n / (N - 1) - 1|                   (a triangle)
    kaiser    I0(beta · sqrt(1 - ((n - a) / a)²)) / I0(beta),  a = (N - 1) / 2

``periodic=True`` (the default, as in PyTorch) is for spectral analysis: the
window is computed for ``N + 1`` points and the last is dropped, so copies
of it laid end to end repeat with period ``N``. ``periodic=False`` gives the
symmetric window (both ends equal), the one filter design wants. A window of
length 1 is ``[1.]``; of length 0, empty.

The values are computed in float64 on the host, then cast to ``dtype`` (a
floating dtype; the default dtype if not given). Nothing here records a graph.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from .creation import _on_device

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]
TENSOR_METHODS: list = []


def _window(op: str, window_length: int, periodic: bool, formula, dtype, device,
            requires_grad) -> Tensor:
    """Check the arguments, evaluate ``formula(n, N)`` at n = 0 .. N - 1, cast, place."""
    dtype = _dt.to_dtype(dtype or _dt.get_default_dtype())
    if not dtype.is_floating_point:
        raise RuntimeError(f"{op} expects floating point dtypes, got {dtype}: a window holds "
                           "fractions between 0 and 1. Fix: dtype=gradlab.float32 (or leave "
                           "dtype out), and convert the result afterwards if you must")
    if isinstance(window_length, bool) or not isinstance(window_length, (int, np.integer)):
        raise TypeError(f"{op}: window_length must be an int, got "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{op} requires non-negative window_length, got "
                           f"window_length={window_length}")
    length = int(window_length)
    if length <= 1:  # [] or [1.]: the formulas would divide by N - 1 = 0
        values = np.ones(length, dtype=np.float64)
    else:
        points = length + 1 if periodic else length
        values = formula(np.arange(points, dtype=np.float64), points)[:length]
    return _on_device(values.astype(dtype.np), device, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """``alpha - beta · cos(2πn / (N - 1))``: a raised cosine that stops short of 0 at the
    ends (0.08 with the defaults), which cancels the nearest side lobe of the spectrum."""
    alpha, beta = float(alpha), float(beta)
    return _window("hamming_window", window_length, periodic,
                   lambda n, N: alpha - beta * np.cos(2 * np.pi * n / (N - 1)),
                   dtype, device, requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                requires_grad: bool = False) -> Tensor:
    """``0.5 - 0.5 · cos(2πn / (N - 1))`` = sin²(πn / (N - 1)): a raised cosine that reaches 0
    at the ends (hamming_window with alpha = beta = 0.5)."""
    return _window("hann_window", window_length, periodic,
                   lambda n, N: 0.5 - 0.5 * np.cos(2 * np.pi * n / (N - 1)),
                   dtype, device, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """``0.42 - 0.5 · cos(2πn / (N - 1)) + 0.08 · cos(4πn / (N - 1))``: a second cosine term
    pushes the side lobes lower than hann's, for a wider main lobe."""
    def formula(n, N):
        angle = np.pi * n / (N - 1)
        return 0.42 - 0.5 * np.cos(2 * angle) + 0.08 * np.cos(4 * angle)

    return _window("blackman_window", window_length, periodic, formula, dtype, device,
                   requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """``1 - |2n / (N - 1) - 1|``: a triangle from 0 up to 1 in the middle and back to 0."""
    return _window("bartlett_window", window_length, periodic,
                   lambda n, N: 1 - np.abs(2 * n / (N - 1) - 1), dtype, device, requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``I0(beta · sqrt(1 - ((n - a) / a)²)) / I0(beta)`` with a = (N - 1) / 2 and I0 the
    modified Bessel function of order 0: ``beta`` trades main-lobe width (larger: wider)
    against side-lobe height (larger: lower); beta = 0 is the rectangle of ones."""
    beta = float(beta)

    def formula(n, N):
        half = (N - 1) / 2
        inside = np.clip(1 - ((n - half) / half) ** 2, 0, None)  # rounding can dip below 0
        return np.i0(beta * np.sqrt(inside)) / np.i0(beta)

    return _window("kaiser_window", window_length, periodic, formula, dtype, device,
                   requires_grad)
