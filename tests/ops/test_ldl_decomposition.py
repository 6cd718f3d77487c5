"""linalg.ldl_factor_ex, ldl_factor, ldl_solve: Bunch-Kaufman LDLᵀ against PyTorch (LAPACK's
sytrf / hetrf and sytrs / hetrs): the compact LD, the pivots exactly, info, solutions,
batching, complex symmetric and Hermitian matrices, singular ones, errors and gradients.

Random symmetric matrices are indefinite; those with small or zero diagonals force
2×2 pivots and swaps, so every branch of the pivot rule is taken.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import linalg as LA
from gradlab.autograd import gradcheck, gradgradcheck
from gradlab.ops.ldl_decomposition import _standard_form
from tests.oracle import needs_torch, torch

DTYPES = ["float64", "float32", "complex128", "complex64"]
TOLERANCE = {"float64": 1e-10, "complex128": 1e-10, "float32": 2e-4, "complex64": 2e-4}


def _matrices(rng, batch, n, dtype, diagonal="random"):
    """A batch of random square matrices (not symmetric: only the lower triangle is read);
    diagonal 'small' or 'zero' makes the pivot rule swap and take 2×2 blocks."""
    a = rng.standard_normal((*batch, n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((*batch, n, n))
    if diagonal == "small":
        a[..., range(n), range(n)] *= 0.01
    elif diagonal == "zero":
        a[..., range(n), range(n)] = 0
    return a.astype(dtype)


def _full(a, hermitian):
    """The symmetric (Hermitian) matrix that a's lower triangle stands for."""
    below = np.tril(a, -1)
    full = np.tril(a) + np.swapaxes(below.conj() if hermitian else below, -1, -2)
    if hermitian and np.iscomplexobj(a):
        n = a.shape[-1]
        full[..., range(n), range(n)] = full[..., range(n), range(n)].real
    return full


def _unpack(ld, pivots, hermitian):
    """P (as a row order), L and D of one LAPACK-format factorisation, with
    A[order][:, order] = L D Lᵀ (Lᴴ for Hermitian)."""
    n = ld.shape[-1]
    order, source, first, second = _standard_form(pivots.reshape(1, n), n)
    order, source, first = order[0], source[0], first[0]
    lower = np.tril(np.take_along_axis(ld, source, 0), -1)
    d = np.diag(np.diag(ld))
    for k in np.flatnonzero(first):
        lower[k + 1, k] = 0
        d[k + 1, k] = ld[k + 1, k]
        d[k, k + 1] = np.conj(ld[k + 1, k]) if hermitian else ld[k + 1, k]
    return order, lower + np.eye(n), d


# --- the factorisation ---------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_factors_pivots_and_info_match_torch(dtype, hermitian, device):
    rng = np.random.default_rng(0)
    for n in range(1, 9):
        for diagonal in ("random", "small", "zero"):
            a = _matrices(rng, (6,), n, dtype, diagonal)
            ours = LA.ldl_factor_ex(gradlab.tensor(a, device=device), hermitian=hermitian)
            theirs = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
            assert ours.pivots.dtype is gradlab.int32 and ours.info.dtype is gradlab.int32
            np.testing.assert_array_equal(ours.pivots.cpu().numpy(), theirs.pivots.numpy())
            np.testing.assert_array_equal(ours.info.cpu().numpy(), theirs.info.numpy())
            np.testing.assert_allclose(ours.LD.cpu().numpy(), theirs.LD.numpy(),
                                       rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_factors_rebuild_the_permuted_matrix(dtype, hermitian):
    """Pᵀ A P = L D Lᵀ (Lᴴ): what the compact format means, checked without PyTorch."""
    rng = np.random.default_rng(1)
    for n in range(1, 9):
        a = _matrices(rng, (4,), n, dtype, "small" if n % 2 else "zero")
        ld, pivots, info = LA.ldl_factor_ex(gradlab.tensor(a), hermitian=hermitian)
        assert not info.numpy().any()
        for k in range(4):
            order, lower, d = _unpack(ld.numpy()[k], pivots.numpy()[k], hermitian)
            full = _full(a[k], hermitian)
            rebuilt = lower @ d @ (lower.conj().T if hermitian else lower.T)
            np.testing.assert_allclose(rebuilt, full[np.ix_(order, order)], atol=1e-10)


def test_the_zero_diagonal_example_takes_one_2x2_pivot():
    """[[0, 1], [1, 0]] has no usable 1×1 pivot: the whole matrix is D's one 2×2 block."""
    ld, pivots, info = LA.ldl_factor_ex(gradlab.tensor([[0.0, 1.0], [1.0, 0.0]]))
    assert pivots.tolist() == [-2, -2] and info.item() == 0
    assert ld.tolist() == [[0.0, 0.0], [1.0, 0.0]]
    # a dominant diagonal keeps its 1×1 pivots and swaps nothing
    _, pivots, _ = LA.ldl_factor_ex(gradlab.tensor([[4.0, 1.0], [1.0, 3.0]]))
    assert pivots.tolist() == [1, 2]


@needs_torch
def test_only_the_lower_triangle_is_read_and_hermitian_matters_for_complex():
    rng = np.random.default_rng(2)
    a = _matrices(rng, (), 5, "complex128", "small")
    upper_changed = a + np.triu(rng.standard_normal((5, 5)), 1)
    for hermitian in (False, True):
        first = LA.ldl_factor_ex(gradlab.tensor(a), hermitian=hermitian)
        second = LA.ldl_factor_ex(gradlab.tensor(upper_changed), hermitian=hermitian)
        np.testing.assert_array_equal(first.LD.numpy(), second.LD.numpy())
        assert not np.triu(first.LD.numpy(), 1).any()  # the upper triangle is zeroed
    symmetric = LA.ldl_factor_ex(gradlab.tensor(a)).LD.numpy()
    hermitian = LA.ldl_factor_ex(gradlab.tensor(a), hermitian=True).LD.numpy()
    assert not np.allclose(symmetric, hermitian)
    assert not np.diag(hermitian).imag.any()  # a Hermitian D has a real diagonal
    expected = torch.linalg.ldl_factor(torch.tensor(a), hermitian=True).LD.numpy()
    np.testing.assert_allclose(hermitian, expected, rtol=1e-10, atol=1e-10)
    # for real matrices hermitian changes nothing
    real = _matrices(rng, (), 5, "float64", "zero")
    np.testing.assert_array_equal(LA.ldl_factor(gradlab.tensor(real)).LD.numpy(),
                                  LA.ldl_factor(gradlab.tensor(real), hermitian=True).LD.numpy())


@needs_torch
@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (0, 3, 3), (2, 0, 0), (0, 0), (1, 1)])
def test_batched_and_empty_shapes_match_torch(shape):
    a = np.random.default_rng(3).standard_normal(shape)
    ours = LA.ldl_factor_ex(gradlab.tensor(a))
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a))
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_ldl_factor_ex"
    assert ours._fields == ("LD", "pivots", "info")
    for mine, other in zip(ours, theirs):
        assert tuple(mine.shape) == tuple(other.shape)
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-12, atol=1e-12)
    pair = LA.ldl_factor(gradlab.tensor(a))
    assert type(pair).__name__ == "linalg_ldl_factor" and pair._fields == ("LD", "pivots")


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_larger_matrices_match_torchs_blocked_routine(dtype):
    """Beyond LAPACK's block size (64) sytrf works in panels (lasyf), with the same pivots."""
    a = _matrices(np.random.default_rng(8), (2,), 70, dtype)
    for hermitian in (False, True):
        ours = LA.ldl_factor_ex(gradlab.tensor(a), hermitian=hermitian)
        theirs = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
        np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
        np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-8, atol=1e-8)


# --- singular matrices ---------------------------------------------------------------------

@needs_torch
def test_singular_matrices_report_info_as_torch():
    batch = np.stack([np.zeros((3, 3)), np.diag([1.0, 0.0, 2.0]), np.diag([2.0, -1.0, 3.0]),
                      np.array([[1.0, 1, 0], [1, 1, 0], [0, 0, 5]])])
    ours = LA.ldl_factor_ex(gradlab.tensor(batch))
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(batch))
    assert ours.info.tolist() == theirs.info.tolist() == [1, 2, 0, 2]
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), atol=1e-12)


def test_singular_matrices_raise_with_check_errors_and_in_ldl_factor():
    singular = gradlab.tensor(np.stack([np.eye(2), np.diag([1.0, 0.0])]))
    with pytest.raises(LA.LinAlgError, match=r"singular: D\[1,1\] is exactly zero.*info"):
        LA.ldl_factor_ex(singular, check_errors=True)
    with pytest.raises(LA.LinAlgError, match=r"ldl_factor: .*singular.*ldl_factor_ex"):
        LA.ldl_factor(singular)
    assert LA.ldl_factor_ex(singular).info.tolist() == [0, 2]  # without check_errors: info
    LA.ldl_factor_ex(singular[0], check_errors=True)  # a regular matrix passes


def test_a_nan_pivot_sets_info_as_reference_lapack():
    """Reference LAPACK's sytf2 stops at a NaN pivot with info = k (MKL, in PyTorch's
    wheels, reports 0 and carries on; either way the result is NaN)."""
    ld, _, info = LA.ldl_factor_ex(gradlab.tensor([[float("nan"), 1.0], [1.0, 2.0]]))
    assert info.item() == 1 and np.isnan(ld.numpy()[0, 0])


# --- solving -------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_solutions_match_torch_and_solve_the_system(dtype, hermitian, device):
    rng = np.random.default_rng(4)
    for n in range(1, 9):
        a = _matrices(rng, (3,), n, dtype, ("random", "small", "zero")[n % 3])
        b = _matrices(rng, (3,), n, dtype)[..., :2]
        ld, pivots = LA.ldl_factor(gradlab.tensor(a, device=device), hermitian=hermitian)
        ours = LA.ldl_solve(ld, pivots, gradlab.tensor(b, device=device), hermitian=hermitian)
        factors = torch.linalg.ldl_factor(torch.tensor(a), hermitian=hermitian)
        theirs = torch.linalg.ldl_solve(*factors, torch.tensor(b), hermitian=hermitian)
        scale = max(1.0, float(np.abs(theirs.numpy()).max()))
        np.testing.assert_allclose(ours.cpu().numpy() / scale, theirs.numpy() / scale,
                                   rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype] * 10)
        if dtype in ("float64", "complex128"):  # and it solves A X = B
            np.testing.assert_allclose(_full(a, hermitian) @ ours.cpu().numpy(), b,
                                       atol=1e-9 * scale)


@needs_torch
def test_solve_broadcasts_batch_dims():
    rng = np.random.default_rng(5)
    a = _matrices(rng, (3,), 4, "float64", "zero")
    b = rng.standard_normal((2, 1, 4, 5))
    ld, pivots = LA.ldl_factor(gradlab.tensor(a))
    ours = LA.ldl_solve(ld, pivots, gradlab.tensor(b))
    assert tuple(ours.shape) == (2, 3, 4, 5)
    # (PyTorch can crash on such broadcasts: compare with matching batches)
    factors = torch.linalg.ldl_factor(torch.tensor(a))
    theirs = torch.linalg.ldl_solve(factors.LD.expand(2, 3, 4, 4).contiguous(),
                                    factors.pivots.expand(2, 3, 4).contiguous(),
                                    torch.tensor(b).expand(2, 3, 4, 5).contiguous())
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    # one matrix, many right-hand sides; and B with no columns, A of size 0
    single = LA.ldl_solve(ld[0], pivots[0], gradlab.tensor(b))
    assert tuple(single.shape) == (2, 1, 4, 5)
    assert tuple(LA.ldl_solve(ld, pivots, gradlab.zeros(3, 4, 0).double()).shape) == (3, 4, 0)
    empty = LA.ldl_factor(gradlab.zeros(2, 0, 0).double())
    assert tuple(LA.ldl_solve(*empty, gradlab.zeros(2, 0, 3).double()).shape) == (2, 0, 3)


def test_pivots_of_any_integer_dtype_are_accepted():
    a = gradlab.tensor([[0.0, 2.0, 1.0], [2.0, 0.0, 3.0], [1.0, 3.0, 0.5]])
    ld, pivots = LA.ldl_factor(a)
    b = gradlab.tensor([[1.0], [2.0], [3.0]])
    x = LA.ldl_solve(ld, pivots, b)
    np.testing.assert_allclose(LA.ldl_solve(ld, pivots.long(), b).numpy(), x.numpy())
    np.testing.assert_allclose((a @ x).numpy(), b.numpy(), atol=1e-5)


# --- gradients -----------------------------------------------------------------------------

@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_ldl_solve_is_differentiable_in_b_and_ld(dtype, hermitian):
    rng = np.random.default_rng(6)
    a = _matrices(rng, (2,), 4, dtype, "zero")  # 2×2 blocks and swaps
    ld, pivots = LA.ldl_factor(gradlab.tensor(a), hermitian=hermitian)
    assert (pivots.numpy() < 0).any()
    b = gradlab.tensor(_matrices(rng, (2, 1), 4, dtype)[..., :2], requires_grad=True)
    ld = ld.detach().requires_grad_()
    assert gradcheck(lambda rhs: LA.ldl_solve(ld.detach(), pivots, rhs, hermitian=hermitian),
                     (b,))
    assert gradcheck(lambda f: LA.ldl_solve(f, pivots, b.detach(), hermitian=hermitian), (ld,))
    assert gradgradcheck(lambda f, rhs: LA.ldl_solve(f, pivots, rhs, hermitian=hermitian),
                         (ld, b))


def test_the_gradient_in_b_is_a_solve_with_a_transposed():
    """grad_B = A⁻ᵀ G, and A is symmetric: another ldl_solve."""
    rng = np.random.default_rng(7)
    a = _matrices(rng, (), 4, "float64", "zero")
    ld, pivots = LA.ldl_factor(gradlab.tensor(a))
    b = gradlab.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    g = rng.standard_normal((4, 2))
    LA.ldl_solve(ld, pivots, b).backward(gradlab.tensor(g))
    np.testing.assert_allclose(b.grad.numpy(), np.linalg.solve(_full(a, False), g), atol=1e-10)


def test_ldl_factor_has_no_derivative_as_in_torch():
    a = gradlab.tensor([[2.0, 1.0], [1.0, -3.0]], requires_grad=True)
    ld, pivots, info = LA.ldl_factor_ex(a)
    assert ld.requires_grad and not pivots.requires_grad and not info.requires_grad
    with pytest.raises(RuntimeError, match=r"derivative is not implemented.*linalg.solve"):
        ld.sum().backward()


# --- errors that teach ---------------------------------------------------------------------

def _factors():
    return LA.ldl_factor(gradlab.tensor([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]))


ERRORS = [
    (lambda: LA.ldl_factor(gradlab.ones(3)), RuntimeError, r"at least 2 dims"),
    (lambda: LA.ldl_factor(gradlab.ones(2, 3)), RuntimeError, r"square.*\(2, 3\)"),
    (lambda: LA.ldl_factor_ex(gradlab.ones(2, 2, dtype=gradlab.int64)), RuntimeError,
     r"int64"),
    (lambda: LA.ldl_factor(gradlab.ones(2, 2, dtype=gradlab.float16)), RuntimeError,
     r"float16.*\.float\(\)"),
    (lambda: LA.ldl_factor([[1.0]]), TypeError, r"expected a Tensor"),
    (lambda: LA.ldl_solve(*_factors(), gradlab.ones(3)), RuntimeError,
     r"B must be a matrix.*unsqueeze\(-1\)"),
    (lambda: LA.ldl_solve(*_factors(), gradlab.ones(4, 1)), RuntimeError,
     r"needs 3 rows.*\(4, 1\)"),
    (lambda: LA.ldl_solve(*_factors(), gradlab.ones(3, 1).double()), RuntimeError,
     r"same dtype.*B.to"),
    (lambda: LA.ldl_solve(_factors()[0], _factors()[1].float(), gradlab.ones(3, 1)),
     RuntimeError, r"pivots must be integers"),
    (lambda: LA.ldl_solve(_factors()[0], _factors()[1][:2], gradlab.ones(3, 1)),
     RuntimeError, r"pivots has shape \(2,\).*needs \(3,\)"),
    (lambda: LA.ldl_solve(_factors()[0].expand(2, 3, 3), _factors()[1].expand(2, 3),
                          gradlab.ones(5, 3, 1)), RuntimeError, r"don't broadcast"),
    (lambda: LA.ldl_solve(_factors()[0], gradlab.tensor([0, 2, 3], dtype=gradlab.int32),
                          gradlab.ones(3, 1)), RuntimeError, r"1 <= \|pivot\| <= n = 3"),
    (lambda: LA.ldl_solve(_factors()[0], gradlab.tensor([1, 2, 7], dtype=gradlab.int32),
                          gradlab.ones(3, 1)), RuntimeError, r"1 <= \|pivot\| <= n = 3"),
    (lambda: LA.ldl_solve(_factors()[0], gradlab.tensor([1, 2, -3], dtype=gradlab.int32),
                          gradlab.ones(3, 1)), RuntimeError, r"earlier row|same negative"),
    (lambda: LA.ldl_solve(_factors()[0], gradlab.tensor([-3, 2, 3], dtype=gradlab.int32),
                          gradlab.ones(3, 1)), RuntimeError, r"pivots\[1\] must be the same"),
    (lambda: LA.ldl_solve(_factors()[0], gradlab.tensor([2, 1, 3], dtype=gradlab.int32),
                          gradlab.ones(3, 1)), RuntimeError, r"pivots\[1\] = 1 would swap"),
]


@pytest.mark.parametrize("call, error, message", ERRORS)
def test_errors_teach(call, error, message):
    with pytest.raises(error, match=message):
        call()
