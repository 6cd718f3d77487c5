"""stft and istft: spectrograms against PyTorch (values, and gradients for the signal, the
window and the spectrogram), round trips, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.autograd import gradcheck
from tests.oracle import needs_torch, torch

CASES = [
    dict(n_fft=16),
    dict(n_fft=16, hop_length=5, win_length=12),
    dict(n_fft=15, normalized=True),
    dict(n_fft=8, onesided=False),
    dict(n_fft=16, pad_mode="constant"),
    dict(n_fft=16, hop_length=3, win_length=10, center=False),
]
INVERTIBLE = [c for c in CASES if c.get("center", True)]  # (the last one fails NOLA)


def _signal(shape=(2, 50), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _run(lib, data, kw, inverse=True):
    x = lib.tensor(data, requires_grad=True)
    win = lib.hann_window(kw.get("win_length", kw["n_fft"]), dtype=lib.float64)
    win.requires_grad_()
    spec = lib.stft(x, window=win, return_complex=True, **kw)
    shape = tuple(spec.shape)
    weights = lib.tensor(np.cos(np.arange(np.prod(shape))).reshape(shape) * (1 - 0.5j))
    (spec * weights).real.sum().backward()
    out = [spec, x.grad, win.grad]
    if inverse:
        s = spec.detach().requires_grad_()
        back = lib.istft(s, window=win.detach(), length=data.shape[-1],
                         **{k: v for k, v in kw.items() if k != "pad_mode"})
        (back * lib.tensor(np.sin(np.arange(back.numel())).reshape(tuple(back.shape)))).sum() \
            .backward()
        out += [back, s.grad]
    return [t.detach().resolve_conj().numpy() if lib is torch else t.detach().numpy()
            for t in out]


@needs_torch
@pytest.mark.parametrize("kw", CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_matches_torch(kw):
    data = _signal()
    inverse = kw in INVERTIBLE
    for ours, theirs in zip(_run(gradlab, data, kw, inverse), _run(torch, data, kw, inverse)):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("kw", INVERTIBLE, ids=lambda kw: ",".join(f"{k}={v}" for k, v in
                                                                    kw.items()))
def test_istft_undoes_stft(kw):
    x = gradlab.tensor(_signal((3, 64), seed=1))
    win = gradlab.hann_window(kw.get("win_length", kw["n_fft"]), dtype=gradlab.float64)
    spec = gradlab.stft(x, window=win, return_complex=True, **kw)
    back = gradlab.istft(spec, window=win, length=64,
                         **{k: v for k, v in kw.items() if k != "pad_mode"})
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-12)


def test_shapes_and_forms():
    x = gradlab.randn(100)
    spec = x.stft(32, window=gradlab.hann_window(32), return_complex=True)
    assert spec.shape == (17, 100 // 8 + 1) and spec.dtype is gradlab.complex64
    pairs = gradlab.stft(x, 32, window=gradlab.hann_window(32), return_complex=False)
    assert pairs.shape == (17, 13, 2)
    back = gradlab.istft(pairs, 32, window=gradlab.hann_window(32), length=100)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-5)
    z = gradlab.randn(2, 40, dtype=gradlab.complex128)  # complex signals: the full spectrum
    spec = gradlab.stft(z, 8, window=gradlab.hann_window(8, dtype=gradlab.float64),
                        return_complex=True)
    assert spec.shape == (2, 8, 21)  # 40 samples, hop 8 // 4 = 2: 21 frames
    back = gradlab.istft(spec, 8, window=gradlab.hann_window(8, dtype=gradlab.float64),
                         length=40, return_complex=True)
    np.testing.assert_allclose(back.numpy(), z.numpy(), atol=1e-12)


def test_gradcheck():
    x = gradlab.tensor(_signal((1, 20), seed=2), requires_grad=True)
    win = gradlab.hann_window(8, dtype=gradlab.float64)
    assert gradcheck(lambda t: gradlab.stft(t, 8, hop_length=3, window=win,
                                            return_complex=True), (x,))
    spec = gradlab.stft(x.detach(), 8, window=win, return_complex=True).requires_grad_()
    assert gradcheck(lambda s: gradlab.istft(s, 8, window=win, length=20), (spec,))


def test_errors_teach():
    x = gradlab.randn(40)
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        gradlab.stft(x, 8)
    with pytest.raises(RuntimeError, match=r"window must be a 1-D tensor of win_length=8"):
        gradlab.stft(x, 8, window=gradlab.ones(6), return_complex=True)
    with pytest.raises(RuntimeError, match="NOLA"):
        spec = gradlab.stft(x, 8, hop_length=8, window=gradlab.hann_window(8),
                            return_complex=True)
        gradlab.istft(spec, 8, hop_length=8, window=gradlab.hann_window(8))
    with pytest.raises(RuntimeError, match="has 5 frequency bins, this one has 9"):
        gradlab.istft(gradlab.stft(x, 16, return_complex=True), 8)
    with pytest.raises(RuntimeError, match=r"expected a 1-D signal \(L,\) or a batch"):
        gradlab.stft(gradlab.randn(2, 2, 40), 8, return_complex=True)
