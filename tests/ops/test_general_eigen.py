"""linalg.eig and eigvals: complex eigenvalues and eigenvectors of any square matrix, with
PyTorch's gradient, checked on losses that don't depend on the eigenvectors' phases."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.autograd import gradcheck, gradgradcheck
from tests.oracle import needs_torch, torch

LA = gradlab.linalg


def _matrix(kind: str, shape=(3, 3), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if kind == "complex" else a


def _phase_free(lib, a):
    """Eigenvalues and the magnitudes of the eigenvector entries: blind to each column's
    phase, as a loss of eig must be."""
    w, v = lib.linalg.eig(a)
    return w, v.abs()


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_the_decomposition_holds(kind):
    a = gradlab.tensor(_matrix(kind, (2, 4, 4)))
    w, v = LA.eig(a)
    assert w.dtype is gradlab.complex128 and v.shape == (2, 4, 4)
    np.testing.assert_allclose((a.to(gradlab.complex128) @ v).numpy(),
                               (v * w.unsqueeze(-2)).numpy(), atol=1e-12)
    np.testing.assert_allclose(v.abs().pow(2).sum(-2).numpy(), np.ones((2, 4)), atol=1e-12)
    assert LA.eig(a.to(gradlab.float32 if kind == "real" else gradlab.complex64))[0].dtype \
        is gradlab.complex64
    np.testing.assert_array_equal(LA.eigvals(a).numpy(), w.numpy())


def test_a_rotation_has_complex_eigenvalues():
    theta = 0.3
    r = gradlab.tensor([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    w = LA.eigvals(r)
    assert sorted(w.angle().tolist()) == pytest.approx([-theta, theta], abs=1e-6)


@needs_torch
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_values_and_gradients_match_torch(kind):
    data = _matrix(kind, (2, 3, 3), seed=1)
    rng = np.random.default_rng(2)
    cot_w = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    cot_v = rng.standard_normal((2, 3, 3))
    results = []
    for lib in (gradlab, torch):
        a = lib.tensor(data, requires_grad=True)
        w, mags = _phase_free(lib, a)
        ((w * lib.tensor(cot_w)).real.sum() + (mags * lib.tensor(cot_v)).sum()).backward()
        results.append([t.detach().resolve_conj().numpy() if lib is torch else t.detach().numpy()
                        for t in (w, mags, a.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_gradcheck(kind):
    a = gradlab.tensor(_matrix(kind, seed=3), requires_grad=True)
    assert gradcheck(lambda t: _phase_free(gradlab, t), (a,))


def test_gradgradcheck_of_the_eigenvalues():
    a = gradlab.tensor(_matrix("real", seed=4), requires_grad=True)
    assert gradgradcheck(lambda t: LA.eigvals(t), (a,))


def test_a_loss_that_depends_on_the_phases_is_refused():
    a = gradlab.tensor(_matrix("complex", seed=5), requires_grad=True)
    _, v = LA.eig(a)
    with pytest.raises(RuntimeError, match=r"linalg.eig \(backward\): each eigenvector is fixed "
                                           r"only up to a phase.*V.abs\(\)"):
        v.real.sum().backward()


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_forward_mode_matches_finite_differences(kind):
    """The tangents of the eigenvalues and of |V| (the phases are arbitrary) for a random
    direction, against central differences."""
    import gradlab.autograd.forward_ad as fwAD

    a, direction = _matrix(kind, seed=6), _matrix(kind, seed=7)
    with fwAD.dual_level():
        dual = fwAD.make_dual(gradlab.tensor(a), gradlab.tensor(direction))
        tangents = [fwAD.unpack_dual(t).tangent.numpy() for t in _phase_free(gradlab, dual)]
    h = 1e-6
    plus = _phase_free(gradlab, gradlab.tensor(a + h * direction))
    minus = _phase_free(gradlab, gradlab.tensor(a - h * direction))
    for got, p, m in zip(tangents, plus, minus):
        np.testing.assert_allclose(got, (p.numpy() - m.numpy()) / (2 * h), rtol=1e-5,
                                   atol=1e-6)
