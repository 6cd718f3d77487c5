"""linalg solvers and decompositions: values vs NumPy, gradients (and second derivatives) vs
finite differences and PyTorch, named tuples, and the errors they raise.

Eigenvectors, singular vectors and Q are defined up to sign, so the table compares
quantities that don't depend on the sign LAPACK picks (v * v, |q|², reconstructions).
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.autograd import forward_ad as fwAD
from gradlab.autograd import gradcheck, gradgradcheck
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

# torch.cholesky (the oracle for gradlab.cholesky) is deprecated in PyTorch and says so.
pytestmark = pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated:UserWarning")

# --- inputs --------------------------------------------------------------------------------


def _well_conditioned(rng, dtype, shape):
    """M + n·I with M uniform in [-1, 1]: far from singular."""
    n = shape[-1]
    return (rng.uniform(-1, 1, shape) + n * np.eye(n)).astype(dtype)


def square_first(rng, dtype, shapes):
    """A well-conditioned square matrix (batch), then any other inputs uniform in [-1, 1]."""
    return [_well_conditioned(rng, dtype, shapes[0])] + [
        rng.uniform(-1, 1, s).astype(dtype) for s in shapes[1:]]


def signed_square(rng, dtype, shapes):
    """Well-conditioned, with the first row negated in about half the matrices (det < 0)."""
    a = _well_conditioned(rng, dtype, shapes[0])
    flip = rng.choice([-1.0, 1.0], size=a.shape[:-2] + (1, 1))
    a[..., :1, :] *= flip
    return [a]


def sym(lib, m):
    """M Mᵀ + n·I: symmetric positive-definite, with distinct eigenvalues (almost surely).
    Built inside the function, so gradcheck's perturbations of M keep it symmetric."""
    n = m.shape[-1]
    return m @ m.mT + n * lib.eye(n, dtype=m.dtype, device=m.device)


def sym_np(m):
    return m @ np.swapaxes(m, -1, -2) + m.shape[-1] * np.eye(m.shape[-1])


def _tr(a):
    return np.swapaxes(a, -1, -2)


def _svd_parts(lib_svd):
    """(U², S, Vh²): sign-invariant parts of an SVD (a sign flip of a pair changes nothing)."""
    u, s, vh = lib_svd
    k = s.shape[-1]
    return u[..., :k] ** 2, s, vh[..., :k, :] ** 2


SQ = dict(inputs=square_first)
BATCH = (((2, 4, 4),),)

# --- the table -----------------------------------------------------------------------------

CASES = [
    OpCase("linalg.inv", lambda lib, a: lib.linalg.inv(a), ((3, 3),), **SQ,
           numpy=lambda np, a: np.linalg.inv(a), variants=BATCH + (((1, 1),),)),
    OpCase("inverse", lambda lib, a: a.inverse(), ((3, 3),), **SQ,
           numpy=lambda np, a: np.linalg.inv(a), gradgrad=False),
    OpCase("linalg.solve", lambda lib, a, b: lib.linalg.solve(a, b), ((3, 3), (3, 2)), **SQ,
           numpy=lambda np, a, b: np.linalg.solve(a, b),
           variants=(((2, 3, 3), (3, 2)), ((3, 3), (2, 3, 1)))),
    OpCase("linalg.solve_vector", lambda lib, a, b: lib.linalg.solve(a, b), ((3, 3), (3,)),
           **SQ, numpy=lambda np, a, b: np.linalg.solve(a, b[..., None])[..., 0],
           variants=(((2, 3, 3), (2, 3)), ((2, 3, 3), (3,))), id="linalg.solve[vector]"),
    OpCase("linalg.solve_right", lambda lib, a, b: lib.linalg.solve(a, b, left=False),
           ((3, 3), (2, 3)), **SQ, gradgrad=False, id="linalg.solve[left=False]",
           numpy=lambda np, a, b: _tr(np.linalg.solve(_tr(a), _tr(b)))),
    OpCase("linalg.det", lambda lib, a: lib.linalg.det(a), ((3, 3),), inputs=signed_square,
           numpy=lambda np, a: np.linalg.det(a), variants=BATCH),
    OpCase("det", lambda lib, a: a.det(), ((3, 3),), **SQ, gradgrad=False,
           numpy=lambda np, a: np.linalg.det(a)),
    # jvp=False for (sign, logabsdet): torch.func gives sign a ZeroTensor tangent, which the
    # harness can't read; the logabsdet row checks the tangent rule.
    OpCase("linalg.slogdet", lambda lib, a: tuple(lib.linalg.slogdet(a)), ((3, 3),),
           inputs=signed_square, numpy=lambda np, a: tuple(np.linalg.slogdet(a)),
           variants=BATCH, jvp=False),
    OpCase("linalg.slogdet_logabsdet", lambda lib, a: lib.linalg.slogdet(a).logabsdet,
           ((3, 3),), inputs=signed_square, numpy=lambda np, a: np.linalg.slogdet(a)[1],
           gradgrad=False, id="linalg.slogdet[logabsdet]"),
    OpCase("slogdet", lambda lib, a: tuple(a.slogdet()), ((3, 3),), inputs=signed_square,
           gradgrad=False, jvp=False, numpy=lambda np, a: tuple(np.linalg.slogdet(a))),
    OpCase("logdet", lambda lib, m: lib.logdet(sym(lib, m)), ((3, 3),), variants=BATCH,
           numpy=lambda np, m: np.linalg.slogdet(sym_np(m))[1]),
    OpCase("linalg.cholesky", lambda lib, m: lib.linalg.cholesky(sym(lib, m)), ((3, 3),),
           numpy=lambda np, m: np.linalg.cholesky(sym_np(m)), variants=BATCH),
    OpCase("linalg.cholesky_upper", lambda lib, m: lib.linalg.cholesky(sym(lib, m), upper=True),
           ((3, 3),), numpy=lambda np, m: _tr(np.linalg.cholesky(sym_np(m))), gradgrad=False,
           id="linalg.cholesky[upper]"),
    # jvp=False: torch.cholesky (deprecated) has no forward AD to compare with; see above.
    OpCase("cholesky", lambda lib, m: sym(lib, m).cholesky(), ((3, 3),), gradgrad=False,
           jvp=False, numpy=lambda np, m: np.linalg.cholesky(sym_np(m))),
    # Eigenvectors squared: the same whichever sign LAPACK picks, and still every entry.
    OpCase("linalg.eigh", lambda lib, m: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(
        lib.linalg.eigh(sym(lib, m))), ((3, 3),), variants=BATCH,
        numpy=lambda np, m: (lambda w, v: (w, v ** 2))(*np.linalg.eigh(sym_np(m)))),
    OpCase("linalg.eigh_upper", lambda lib, m: lib.linalg.eigh(sym(lib, m), UPLO="U")[0],
           ((3, 3),), numpy=lambda np, m: np.linalg.eigvalsh(sym_np(m)), gradgrad=False,
           id="linalg.eigh[UPLO=U]"),
    OpCase("linalg.eigvalsh", lambda lib, m: lib.linalg.eigvalsh(sym(lib, m)), ((3, 3),),
           numpy=lambda np, m: np.linalg.eigvalsh(sym_np(m)), variants=BATCH),
    OpCase("linalg.svd", lambda lib, a: _svd_parts(lib.linalg.svd(a, full_matrices=False)),
           ((4, 3),), gradgrad=False, variants=(((3, 5),), ((2, 3, 3),)),
           numpy=lambda np, a: _svd_parts(np.linalg.svd(a, full_matrices=False))),
    # jvp=False: no forward mode with full_matrices=True (tested below).
    OpCase("linalg.svd_full", lambda lib, a: _svd_parts(lib.linalg.svd(a)), ((4, 2),),
           gradgrad=False, jvp=False, variants=(((2, 3),),), id="linalg.svd[full_matrices]",
           numpy=lambda np, a: _svd_parts(np.linalg.svd(a))),
    OpCase("linalg.svdvals", lambda lib, a: lib.linalg.svdvals(a), ((4, 3),),
           numpy=lambda np, a: np.linalg.svd(a, compute_uv=False),
           variants=(((3, 4),), ((2, 3, 3),))),
    # Q² and R²: a sign flip of column i of Q and row i of R changes neither.
    OpCase("linalg.qr", lambda lib, a: tuple(t ** 2 for t in lib.linalg.qr(a)), ((4, 3),),
           gradgrad=False, variants=(((3, 3),), ((2, 4, 2),)),
           numpy=lambda np, a: tuple(t ** 2 for t in np.linalg.qr(a))),
    # jvp=False: forward mode for wide QR is not implemented (tested below).
    OpCase("linalg.qr_wide", lambda lib, a: tuple(t ** 2 for t in lib.linalg.qr(a)), ((3, 5),),
           gradgrad=False, jvp=False, variants=(((2, 2, 4),),), id="linalg.qr[wide]",
           numpy=lambda np, a: tuple(t ** 2 for t in np.linalg.qr(a))),
    OpCase("linalg.matrix_norm_2", lambda lib, a: lib.linalg.matrix_norm(a, 2), ((4, 3),),
           gradgrad=False, variants=(((2, 3, 3),),), id="linalg.matrix_norm[2]",
           numpy=lambda np, a: np.linalg.norm(a, 2, axis=(-2, -1))),
    OpCase("linalg.matrix_norm_-2", lambda lib, a: lib.linalg.matrix_norm(a, -2), ((3, 4),),
           gradgrad=False, id="linalg.matrix_norm[-2]",
           numpy=lambda np, a: np.linalg.norm(a, -2, axis=(-2, -1))),
    OpCase("linalg.norm_nuc", lambda lib, a: lib.linalg.norm(a, "nuc"), ((4, 3),),
           gradgrad=False, id="linalg.norm[nuc]", numpy=lambda np, a: np.linalg.norm(a, "nuc")),
    OpCase("linalg.matrix_norm_dims", lambda lib, a: lib.linalg.matrix_norm(
        a, "nuc", dim=(2, 0), keepdim=True), ((3, 2, 4),), gradgrad=False,
        id="linalg.matrix_norm[nuc, dim=(2, 0), keepdim]",
        numpy=lambda np, a: np.linalg.norm(a, "nuc", axis=(2, 0), keepdims=True)),
]

globals().update(standard_op_tests(CASES))


# --- what the table can't say --------------------------------------------------------------

def _rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def test_named_tuples_have_pytorchs_fields():
    a = gradlab.tensor(_well_conditioned(np.random.default_rng(0), np.float64, (3, 3)))
    s = gradlab.linalg.svd(a)
    w = gradlab.linalg.eigh(a @ a.mT)
    q = gradlab.linalg.qr(a)
    ld = gradlab.linalg.slogdet(a)
    assert type(s).__name__ == "linalg_svd" and s.U is s[0] and s.S is s[1] and s.Vh is s[2]
    assert type(w).__name__ == "linalg_eigh" and w.eigenvectors is w[1]
    assert type(q).__name__ == "linalg_qr" and q.R is q[1]
    assert type(ld).__name__ == "linalg_slogdet" and ld.logabsdet is ld[1]
    assert type(gradlab.slogdet(a)).__name__ == "slogdet"
    np.testing.assert_allclose((ld.sign * ld.logabsdet.exp()).numpy(), np.linalg.det(a.numpy()))


def test_reconstructions_and_orthogonality(device):
    a_np = _rand(2, 5, 3)
    a = gradlab.tensor(a_np, device=device)
    u, s, vh = gradlab.linalg.svd(a)  # full: U 5×5, Vh 3×3
    assert tuple(u.shape) == (2, 5, 5) and tuple(s.shape) == (2, 3) and tuple(vh.shape) == (2, 3, 3)
    np.testing.assert_allclose((u @ u.mT).cpu().numpy(), np.broadcast_to(np.eye(5), (2, 5, 5)),
                               atol=1e-12)
    recon = (u[..., :3] * s.unsqueeze(-2)) @ vh
    np.testing.assert_allclose(recon.cpu().numpy(), a_np, atol=1e-12)
    q, r = gradlab.linalg.qr(a)
    np.testing.assert_allclose((q @ r).cpu().numpy(), a_np, atol=1e-12)
    np.testing.assert_allclose(r.cpu().numpy(), np.triu(r.cpu().numpy()))
    q_full, r_full = gradlab.linalg.qr(a, mode="complete")
    assert tuple(q_full.shape) == (2, 5, 5) and tuple(r_full.shape) == (2, 5, 3)
    q_none, r_only = gradlab.linalg.qr(a, mode="r")
    assert tuple(q_none.shape) == (0,)
    np.testing.assert_allclose(np.abs(r_only.cpu().numpy()), np.abs(r.cpu().numpy()),
                               atol=1e-12)
    m = gradlab.tensor(sym_np(_rand(3, 3)), device=device)
    w, v = gradlab.linalg.eigh(m)
    np.testing.assert_allclose(((v * w.unsqueeze(-2)) @ v.mT).cpu().numpy(), m.cpu().numpy(),
                               atol=1e-12)
    chol = gradlab.linalg.cholesky(m)
    np.testing.assert_allclose((chol @ chol.mT).cpu().numpy(), m.cpu().numpy(), atol=1e-12)


@needs_torch
def test_node_names_and_signs_match_torch():
    a_np = signed_square(np.random.default_rng(3), np.float64, ((3, 3),))[0]
    for name, fn in [("inv", lambda lib, a: lib.linalg.inv(a)),
                     ("det", lambda lib, a: lib.linalg.det(a)),
                     ("slogdet", lambda lib, a: lib.linalg.slogdet(a).logabsdet),
                     ("svd", lambda lib, a: lib.linalg.svd(a).S),
                     ("qr", lambda lib, a: lib.linalg.qr(a).R),
                     ("eigh", lambda lib, a: lib.linalg.eigh(a).eigenvalues),
                     ("solve", lambda lib, a: lib.linalg.solve(a, a[0]))]:
        ours = fn(gradlab, gradlab.tensor(a_np, requires_grad=True))
        theirs = fn(torch, torch.tensor(a_np, requires_grad=True))
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__, name
    sign = gradlab.linalg.slogdet(gradlab.tensor(a_np)).sign
    assert sign.item() == torch.linalg.slogdet(torch.tensor(a_np)).sign.item()


@needs_torch
def test_logdet_of_negative_and_zero_determinants_matches_torch():
    mats = np.array([[[0.0, 1.0], [1.0, 0.0]], [[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]])
    ours = gradlab.logdet(gradlab.tensor(mats)).numpy()
    theirs = torch.logdet(torch.tensor(mats)).numpy()
    assert np.isnan(ours[0]) and np.isneginf(ours[1])
    np.testing.assert_allclose(ours, theirs)


@needs_torch
@pytest.mark.parametrize("op", ["eigvalsh", "svdvals"])
def test_values_only_gradient_is_finite_at_repeated_values(op):
    """Only the values used: no division by the (zero) gaps, as in PyTorch."""
    a_np = np.diag([2.0, 2.0, 1.0])
    grads = []
    for lib in (gradlab, torch):
        a = lib.tensor(a_np, requires_grad=True)
        (getattr(lib.linalg, op)(a) * lib.tensor([1.0, 2.0, 3.0], dtype=a.dtype)).sum().backward()
        grads.append(a.grad.numpy())
    assert np.all(np.isfinite(grads[0]))
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-12)


@needs_torch
def test_svd_full_matrices_gradient_ignores_extra_columns_like_torch():
    a_np = _rand(4, 2, seed=5)
    grads = []
    for lib in (gradlab, torch):
        a = lib.tensor(a_np, requires_grad=True)
        u, s, vh = lib.linalg.svd(a)
        ((u[:, 2:] ** 2).sum() + (u[:, :2] ** 3).abs().sum() + s.sum()).backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)


def test_second_derivative_of_solve_both_inputs():
    rng = np.random.default_rng(4)
    a = gradlab.tensor(_well_conditioned(rng, np.float64, (3, 3)), requires_grad=True)
    b = gradlab.tensor(rng.uniform(-1, 1, (3,)), requires_grad=True)
    assert gradgradcheck(lambda a, b: gradlab.linalg.solve(a, b, left=False), [a, b])
    assert gradcheck(lambda a: gradlab.linalg.qr(a).Q.abs().sum(-1), [gradlab.tensor(
        _rand(3, 5, seed=6), requires_grad=True)])


@pytest.mark.parametrize("call, match", [
    (lambda a: gradlab.linalg.svd(a[:2]), r"linalg.svd: forward mode needs full_matrices="
                                          r"False for a matrix that is not square \(shape "
                                          r"\(2, 3\)\)"),
    (lambda a: gradlab.linalg.qr(a, mode="r"), r"linalg.qr: forward mode needs Q, and a unique "
                                               r"one.*got mode='r' and shape \(3, 3\)"),
])
def test_forward_mode_limits_are_said(call, match):
    with fwAD.dual_level():
        a = fwAD.make_dual(gradlab.tensor(_rand(3, 3)), gradlab.tensor(_rand(3, 3, seed=1)))
        with pytest.raises(NotImplementedError, match=match):
            call(a)


# --- errors --------------------------------------------------------------------------------

def _singular(*batch):
    return gradlab.tensor(np.broadcast_to(np.array([[1.0, 2.0], [2.0, 4.0]]), batch + (2, 2)))


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.linalg.inv(gradlab.zeros(2, 3)), RuntimeError,
     r"linalg.inv: expected square matrices, got shape \(2, 3\)"),
    (lambda: gradlab.det(gradlab.zeros(3)), RuntimeError,
     r"det: expected a matrix or a batch of matrices \(at least 2 dims\), got shape \(3,\)"),
    (lambda: gradlab.linalg.det(gradlab.zeros(2, 2, dtype=gradlab.int64)), RuntimeError,
     r"linalg.det: expected a floating point tensor, got gradlab.int64"),
    (lambda: gradlab.linalg.eigh(gradlab.zeros(2, 2, dtype=gradlab.float16)), RuntimeError,
     r"linalg.eigh: LAPACK works in float32, float64, complex64 or complex128, got "
     r"gradlab.float16"),
    (lambda: gradlab.linalg.svd([[1.0]]), TypeError, r"linalg.svd: expected a Tensor, got list"),
    (lambda: gradlab.linalg.inv(_singular()), RuntimeError,
     r"linalg.inv: the input matrix \(shape \(2, 2\)\) is singular"),
    (lambda: gradlab.inverse(_singular(3)), RuntimeError,
     r"inverse: a matrix in the batch \(shape \(3, 2, 2\)\) is singular"),
    (lambda: gradlab.linalg.solve(_singular(), _singular()[0]), RuntimeError,
     r"linalg.solve: the input matrix \(shape \(2, 2\)\) is singular"),
    (lambda: gradlab.linalg.cholesky(-gradlab.eye(2)), RuntimeError,
     r"linalg.cholesky: the input matrix \(shape \(2, 2\)\) is not positive-definite.*eps"),
    (lambda: gradlab.linalg.solve(gradlab.eye(3), gradlab.ones(4, 2)), RuntimeError,
     r"linalg.solve: A has shape \(3, 3\) but B has shape \(4, 2\); B must be a vector of "
     r"length 3 or a matrix with 3 rows"),
    (lambda: gradlab.linalg.solve(gradlab.eye(3), gradlab.ones(2, 4), left=False),
     RuntimeError, r"with left=False \(X A = B\) B needs 3 columns"),
    (lambda: gradlab.linalg.solve(gradlab.ones(2, 3, 3), gradlab.ones(4, 3, 1)), RuntimeError,
     r"linalg.solve: the batch dims of A \(2, 3, 3\) and B \(4, 3, 1\) don't broadcast"),
    (lambda: gradlab.linalg.solve(gradlab.eye(2), gradlab.ones(2, dtype=gradlab.float64)),
     RuntimeError, r"A and B must have the same dtype, got gradlab.float32 and gradlab.float64"),
    (lambda: gradlab.linalg.eigh(gradlab.eye(2), UPLO="X"), RuntimeError,
     r"linalg.eigh: UPLO must be 'L'.*got 'X'"),
    (lambda: gradlab.linalg.qr(gradlab.eye(2), mode="raw"), RuntimeError,
     r"linalg.qr: mode must be 'reduced', 'complete' or 'r', got 'raw'"),
])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("mode, shape, match", [
    ("r", (3, 3), r"linalg.qr: its derivative needs Q, which mode='r' does not compute"),
    ("complete", (4, 2), r"not differentiable with mode='complete' and more rows than columns"),
])
def test_qr_backward_errors_teach(mode, shape, match):
    a = gradlab.tensor(_rand(*shape), requires_grad=True)
    with pytest.raises(RuntimeError, match=match):
        gradlab.linalg.qr(a, mode=mode).R.sum().backward()


def test_det_backward_of_singular_matrix_says_so():
    a = gradlab.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    d = gradlab.linalg.det(a)
    assert d.item() == pytest.approx(0.0)
    with pytest.raises(RuntimeError, match=r"linalg.det \(backward\): the input matrix .* "
                                           r"singular"):
        d.backward()
