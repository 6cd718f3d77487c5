"""Triangles of matrices: ``tril`` and ``triu`` keep the values on one side of a diagonal.

Both act on the last two dims (a matrix, or a batch of them) and zero the
other side: ``tril(x)`` keeps row i's first i + 1 values, the lower triangle
(causal attention masks are made this way). Diagonal k shifts the border:
k = 1 also keeps the diagonal above the main one, k = -1 drops the main one.

The kept values pass through unchanged and the zeroed ones no longer affect
the output, so the backward keeps the same triangle of the gradient.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for

__all__ = ["tril", "triu"]
TENSOR_METHODS = list(__all__)


def _triangle(a, diagonal, lower):
    """Keep the lower (or upper) triangle of the last two dims, zero the rest."""
    xp = xp_for(a)
    n, m = a.shape[-2:]
    keep = xp.tri(n, m, diagonal, dtype=bool)
    if not lower:
        keep = ~xp.tri(n, m, diagonal - 1, dtype=bool)
    return xp.where(keep, a, xp.zeros((), dtype=a.dtype))


class Tril(Function):
    """The lower triangle (on and below diagonal k); Triu: the upper one (on and above).

    Backward: the same triangle of the gradient. Forward mode: the same triangle of the
    tangent (the op is linear in its input).
    """

    raw = True
    tangent_rule = "linear"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, diagonal, lower):
        ctx.diagonal, ctx.lower = diagonal, lower
        return _triangle(a, diagonal, lower)

    @staticmethod
    def backward(ctx, grad):
        op = Tril if ctx.lower else Triu
        return op.apply(grad, ctx.diagonal, ctx.lower), None, None


class Triu(Tril):
    """Tril with lower=False; the op gets its own name in the graph."""

    supports_complex = True  # linear: its backward needs no conj

def _check_matrix(op, input):
    if input.ndim < 2:
        raise RuntimeError(f"{op}: the input must have at least 2 dims (a matrix or a batch "
                           f"of them), got shape {tuple(input.shape)}")


def tril(input, diagonal: int = 0) -> Tensor:
    """Zero everything above diagonal ``diagonal`` of the last two dims (0 = main diagonal)."""
    _check_matrix("tril", input)
    return Tril.apply(input, int(diagonal), True)


def triu(input, diagonal: int = 0) -> Tensor:
    """Zero everything below diagonal ``diagonal`` of the last two dims (0 = main diagonal)."""
    _check_matrix("triu", input)
    return Triu.apply(input, int(diagonal), False)
