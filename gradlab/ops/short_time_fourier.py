"""The short-time Fourier transform, ``stft``, and its inverse, ``istft`` (PyTorch's).

A spectrogram asks *when* each frequency sounds: cut the signal into frames
of ``n_fft`` samples, ``hop_length`` apart, weight each by a ``window`` (a
Hann window tapers the frame's ends, so its edges don't ring), and take each
frame's DFT. The result has one column per frame and one row per frequency
bin: shape (freq, frames), or (batch, freq, frames).

    stft:   pad (center) → frames (unfold) → × window → rfft (or fft)
    istft:  irfft (or ifft) → × window → overlap-add → ÷ Σ window² → trim

Both are compositions of differentiable ops (the frames are a view made by
``unfold``; overlap-add is its backward op, ``unfold_backward``), so their
gradients need no formula of their own. ``istft`` undoes ``stft`` when the
windows' squares add up to something nonzero everywhere (the "NOLA"
condition: a Hann window with hop n_fft/4 does); it refuses otherwise.

As in PyTorch: ``center=True`` pads n_fft/2 samples at each end (``pad_mode``
'reflect' by default) so that frame t is centred on sample t·hop;
``normalized=True`` scales by n_fft^-1/2; a real signal gives the one-sided
n_fft/2 + 1 bins unless ``onesided=False``; ``return_complex=True`` must be
said for a real signal (False gives the real pairs, ``view_as_real``).
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..tensor import Tensor
from .complex_parts import view_as_complex, view_as_real
from .creation import ones
from .fourier import FftC2C, FftC2R, FftR2C
from .padding import pad
from .sliding_windows import UnfoldBackward

__all__ = ["stft", "istft"]
TENSOR_METHODS = ["stft", "istft"]


def _window(op: str, window, win_length: int, n_fft: int, like: Tensor) -> Tensor:
    """The window, zero-padded on both sides to n_fft values (PyTorch's placement)."""
    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    elif not isinstance(window, Tensor) or window.ndim != 1 or window.shape[0] != win_length:
        shape = tuple(window.shape) if isinstance(window, Tensor) else type(window).__name__
        raise RuntimeError(f"{op}: window must be a 1-D tensor of win_length={win_length} "
                           f"values, got {shape}. Fix: e.g. gradlab.hann_window({win_length})")
    left = (n_fft - win_length) // 2
    return pad(window, (left, n_fft - win_length - left)) if win_length < n_fft else window


def _lengths(op: str, n_fft: int, hop_length, win_length) -> tuple[int, int]:
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if n_fft <= 0 or hop <= 0 or not 0 < win <= n_fft:
        raise RuntimeError(f"{op}: expected n_fft > 0, hop_length > 0 and 0 < win_length <= "
                           f"n_fft, got n_fft={n_fft}, hop_length={hop}, win_length={win}")
    return hop, win


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None) -> Tensor:
    """The spectrogram of a signal (L,) or of a batch (B, L): shape (freq, frames) or
    (B, freq, frames), complex. See the module docstring for the arguments."""
    op = "stft"
    if not isinstance(input, Tensor) or input.ndim not in (1, 2):
        shape = tuple(input.shape) if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"{op}: expected a 1-D signal (L,) or a batch of them (B, L), got "
                           f"{shape}")
    if return_complex is None and not input.dtype.is_complex:
        raise RuntimeError(
            f"{op} requires the return_complex parameter be given for real inputs (as "
            "PyTorch). Fix: return_complex=True, and view_as_real(...) if you want the pairs")
    hop, win = _lengths(op, n_fft, hop_length, win_length)
    x = input if input.dtype.category >= 2 else input.to(_dt.get_default_dtype())
    if center:
        x = pad(x.unsqueeze(0), (n_fft // 2, n_fft // 2), mode=pad_mode).squeeze(0)
    if x.shape[-1] < n_fft:
        raise RuntimeError(f"{op}: the signal has {x.shape[-1]} samples (after padding) but a "
                           f"frame needs n_fft={n_fft}. Fix: a smaller n_fft, or center=True")
    frames = x.unfold(-1, n_fft, hop) * _window(op, window, win, n_fft, x)  # (..., T, n_fft)
    norm = "ortho" if normalized else "backward"
    one_sided = (not x.dtype.is_complex and not (window is not None and window.is_complex())
                 if onesided is None else onesided)
    if one_sided:
        if frames.dtype.is_complex:
            raise RuntimeError(f"{op}: onesided=True needs a real signal and window: a complex "
                               "one's spectrum is not symmetric. Fix: onesided=False")
        spectrum = FftR2C.apply(frames, (frames.ndim - 1,), norm)
    else:
        if not frames.dtype.is_complex:
            frames = frames.to(frames.dtype.to_complex())
        spectrum = FftC2C.apply(frames, (frames.ndim - 1,), False, norm)
    spectrum = spectrum.transpose(-1, -2)  # (..., freq, frames)
    return spectrum if return_complex or return_complex is None else view_as_real(spectrum)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The signal whose ``stft`` (with the same arguments) is ``input``: (freq, frames) or
    (B, freq, frames) complex (or real pairs, a last dim of 2). See the module docstring."""
    op = "istft"
    if isinstance(input, Tensor) and not input.dtype.is_complex and input.ndim >= 3 and \
            input.shape[-1] == 2:
        input = view_as_complex(input.contiguous())
    if not isinstance(input, Tensor) or not input.dtype.is_complex or input.ndim not in (2, 3):
        shape = tuple(input.shape) if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"{op}: expected a complex spectrogram (freq, frames) or (B, freq, "
                           f"frames), as stft(..., return_complex=True) makes, got {shape}")
    hop, win = _lengths(op, n_fft, hop_length, win_length)
    bins, count = input.shape[-2], input.shape[-1]
    one_sided = bins != n_fft if onesided is None else onesided
    if bins != (n_fft // 2 + 1 if one_sided else n_fft):
        raise RuntimeError(f"{op}: a {'one-sided' if one_sided else 'full'} spectrogram of "
                           f"n_fft={n_fft} has {n_fft // 2 + 1 if one_sided else n_fft} "
                           f"frequency bins, this one has {bins}")
    if one_sided and return_complex:
        raise RuntimeError(f"{op}: return_complex=True needs onesided=False (a one-sided "
                           "spectrogram stands for a real signal)")
    norm = "ortho" if normalized else "backward"
    spectra = input.transpose(-1, -2)  # (..., frames, freq)
    dims = (spectra.ndim - 1,)
    if return_complex:
        frames = FftC2C.apply(spectra, dims, True, norm)
    else:  # a real signal: from its half spectrum (the first n_fft/2 + 1 bins), as PyTorch
        half = spectra if one_sided else spectra[..., :n_fft // 2 + 1]
        frames = FftC2R.apply(half, dims, norm, n_fft)
    w = _window(op, window, win, n_fft, frames)
    full = n_fft + hop * (count - 1)
    batch = frames.shape[:-2]
    signal = UnfoldBackward.apply(frames * w, (*batch, full), len(batch), n_fft, hop)
    envelope = UnfoldBackward.apply((w * w).expand(count, n_fft).contiguous(), (full,), 0,
                                    n_fft, hop)
    start = n_fft // 2 if center else 0
    end = full - (n_fft // 2 if center else 0) if length is None else start + length
    valid = envelope[start:min(end, full)]
    if valid.numel() and float(valid.abs().min()) < 1e-11:
        raise RuntimeError(
            f"{op}: the windows' squares add up to (almost) 0 somewhere in the signal "
            f"(window overlap-add minimum {float(valid.abs().min()):.3g}), so it can't be "
            "recovered there (the NOLA condition fails). Fix: a smaller hop_length, or a "
            "window that does not vanish where frames meet (e.g. hann_window with hop n_fft/4)")
    signal = signal[..., start:min(end, full)] / valid
    if length is not None and end > full:  # asked for more than the frames cover: zeros
        signal = pad(signal, (0, end - full))
    return signal
