"""``gradlab.fft``: PyTorch's ``torch.fft`` namespace, differentiable throughout.

Transforms: ``fft``/``ifft`` (1-D), ``fft2``/``ifft2``, ``fftn``/``ifftn``;
for real signals ``rfft``/``irfft`` (and 2/n forms), which keep only the
bins 0..n/2 of a real signal's spectrum (the rest mirror them); and
``hfft``/``ihfft`` (and 2/n forms) for a signal whose *spectrum* is real.
Helpers: ``fftfreq``, ``rfftfreq``, ``fftshift``, ``ifftshift``.

Arguments are PyTorch's: ``n`` (1-D) or ``s`` (2/n-D) pads with zeros or
cuts the input to that many points before transforming (for ``irfft`` and
``hfft``, the length of the real output); ``dim`` picks the dims (the last
one, the last two, or all); ``norm`` says which direction is scaled:
``"backward"`` (the default: ``ifft`` divides by n), ``"forward"`` (``fft``
does) or ``"ortho"`` (both by √n, so the transform preserves energy).

Every function here is built from three ops (:mod:`gradlab.ops.fourier`,
where their gradients are explained), so graphs show ``fft_c2c``,
``fft_r2c`` and ``fft_c2r`` nodes, the names PyTorch gives them too.
Real or integer input to ``fft`` is made complex first (float64 gives
complex128, anything else complex64); half floats are transformed in float32.
"""

from __future__ import annotations

import math

from . import dtypes as _dt
from .ops._util import wrap_dim
from .ops.complex_parts import conj
from .ops.creation import arange
from .ops.fourier import DUAL_NORM, NORMS, FftC2C, FftC2R, FftR2C, resized
from .ops.reordering import roll
from .tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]


# --- arguments ---------------------------------------------------------------------------------

def _norm(op: str, norm) -> str:
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise ValueError(f"{op}: norm must be one of 'backward', 'forward' and 'ortho' (or "
                         f"None, meaning 'backward'), got {norm!r}")
    return norm


def _checked_input(op: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if x.ndim == 0:
        raise RuntimeError(f"{op}: expected a tensor with at least one dim, got a 0-d tensor. "
                           "Fix: x.reshape(1), or transform a signal of several values")
    if x.dtype.category < 2:  # bool and integers: the default float dtype, as PyTorch
        x = x.to(_dt.get_default_dtype())
    elif x.dtype in (_dt.float16, _dt.bfloat16):  # NumPy has no half-precision FFT
        x = x.to(_dt.float32)
    return x


def _complex_input(op: str, x) -> Tensor:
    x = _checked_input(op, x)
    return x if x.dtype.is_complex else x.to(x.dtype.to_complex())


def _real_input(op: str, x) -> Tensor:
    x = _checked_input(op, x)
    if x.dtype.is_complex:
        raise RuntimeError(
            f"{op} expects a real input tensor, but got {x.dtype} with shape "
            f"{tuple(x.shape)}: its output keeps half the spectrum, which only a real "
            f"signal's spectrum determines. Fix: use the full transform "
            f"({op.replace('rfft', 'fft').replace('ihfft', 'ifft')}) for complex signals")
    return x


def _dims_and_sizes(op: str, x: Tensor, s, dim, default_dims) -> tuple[tuple, list]:
    """The dims to transform and the number of points along each (None: as they are)."""
    if dim is None:
        if s is None:
            dims = default_dims if default_dims is not None else tuple(range(x.ndim))
        else:
            dims = tuple(range(x.ndim - len(s), x.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(wrap_dim(d, x.ndim, op) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dims must be distinct, got {dim}")
    if s is None:
        return dims, [None] * len(dims)
    s = [s] if isinstance(s, int) else list(s)
    if len(s) != len(dims):
        raise RuntimeError(f"{op}: s has {len(s)} sizes but dim names {len(dims)} dims "
                           f"({tuple(dims)}); give one size per dim")
    for size in s:
        if size is not None and size != -1 and size < 1:
            raise RuntimeError(f"{op}: invalid number of data points ({size}) specified; "
                               "each size must be at least 1 (or -1: the dim as it is)")
    return dims, [None if size in (None, -1) else int(size) for size in s]


def _one_dim(n, dim) -> tuple:
    """A 1-D transform's ``n`` and ``dim`` as an n-D one's ``s`` and ``dim``."""
    return (None if n is None else (n,)), (dim,)


def _resized(x: Tensor, dims, sizes) -> Tensor:
    for d, size in zip(dims, sizes):
        if size is not None:
            x = resized(x, d, size)
    return x


# --- complex to complex ------------------------------------------------------------------------

def _c2c(op: str, input, s, dim, norm, inverse: bool, default_dims=None) -> Tensor:
    x = _complex_input(op, input)
    dims, sizes = _dims_and_sizes(op, x, s, dim, default_dims)
    return FftC2C.apply(_resized(x, dims, sizes), dims, inverse, _norm(op, norm))


def fftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The n-dimensional DFT over ``dim`` (all dims by default)."""
    return _c2c("fftn", input, s, dim, norm, inverse=False)


def ifftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of ``fftn``."""
    return _c2c("ifftn", input, s, dim, norm, inverse=True)


def fft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The DFT of the signal along ``dim``: ``X[k] = Σ_t x[t] e^(-2πi·kt/n)``."""
    return _c2c("fft", input, *_one_dim(n, dim), norm, inverse=False)


def ifft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse DFT along ``dim``: ``x[t] = (1/n) Σ_k X[k] e^(2πi·kt/n)``."""
    return _c2c("ifft", input, *_one_dim(n, dim), norm, inverse=True)


def fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The 2-D DFT over the last two dims (an image's spectrum)."""
    return _c2c("fft2", input, s, dim, norm, inverse=False)


def ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The inverse of ``fft2``."""
    return _c2c("ifft2", input, s, dim, norm, inverse=True)


# --- real signals: half spectra ----------------------------------------------------------------

def _r2c(op: str, input, s, dim, norm) -> Tensor:
    x = _real_input(op, input)
    dims, sizes = _dims_and_sizes(op, x, s, dim, None)
    return FftR2C.apply(_resized(x, dims, sizes), dims, _norm(op, norm))


def _c2r(op: str, input, s, dim, norm) -> Tensor:
    x = _complex_input(op, input)
    dims, sizes = _dims_and_sizes(op, x, s, dim, None)
    last = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(
            f"{op}: invalid number of data points ({last}) specified: a half spectrum of "
            f"{x.shape[dims[-1]]} bin(s) along dim {dims[-1]} gives no signal. Fix: pass the "
            "signal's length, e.g. n= or s=")
    x = _resized(x, dims, sizes[:-1] + [last // 2 + 1])
    return FftC2R.apply(x, dims, _norm(op, norm), last)


def rfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The DFT of a real signal over ``dim``, keeping bins 0..n/2 of the last dim (the
    others are their mirror images' conjugates)."""
    return _r2c("rfftn", input, s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The real signal whose half spectrum (from ``rfftn``) is ``input``. Its length along
    the last dim is ``s[-1]``, by default 2·(bins - 1): pass it for odd lengths."""
    return _c2r("irfftn", input, s, dim, norm)


def rfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The DFT of a real signal along ``dim``: bins 0..n/2 (n//2 + 1 values)."""
    return _r2c("rfft", input, *_one_dim(n, dim), norm)


def irfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The real signal of length ``n`` (default 2·(bins - 1)) with half spectrum ``input``."""
    return _c2r("irfft", input, *_one_dim(n, dim), norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``rfftn`` over the last two dims."""
    return _r2c("rfft2", input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``irfftn`` over the last two dims."""
    return _c2r("irfft2", input, s, dim, norm)


# --- Hermitian signals: a real spectrum --------------------------------------------------------
# hfft is irfft of the conjugate with the dual norm: the DFT of a Hermitian signal is the
# conjugate of its inverse DFT times n, and ihfft is conj(rfft) likewise.

def _hermitian(op: str, input, s, dim, norm) -> Tensor:
    return _c2r(op, conj(_complex_input(op, input)), s, dim, DUAL_NORM[_norm(op, norm)])


def _inverse_hermitian(op: str, input, s, dim, norm) -> Tensor:
    return conj(_r2c(op, input, s, dim, DUAL_NORM[_norm(op, norm)]))


def hfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The (real) DFT of a signal with Hermitian symmetry, given by its first half."""
    return _hermitian("hfftn", input, s, dim, norm)


def ihfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of ``hfftn``: the half of a real signal's inverse DFT that determines
    the rest."""
    return _inverse_hermitian("ihfftn", input, s, dim, norm)


def hfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """``hfftn`` along one dim: a real output of ``n`` (default 2·(m - 1)) points."""
    return _hermitian("hfft", input, *_one_dim(n, dim), norm)


def ihfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """``ihfftn`` along one dim."""
    return _inverse_hermitian("ihfft", input, *_one_dim(n, dim), norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``hfftn`` over the last two dims."""
    return _hermitian("hfft2", input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``ihfftn`` over the last two dims."""
    return _inverse_hermitian("ihfft2", input, s, dim, norm)


# --- helpers -----------------------------------------------------------------------------------

def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """The frequency of each bin of an ``n``-point ``fft`` for samples ``d`` apart:
    ``[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d·n)``."""
    _check_frequency_arguments(n, d)
    k = arange(n, dtype=_dt.int64, device=device)
    k = (k + n // 2) % n - n // 2  # the second half of the bins are negative frequencies
    return _frequencies(k, n, d, dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """The frequency of each bin of an ``n``-point ``rfft``: ``[0, 1, ..., n//2] / (d·n)``."""
    _check_frequency_arguments(n, d)
    return _frequencies(arange(n // 2 + 1, dtype=_dt.int64, device=device), n, d, dtype,
                        requires_grad)


def _check_frequency_arguments(n: int, d: float) -> None:
    if not isinstance(n, int) or n < 1 or not math.isfinite(d) or d == 0:
        raise RuntimeError(f"fftfreq: n must be an integer of at least 1 and d a finite, "
                           f"nonzero spacing, got n={n!r}, d={d!r}")


def _frequencies(k: Tensor, n: int, d: float, dtype, requires_grad: bool) -> Tensor:
    out = (k.to(dtype if dtype is not None else _dt.get_default_dtype()) / (d * n))
    return out.requires_grad_() if requires_grad else out


def fftshift(input, dim=None) -> Tensor:
    """Reorder the bins of an ``fft`` so that frequency 0 is in the middle (a roll by n//2
    along ``dim``, every dim by default), as spectra are usually drawn."""
    return _shift(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None) -> Tensor:
    """Undo ``fftshift`` (a roll by -(n//2); the two differ for odd n)."""
    return _shift(input, dim, lambda n: -(n // 2))


def _shift(input, dim, amount) -> Tensor:
    dims = tuple(range(input.ndim)) if dim is None else \
        ((dim,) if isinstance(dim, int) else tuple(dim))
    if not dims:
        return input
    return roll(input, [amount(input.shape[d]) for d in dims], dims)
