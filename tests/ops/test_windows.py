"""Window functions: NumPy's own windows as the reference, PyTorch for the periodic forms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import needs_torch, torch

# name -> (gradlab call with keywords, NumPy's symmetric window of length n)
WINDOWS = {
    "hann_window": (lambda lib, n, periodic, **kw: lib.hann_window(n, periodic, **kw),
                    np.hanning),
    "hamming_window": (lambda lib, n, periodic, **kw: lib.hamming_window(n, periodic, **kw),
                       np.hamming),
    "blackman_window": (lambda lib, n, periodic, **kw: lib.blackman_window(n, periodic, **kw),
                        np.blackman),
    "bartlett_window": (lambda lib, n, periodic, **kw: lib.bartlett_window(n, periodic, **kw),
                        np.bartlett),
    "kaiser_window": (lambda lib, n, periodic, **kw: lib.kaiser_window(n, periodic, **kw),
                      lambda n: np.kaiser(n, 12.0)),
}
NAMES = sorted(WINDOWS)
LENGTHS = [0, 1, 2, 3, 8, 33]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", LENGTHS)
def test_symmetric_windows_match_numpy(name, n):
    make, reference = WINDOWS[name]
    got = make(gradlab, n, False, dtype=gradlab.float64)
    assert got.dtype is gradlab.float64 and tuple(got.shape) == (n,)
    np.testing.assert_allclose(got.numpy(), reference(n) if n != 1 else [1.0], atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [2, 5, 16])
def test_periodic_window_is_the_symmetric_one_of_n_plus_1_without_its_last_point(name, n):
    make, reference = WINDOWS[name]
    got = make(gradlab, n, True, dtype=gradlab.float64)
    np.testing.assert_allclose(got.numpy(), reference(n + 1)[:-1], atol=1e-12)
    assert make(gradlab, n, True).tolist() != make(gradlab, n, False).tolist()


@needs_torch
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_windows_match_torch(name, n, periodic, dtype, device):
    make = WINDOWS[name][0]
    ours = make(gradlab, n, periodic, dtype=getattr(gradlab, dtype), device=device)
    theirs = make(torch, n, periodic, dtype=getattr(torch, dtype))
    assert ours.dtype.name == str(theirs.dtype).split(".")[1] and ours.device == device
    # PyTorch computes in the half dtype itself (ours: float64, then rounded once)
    tol = {"float64": 1e-12, "float32": 1e-6, "float16": 5e-3, "bfloat16": 4e-2}[dtype]
    np.testing.assert_allclose(ours.float().cpu().numpy(), theirs.float().numpy(), atol=tol)


@needs_torch
@pytest.mark.parametrize("alpha, beta", [(0.54, 0.46), (0.5, 0.5), (0.7, 0.2)])
def test_hamming_coefficients_and_kaiser_beta_match_torch(alpha, beta):
    np.testing.assert_allclose(
        gradlab.hamming_window(9, False, alpha, beta, dtype=gradlab.float64).numpy(),
        torch.hamming_window(9, False, alpha, beta, dtype=torch.float64).numpy(), atol=1e-12)
    for kaiser_beta in (0.0, 5.0, 30.0):
        np.testing.assert_allclose(
            gradlab.kaiser_window(10, True, kaiser_beta, dtype=gradlab.float64).numpy(),
            torch.kaiser_window(10, True, kaiser_beta, dtype=torch.float64).numpy(), atol=1e-12)


def test_hann_is_hamming_with_halves_and_kaiser_zero_is_the_rectangle():
    np.testing.assert_allclose(gradlab.hann_window(12).numpy(),
                               gradlab.hamming_window(12, alpha=0.5, beta=0.5).numpy())
    assert gradlab.kaiser_window(7, beta=0.0).tolist() == [1.0] * 7


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 200), periodic=st.booleans())
def test_every_window_lies_in_0_1_with_its_peak_at_the_middle(n, periodic):
    for name in NAMES:
        w = WINDOWS[name][0](gradlab, n, periodic, dtype=gradlab.float64).numpy()
        assert w.min() >= -1e-12 and w.max() <= 1 + 1e-12, name
        points = n + 1 if periodic else n
        assert w.max() - w[(points - 1) // 2] <= 1e-12, name  # the middle (left of two) peaks
        if not periodic:  # the symmetric window reads the same backwards
            np.testing.assert_allclose(w, w[::-1], atol=1e-12)


def test_defaults_dtype_device_and_requires_grad():
    w = gradlab.hann_window(4)
    assert w.dtype is gradlab.float32 and w.device == "cpu" and not w.requires_grad
    assert w.grad_fn is None and gradlab.hann_window(4, requires_grad=True).requires_grad
    gradlab.set_default_dtype(gradlab.float64)
    try:
        assert gradlab.blackman_window(4).dtype is gradlab.float64
    finally:
        gradlab.set_default_dtype(gradlab.float32)


@pytest.mark.parametrize("name", NAMES)
def test_window_errors_teach(name):
    make = WINDOWS[name][0]
    with pytest.raises(RuntimeError, match=rf"{name} expects floating point dtypes, got "
                                           r"gradlab.int64.*Fix"):
        make(gradlab, 4, True, dtype=gradlab.int64)
    with pytest.raises(RuntimeError, match=rf"{name} requires non-negative window_length, got "
                                           r"window_length=-1"):
        make(gradlab, -1, True)
    with pytest.raises(TypeError, match=rf"{name}: window_length must be an int, got float"):
        make(gradlab, 4.0, True)
