"""What the singular values say about a matrix: pinv, matrix_rank, cond.

Write A = U diag(σ) Vᵀ with σ₁ >= σ₂ >= … >= 0. Then

    rank(A)  = the number of σ_i above a tolerance (a float can't be exactly 0)
    pinv(A)  = V diag(1/σ_i for the σ_i above it, 0 for the rest) Uᵀ
    cond(A)  = σ₁ / σ_min: how much a relative error in b can grow in A⁻¹ b

The tolerance is ``max(atol, rtol · σ₁)``, PyTorch's rule: with neither
given, rtol = eps · max(m, n) (the rounding noise of the SVD itself); with
only atol > 0, rtol = 0. For a symmetric A (``hermitian=True``) the
eigendecomposition A = V diag(λ) Vᵀ does the same job, faster, with
σ_i = |λ_i|.

All are compositions of ``svd`` / ``eigh``, ``where``, ``inv`` and the matrix
norms, so pinv and cond are differentiable (the gradients divide by gaps
between singular values, as the SVD's do); matrix_rank is an integer.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..tensor import Tensor
from ..type_info import finfo
from .decompositions import eigh_of, svd_of
from .linalg import matmul
from .selection import where
from .solver_status import inv_ex
from .solvers import check_matrices

__all__: list[str] = []  # torch.linalg names only: gradlab.linalg exports them
TENSOR_METHODS: list[str] = []


def _tolerance(A: Tensor, largest: Tensor, atol, rtol) -> Tensor:  # noqa: N803
    """max(atol, rtol · σ₁) per matrix, with PyTorch's defaults (module docstring)."""
    default_rtol = finfo(A.dtype).eps * max(A.shape[-2:])
    atol = None if atol is None else _as_tensor(A, atol)
    if rtol is None:
        rtol = default_rtol if atol is None else where(atol > 0, 0.0, default_rtol)
    else:
        rtol = _as_tensor(A, rtol)
    relative = rtol * largest
    return relative if atol is None else relative.maximum(atol)


def _as_tensor(A: Tensor, value) -> Tensor:  # noqa: N803
    """A tolerance as a tensor that broadcasts against σ₁ (shape (*batch, 1)), real like σ₁."""
    real = A.dtype.to_real() if A.dtype.is_complex else A.dtype
    if isinstance(value, Tensor):
        value = value.to(real)
        return value.unsqueeze(-1) if value.ndim else value
    return A.new_full((), float(value), dtype=real)


def _spectrum(op: str, A: Tensor, hermitian: bool, need_vectors: bool):  # noqa: N803
    """(values, magnitudes, left, right) with A = left diag(values) right: the SVD, or for
    hermitian=True the eigendecomposition (values λ, magnitudes |λ|, right = leftᴴ)."""
    if hermitian:
        values, vectors = eigh_of(op, A)
        return values, values.abs(), vectors, vectors.mH
    if need_vectors:
        u, s, vh = svd_of(op, A, False)
        return s, s, u, vh
    s = svd_of(op, A, False)[1]
    return s, s, None, None


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:  # noqa: N803
    """The Moore-Penrose pseudo-inverse A⁺ (n×m for m×n A): x = A⁺ b is the least-squares
    solution of A x = b with the smallest norm. A⁺ = V diag(1/σ) Uᴴ, over the singular
    values above max(atol, rtol·σ₁); hermitian=True uses eigh (A must be Hermitian)."""
    op = "linalg.pinv"
    check_matrices(op, A, square=hermitian)
    m, n = A.shape[-2:]
    if m == 0 or n == 0:  # nothing to invert, yet joined to the graph (gradient 0)
        return A.new_zeros((*A.shape[:-2], n, m)) + 0 * A.sum()
    values, magnitudes, left, right = _spectrum(op, A, hermitian, True)
    largest = magnitudes.amax(-1, keepdim=True)
    kept = magnitudes > _tolerance(A, largest, atol, rtol)
    inverted = where(kept, 1 / where(kept, values, 1.0), 0.0)  # no 1/0, even in the gradient
    return matmul(right.mH * inverted.unsqueeze(-2), left.mH)


def matrix_rank(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False,  # noqa: N803
                tol=None) -> Tensor:
    """The number of singular values above max(atol, rtol·σ₁), an int64 per matrix.
    ``tol`` is PyTorch's older name for atol (with rtol = 0)."""
    op = "linalg.matrix_rank"
    if tol is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError(f"{op}: give either tol (the old name) or atol/rtol, not both")
        atol, rtol = tol, 0.0
    check_matrices(op, A, square=hermitian)
    if 0 in A.shape[-2:]:
        return A.new_zeros(tuple(A.shape[:-2]), dtype=_dt.int64)
    _, magnitudes, _, _ = _spectrum(op, A.detach(), hermitian, False)
    largest = magnitudes.amax(-1, keepdim=True)
    return (magnitudes > _tolerance(A, largest, atol, rtol)).sum(-1)


_NORM_ORDERS = ("fro", "nuc", math.inf, -math.inf, 1, -1)


def cond(A: Tensor, p=None) -> Tensor:  # noqa: N803
    """The condition number ‖A‖_p ‖A⁻¹‖_p: about how many times a relative error in b can
    grow in the solution of A x = b (log10 of it: the digits lost).

    p None or 2: σ₁/σ_min (any m×n A); -2: σ_min/σ₁. 'fro', 'nuc', 1, -1, inf, -inf:
    the product of matrix norms, for square A; a singular A gives inf.
    """
    op = "linalg.cond"
    if p is None or p in (2, -2):
        check_matrices(op, A, square=False)
        s = _spectrum(op, A, False, False)[1]
        largest, smallest = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        ratio = largest / smallest if p != -2 else smallest / largest
        return ratio.squeeze(-1)
    if p not in _NORM_ORDERS:
        raise RuntimeError(f"{op}: p must be None, 2, -2, 'fro', 'nuc', 1, -1, inf or -inf, "
                           f"got {p!r}")
    if isinstance(A, Tensor) and A.ndim >= 2 and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}(p={p!r}): A must be square (or a batch of square "
                           f"matrices), got shape {tuple(A.shape)}; only p=None, 2 and -2 "
                           f"(ratios of singular values) work for rectangular matrices")
    check_matrices(op, A)
    from ..linalg import matrix_norm

    inverse, info = inv_ex(A)
    singular = info > 0
    safe_inverse = where(singular.unsqueeze(-1).unsqueeze(-1), 0.0, inverse)  # no NaN in
    product = matrix_norm(A, p) * matrix_norm(safe_inverse, p)
    return where(singular, math.inf, product)
