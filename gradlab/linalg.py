"""``gradlab.linalg``: PyTorch's ``torch.linalg`` namespace: norms, solvers, decompositions.

Solvers (``ops/solvers.py``): ``inv``, ``solve``, ``det``, ``slogdet``.
Decompositions (``ops/decompositions.py``): ``cholesky``, ``eigh``,
``eigvalsh``, ``svd``, ``svdvals``, ``qr``. All work on batches of matrices
in the last two dims, are differentiable (their gradient formulas are on the
Functions), and return PyTorch's named tuples (``eigh(A).eigenvalues``,
``svd(A).S``, ``qr(A).Q``, ``slogdet(A).logabsdet``).

``gradlab.norm`` (``ops/statistics.py``) is the one differentiable p-norm
node; this module gives it ``torch.linalg``'s names and conventions, which
differ from the old ``torch.norm`` in one way worth knowing: the order is
called ``ord``, and over two dims it means a *matrix* norm (the induced
1-norm is the largest column sum of |A|, not (Σ|a_ij|)), so
``linalg.norm(A, 1)`` and ``torch.norm(A, 1)`` differ for a matrix.

The matrix norms are compositions of differentiable ops, so their gradients
come for free: 'fro' is the vector 2-norm of all entries; ord=1 / -1 the
largest / smallest column sum of |A|; ord=inf / -inf the same for row sums;
ord=2 / -2 the largest / smallest singular value and 'nuc' their sum (from
``svdvals``, which has no forward-mode rule yet).

More, each a thin wrapper over ops gradlab already has (see each module):
``matrix_exp``, ``matrix_power``, ``matmul``, ``diagonal``, ``vander``,
``vecdot`` (here); ``solve_triangular``, ``lu_factor``, ``lu_factor_ex``,
``lu``, ``lu_solve`` (``ops/triangular_solvers.py``); ``ldl_factor``,
``ldl_factor_ex``, ``ldl_solve`` (``ops/ldl_decomposition.py``: symmetric
indefinite matrices, Bunch-Kaufman pivoting); ``inv_ex``,
``solve_ex``, ``cholesky_ex`` (``ops/solver_status.py``: an ``info``
tensor instead of an error); ``pinv``, ``matrix_rank``, ``cond``
(``ops/rank_and_condition.py``); ``lstsq`` (``ops/least_squares.py``);
``multi_dot``, ``householder_product`` (``ops/matrix_chain.py``);
``tensorinv``, ``tensorsolve`` (``ops/tensor_equations.py``). A singular or
non-positive-definite matrix raises ``LinAlgError`` (a RuntimeError), as in
PyTorch. ``eig`` and ``eigvals`` (``ops/general_eigen.py``) return complex
eigenvalues and eigenvectors, even for a real matrix.

(The ops family ``gradlab.ops.linalg`` holds matmul, bmm, einsum; this
module is the ``torch.linalg`` namespace.)
"""

from __future__ import annotations

import math

from . import return_types
from .ops import decompositions as _dec
from .ops import (
    diagonals,
    matrix_building,
    matrix_functions,
    products,
    reduction,
    solvers,
    statistics,
)
from .ops._util import check_float, wrap_dim
from .ops.complex_parts import conj
from .ops.general_eigen import eig, eigvals
from .ops.ldl_decomposition import ldl_factor, ldl_factor_ex, ldl_solve
from .ops.least_squares import lstsq
from .ops.linalg import matmul
from .ops.matrix_chain import householder_product, multi_dot
from .ops.rank_and_condition import cond, matrix_rank, pinv
from .ops.selection import where
from .ops.solver_status import cholesky_ex, inv_ex, solve_ex
from .ops.solvers import LinAlgError
from .ops.tensor_equations import tensorinv, tensorsolve
from .ops.triangular_solvers import lu, lu_factor, lu_factor_ex, lu_solve, solve_triangular
from .ops.unary import abs as _abs
from .tensor import Tensor

__all__ = ["norm", "vector_norm", "matrix_norm", "inv", "solve", "det", "slogdet", "cholesky",
           "eigh", "eigvalsh", "svd", "svdvals", "qr", "cross",
           "LinAlgError", "matrix_exp", "matrix_power", "matmul", "diagonal", "vander", "vecdot",
           "multi_dot", "householder_product", "solve_triangular", "lu_factor", "lu_factor_ex",
           "lu", "lu_solve", "inv_ex", "solve_ex", "cholesky_ex", "pinv", "matrix_rank", "cond",
           "lstsq", "tensorinv", "tensorsolve", "eig", "eigvals", "ldl_factor", "ldl_factor_ex",
           "ldl_solve"]


def inv(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's argument names
    """A⁻¹ of each square matrix. d/dA: grad_A = -A⁻ᵀ G A⁻ᵀ."""
    return solvers.inv_of("linalg.inv", A)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """X with A X = B (left=False: X A = B), without forming A⁻¹ (faster, more accurate).

    B is a vector (or batch of vectors, shape A.shape[:-1]) or matrices; batch
    dims broadcast. grad_B = A⁻ᵀ G, grad_A = -grad_B Xᵀ.
    """
    return solvers.solve_of("linalg.solve", A, B, left)


def det(A: Tensor) -> Tensor:  # noqa: N803
    """det(A). d/dA = det(A) A⁻ᵀ (Jacobi's formula)."""
    return solvers.det_of("linalg.det", A)


def slogdet(A: Tensor):  # noqa: N803
    """``(sign, logabsdet)`` with det(A) = sign · exp(logabsdet). d logabsdet/dA = A⁻ᵀ."""
    return return_types.linalg_slogdet(*solvers.slogdet_of("linalg.slogdet", A))


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """L (lower triangular, positive diagonal) with A = L Lᵀ, for symmetric positive-definite
    A; upper=True gives U = Lᵀ. Only the lower triangle of A is read."""
    return _dec.cholesky_of("linalg.cholesky", A, upper)


def eigh(A: Tensor, UPLO: str = "L"):  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of symmetric A (only the UPLO triangle is read):
    A = V diag(λ) Vᵀ, λ ascending. Eigenvectors' signs are arbitrary."""
    return return_types.linalg_eigh(*_dec.eigh_of("linalg.eigh", A, UPLO))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues of symmetric A, ascending. grad_A = V diag(g) Vᵀ, fine even when
    eigenvalues repeat (eigh computes the V it needs)."""
    return _dec.eigh_of("linalg.eigvalsh", A, UPLO)[0]


def svd(A: Tensor, full_matrices: bool = True, *, driver=None):  # noqa: N803
    """``(U, S, Vh)`` with A = U diag(S) Vh, S descending. full_matrices=True (the default,
    as PyTorch) makes U m×m and Vh n×n; gradients use only their first min(m, n)
    columns / rows. ``driver`` is for CUDA in PyTorch and is ignored."""
    return return_types.linalg_svd(*_dec.svd_of("linalg.svd", A, full_matrices))


def svdvals(A: Tensor, *, driver=None) -> Tensor:  # noqa: N803
    """The singular values, descending. grad_A = U diag(g) Vh."""
    return _dec.svd_of("linalg.svdvals", A, False)[1]


def qr(A: Tensor, mode: str = "reduced"):  # noqa: N803
    """``(Q, R)`` with A = Q R. mode='reduced': Q m×k, R k×n (k = min(m, n));
    'complete': Q m×m; 'r': only R (Q is empty) and no gradient."""
    return return_types.linalg_qr(*_dec.qr_of("linalg.qr", A, mode))


def _prepare(op: str, x, dtype) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_complex:  # (complex: each norm takes magnitudes, or refuses)
        check_float(op, x)
    return x


def vector_norm(x: Tensor, ord: float = 2, dim=None, keepdim: bool = False, *,
                dtype=None) -> Tensor:
    """(Σ|x_i|^ord)^(1/ord) over ``dim`` (default: all elements, as one long vector).

    ord=inf: max |x_i|; -inf: min |x_i|; 0: the number of nonzeros. The
    gradient of the 2-norm at 0 is 0, as in PyTorch (see ``Norm``).
    """
    if isinstance(ord, str) or isinstance(ord, bool):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number (2, 1, inf, ...), got "
                           f"{ord!r}; the matrix norms 'fro' and 'nuc' are in "
                           f"linalg.matrix_norm")
    x = _prepare("linalg.vector_norm", x, dtype)
    if x.dtype.is_complex:
        x = _abs(x)  # a vector norm sees only the magnitudes |x_i|
    ord = float(ord)  # noqa: A001 - PyTorch's parameter name
    if ord < 0 and not math.isinf(ord):
        return _negative_order_norm(x, ord, dim, keepdim)
    return statistics.norm(x, ord, dim, keepdim)


def _negative_order_norm(x: Tensor, ord: float, dim, keepdim: bool) -> Tensor:  # noqa: A002
    """(Σ|x_i|^p)^(1/p) for p < 0, a "norm" only in name.

    A zero element makes |0|^p infinite and the result 0, where the composed
    derivative would be inf·0 = nan; PyTorch defines it as 0 there (for
    backward and forward mode alike). So such vectors are computed on ones
    and their result replaced by 0 with ``where``, which passes no derivative.
    """
    dims = reduction.reduce_dims(x, dim, "linalg.vector_norm")
    has_zero = reduction.any(x == 0, dims, keepdim=True)
    safe = where(has_zero, 1.0, x)
    out = where(has_zero, 0.0, reduction.sum(_abs(safe) ** ord, dims, True) ** (1 / ord))
    return out if keepdim else out.squeeze(dims)


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *,  # noqa: N803
                dtype=None) -> Tensor:
    """A norm of the matrices held in dims ``dim`` of ``A`` (by default the last two).

    'fro': √(Σ a_ij²).  1 / -1: max / min over columns of Σ_i |a_ij|.
    inf / -inf: max / min over rows of Σ_j |a_ij|.  2 / -2: the largest / smallest
    singular value; 'nuc': their sum.
    """
    A = _prepare("linalg.matrix_norm", A, dtype)  # noqa: N806
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: the input must have at least 2 dimensions (a "
                           f"matrix or a batch of them), got shape {tuple(A.shape)}. For a "
                           f"vector use linalg.vector_norm")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a pair of dims (rows, columns), "
                           f"got {dim!r}")
    rows, cols = (d % A.ndim if -A.ndim <= d < A.ndim else d for d in dim)
    if not (0 <= rows < A.ndim and 0 <= cols < A.ndim) or rows == cols:
        raise RuntimeError(f"linalg.matrix_norm: dim={tuple(dim)} must name two different dims "
                           f"of a {A.ndim}-D input")
    if ord == "fro":
        return statistics.norm(A, 2, (rows, cols), keepdim)
    if A.dtype.is_complex and ord in (1, -1, math.inf, -math.inf):
        A = _abs(A)  # noqa: N806 - these norms see only the magnitudes |a_ij|
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(A, ord, rows, cols, keepdim)
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf "
                           f"or -inf, got {ord!r}")
    summed, over = (rows, cols) if abs(ord) == 1 else (cols, rows)  # columns or rows
    sums = reduction.sum(_abs(A), summed, keepdim=True)
    out = (reduction.amax if ord > 0 else reduction.amin)(sums, over, keepdim=True)
    return out if keepdim else out.squeeze((rows, cols))


def _singular_value_norm(A: Tensor, ord, rows: int, cols: int, keepdim: bool) -> Tensor:  # noqa: A002, N803, E501
    """ord=2 / -2 / 'nuc' from the singular values of the (rows, cols) matrices."""
    rest = [d for d in range(A.ndim) if d not in (rows, cols)]
    values = svdvals(A.permute(*rest, rows, cols))
    if ord == "nuc":
        out = values.sum(-1)
    else:
        out = (reduction.amax if ord == 2 else reduction.amin)(values, -1)
    if keepdim:
        for d in sorted((rows, cols)):
            out = out.unsqueeze(d)
    return out


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *,  # noqa: N803
         dtype=None) -> Tensor:
    """A vector or matrix norm, whichever ``dim`` and ``ord`` describe (PyTorch's rules).

    dim an int (or one dim): vector norm. dim a pair: matrix norm. No dim:
    with ord=None the 2-norm of all entries; with an ord, a 1-D input gets a
    vector norm and a 2-D input a matrix norm.
    """
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        if len(dim) == 1:
            return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        if len(dim) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: dim must be one dim (a vector norm) or two (a matrix "
                           f"norm), got {tuple(dim)}; for the norm of all entries use "
                           f"linalg.vector_norm(A, dim={tuple(dim)})")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    ndim = A.ndim if isinstance(A, Tensor) else None
    if ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if ndim is None:
        raise TypeError(f"linalg.norm: expected a Tensor, got {type(A).__name__}")
    raise RuntimeError(f"linalg.norm: with ord={ord!r} and no dim, the input must be 1-D or "
                       f"2-D, got {ndim}-D. Fix: pass dim= (one dim for vector norms, two for "
                       f"matrix norms)")


def cross(input: Tensor, other: Tensor, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: the cross product along ``dim`` (default the last, unlike
    ``gradlab.cross``, whose default is the first dim of size 3)."""
    return products.cross(input, other, dim=dim)


def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """e^A = I + A + A²/2! + … (``gradlab.matrix_exp``)."""
    return matrix_functions.matrix_exp(A)


def matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803
    """A^n for an integer n, by repeated squaring (``gradlab.matrix_power``)."""
    return matrix_functions.matrix_power(A, n)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803, E501
    """``gradlab.diagonal`` with the defaults for batches of matrices (the last two dims)."""
    return diagonals.diagonal(A, offset, dim1, dim2)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrices of the last dim: out[..., i, j] = x[..., i] ** j, increasing
    powers (``gradlab.vander``'s default is decreasing), N = x.shape[-1] columns."""
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg.vander: expected a Tensor, got {type(x).__name__}")
    N = x.shape[-1] if N is None and x.ndim else N  # noqa: N806
    if x.ndim == 0 or N is None or N <= 1:
        raise RuntimeError(f"linalg.vander: N (the number of columns) must be greater than 1 "
                           f"and x at least 1-D, got N={N} and shape {tuple(x.shape)}")
    # each row depends only on its own x_i: the 1-D vander of all entries, reshaped
    return matrix_building.vander(x.reshape(-1), N, increasing=True).reshape(*x.shape, N)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """Σ_i conj(x_i) y_i along ``dim``, other dims broadcast.
    d/dx = g y, d/dy = g x (conjugated for complex tensors, by the ops it is made of)."""
    for name, t in (("x", x), ("y", y)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg.vecdot: {name} must be a Tensor, got {type(t).__name__}")
        if not t.dtype.is_complex:
            check_float("linalg.vecdot", t)
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: x and y must have the same dtype, got {x.dtype} "
                           f"and {y.dtype}. Fix: y.to(x.dtype)")
    product = conj(x) * y
    return product.sum(wrap_dim(dim, product.ndim, "linalg.vecdot"))


