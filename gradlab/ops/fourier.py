"""The discrete Fourier transform as three differentiable ops (the public names, fft,
rfft, irfft, hfft ..., are in :mod:`gradlab.fft`).

Every transform in ``gradlab.fft`` is one of three ops, as in PyTorch:

* ``FftC2C``: complex to complex, forward (``fft``) or inverse (``ifft``);
* ``FftR2C``: real to the non-redundant half of its spectrum (``rfft``);
* ``FftC2R``: such a half spectrum back to a real signal (``irfft``).

Each is *linear*, so its gradient is its adjoint applied to the incoming
gradient. The DFT matrix F is symmetric and F·conj(F) = n·I, so the adjoint
of a transform is the other direction with the *dual* normalisation
("backward" <-> "forward", "ortho" <-> "ortho"):

    y = fft(x, norm)        grad_x = ifft(grad_y, dual(norm))

(``norm`` says which direction carries the 1/n: "backward", the default,
puts it on the inverse.) The real transforms add two twists:

* ``rfft`` keeps bins 0..n/2 of a real signal's spectrum: its adjoint pads the
  gradient with zeros back to n bins, inverts, and keeps the real part (a
  real input can only move in real directions).
* ``irfft`` treats each bin 0 < k < n/2 as standing for itself *and* its
  mirror n-k (conj of it), so its adjoint, an rfft, counts those bins twice.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.function import Function
from ._util import xp_for

__all__: list = []  # the public functions are gradlab.fft's
TENSOR_METHODS: list = []

NORMS = ("backward", "ortho", "forward")
DUAL_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


class FftC2C(Function):
    """The complex DFT over ``dims`` (its inverse if ``inverse``).
    Backward: the opposite direction with the dual norm."""

    name, node_name = "fft_c2c", "FftC2CBackward0"
    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, dims, inverse, norm):
        ctx.dims, ctx.inverse, ctx.norm = dims, inverse, norm
        xp = xp_for(a)
        transform = xp.fft.ifftn if inverse else xp.fft.fftn
        return transform(a, axes=dims, norm=norm).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return FftC2C.apply(grad, ctx.dims, not ctx.inverse, DUAL_NORM[ctx.norm]), None, None, None


class FftR2C(Function):
    """The spectrum of a real signal over ``dims``, bins 0..n/2 of the last of them.
    Backward: pad the gradient to n bins, inverse DFT (dual norm), real part."""

    name, node_name = "fft_r2c", "FftR2CBackward0"
    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, dims, norm):
        ctx.dims, ctx.norm = dims, norm
        ctx.last_size = a.shape[dims[-1]]
        out = xp_for(a).fft.rfftn(a, axes=dims, norm=norm)
        return out.astype(_dt.from_numpy_dtype(a.dtype).to_complex().np, copy=False)

    @staticmethod
    def backward(ctx, grad):
        full = resized(grad, ctx.dims[-1], ctx.last_size)  # the missing bins: zeros
        return FftC2C.apply(full, ctx.dims, True, DUAL_NORM[ctx.norm]).real, None, None


class FftC2R(Function):
    """A real signal of ``last_size`` values along the last of ``dims`` from its half
    spectrum (bins 0..last_size/2). Backward: the rfft of the gradient (dual norm), with
    the bins that stand for a mirrored pair counted twice."""

    name, node_name = "fft_c2r", "FftC2RBackward0"
    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, dims, norm, last_size):
        ctx.dims, ctx.norm, ctx.last_size = dims, norm, last_size
        sizes = [a.shape[d] for d in dims[:-1]] + [last_size]
        out = xp_for(a).fft.irfftn(a, s=sizes, axes=dims, norm=norm)
        return out.astype(_dt.from_numpy_dtype(a.dtype).to_real().np, copy=False)

    @staticmethod
    def backward(ctx, grad):
        n, dim = ctx.last_size, ctx.dims[-1]
        spectrum = FftR2C.apply(grad, ctx.dims, DUAL_NORM[ctx.norm])
        xp = xp_for(spectrum._data)
        bins = spectrum.shape[dim]
        twice = xp.ones(bins, dtype=spectrum._data.real.dtype)
        twice[1:(n + 1) // 2] = 2  # bins 0 < k < n/2: each stands for k and n - k
        shape = [1] * spectrum.ndim
        shape[dim] = bins
        from .creation import as_tensor

        return spectrum * as_tensor(twice.reshape(shape), device=grad.device), None, None, None


def resized(x, dim: int, size: int):
    """``x`` cut or zero-padded at the end of ``dim`` to ``size`` values, as the ``n=``
    and ``s=`` arguments of the transforms ask (one constant_pad_nd op: it crops too)."""
    have = x.shape[dim]
    if have == size:
        return x
    from .padding import ConstantPadNd

    pads = tuple((0, size - have) if d == dim else (0, 0) for d in range(x.ndim))
    return ConstantPadNd.apply(x, pads, 0)
