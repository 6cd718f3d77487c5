"""Diagonals of matrices: read one out (``diagonal``, ``diag``, ``trace``) or write one in
(``diag_embed``, ``diagflat``), and the index lists of a triangle (``tril_indices``).

A diagonal picks the elements ``a[i, i + offset]`` of two dims (``dim1`` the row,
``dim2`` the column; offset > 0 is above the main diagonal) and lays them along
a new last dim. ``diagonal`` does it without copying: the result is a *view*,
the same memory read with a stride that steps one row and one column at once,
so writing into it writes into the matrix.

The two directions are each other's backward. Reading a diagonal passes its
gradient back onto the diagonal of a zero matrix (every other element did not
reach the output); writing values onto a diagonal of zeros passes back the
gradient's diagonal. Both are linear, so in forward mode a tangent goes the
same way as the values (``tangent_rule = "linear"``).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dim, xp_for

__all__ = ["diag", "diagonal", "diagonal_copy", "diag_embed", "diagflat", "trace",
           "tril_indices", "triu_indices"]
TENSOR_METHODS = ["diag", "diagonal", "diag_embed", "diagflat", "trace"]


class Diagonal(Function):
    """The diagonal (offset, dim1, dim2) as a view: out[..., i] = a[.., i, .., i + offset, ..].

    Backward: the gradient written onto that diagonal of zeros (``diagonal_backward``).
    """

    raw = True
    tangent_rule = "linear"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, offset, dim1, dim2):
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        return _writeable_diagonal(a, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        return (DiagonalBackward.apply(grad, ctx.offset, ctx.dim1, ctx.dim2,
                                       ctx.input_shapes[0]), None, None, None)


class DiagonalCopy(Diagonal):
    """``diag`` of a matrix: the diagonal as a new tensor (PyTorch copies there)."""

    name, node_name = "diagonal_copy", "DiagonalBackward0_copy"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, offset, dim1, dim2):
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        return xp_for(a).diagonal(a, offset, dim1, dim2).copy()


def _writeable_diagonal(a, offset, dim1, dim2):
    """NumPy's diagonal view, made writeable as PyTorch's is (x.diagonal().zero_() changes x).

    NumPy hands it out read-only only to protect old code that expected a copy; an input
    that is itself read-only (an expanded tensor) keeps a read-only diagonal. CuPy's
    arrays have no such flag.
    """
    view = xp_for(a).diagonal(a, offset, dim1, dim2)
    if type(view) is np.ndarray and not view.flags.writeable:
        try:
            view.flags.writeable = True
        except ValueError:  # the memory itself is read-only
            pass
    return view


class DiagEmbed(Function):
    """Values laid on the diagonal (offset, dim1, dim2) of a zero tensor of ``shape``.

    The last dim of ``values`` runs along the diagonal. Backward: read that diagonal of
    the gradient back out (a view of it: ``Diagonal``).
    """

    raw = True
    tangent_rule = "linear"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, values, offset, dim1, dim2, shape):
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        out = xp_for(values).zeros(shape, dtype=values.dtype)
        _writeable_diagonal(out, offset, dim1, dim2)[...] = values
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, ctx.offset, ctx.dim1, ctx.dim2), None, None, None, None


class DiagonalBackward(DiagEmbed):
    """The backward of ``diagonal``: DiagEmbed into the input's shape, under PyTorch's name."""

    name = "diagonal_backward"
    supports_complex = True  # linear: its backward needs no conj


def _diagonal_dims(op: str, ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    if ndim < 2:
        raise RuntimeError(f"{op}: needs a tensor with at least 2 dims to take a diagonal of, "
                           f"got {ndim} dim(s); use diag_embed to make a matrix from a vector")
    d1, d2 = wrap_dim(dim1, ndim, op), wrap_dim(dim2, ndim, op)
    if d1 == d2:
        raise RuntimeError(f"{op}: dim1 and dim2 name the same dim ({dim1} and {dim2} of a "
                           f"{ndim}-d tensor); a diagonal runs across two different dims")
    return d1, d2


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal ``input[i, i + offset]`` of dims (dim1, dim2), as a new last dim; a view.

    d out/d input: 1 on that diagonal, 0 elsewhere.
    """
    d1, d2 = _diagonal_dims("diagonal", input.ndim, dim1, dim2)
    return Diagonal.apply(input, int(offset), d1, d2)


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``diagonal``, copied into new memory."""
    d1, d2 = _diagonal_dims("diagonal_copy", input.ndim, dim1, dim2)
    return DiagonalCopy.apply(input, int(offset), d1, d2)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose diagonal (offset, dim1, dim2) holds ``input``'s last dim; zeros elsewhere.

    A batch of vectors (b, n) becomes a batch of diagonal matrices (b, n, n) with the
    default dims. The output has one dim more than the input, each diagonal dim of size
    n + |offset|. d out/d input: 1 from each value to its place on the diagonal.
    """
    if input.ndim == 0:
        raise RuntimeError("diag_embed: needs at least a 1-d tensor (its last dim goes on the "
                           "diagonal), got a 0-d one; use input.reshape(1) first")
    ndim = input.ndim + 1
    d1, d2 = wrap_dim(dim1, ndim, "diag_embed"), wrap_dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diag_embed: dim1 and dim2 name the same dim ({dim1} and {dim2} of "
                           f"the {ndim}-d output); a diagonal runs across two different dims")
    return DiagEmbed.apply(input, int(offset), d1, d2,
                           _embedded_shape(tuple(input.shape), int(offset), d1, d2))


def _embedded_shape(shape: tuple, offset: int, d1: int, d2: int) -> tuple:
    """``shape[:-1]`` with a dim of size n + |offset| put at positions d1 and d2."""
    n = shape[-1] + abs(offset)
    rest = iter(shape[:-1])
    return tuple(n if i in (d1, d2) else next(rest) for i in range(len(shape) + 1))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """Vector -> the square matrix with it on diagonal ``diagonal``; matrix -> that diagonal
    (a copy). For batches use ``diag_embed`` and ``diagonal(dim1=-2, dim2=-1)``."""
    if input.ndim == 1:
        return DiagEmbed.apply(input, int(diagonal), 0, 1,
                               _embedded_shape(tuple(input.shape), int(diagonal), 0, 1))
    if input.ndim == 2:
        return DiagonalCopy.apply(input, int(diagonal), 0, 1)
    raise RuntimeError(f"diag: expected a 1-d (vector) or 2-d (matrix) tensor, got shape "
                       f"{tuple(input.shape)}; for batches use diag_embed (vectors -> "
                       f"matrices) or diagonal(x, dim1=-2, dim2=-1) (matrices -> vectors)")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The square matrix with all of ``input``'s values, flattened, on diagonal ``offset``."""
    return diag_embed(input.reshape(-1), offset)


class Trace(Function):
    """Σ_i a[i, i], the sum of the main diagonal.   d out/d a = the identity (eye of a's shape).

    Backward: the gradient (a number) on the diagonal of zeros.
    """

    raw = True
    tangent_rule = "linear"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a):
        xp = xp_for(a)
        # Integers and bools add up in int64, as sum does in PyTorch.
        dtype = None if a.dtype.kind in "fc" or a.dtype == _bfloat16 else xp.int64
        return xp.asarray(xp.trace(a, dtype=dtype))

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shapes[0]
        return DiagonalBackward.apply(grad.expand(min(shape)), 0, 0, 1, shape)


_bfloat16 = _dt.bfloat16.np


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (rectangular ones too)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix (2-d tensor), got shape "
                           f"{tuple(input.shape)}; for a batch of matrices use "
                           f"x.diagonal(dim1=-2, dim2=-1).sum(-1)")
    return Trace.apply(input)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (row, column) indices of the lower triangle of a row × col matrix, as a (2, N)
    tensor, row by row. ``offset`` shifts the diagonal as in ``tril``. No gradient."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, lower=True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (row, column) indices of the upper triangle of a row × col matrix, as a (2, N)
    tensor, row by row. ``offset`` shifts the diagonal as in ``triu``. No gradient."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, lower=False)


def _triangle_indices(op, row, col, offset, dtype, device, lower):
    from .creation import tensor

    if row < 0 or col < 0:
        raise RuntimeError(f"{op}: row and col must be >= 0, got row={row}, col={col}")
    dtype = _dt.int64 if dtype is None else dtype
    if dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"{op}: dtype must be an integer type for indices (int64 or int32), "
                           f"got {dtype}")
    # Built on the host (NumPy): shape arithmetic, not data; then moved to the device.
    if lower:
        rows, cols = np.tril_indices(row, offset, col)
    else:
        rows, cols = np.triu_indices(row, offset, col)
    return tensor(np.stack([rows, cols]), dtype=dtype, device=device)
