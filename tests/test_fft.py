"""gradlab.fft: values and gradients against PyTorch, and against finite differences.

Each row calls one transform with its arguments (``n``/``s``, ``dim``, ``norm``)
on a real ("r") or complex ("c") signal. The gradient checks matter most for
the real transforms, whose adjoints pad (rfft) or count mirrored bins twice
(irfft): see ``gradlab/ops/fourier.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import events
from gradlab.autograd import gradcheck, gradgradcheck
from tests.oracle import needs_torch, torch

ROWS = [  # (id, fn(lib, x), input shape, "r" or "c")
    ("fft", lambda L, x: L.fft.fft(x), (3, 6), "c"),
    ("fft_real_input", lambda L, x: L.fft.fft(x, dim=0), (3, 4), "r"),
    ("fft_n_pad", lambda L, x: L.fft.fft(x, n=8, norm="ortho"), (2, 5), "c"),
    ("fft_n_cut", lambda L, x: L.fft.fft(x, n=3, norm="forward"), (2, 5), "c"),
    ("ifft", lambda L, x: L.fft.ifft(x, dim=0), (4, 3), "c"),
    ("fft2", lambda L, x: L.fft.fft2(x), (2, 3, 4), "c"),
    ("ifft2_s", lambda L, x: L.fft.ifft2(x, s=(2, 5), norm="ortho"), (3, 4), "c"),
    ("fftn_all", lambda L, x: L.fft.fftn(x), (2, 3, 2), "c"),
    ("fftn_s", lambda L, x: L.fft.fftn(x, s=(4, -1), dim=(0, 2)), (2, 3, 2), "c"),
    ("ifftn", lambda L, x: L.fft.ifftn(x, norm="forward"), (3, 2), "c"),
    ("rfft", lambda L, x: L.fft.rfft(x), (3, 6), "r"),
    ("rfft_odd", lambda L, x: L.fft.rfft(x, n=5, norm="ortho"), (2, 6), "r"),
    ("rfft_dim0", lambda L, x: L.fft.rfft(x, dim=0, norm="forward"), (5, 2), "r"),
    ("irfft", lambda L, x: L.fft.irfft(x), (3, 4), "c"),
    ("irfft_odd", lambda L, x: L.fft.irfft(x, n=7), (2, 4), "c"),
    ("irfft_pad", lambda L, x: L.fft.irfft(x, n=12, norm="ortho"), (2, 4), "c"),
    ("irfft_forward", lambda L, x: L.fft.irfft(x, n=4, dim=0, norm="forward"), (3, 2), "c"),
    ("rfft2", lambda L, x: L.fft.rfft2(x), (2, 4, 5), "r"),
    ("irfft2", lambda L, x: L.fft.irfft2(x, s=(3, 5)), (2, 3, 3), "c"),
    ("rfftn", lambda L, x: L.fft.rfftn(x, norm="ortho"), (3, 2, 4), "r"),
    ("irfftn", lambda L, x: L.fft.irfftn(x, dim=(0, 1)), (3, 3, 2), "c"),
    ("hfft", lambda L, x: L.fft.hfft(x), (2, 4), "c"),
    ("hfft_odd", lambda L, x: L.fft.hfft(x, n=5, norm="ortho"), (2, 4), "c"),
    ("ihfft", lambda L, x: L.fft.ihfft(x), (2, 6), "r"),
    ("hfft2", lambda L, x: L.fft.hfft2(x, s=(3, 5)), (3, 3), "c"),
    ("ihfft2", lambda L, x: L.fft.ihfft2(x, norm="forward"), (3, 4), "r"),
    ("hfftn", lambda L, x: L.fft.hfftn(x), (2, 2, 3), "c"),
    ("ihfftn", lambda L, x: L.fft.ihfftn(x, dim=(0, 2)), (2, 3, 4), "r"),
    ("fftshift", lambda L, x: L.fft.fftshift(x), (3, 4), "c"),
    ("ifftshift", lambda L, x: L.fft.ifftshift(x, dim=1), (3, 5), "c"),
    ("roundtrip", lambda L, x: L.fft.irfft(L.fft.rfft(x) * L.fft.rfft(x), n=5), (2, 5), "r"),
]


def _signal(shape, kind, seed=0, double=True):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape)
    if kind == "c":
        values = values + 1j * rng.standard_normal(shape)
        return values.astype(np.complex128 if double else np.complex64)
    return values.astype(np.float64 if double else np.float32)


def _host(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().cpu().numpy()


@needs_torch
@pytest.mark.parametrize("double", [True, False], ids=["double", "single"])
@pytest.mark.parametrize("case", ROWS, ids=[r[0] for r in ROWS])
def test_matches_torch(case, double, device):
    _, fn, shape, kind = case
    data = _signal(shape, kind, double=double)
    x = gradlab.tensor(data, requires_grad=True, device=device)
    xt = torch.from_numpy(data.copy()).requires_grad_()
    y, yt = fn(gradlab, x), fn(torch, xt)
    assert tuple(y.shape) == tuple(yt.shape)
    assert y.dtype.name == str(yt.dtype)[6:]
    tol = dict(rtol=1e-9, atol=1e-10) if double else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_host(y), _host(yt), **tol)
    rng = np.random.default_rng(1)
    cot = rng.standard_normal(tuple(yt.shape))
    if yt.is_complex():
        cot = cot + 1j * rng.standard_normal(tuple(yt.shape))
    (g,) = gradlab.autograd.grad(y, x, gradlab.tensor(cot, dtype=y.dtype, device=device))
    (gt,) = torch.autograd.grad(yt, xt, torch.from_numpy(cot).to(yt.dtype))
    assert g.dtype is x.dtype
    np.testing.assert_allclose(_host(g), _host(gt), **tol)


@pytest.mark.parametrize("case", ROWS, ids=[r[0] for r in ROWS])
def test_gradcheck(case, device):
    _, fn, shape, kind = case
    x = gradlab.tensor(_signal(shape, kind), requires_grad=True, device=device)
    assert gradcheck(lambda t: fn(gradlab, t), (x,))


@pytest.mark.parametrize("case", ROWS, ids=[r[0] for r in ROWS])
def test_forward_mode_matches_finite_differences(case):
    import gradlab.autograd.forward_ad as fwAD

    _, fn, shape, kind = case
    data, direction = _signal(shape, kind), _signal(shape, kind, seed=5)
    with fwAD.dual_level():
        dual = fwAD.make_dual(gradlab.tensor(data), gradlab.tensor(direction))
        tangent = fwAD.unpack_dual(fn(gradlab, dual)).tangent
    h = 1e-6
    want = (fn(gradlab, gradlab.tensor(data + h * direction)).numpy() -
            fn(gradlab, gradlab.tensor(data - h * direction)).numpy()) / (2 * h)
    np.testing.assert_allclose(tangent.numpy(), want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", [r for r in ROWS if r[0] in
                                  ("fft_n_pad", "rfft_odd", "irfft_odd", "irfft2", "hfft",
                                   "ihfft", "roundtrip")], ids=lambda r: r[0])
def test_gradgradcheck(case):
    _, fn, shape, kind = case
    x = gradlab.tensor(_signal(shape, kind), requires_grad=True)
    assert gradgradcheck(lambda t: fn(gradlab, t), (x,))


@pytest.mark.parametrize("n", [6, 7])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_inverses_undo_their_transforms(n, norm):
    x = gradlab.tensor(_signal((3, n), "r"))
    z = gradlab.tensor(_signal((3, n), "c"))
    np.testing.assert_allclose(gradlab.fft.irfft(gradlab.fft.rfft(x, norm=norm), n=n,
                                                 norm=norm).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(gradlab.fft.ifft(gradlab.fft.fft(z, norm=norm),
                                                norm=norm).numpy(), z.numpy(), atol=1e-12)
    np.testing.assert_allclose(gradlab.fft.ihfft(gradlab.fft.hfft(z, n=n, norm=norm),
                                                 norm=norm).numpy(),
                               gradlab.fft.ihfft(gradlab.fft.hfft(z, n=n, norm=norm),
                                                 norm=norm).numpy())
    assert gradlab.fft.fftshift(gradlab.fft.ifftshift(z)).tolist() == z.tolist()


def test_the_spectrum_of_a_sine_has_its_peak_at_its_frequency():
    """A student's first check: 5 cycles in 64 samples put all the energy in bin 5."""
    t = gradlab.arange(64, dtype=gradlab.float64)
    x = (2 * np.pi * 5 * t / 64).sin()
    spectrum = gradlab.fft.rfft(x).abs()
    assert int(spectrum.argmax()) == 5
    np.testing.assert_allclose(float(spectrum[5]), 32.0, rtol=1e-12)  # n/2 for amplitude 1
    freqs = gradlab.fft.rfftfreq(64, d=1 / 64)
    assert float(freqs[int(spectrum.argmax())]) == 5.0


@needs_torch
@pytest.mark.parametrize("n, d", [(1, 1.0), (6, 0.5), (7, 2.0)])
def test_frequencies_match_torch(n, d):
    for name in ("fftfreq", "rfftfreq"):
        ours, theirs = getattr(gradlab.fft, name)(n, d), getattr(torch.fft, name)(n, d)
        assert ours.dtype is gradlab.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    assert gradlab.fft.fftfreq(4, dtype=gradlab.float64).dtype is gradlab.float64


def test_integer_signals_become_complex64():
    x = gradlab.arange(4)
    assert gradlab.fft.fft(x).dtype is gradlab.complex64
    assert gradlab.fft.rfft(x).dtype is gradlab.complex64
    assert gradlab.fft.fft(x.double()).dtype is gradlab.complex128
    for half in (gradlab.float16, gradlab.bfloat16):  # transformed in float32
        assert gradlab.fft.rfft(x.to(half)).dtype is gradlab.complex64
        assert gradlab.fft.irfft(gradlab.fft.rfft(x.to(half)), n=4).tolist() == [0, 1, 2, 3]


def test_graphs_and_events_name_the_three_ops():
    x = gradlab.randn(8, requires_grad=True)
    seen = []
    with events.subscribe(lambda e: seen.append(e.op) if isinstance(e, events.OpForward)
                          else None):
        y = gradlab.fft.irfft(gradlab.fft.fft(gradlab.fft.rfft(x)).conj()[:5], n=8)
    assert [op for op in seen if op.startswith("fft")] == ["fft_r2c", "fft_c2c", "fft_c2r"]
    assert type(y.grad_fn).__name__ == "FftC2RBackward0"


def test_errors_teach():
    x = gradlab.ones(4)
    with pytest.raises(RuntimeError, match=r"rfft expects a real input tensor.*use the full "
                                           r"transform \(fft\)"):
        gradlab.fft.rfft(x * 1j)
    with pytest.raises(RuntimeError, match=r"invalid number of data points \(0\)"):
        gradlab.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match="half spectrum of 1 bin"):
        gradlab.fft.irfft(gradlab.ones(1, dtype=gradlab.complex64))
    with pytest.raises(ValueError, match="norm must be one of"):
        gradlab.fft.fft(x, norm="unitary")
    with pytest.raises(RuntimeError, match="at least one dim, got a 0-d tensor"):
        gradlab.fft.fft(gradlab.tensor(1.0))
    with pytest.raises(RuntimeError, match="s has 1 sizes but dim names 2 dims"):
        gradlab.fft.fftn(gradlab.ones(2, 2), s=(2,), dim=(0, 1))
    with pytest.raises(RuntimeError, match="dims must be distinct"):
        gradlab.fft.fft2(gradlab.ones(2, 2), dim=(0, 0))
    with pytest.raises(IndexError, match="out of range"):
        gradlab.fft.fft(x, dim=1)
    with pytest.raises(RuntimeError, match="fftfreq: n must be an integer of at least 1"):
        gradlab.fft.fftfreq(0)
