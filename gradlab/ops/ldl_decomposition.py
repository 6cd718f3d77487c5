"""``torch.linalg``'s LDLᵀ factorisation of symmetric indefinite matrices: ldl_factor_ex,
ldl_factor, ldl_solve.

A symmetric positive-definite A is L D Lᵀ with L unit lower triangular and D
diagonal (Cholesky without square roots). An *indefinite* A breaks this: with
A = [[0, 1], [1, 0]] the first pivot d₁ = a₁₁ is 0, and a tiny a₁₁ gives huge
multipliers a_i1 / a₁₁, so rounding errors swamp the result. Row swaps alone
(LU's partial pivoting) would destroy the symmetry, so LDLᵀ swaps rows *and*
the same columns: Pᵀ A P stays symmetric. But symmetric swaps can only bring
a *diagonal* entry to the pivot position, and the example has zeros on its
whole diagonal; no 1×1 pivot exists. Its large entries sit off the
diagonal, so the pivot becomes the 2×2 block [[a_kk, a_rk], [a_rk, a_rr]],
which is invertible when a_rk dominates. D is then block diagonal, with 1×1
and 2×2 blocks:

    Pᵀ A P = L D Lᵀ       (Lᴴ and a Hermitian D for hermitian=True)

Bunch and Kaufman's rule (LAPACK's sytrf) picks the pivot at step k from
column k (the largest off-diagonal |a_rk|, r = imax) and row r's largest
off-diagonal entry ρ, with α = (1 + √17) / 8 ≈ 0.64, the value for which a
2×2 step lets the entries grow no more than two 1×1 steps (by at most
(1 + 1/α)² ≈ 6.6), as partial pivoting bounds LU's growth:

    |a_kk| ≥ α |a_rk|            or
    |a_kk| ρ ≥ α |a_rk|²          keep a_kk: a 1×1 pivot, no swap
    |a_rr| ≥ α ρ                 swap k and r: the 1×1 pivot a_rr
    otherwise                    swap k+1 and r: the 2×2 pivot on rows k, r

Storage, as LAPACK's (UPLO='L', what PyTorch uses): ``LD`` holds D's
diagonal and, for each 2×2 block, its entry below the diagonal; L's
multipliers fill the rest of the lower triangle (L's unit diagonal is
implied); the upper triangle is zero. ``pivots`` (1-based int32): pivots[k] =
r > 0 means a 1×1 block at k after swapping k with r - 1; pivots[k] =
pivots[k+1] = -r < 0 means a 2×2 block at k, k+1 after swapping k+1 with
r - 1. One catch: LAPACK swaps only the *trailing* rows at each step, not the
columns of L already written, so L's columns are each in the row order of
their own step. ``ldl_solve`` replays the later swaps on them (``_standard_form``)
to get one L with Pᵀ A P = L D Lᵀ, then solves

    A X = B  <=>  X = P L⁻ᵀ D⁻¹ L⁻¹ Pᵀ B

with two unit-triangular solves and the 1×1 / 2×2 block solves of D, all
differentiable gradlab ops: so ldl_solve is differentiable in B (and in LD),
where PyTorch's raises. ldl_factor has no derivative, as in PyTorch.

The factorisation is LAPACK's unblocked sytf2 / hetf2 step for step (the
same arithmetic in the same order, so the same pivots as PyTorch's blocked
sytrf), vectorised over the batch: the loop runs over columns k, and each
matrix takes its own 1×1, 2×2 or zero-column branch through masks.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .complex_parts import real
from .creation import _new
from .diagonals import diagonal
from .gather_scatter import gather
from .joining import cat
from .linalg import matmul
from .selection import where
from .solvers import LinAlgError, check_matrices
from .triangular_solvers import solve_triangular

__all__: list[str] = []  # torch.linalg names only: gradlab.linalg exports them
TENSOR_METHODS: list[str] = []


# --- the factorisation (raw arrays) ----------------------------------------------------------

def _measure(xp, values, cabs1: bool):
    """LAPACK's size of an entry: |x| for real numbers, |Re x| + |Im x| (``cabs1``, cheaper
    than the modulus) for complex ones."""
    if cabs1:
        return xp.abs(values.real) + xp.abs(values.imag)
    return xp.abs(values)


def _mirror(xp, s, hermitian: bool):
    """The full symmetric (Hermitian) matrices whose lower triangles are ``s``'s."""
    below = xp.tril(s, -1)
    above = xp.swapaxes(below.conj() if hermitian else below, -1, -2)
    return xp.tril(s) + above


def _bunch_kaufman(a, hermitian: bool):
    """LD, pivots, info of a batch of n×n matrices (raw arrays), reading their lower triangles.

    The working matrix ``s`` is kept whole (symmetric, or Hermitian with a real
    diagonal), so a symmetric swap is a row swap plus a column swap and every
    entry LAPACK reads below the diagonal is also found above it. Column k
    of LD is written when step k ends; ``s`` only ever changes at and after k.
    """
    xp = xp_for(a)
    batch, n = a.shape[:-2], a.shape[-1]
    is_complex = a.dtype.kind == "c"
    herm = hermitian and is_complex
    m = int(np.prod(batch))
    s = _mirror(xp, a.reshape((m, n, n)), herm)
    if herm:  # zhetf2 reads only the real part of the diagonal
        idx = xp.arange(n)
        s[:, idx, idx] = s[:, idx, idx].real
    ld = xp.zeros_like(s)
    pivots = xp.zeros((m, n), dtype=xp.int32)
    info = xp.zeros(m, dtype=xp.int32)
    real_dtype = s.real.dtype
    one_, seventeen, eight = (real_dtype.type(v) for v in (1, 17, 8))
    alpha = (one_ + np.sqrt(seventeen)) / eight  # in A's precision, as LAPACK's s/d routines
    second = xp.zeros(m, dtype=bool)  # k is the second column of a 2×2 block: nothing to do
    for k in range(n):
        r = xp.nonzero(~second)[0]
        second[:] = False
        if r.size == 0:
            continue
        diag_kk = s[r, k, k].real if herm else s[r, k, k]
        absakk = _measure(xp, diag_kk, is_complex and not herm)
        if k < n - 1:  # the largest entry below the diagonal: |a_rk| at r = imax
            column = _measure(xp, s[r, k + 1:, k], is_complex)
            imax = k + 1 + xp.argmax(column, axis=1)
            colmax = column.max(axis=1)
        else:
            imax = xp.full(r.size, k)
            colmax = xp.zeros(r.size, dtype=real_dtype)
        zero = (xp.maximum(absakk, colmax) == 0) | xp.isnan(absakk)
        # ρ: the largest |a_rj| in row imax off the diagonal (j ≥ k)
        row = _measure(xp, s[r, imax, :], is_complex)
        cols = xp.arange(n)[None, :]
        off = (cols >= k) & (cols != imax[:, None])
        rowmax = xp.where(off, row, 0).max(axis=1)
        safe_rowmax = xp.where(rowmax == 0, 1, rowmax)
        keep = (absakk >= alpha * colmax) | (absakk >= alpha * colmax * (colmax / safe_rowmax))
        diag_rr = s[r, imax, imax].real if herm else s[r, imax, imax]
        swap_one = _measure(xp, diag_rr, is_complex and not herm) >= alpha * rowmax
        one = zero | keep | swap_one
        kp = xp.where(zero | keep, k, imax)
        kk = xp.where(one, k, k + 1)
        # the symmetric swap kk <-> kp (a no-op where they are equal): rows, then columns
        rows_kk, rows_kp = s[r, kk, :].copy(), s[r, kp, :].copy()
        s[r, kk, :], s[r, kp, :] = rows_kp, rows_kk
        cols_kk, cols_kp = s[r, :, kk].copy(), s[r, :, kp].copy()
        s[r, :, kk], s[r, :, kp] = cols_kp, cols_kk
        pivots[r, k] = xp.where(one, kp + 1, -(kp + 1))
        if not one.all():
            two = r[~one]
            pivots[two, k + 1] = pivots[two, k]
            second[two] = True
            _pivot_2x2(xp, s, ld, two, k, herm)
        if zero.any():  # an all-zero column (or NaN pivot): D has a 0, L's column stays
            z = r[zero]
            info[z] = xp.where(info[z] == 0, k + 1, info[z])
            ld[z, k:, k] = s[z, k:, k]
        single = r[one & ~zero]
        if single.size:
            _pivot_1x1(xp, s, ld, single, k, herm)
        s = _mirror(xp, s, herm)
    return (ld.reshape(a.shape), pivots.reshape(batch + (n,)), info.reshape(batch))


def _pivot_1x1(xp, s, ld, r, k: int, herm: bool) -> None:
    """A 1×1 pivot d = s_kk (dsytf2 / zhetf2): the rank-1 update s₂₂ -= x (1/d) xᵀ of the
    trailing block (x = s[k+1:, k]; xᴴ for Hermitian), and L's column x / d."""
    d = s[r, k, k].real if herm else s[r, k, k]
    ld[r, k, k] = d
    x = s[r, k + 1:, k]
    inverse = 1 / d
    # dsyr: a_ij + x_i · (-(1/d) · x_j); zher conjugates x_j
    temp = (-inverse)[:, None] * (x.conj() if herm else x)
    trailing = s[r, k + 1:, k + 1:] + x[:, :, None] * temp[:, None, :]
    if herm:
        idx = xp.arange(trailing.shape[-1])
        trailing[:, idx, idx] = trailing[:, idx, idx].real
    s[r, k + 1:, k + 1:] = trailing
    ld[r, k + 1:, k] = inverse[:, None] * x


def _pivot_2x2(xp, s, ld, r, k: int, herm: bool) -> None:
    """A 2×2 pivot D = [[s_kk, ·], [s_k+1,k, s_k+1,k+1]] (dsytf2 / zhetf2): the rank-2
    update of the block below it with W D⁻¹ Wᵀ (W = s[k+2:, k:k+2]), in LAPACK's scaled
    form that never forms D⁻¹, and L's two columns W D⁻¹."""
    ld[r, k, k] = s[r, k, k]
    ld[r, k + 1, k] = s[r, k + 1, k]
    ld[r, k + 1, k + 1] = s[r, k + 1, k + 1]
    if k + 2 >= s.shape[-1]:
        return
    e = s[r, k + 1, k]
    wk_col, wk1_col = s[r, k + 2:, k], s[r, k + 2:, k + 1]
    if herm:  # zhetf2
        size = xp.abs(e)
        d11 = (s[r, k + 1, k + 1].real / size)[:, None]
        d22 = (s[r, k, k].real / size)[:, None]
        tt = 1 / (d11 * d22 - 1)
        d21 = (e / size)[:, None]
        scale = tt / size[:, None]
        wk = scale * (d11 * wk_col - d21 * wk1_col)
        wkp1 = scale * (d22 * wk1_col - d21.conj() * wk_col)
        update_k, update_k1 = wk.conj(), wkp1.conj()
    else:  # dsytf2, zsytf2
        d11 = (s[r, k + 1, k + 1] / e)[:, None]
        d22 = (s[r, k, k] / e)[:, None]
        t = 1 / (d11 * d22 - 1)
        d21 = t / e[:, None]
        wk = d21 * (d11 * wk_col - wk1_col)
        wkp1 = d21 * (d22 * wk1_col - wk_col)
        update_k, update_k1 = wk, wkp1
    trailing = (s[r, k + 2:, k + 2:] - wk_col[:, :, None] * update_k[:, None, :]
                - wk1_col[:, :, None] * update_k1[:, None, :])
    if herm:
        idx = xp.arange(trailing.shape[-1])
        trailing[:, idx, idx] = trailing[:, idx, idx].real
    s[r, k + 2:, k + 2:] = trailing
    ld[r, k + 2:, k] = wk
    ld[r, k + 2:, k + 1] = wkp1


class LdlFactor(Function):
    """LD, pivots, info of A (Bunch-Kaufman, see the module docstring). No derivative, as in
    PyTorch: the pivot choices jump as A moves, and no formula for dLD is implemented."""

    raw = True
    supports_complex = True
    name = "linalg_ldl_factor_ex"
    node_name = "LinalgLdlFactorExBackward0"

    @staticmethod
    def forward(ctx, a, hermitian):
        return _bunch_kaufman(a, hermitian)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            "linalg.ldl_factor: the derivative is not implemented (as in PyTorch: "
            "'derivative for aten::linalg_ldl_factor_ex is not implemented'). Fix: to "
            "differentiate a solve with a symmetric A, use linalg.solve(A, B) (or "
            "linalg.cholesky for a positive-definite A); ldl_solve is differentiable in B")

    jvp = backward  # forward mode has no derivative to carry either


# --- the public functions ------------------------------------------------------------------

def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False):  # noqa: N803
    """``(LD, pivots, info)``: the Bunch-Kaufman LDLᵀ factorisation of symmetric A (LDLᴴ of
    Hermitian A with hermitian=True), read from A's lower triangle; LAPACK's compact format
    (see the module docstring). info (int32 per matrix): 0, or k when D's k-th diagonal entry
    is exactly zero (A is singular; the factorisation is complete all the same).
    check_errors=True raises on info > 0 instead. hermitian only matters for complex A."""
    op = "linalg.ldl_factor_ex"
    check_matrices(op, A)
    ld, pivots, info = LdlFactor.apply(A, bool(hermitian))
    if check_errors and bool((info > 0).any()):
        raise _singular(op, A, info)
    return return_types.linalg_ldl_factor_ex(ld, pivots, info)


def _singular(op: str, A: Tensor, info: Tensor) -> LinAlgError:  # noqa: N803
    first = int(info[info > 0].min())
    return LinAlgError(
        f"{op}: a matrix of shape {tuple(A.shape)} is singular: D[{first - 1},{first - 1}] "
        f"is exactly zero (info = {info.tolist()}: column {first} was zero when its turn "
        f"came), so ldl_solve with it would divide by zero. To factor it all the same, use "
        f"linalg.ldl_factor_ex(A) without check_errors; check the rank with "
        f"linalg.matrix_rank")


def ldl_factor(A: Tensor, *, hermitian: bool = False):  # noqa: N803
    """``(LD, pivots)`` for ``ldl_solve``. Raises ``LinAlgError`` if D has an exact zero on its
    diagonal (A is singular); ``ldl_factor_ex`` returns the factors and info instead."""
    ld, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if bool((info > 0).any()):
        raise _singular("linalg.ldl_factor", A, info)
    return return_types.linalg_ldl_factor(ld, pivots)


def _standard_form(pivots, n: int):
    """From LAPACK's pivots (an int array, batch × n): ``order``, ``source``, ``first`` and
    ``second`` (arrays), with Pᵀ A P = A[order][:, order] = L D Lᵀ and L[i, j] =
    LD[source[i, j], j] below the diagonal (outside 2×2 blocks); first / second mark the
    rows of each 2×2 block. Or a message saying why the pivots can't be LAPACK's.

    Replays the swaps: the swap of step k (rows kk and kp, kk = k or k + 1) is
    applied to the columns of L written before it (j < k), as LAPACK's
    sytrs does on the right-hand side as it goes.
    """
    xp = xp_for(pivots)
    m = pivots.shape[0]
    p = pivots.astype(xp.int64)
    order = xp.broadcast_to(xp.arange(n), (m, n)).copy()
    source = xp.broadcast_to(xp.arange(n)[:, None], (m, n, n)).copy()
    first = xp.zeros((m, n), dtype=bool)
    second = xp.zeros((m, n), dtype=bool)
    for k in range(n):
        r = xp.nonzero(~second[:, k])[0]
        if r.size == 0:
            continue
        pk = p[r, k]
        is_two = pk < 0
        kp = xp.abs(pk) - 1
        kk = xp.where(is_two, k + 1, k)
        if bool((pk == 0).any()) or bool((kp >= n).any()):
            return (f"every pivot must satisfy 1 <= |pivot| <= n = {n}, got "
                    f"{int(pk[(pk == 0) | (kp >= n)][0])} at position {k}")
        if bool((kp < kk).any()):
            return (f"pivots[{k}] = {int(pk[kp < kk][0])} would swap row {k} with an earlier "
                    f"row; LAPACK only swaps with later rows (|pivot| >= {k + 1}, or >= "
                    f"{k + 2} for a 2×2 block)")
        two = r[is_two]
        if two.size:
            if k + 1 >= n or bool((p[two, k + 1] != p[two, k]).any()):
                return (f"pivots[{k}] is negative (a 2×2 block at rows {k}, {k + 1}), so "
                        f"pivots[{k + 1}] must be the same negative number")
            first[two, k] = True
            second[two, k + 1] = True
        here, there = order[r, kk].copy(), order[r, kp].copy()
        order[r, kk], order[r, kp] = there, here
        if k:
            here, there = source[r, kk, :k].copy(), source[r, kp, :k].copy()
            source[r, kk, :k], source[r, kp, :k] = there, here
    return order, source, first, second


def _check_solve_args(op: str, LD: Tensor, pivots, B) -> None:  # noqa: N803
    check_matrices(op, LD)
    if not isinstance(pivots, Tensor):
        raise TypeError(f"{op}: pivots must be a Tensor (ldl_factor's second output), got "
                        f"{type(pivots).__name__}")
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex or pivots.dtype is _dt.bool:
        raise RuntimeError(f"{op}: pivots must be integers (ldl_factor's int32 pivots), got "
                           f"{pivots.dtype}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{op}: pivots has shape {tuple(pivots.shape)} but LD "
                           f"{tuple(LD.shape)} needs {tuple(LD.shape[:-1])}: pass the pair "
                           f"that ldl_factor returned")
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    if B.ndim < 2:
        raise RuntimeError(f"{op}: B must be a matrix or a batch of matrices, got shape "
                           f"{tuple(B.shape)}. Fix: B.unsqueeze(-1) for a vector (one column)")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"{op}: A is {n}×{n} (LD has shape {tuple(LD.shape)}) so B needs "
                           f"{n} rows for A X = B, got shape {tuple(B.shape)}")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"{op}: LD and B must have the same dtype, got {LD.dtype} and "
                           f"{B.dtype}. Fix: B.to(LD.dtype)")
    try:
        np.broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of LD {tuple(LD.shape)} and B "
                           f"{tuple(B.shape)} don't broadcast (each pair of sizes must be "
                           f"equal or 1)") from None


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:  # noqa: N803, E501
    """X with A X = B from A's ``ldl_factor``: X = P L⁻ᵀ D⁻¹ L⁻¹ Pᵀ B (L⁻ᴴ with hermitian=True,
    which must match the factorisation's). Batch dims broadcast.

    Made of differentiable ops (matmul with P, gather, two unit-triangular solves, D's block
    solves), so it is differentiable in B and in LD (PyTorch's is in neither). Malformed
    pivots raise here; PyTorch checks only their range.
    """
    op = "linalg.ldl_solve"
    _check_solve_args(op, LD, pivots, B)
    n = LD.shape[-1]
    herm = bool(hermitian) and LD.dtype.is_complex
    xp = xp_for(LD._data)
    batch = tuple(LD.shape[:-2])
    found = _standard_form(xp.asarray(pivots._data).reshape((int(np.prod(batch)), n)), n)
    if isinstance(found, str):
        raise RuntimeError(f"{op}: the pivots are not LAPACK's (as ldl_factor returns them): "
                           f"{found}")
    if n == 0:
        return B.expand(*np.broadcast_shapes(batch, tuple(B.shape[:-2])), *B.shape[-2:]).clone()
    order, source, first, second = found

    def constant(array, dtype=None):
        array = array.reshape(batch + array.shape[1:])
        return _new(array if dtype is None else array.astype(dtype), LD.device)

    dtype = LD._data.dtype
    m = order.shape[0]
    perm = xp.zeros((m, n, n), dtype=dtype)
    perm[xp.arange(m)[:, None], order, xp.arange(n)[None, :]] = 1  # P[order[i], i] = 1
    perm = constant(perm)
    # L: the multipliers, each column in the final row order; not the 2×2 blocks' entries
    below = xp.tril(xp.ones((n, n), dtype=bool), -1)
    in_block = xp.zeros((m, n, n), dtype=bool)
    in_block[:, xp.arange(1, n), xp.arange(n - 1)] = second[:, 1:]
    lower = gather(LD, -2, constant(source)) * constant(below & ~in_block, dtype)
    y = solve_triangular(lower, matmul(perm.mT, B), upper=False, unitriangular=True)
    z = _block_diagonal_solve(LD, y, constant(first[..., None]), constant(second[..., None]),
                              herm)
    lower_t = lower.mH if herm else lower.mT
    return matmul(perm, solve_triangular(lower_t, z, upper=True, unitriangular=True))


def _block_diagonal_solve(LD: Tensor, y: Tensor, first: Tensor, second: Tensor,  # noqa: N803
                          herm: bool) -> Tensor:
    """Z with D Z = Y, D block diagonal (1×1 and 2×2 blocks, read from LD), as LAPACK's
    sytrs / hetrs: z_i = y_i · (1/d_i) for a 1×1 block; for a 2×2 block of rows i, p (its
    partner) with off-diagonal entries D[i, p] and D[p, i] (conjugates for Hermitian D):

        z_i = ((d_p / D[p, i]) · (y_i / D[i, p]) - y_p / D[p, i]) / denom,
        denom = (d_i / D[i, p]) · (d_p / D[p, i]) - 1

    (the 2×2 inverse, scaled by the off-diagonal entry so nothing overflows).

    Rows are vectors (…, n, 1) here; ``first`` and ``second`` mark each block's rows.
    Entries a branch does not use are replaced by harmless ones (1 or 0) before
    dividing, so no inf or NaN reaches a gradient through ``where``.
    """
    two = first | second
    d = diagonal(LD, 0, -2, -1).unsqueeze(-1)
    if herm:
        d = real(d).to(LD.dtype)  # hetrs reads only the real part of D's diagonal
    one = d.new_ones(d.shape[:-2] + (1, 1))
    zero_row = y.new_zeros(y.shape[:-2] + (1, y.shape[-1]))
    below = diagonal(LD, -1, -2, -1).unsqueeze(-1)  # LD[k+1, k]: a block's entry
    # each row's block entry e (1 outside 2×2 blocks), and its partner's d and y
    e = where(first, cat([below, one], -2), where(second, cat([one, below], -2), one))
    e_conj = e.conj() if herm else e
    d_partner = where(first, cat([d[..., 1:, :], one], -2),
                      where(second, cat([one, d[..., :-1, :]], -2), one))
    y_partner = where(first, cat([y[..., 1:, :], zero_row], -2),
                      where(second, cat([zero_row, y[..., :-1, :]], -2), 0))
    # D[i, p] and D[p, i]: the first row of a block is D's upper entry (conj(e) if Hermitian)
    d_ip = where(first, e_conj, e)
    d_pi = where(first, e, e_conj)
    d_two = where(two, d, 0)
    denom = (d_two / d_ip) * (d_partner / d_pi) - 1
    z_two = ((d_partner / d_pi) * (y / d_ip) - y_partner / d_pi) / denom
    z_one = y * (1 / where(two, 1, d))
    return where(two, z_two, z_one)
