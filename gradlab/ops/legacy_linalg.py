"""PyTorch's older top-level linear algebra: qr, svd, lu, lu_unpack, lu_solve,
cholesky_solve, cholesky_inverse, triangular_solve.

Code written before ``torch.linalg`` existed calls these; each keeps its old
conventions, which differ from ``linalg``'s in ways that bite:

* ``svd(A)`` returns **V**, not Vh (A = U diag(S) Vᴴ), and ``some=True`` (the
  default) means the *reduced* factors. ``compute_uv=False`` still returns
  three tensors, with U and V zero-filled.
* ``qr(A, some=True)``: some=False is linalg.qr's mode='complete'.
* ``lu(A)`` packs L and U into one matrix (L's unit diagonal is implied) and
  returns 1-based int32 pivots, LAPACK's format: row i was swapped with row
  ``pivots[i] - 1``. ``lu_unpack`` makes P, L, U of it, with A = P L U.
* ``triangular_solve(b, A)`` puts the right-hand side first, reads only A's
  upper triangle by default, and returns ``(solution, a copy of A)``.

Everything but ``lu`` is a composition of differentiable ops (linalg's SVD
and QR, ``solve``, tril/triu), so gradients match PyTorch's, which treat a
triangular solve's matrix as triangular (tril/triu pass no gradient to the
other half) and ``cholesky_solve``'s factor as a full matrix.

``lu`` is one node (``LuFactor``). For square A = P L U, differentiating gives
L⁻¹ Pᵀ dA U⁻¹ = L⁻¹ dL + dU U⁻¹: the first term strictly lower triangular,
the second upper. So with X = L⁻¹ Pᵀ Ȧ U⁻¹ the tangents are L̇ = L tril(X, -1)
and U̇ = triu(X) U, and the gradient (the transpose of that map) is

    grad_A = P L⁻ᴴ (tril(Lᴴ G_L, -1) + triu(G_U Uᴴ)) U⁻ᴴ

with G_L, G_U the strictly lower and upper parts of the packed gradient (ᴴ is
ᵀ for real matrices).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .creation import _new
from .decompositions import qr_of, svd_of
from .linalg import matmul
from .solvers import Solve, check_matrices, eye_like
from .triangular import tril, triu

__all__ = ["qr", "svd", "lu", "lu_unpack", "lu_solve", "cholesky_solve", "cholesky_inverse",
           "triangular_solve"]
TENSOR_METHODS = ["qr", "svd", "lu", "lu_solve", "cholesky_solve", "cholesky_inverse",
                  "triangular_solve"]

# PyTorch's torch.return_types for these ops (named tuples, in gradlab/return_types.py)
qr_result = return_types.qr
svd_result = return_types.svd
lu_unpack_result = return_types.lu_unpack
triangular_solve_result = return_types.triangular_solve


def qr(input: Tensor, some: bool = True):
    """``(Q, R)`` with A = Q R; some=False gives the complete m×m Q (``linalg.qr``'s
    mode='complete')."""
    return qr_result(*qr_of("qr", input, "reduced" if some else "complete"))


def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``(U, S, V)`` with A = U diag(S) Vᴴ: **V**, not linalg.svd's Vh = Vᴴ.

    some=True: reduced (U m×k, V n×k, k = min(m, n)); some=False: U m×m, V n×n.
    compute_uv=False: only S is computed, U and V are zeros (m×m and n×n).
    """
    check_matrices("svd", input, square=False)
    if not compute_uv:
        s = svd_of("svd", input, False)[1]
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return svd_result(input.new_zeros((*batch, m, m)), s, input.new_zeros((*batch, n, n)))
    u, s, vh = svd_of("svd", input, not some)
    return svd_result(u, s, vh.mH)


def _solve(op: str, A: Tensor, B: Tensor) -> Tensor:  # noqa: N803
    """X with A X = B, B always matrices (never read as vectors); batch dims broadcast."""
    _check_rhs(op, A, B)
    return Solve.apply(A, B, False, op)


def _check_rhs(op: str, A: Tensor, B: Tensor) -> tuple:  # noqa: N803
    """B's rows must match A's size, batch dims broadcast, dtypes agree; the batch shape."""
    n = A.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"{op}: the matrix is {n}×{n} (shape {tuple(A.shape)}) but the "
                           f"right-hand side has {B.shape[-2]} rows (shape {tuple(B.shape)}); "
                           f"they must match")
    try:
        batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of {tuple(A.shape)} and {tuple(B.shape)} "
                           f"don't broadcast (each pair of sizes must be equal or 1)") from None
    if B.dtype is not A.dtype:
        raise RuntimeError(f"{op}: the right-hand side has dtype {B.dtype} but the matrix "
                           f"{A.dtype}. Fix: b.to({A.dtype})")
    return batch


# --- LU ------------------------------------------------------------------------------------

def _lu_packed(a, pivot: bool):
    """Gaussian elimination with partial pivoting on a batch of m×n matrices (raw arrays):
    the packed LU, 1-based int32 pivots and LAPACK's info (1 + the first zero pivot, or 0).

    Step k picks the row with the largest |value| in column k (on and below the
    diagonal; |Re| + |Im| for complex values, as LAPACK measures them),
    swaps it up, stores the multipliers l_ik = a_ik / a_kk below the
    diagonal and subtracts l_ik × row k from the rows beneath.
    """
    xp = xp_for(a)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    lu = a.reshape((-1, m, n)).copy()
    k_max = min(m, n)
    rows = xp.arange(lu.shape[0])
    pivots = xp.empty((lu.shape[0], k_max), dtype=xp.int32)
    info = xp.zeros(lu.shape[0], dtype=xp.int32)
    for k in range(k_max):
        if pivot:
            column = lu[:, k:, k]
            if column.dtype.kind == "c":  # LAPACK's measure for complex pivots: |Re| + |Im|
                column = xp.abs(column.real) + xp.abs(column.imag)
            p = k + xp.argmax(xp.abs(column), axis=1)
            top, chosen = lu[rows, k].copy(), lu[rows, p].copy()
            lu[rows, k], lu[rows, p] = chosen, top
        else:
            p = xp.full(lu.shape[0], k)
        pivots[:, k] = p + 1
        head = lu[:, k, k]
        zero = head == 0
        info = xp.where((info == 0) & zero, k + 1, info).astype(xp.int32)
        multipliers = lu[:, k + 1:, k] / xp.where(zero, 1, head)[:, None]  # (LAPACK skips 0)
        multipliers = xp.where(zero[:, None], lu[:, k + 1:, k], multipliers)
        lu[:, k + 1:, k] = multipliers
        lu[:, k + 1:, k + 1:] -= multipliers[:, :, None] * lu[:, k, None, k + 1:]
    return (lu.reshape(a.shape), pivots.reshape(batch + (k_max,)), info.reshape(batch))


def _permutation(pivots, m: int, dtype, xp):
    """P (m×m, batched like ``pivots``) with A = P L U, from LAPACK's 1-based row swaps."""
    batch = pivots.shape[:-1]
    flat = pivots.reshape((-1, pivots.shape[-1])).astype(xp.int64) - 1
    order = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    rows = xp.arange(flat.shape[0])
    for k in range(flat.shape[1]):  # replay the swaps on the row order: Pᵀ A = A[order]
        p = flat[:, k]
        here, there = order[rows, k].copy(), order[rows, p].copy()
        order[rows, k], order[rows, p] = there, here
    perm = xp.zeros((flat.shape[0], m, m), dtype=dtype)
    perm[rows[:, None], order, xp.arange(m)[None, :]] = 1  # P[order[i], i] = 1
    return perm.reshape(batch + (m, m))


def _unit_lower(packed: Tensor) -> Tensor:
    """L (m×k): the strict lower part of the packed LU and ones on the diagonal."""
    m, n = packed.shape[-2:]
    k = min(m, n)
    lower = tril(packed.narrow(-1, 0, k), -1)
    return lower + eye_like(packed, m).narrow(-1, 0, k)


class LuFactor(Function):
    """A = P L U, packed; see the module docstring for the derivative.

    Gradients are for square matrices (as the formula needs L and U invertible).
    """

    raw = True
    supports_complex = True
    name = "linalg_lu_factor_ex"
    node_name = "LinalgLuFactorExBackward0"

    @staticmethod
    def forward(ctx, a, pivot):
        packed, pivots, info = _lu_packed(a, pivot)
        ctx.save_for_backward(packed, pivots)
        return packed, pivots, info

    @staticmethod
    def _factors(ctx):
        packed, pivots = ctx.saved_tensors
        m, n = packed.shape[-2:]
        if m != n:
            raise NotImplementedError(
                f"lu: the derivative is implemented for square matrices, got shape "
                f"{tuple(packed.shape)}. Fix: differentiate through linalg.qr or the SVD for "
                f"a rectangular A, or pad it to a square one")
        p = _new(_permutation(pivots._data, m, packed._data.dtype, xp_for(packed._data)),
                 packed.device)
        return p, _unit_lower(packed), triu(packed)

    @staticmethod
    def backward(ctx, grad, _grad_pivots, _grad_info):
        p, lower, upper = LuFactor._factors(ctx)
        phi = tril(lower.mH @ tril(grad, -1), -1) + triu(triu(grad) @ upper.mH)
        left = Solve.apply(lower.mH, phi, False, "lu (backward)")  # L⁻ᴴ Φ
        return p @ Solve.apply(upper, left.mH, False, "lu (backward)").mH, None  # … U⁻ᴴ

    @staticmethod
    def jvp(ctx, tangent, _pivot):
        p, lower, upper = LuFactor._factors(ctx)
        inner = Solve.apply(lower, p.mT @ tangent, False, "lu")  # L⁻¹ Pᵀ Ȧ
        x = Solve.apply(upper.mT, inner.mT, False, "lu").mT  # … U⁻¹
        return lower @ tril(x, -1) + triu(x) @ upper, None, None


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):  # noqa: N803 - PyTorch's name
    """``(A_LU, pivots)``, or ``(A_LU, pivots, infos)`` with get_infos: the LU factorisation
    with partial pivoting, packed as LAPACK does (see the module docstring).

    A singular matrix is factored all the same (U has a zero on its diagonal);
    ``infos`` is then 1 + the first such position, else 0.
    """
    check_matrices("lu", A, square=False)
    packed, pivots, infos = LuFactor.apply(A, bool(pivot))
    return (packed, pivots, infos) if get_infos else (packed, pivots)


def _check_pivots(op: str, LU_data: Tensor, LU_pivots) -> None:  # noqa: N803
    if not isinstance(LU_pivots, Tensor) or LU_pivots.dtype not in (_dt.int32, _dt.int64):
        what = LU_pivots.dtype if isinstance(LU_pivots, Tensor) else type(LU_pivots).__name__
        raise TypeError(f"{op}: LU_pivots must be an int32 tensor (lu's second output), got "
                        f"{what}")
    k = min(LU_data.shape[-2:])
    if tuple(LU_pivots.shape) != (*LU_data.shape[:-2], k):
        raise RuntimeError(f"{op}: LU_pivots has shape {tuple(LU_pivots.shape)} but LU_data "
                           f"{tuple(LU_data.shape)} needs {(*LU_data.shape[:-2], k)}: pass "
                           f"the pair that lu() returned")


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True):
    """``(P, L, U)`` from ``lu``'s packed result, with A = P L U: L (m×k) unit lower
    triangular, U (k×n) upper triangular, P (m×m) a permutation. What is not unpacked is
    an empty tensor. L and U are differentiable in LU_data (tril / triu of it)."""
    check_matrices("lu_unpack", LU_data, square=False)
    _check_pivots("lu_unpack", LU_data, LU_pivots)
    m, n = LU_data.shape[-2:]
    empty = LU_data.new_zeros((0,))
    p = lower = upper = empty
    if unpack_pivots:
        p = _new(_permutation(LU_pivots._data, m, LU_data._data.dtype,
                              xp_for(LU_data._data)), LU_data.device)
    if unpack_data:
        lower = _unit_lower(LU_data)
        upper = triu(LU_data.narrow(-2, 0, min(m, n)))
    return lu_unpack_result(p, lower, upper)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
    """X with A X = b, from A's ``lu``: X = U⁻¹ L⁻¹ Pᵀ b (batch dims broadcast)."""
    check_matrices("lu_solve", LU_data)
    _check_pivots("lu_solve", LU_data, LU_pivots)
    if not isinstance(b, Tensor) or b.ndim < 2:
        raise RuntimeError(f"lu_solve: b must be a matrix (n×k, with any batch dims), got "
                           f"{tuple(b.shape) if isinstance(b, Tensor) else type(b).__name__}. "
                           f"Fix: b.unsqueeze(-1) for a vector")
    _check_rhs("lu_solve", LU_data, b)
    p, lower, upper = lu_unpack(LU_data, LU_pivots)
    return _solve("lu_solve", upper, _solve("lu_solve", lower, matmul(p.mT, b)))


# --- Cholesky-based and triangular solves --------------------------------------------------

def _factor_and_rhs(op: str, B, L, upper):  # noqa: N803
    check_matrices(op, L)
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise RuntimeError(f"{op}: the right-hand side must be a matrix (n×k, with any batch "
                           f"dims), got "
                           f"{tuple(B.shape) if isinstance(B, Tensor) else type(B).__name__}. "
                           f"Fix: b.unsqueeze(-1) for a vector")
    return (L.mH, L) if upper else (L, L.mH)  # (first, second): A = first @ second


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """X with A X = B, given A's Cholesky factor L (A = L Lᴴ; upper=True: A = Uᴴ U):
    two triangular solves, X = L⁻ᴴ (L⁻¹ B), never forming A."""
    first, second = _factor_and_rhs("cholesky_solve", B, L, upper)
    return _solve("cholesky_solve", second, _solve("cholesky_solve", first, B))


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """A⁻¹ from A's Cholesky factor L (A = L Lᴴ; upper=True: A = Uᴴ U)."""
    check_matrices("cholesky_inverse", L)
    eye = eye_like(L, L.shape[-1]).expand(*L.shape)
    return cholesky_solve(eye, L, upper)


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: N803, E501
                     unitriangular: bool = False):
    """``(solution, cloned_coefficient)``: X with A X = b (Aᵀ X = b with transpose), reading
    only A's upper (or lower) triangle, and its diagonal as ones with unitriangular.
    ``cloned_coefficient`` is a copy of A. (Deprecated in PyTorch for
    ``linalg.solve_triangular``, which puts A first.)"""
    _factor_and_rhs("triangular_solve", b, A, False)
    batch = _check_rhs("triangular_solve", A, b)
    triangle = triu(A, 1 if unitriangular else 0) if upper else tril(A, -1 if unitriangular
                                                                     else 0)
    if unitriangular:
        triangle = triangle + eye_like(A, A.shape[-1])
    solution = _solve("triangular_solve", triangle.mT if transpose else triangle, b)
    # (the copy of A has the broadcast batch shape, as PyTorch's)
    return triangular_solve_result(solution, A.expand(*batch, *A.shape[-2:]).clone())
