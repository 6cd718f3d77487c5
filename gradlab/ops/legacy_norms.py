"""Norms under PyTorch's older top-level names: dist, frobenius_norm, nuclear_norm.

Each is a short composition of ``gradlab.linalg``'s norms, so gradients,
double backward and forward mode come with them:

    dist(a, b, p)              = vector_norm(a - b, p)    (a and b broadcast)
    frobenius_norm(A, dim)     = vector_norm(A, 2, dim)   √(Σ a_ij²) over dim
    nuclear_norm(A, dim)       = matrix_norm(A, 'nuc', dim)   Σ singular values

``dist``'s p follows ``linalg.vector_norm``: p = inf is the largest |a_i - b_i|
(a tie splits the gradient evenly), -inf the smallest, 0 counts the nonzero
differences (no gradient: a count is flat), and a negative p is
(Σ|d_i|^p)^(1/p), which is 0 with gradient 0 when some d_i = 0.

PyTorch keeps ``frobenius_norm`` and ``nuclear_norm`` for old code (it warns
that they are deprecated); new code should call ``linalg.vector_norm`` and
``linalg.matrix_norm``.
"""

from __future__ import annotations

import math
from numbers import Number

from ..tensor import Tensor
from ._util import check_float, promote

__all__ = ["dist", "frobenius_norm", "nuclear_norm"]
TENSOR_METHODS = ["dist"]  # (the other two are functions only, as in PyTorch)


def _linalg():
    from .. import linalg  # gradlab.linalg is built on the ops: imported when first needed

    return linalg


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``input - other`` (broadcast together): their distance.

    d/da = the norm's gradient at a - b; d/db = its negative.
    """
    for name, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor):
            raise TypeError(f"dist: {name} must be a Tensor, got {type(value).__name__}")
    if not isinstance(p, Number) or isinstance(p, bool):
        raise TypeError(f"dist: p must be a number (2, 1, inf, 0, -1 ...), got {p!r}")
    a, b = promote(input, other)
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"dist: expected floating point tensors, got {input.dtype} and "
                           f"{other.dtype}. Fix: convert first with .float()")
    try:
        difference = a - b
    except RuntimeError as error:
        raise RuntimeError(f"dist: shapes {tuple(input.shape)} and {tuple(other.shape)} don't "
                           f"broadcast together; compared from the right, each pair of sizes "
                           f"must be equal or 1") from error
    p = float(p)
    if math.isnan(p):
        raise RuntimeError("dist: p is NaN; give a number, inf or -inf")
    return _linalg().vector_norm(difference, p)


def _dims(op: str, dim, ndim: int) -> tuple:
    if isinstance(dim, int):
        dim = (dim,)
    if not isinstance(dim, (tuple, list)) or not all(isinstance(d, int) for d in dim):
        raise TypeError(f"{op}: dim must be an int or a tuple of ints, got {dim!r}")
    return tuple(dim)


def frobenius_norm(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """√(Σ x²) over ``dim`` (one or two dims; ``()`` means every element).

    d/dx = x / norm (0 where the norm is 0).
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"frobenius_norm: input must be a Tensor, got {type(input).__name__}")
    dims = _dims("frobenius_norm", dim, input.ndim)
    if len(dims) > 2:
        raise RuntimeError(f"frobenius_norm: dim takes at most 2 dims (a matrix), got "
                           f"{dims}. Fix: linalg.vector_norm(x, 2, dim={dims}) for more")
    check_float("frobenius_norm", input)
    return _linalg().vector_norm(input, 2, dims if dims else None, keepdim)


def nuclear_norm(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The sum of the singular values of the matrices in ``dim`` (default the last two).

    ``nuclear_norm(A, keepdim)`` (a bool second argument) is PyTorch's other
    overload. d/dA = U Vᵀ (from the SVD, A = U S Vᵀ), defined where A has full rank.
    """
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    if not isinstance(input, Tensor):
        raise TypeError(f"nuclear_norm: input must be a Tensor, got {type(input).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"nuclear_norm: needs a matrix (or a batch of them), got shape "
                           f"{tuple(input.shape)}")
    dims = (-2, -1) if dim is None else _dims("nuclear_norm", dim, input.ndim)
    if len(dims) != 2:
        raise RuntimeError(f"nuclear_norm: dim must name 2 dims (the matrix's rows and "
                           f"columns), got {dims}")
    return _linalg().matrix_norm(input, "nuc", dims, keepdim)
