"""``gradlab.linalg``: PyTorch's ``torch.linalg`` namespace (norms of vectors and matrices).

``gradlab.norm`` (``ops/statistics.py``) is the one differentiable p-norm
node; this module gives it ``torch.linalg``'s names and conventions, which
differ from the old ``torch.norm`` in one way worth knowing: the order is
called ``ord``, and over two dims it means a *matrix* norm (the induced
1-norm is the largest column sum of |A|, not (Σ|a_ij|)), so
``linalg.norm(A, 1)`` and ``torch.norm(A, 1)`` differ for a matrix.

The matrix norms are compositions of differentiable ops, so their gradients
(and forward-mode tangents) come for free: 'fro' is the vector 2-norm of all
entries; ord=1 / -1 the largest / smallest column sum of |A|; ord=inf / -inf
the same for row sums.
The spectral (2, -2) and nuclear ('nuc') norms need singular values, which
gradlab does not compute (yet), so they raise.

(The ops family ``gradlab.ops.linalg`` holds matmul, bmm, einsum; this
module is the ``torch.linalg`` namespace and has none of them.)
"""

from __future__ import annotations

import math

from .ops import reduction, statistics
from .ops._util import check_float
from .ops.selection import where
from .ops.unary import abs as _abs
from .tensor import Tensor

__all__ = ["norm", "vector_norm", "matrix_norm"]


def _prepare(op: str, x, dtype) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if dtype is not None:
        x = x.to(dtype)
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
    inf / -inf: max / min over rows of Σ_j |a_ij|.
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
    if ord in ("nuc", 2, -2):
        raise NotImplementedError(
            f"linalg.matrix_norm: ord={ord!r} needs the singular values of A, which gradlab "
            f"does not compute yet. Use ord='fro' (an upper bound of the 2-norm), 1 or inf, "
            f"or compute it outside autograd: numpy.linalg.norm(A.numpy(), {ord!r})")
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf "
                           f"or -inf, got {ord!r}")
    summed, over = (rows, cols) if abs(ord) == 1 else (cols, rows)  # columns or rows
    sums = reduction.sum(_abs(A), summed, keepdim=True)
    out = (reduction.amax if ord > 0 else reduction.amin)(sums, over, keepdim=True)
    return out if keepdim else out.squeeze((rows, cols))


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
