"""``torch.linalg``'s LU and triangular solves: solve_triangular, lu_factor, lu_factor_ex,
lu, lu_solve.

LU factorisation writes a square A as P L U: a permutation P (the row swaps
of partial pivoting), L unit lower triangular and U upper triangular. Solving
A X = B is then two cheap *triangular* solves, each O(n²) per column:

    A X = B  <=>  L U X = Pᵀ B  <=>  X = U⁻¹ (L⁻¹ (Pᵀ B))
    Aᵀ X = B <=>  Uᵀ Lᵀ Pᵀ X = B <=>  X = P (L⁻ᵀ (U⁻ᵀ B))       (adjoint=True)

and ``left=False`` (X A = B) is the transposed problem Aᵀ Xᵀ = Bᵀ.

Everything here is a thin wrapper over ops gradlab already has: the
factorisation is ``gradlab.lu`` (one node, ``LuFactor``, with its own
derivative), P, L, U come from ``lu_unpack`` (tril / triu of the packed
matrix), and a triangular solve is ``triangular_solve``. So gradients,
double backward and forward mode come with them; a triangular solve's
gradient reaches only the triangle it reads, as in PyTorch.
"""

from __future__ import annotations

from .. import return_types
from ..tensor import Tensor
from .legacy_linalg import lu as _packed_lu
from .legacy_linalg import lu_unpack, triangular_solve
from .linalg import matmul
from .solvers import LinAlgError, check_matrices

__all__: list[str] = []  # torch.linalg names only: gradlab.linalg exports them
TENSOR_METHODS: list[str] = []


def _check_rhs(op: str, A: Tensor, B, left: bool) -> None:  # noqa: N803 - PyTorch's names
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    if B.ndim < 2:
        raise RuntimeError(f"{op}: B must be a matrix or a batch of matrices, got shape "
                           f"{tuple(B.shape)}. Fix: B.unsqueeze(-1) for a vector (one column)")
    n = A.shape[-1]
    size, side = (B.shape[-2], "rows") if left else (B.shape[-1], "columns")
    if size != n:
        equation = "A X = B" if left else "X A = B (left=False)"
        raise RuntimeError(f"{op}: A is {n}×{n} (shape {tuple(A.shape)}) so B needs {n} "
                           f"{side} for {equation}, got shape {tuple(B.shape)}")
    if B.dtype is not A.dtype:
        raise RuntimeError(f"{op}: A and B must have the same dtype, got {A.dtype} and "
                           f"{B.dtype}. Fix: B.to(A.dtype)")


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (left=False: X A = B) for triangular A, by substitution.

    Only A's upper (``upper=True``) or lower triangle is read, and with
    ``unitriangular`` its diagonal is taken as ones. Batch dims broadcast.
    grad_B = A⁻ᵀ G; grad_A = -grad_B Xᵀ, kept to the triangle that was read.
    """
    op = "linalg.solve_triangular"
    check_matrices(op, A)
    _check_rhs(op, A, B, left)
    if left:
        return triangular_solve(B, A, upper, False, unitriangular).solution
    # X A = B  <=>  Aᵀ Xᵀ = Bᵀ: the same triangle, solved transposed
    solution = triangular_solve(B.mT, A, upper, True, unitriangular).solution
    return solution.mT.contiguous()  # C order, as PyTorch's result


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False):  # noqa: N803
    """``(LU, pivots, info)``: P L U packed into one matrix, LAPACK's 1-based int32 row swaps,
    and info (int32 per matrix): 0, or 1 + the first zero on U's diagonal (then A is
    singular and solving with its LU would divide by zero). check_errors=True raises on
    info > 0 instead of returning it."""
    check_matrices("linalg.lu_factor_ex", A, square=False)
    packed, pivots, info = _packed_lu(A, pivot, get_infos=True)
    if check_errors and bool((info > 0).any()):
        raise LinAlgError(f"linalg.lu_factor_ex: a matrix of shape {tuple(A.shape)} is "
                          f"singular: U has a zero on its diagonal (info = "
                          f"{info.tolist()}). Fix: check the rank with linalg.matrix_rank")
    return return_types.linalg_lu_factor_ex(packed, pivots, info)


def lu_factor(A: Tensor, *, pivot: bool = True):  # noqa: N803
    """``(LU, pivots)``, for ``lu_solve``. Raises if U has a zero on its diagonal (A is
    singular), since every solve with it would divide by zero; ``lu_factor_ex`` or
    ``linalg.lu`` factor singular matrices too."""
    packed, pivots, info = lu_factor_ex(A, pivot=pivot)
    if bool((info > 0).any()):
        first = int(info[info > 0].min())
        raise RuntimeError(f"linalg.lu_factor: U[{first - 1},{first - 1}] is zero (shape "
                           f"{tuple(A.shape)}), so lu_solve with it would divide by zero: A is "
                           f"singular. To factor it all the same, use linalg.lu(A) or "
                           f"linalg.lu_factor_ex(A)")
    return return_types.linalg_lu_factor(packed, pivots)


def lu(A: Tensor, *, pivot: bool = True):  # noqa: N803
    """``(P, L, U)`` with A = P L U: P m×m a permutation, L m×k unit lower triangular,
    U k×n upper triangular (k = min(m, n)). Singular matrices are factored too.
    With pivot=False no rows are swapped and P is an empty tensor (as PyTorch)."""
    packed, pivots, _info = lu_factor_ex(A, pivot=pivot)
    p, lower, upper = lu_unpack(packed, pivots, unpack_pivots=pivot)
    return return_types.linalg_lu(p, lower, upper)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
             adjoint: bool = False) -> Tensor:
    """X with A X = B from A's ``lu_factor``: X = U⁻¹ L⁻¹ Pᵀ B. ``adjoint=True`` solves
    Aᴴ X = B instead; ``left=False`` solves X A = B (X Aᴴ = B with adjoint).

    Differentiable in B and in LU (through L = tril(LU, -1) + I and U = triu(LU)).
    A complex adjoint solve is the transposed one, conjugated: Aᴴ X = B is
    Aᵀ X̄ = B̄.
    """
    op = "linalg.lu_solve"
    check_matrices(op, LU)
    _check_rhs(op, LU, B, left)
    if adjoint and LU.dtype.is_complex:
        return _lu_solve(LU, pivots, B.conj(), left, True).conj()
    return _lu_solve(LU, pivots, B, left, adjoint)


def _lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, left: bool, transpose: bool):  # noqa: N803
    """lu_solve with ``transpose``: Aᵀ X = B (left) or X Aᵀ = B, never conjugating."""
    p, lower, upper = lu_unpack(LU, pivots)
    rhs = B if left else B.mT
    if transpose == left:  # Aᵀ Y = rhs with Aᵀ = Uᵀ Lᵀ Pᵀ
        inner = solve_triangular(upper.mT, rhs, upper=False)
        x = matmul(p, solve_triangular(lower.mT, inner, upper=True, unitriangular=True))
    else:  # A Y = rhs with A = P L U
        inner = solve_triangular(lower, matmul(p.mT, rhs), upper=False, unitriangular=True)
        x = solve_triangular(upper, inner, upper=True)
    return x if left else x.mT.contiguous()
