"""Complex linear algebra: the decompositions and what is built on them, checked as the
elementwise ops are in test_complex.py (PyTorch, gradcheck, gradgradcheck, forward mode).

Eigenvectors and singular vectors are fixed only up to a phase, so each row
that uses them computes something the phase does not change: a projector
Σ w_k v_k v_kᴴ, |V|, or U diag(c) Vh. Those are what finite differences,
and a PyTorch built on another LAPACK call, can agree on. Hermitian and
positive-definite inputs are built from a random complex matrix a:
a + aᴴ, and a aᴴ + 3I.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.autograd import gradcheck, gradgradcheck
from tests.ops.test_complex import (
    Case,
    _arrays,
    _const,
    _eye,
    _ours,
    check_jvp_matches_finite_differences,
    check_matches_torch,
)
from tests.oracle import needs_torch, torch

# (the legacy triangular_solve row calls PyTorch's deprecated function on purpose)
pytestmark = pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")


def _hermitian(L, a):
    return a + a.mH


def _positive_definite(L, a):
    return a @ a.mH + 3 * _eye(L, a, a.shape[-1])


def _projector(L, v, weights):
    """Σ_k w_k v_k v_kᴴ: unchanged when a column v_k turns by a phase."""
    return (v * _const(L, v, weights).to(v.dtype)) @ v.mH


def _svd_product(L, u, vh, weights):
    """U diag(w) Vh: a pair (u_k, v_k) turning by one phase leaves it unchanged."""
    return (u * _const(L, u, weights).to(u.dtype)) @ vh


def _eigh_projector(L, a):
    _, v = L.linalg.eigh(_hermitian(L, a))
    return _projector(L, v, [1.0, -2.0, 0.5])


def _svd_parts(L, a, full_matrices=False):
    u, s, vh = L.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]
    return _svd_product(L, u, vh, [1.0, -0.5, 2.0][:k]) + s.sum()


def _legacy_svd(L, a):
    u, s, v = L.svd(a)
    return _svd_product(L, u, v.mH, [1.0, 3.0, -1.0]) * s.max()


CASES = [
    Case("cholesky", lambda L, a: L.linalg.cholesky(_positive_definite(L, a)), ((3, 3),)),
    Case("cholesky_upper", lambda L, a: L.linalg.cholesky(_positive_definite(L, a), upper=True),
         ((2, 3, 3),)),
    Case("cholesky_ex", lambda L, a: L.linalg.cholesky_ex(_positive_definite(L, a)).L,
         ((3, 3),)),
    Case("cholesky_solve", lambda L, a, b: L.cholesky_solve(
        b, L.linalg.cholesky(_positive_definite(L, a))), ((3, 3), (3, 2))),
    Case("cholesky_inverse_upper", lambda L, a: L.cholesky_inverse(
        L.linalg.cholesky(_positive_definite(L, a), upper=True), upper=True), ((3, 3),)),
    Case("eigvalsh", lambda L, a: L.linalg.eigvalsh(_hermitian(L, a)), ((2, 3, 3),)),
    Case("eigh_projector", _eigh_projector, ((3, 3),)),
    Case("eigh_abs", lambda L, a: L.linalg.eigh(_hermitian(L, a), UPLO="U")[1].abs(),
         ((3, 3),)),
    Case("svdvals", lambda L, a: L.linalg.svdvals(a), ((4, 3),)),
    Case("svd_tall", _svd_parts, ((4, 3),)),
    Case("svd_wide", _svd_parts, ((2, 4),)),
    Case("svd_square_full", lambda L, a: _svd_parts(L, a, True), ((3, 3),)),
    Case("svd_abs_u", lambda L, a: L.linalg.svd(a, full_matrices=False)[0].abs(), ((4, 3),)),
    Case("svd_legacy", _legacy_svd, ((3, 3),)),
    Case("matrix_norm_2", lambda L, a: L.linalg.matrix_norm(a, 2), ((2, 3, 2),)),
    Case("matrix_norm_nuc", lambda L, a: L.linalg.matrix_norm(a, "nuc"), ((3, 4),)),
    Case("qr_q", lambda L, a: L.linalg.qr(a)[0], ((4, 3),)),
    Case("qr_r", lambda L, a: L.linalg.qr(a)[1], ((3, 3),)),
    Case("qr_both", lambda L, a: L.linalg.qr(a)[0] @ L.linalg.qr(a)[1].mH, ((4, 3),)),
    Case("qr_wide", lambda L, a: L.linalg.qr(a)[0].sum(0) + L.linalg.qr(a)[1].sum(0)[:2],
         ((2, 3),)),
    Case("slogdet_log", lambda L, a: L.linalg.slogdet(a + 3 * _eye(L, a, 3))[1], ((2, 3, 3),)),
    Case("slogdet_sign", lambda L, a: L.linalg.slogdet(a + 3 * _eye(L, a, 3))[0], ((3, 3),)),
    Case("logdet", lambda L, a: L.logdet(a + 3 * _eye(L, a, 3)), ((3, 3),)),
    Case("matrix_exp", lambda L, a: L.linalg.matrix_exp(a * 0.5), ((2, 3, 3),)),
    Case("pinv", lambda L, a: L.linalg.pinv(a), ((4, 3),)),
    Case("pinv_hermitian", lambda L, a: L.linalg.pinv(_hermitian(L, a), hermitian=True),
         ((3, 3),)),
    Case("lstsq", lambda L, a, b: L.linalg.lstsq(a, b, driver="gelsd").solution,
         ((4, 2), (4, 2))),
    Case("solve_triangular", lambda L, a, b: L.linalg.solve_triangular(
        a + 3 * _eye(L, a, 3), b, upper=True, left=False), ((3, 3), (2, 3))),
    Case("triangular_solve_transposed", lambda L, b, a: L.triangular_solve(
        b, a + 3 * _eye(L, a, 3), upper=False, transpose=True).solution, ((3, 2), (3, 3))),
    Case("lu_factor", lambda L, a: L.linalg.lu_factor(a)[0], ((3, 3),)),
    Case("lu", lambda L, a: L.linalg.lu(a)[1] + L.linalg.lu(a)[2], ((3, 3),)),
    Case("lu_solve_adjoint", lambda L, a, b: L.linalg.lu_solve(
        *L.linalg.lu_factor(a + 3 * _eye(L, a, 3)), b, adjoint=True), ((3, 3), (3, 2))),
    Case("lu_solve_adjoint_right", lambda L, a, b: L.linalg.lu_solve(
        *L.linalg.lu_factor(a + 3 * _eye(L, a, 3)), b, left=False, adjoint=True),
        ((3, 3), (2, 3))),
    Case("householder_product", lambda L, a, t: L.linalg.householder_product(a, t),
         ((4, 3), (2,))),
]


@needs_torch
@pytest.mark.parametrize("precision", ["complex128", "complex64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_matches_torch(case, precision, device):
    check_matches_torch(case, precision, device)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradcheck(case, device):
    assert gradcheck(lambda *ts: case.fn(gradlab, *ts), _ours(_arrays(case), device))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradgradcheck(case):
    assert gradgradcheck(lambda *ts: case.fn(gradlab, *ts), _ours(_arrays(case)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_jvp_matches_finite_differences(case):
    check_jvp_matches_finite_differences(case)


# --- what the factors are, and the losses that are refused -----------------------------------

def _random(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def test_the_factors_rebuild_the_matrix():
    a = gradlab.tensor(_random((4, 3)))
    h = a.mH @ a + gradlab.eye(3, dtype=gradlab.complex128)
    lower = gradlab.linalg.cholesky(h)
    assert np.allclose((lower @ lower.mH).numpy(), h.numpy())
    assert np.allclose(lower.diagonal().imag.numpy(), 0)  # a real, positive diagonal
    values, v = gradlab.linalg.eigh(h)
    assert values.dtype is gradlab.float64 and v.dtype is gradlab.complex128
    assert np.allclose((v * values.to(v.dtype)) @ v.mH, h.numpy())
    u, s, vh = gradlab.linalg.svd(a, full_matrices=False)
    assert s.dtype is gradlab.float64
    assert np.allclose(((u * s.to(u.dtype)) @ vh).numpy(), a.numpy())
    q, r = gradlab.linalg.qr(a)
    assert np.allclose((q @ r).numpy(), a.numpy())
    assert np.allclose((q.mH @ q).numpy(), np.eye(3))
    sign, logabsdet = gradlab.linalg.slogdet(h + 1j * gradlab.eye(3))
    assert sign.dtype is gradlab.complex128 and logabsdet.dtype is gradlab.float64
    assert np.isclose(complex(sign) * np.exp(float(logabsdet)),
                      np.linalg.det(h.numpy() + 1j * np.eye(3)))


def test_rank_and_condition_of_a_complex_matrix():
    a = gradlab.tensor(_random((4, 2)))
    wide_rank_2 = a @ gradlab.tensor(_random((2, 5), seed=1))
    assert int(gradlab.linalg.matrix_rank(wide_rank_2)) == 2
    s = np.linalg.svd(a.numpy(), compute_uv=False)
    assert np.isclose(float(gradlab.linalg.cond(a)), s[0] / s[-1])


def test_a_loss_that_depends_on_the_eigenvectors_phases_is_refused():
    h = gradlab.tensor(_random((3, 3)))
    h = (h + h.mH).requires_grad_()
    _, v = gradlab.linalg.eigh(h)
    with pytest.raises(RuntimeError, match=r"linalg.eigh \(backward\): each eigenvector is "
                                           r"fixed only up to a phase.*V.abs\(\)"):
        v.real.sum().backward()


def test_a_loss_that_depends_on_the_singular_vectors_phases_is_refused():
    a = gradlab.tensor(_random((3, 2)), requires_grad=True)
    u, _, _ = gradlab.linalg.svd(a, full_matrices=False)
    with pytest.raises(RuntimeError, match=r"linalg.svd \(backward\): each pair of singular "
                                           r"vectors is fixed only up to a phase.*U.abs\(\)"):
        u[0].real.sum().backward()
    # the same loss made phase-free goes through
    u, s, vh = gradlab.linalg.svd(a, full_matrices=False)
    (u.abs().sum() + (u @ vh).real.sum()).backward()
    assert a.grad is not None and a.grad.dtype is gradlab.complex128


@needs_torch
def test_svd_and_eigh_tangents_match_torch():
    """Forward mode picks the same phases as PyTorch's (v_i with no part along itself;
    u_i takes i Im P_ii / S_i), so even the raw factors' tangents agree."""
    import gradlab.autograd.forward_ad as fwAD

    a, t = _random((4, 3)), _random((4, 3), seed=5)
    with fwAD.dual_level():
        u, s, vh = gradlab.linalg.svd(fwAD.make_dual(gradlab.tensor(a), gradlab.tensor(t)),
                                      full_matrices=False)
        ours = [fwAD.unpack_dual(x) for x in (u, s, vh)]
    theirs_primal, theirs = torch.func.jvp(
        lambda x: torch.linalg.svd(x, full_matrices=False), (torch.from_numpy(a),),
        (torch.from_numpy(t),))
    for mine, primal, tangent in zip(ours, theirs_primal, theirs):
        np.testing.assert_allclose(mine.primal.numpy(), primal.numpy(), atol=1e-10)
        np.testing.assert_allclose(mine.tangent.numpy(), tangent.numpy(), atol=1e-9)
    h, th = _random((3, 3)), _random((3, 3), seed=6)
    h, th = h + h.conj().T, th + th.conj().T
    with fwAD.dual_level():
        values, v = gradlab.linalg.eigh(fwAD.make_dual(gradlab.tensor(h), gradlab.tensor(th)))
        ours = [fwAD.unpack_dual(x) for x in (values, v)]
    theirs_primal, theirs = torch.func.jvp(torch.linalg.eigh, (torch.from_numpy(h),),
                                           (torch.from_numpy(th),))
    for mine, primal, tangent in zip(ours, theirs_primal, theirs):
        np.testing.assert_allclose(mine.primal.numpy(), primal.numpy(), atol=1e-10)
        np.testing.assert_allclose(mine.tangent.numpy(), tangent.numpy(), atol=1e-9)
