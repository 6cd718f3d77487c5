"""In-place forms of ops gradlab has out of place, and ``fill_diagonal_``.

``addr_``, ``i0_``, ``igamma_``, ``igammac_``, ``scatter_reduce_`` and ``index_reduce_`` are
their out-of-place op run through the one in-place mechanism
(``inplace.apply_inplace_fn``): the version counter goes up, the tensor's history
becomes the op's node (through a view, its base's too), and a leaf that
requires grad is refused.

``fill_diagonal_(value, wrap=False)`` writes ``value`` on the main diagonal: the
places ``(i, i, ..., i)`` of a tensor whose dims are all equal, or of a 2-D
matrix of any shape. A tall matrix (more rows than columns) with ``wrap=True``
starts the diagonal again after every ``columns + 1`` rows, as NumPy's
``fill_diagonal``: in the row-major order the places are ``k · (columns + 1)``.
The new values are constants, so d(new)/d(old) is 1 off the diagonal and 0 on
it (exactly 0, even for a NaN gradient, as PyTorch).
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from . import bessel, incomplete_gamma, matrix_functions, scatter_reductions
from ._util import xp_for
from .inplace import apply_inplace, apply_inplace_fn

__all__ = ["i0_"]  # PyTorch has torch.i0_; the others are methods only
TENSOR_METHODS = ["i0_", "addr_", "igamma_", "igammac_", "scatter_reduce_", "index_reduce_",
                  "fill_diagonal_"]


def i0_(input: Tensor) -> Tensor:
    """In-place ``i0`` (modified Bessel function of order 0); d/dx I0(x) = I1(x)."""
    return apply_inplace_fn("i0_", input, bessel.i0, convert=False)


def addr_(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In place ``input = beta·input + alpha·outer(vec1, vec2)``."""
    return apply_inplace_fn("addr_", input, matrix_functions.addr, vec1, vec2, beta=beta,
                            alpha=alpha)


def igamma_(input: Tensor, other: Tensor) -> Tensor:
    """In-place regularized lower incomplete gamma P(input, other)."""
    return apply_inplace_fn("igamma_", input, incomplete_gamma.igamma, other)


def igammac_(input: Tensor, other: Tensor) -> Tensor:
    """In-place regularized upper incomplete gamma Q(input, other) = 1 - P."""
    return apply_inplace_fn("igammac_", input, incomplete_gamma.igammac, other)


def scatter_reduce_(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """In-place ``scatter_reduce`` (sum, prod, mean, amax, amin of ``src`` into ``input``)."""
    return apply_inplace_fn("scatter_reduce_", input, scatter_reductions.scatter_reduce, dim,
                            index, src, reduce, include_self=include_self, convert=False)


def index_reduce_(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """In-place ``index_reduce`` (prod, mean, amax, amin of ``source``'s slices into
    ``input``'s slices at ``index`` along ``dim``)."""
    return apply_inplace_fn("index_reduce_", input, scatter_reductions.index_reduce, dim,
                            index, source, reduce, include_self=include_self, convert=False)


def _diagonal_places(xp, shape: tuple, wrap: bool) -> tuple:
    """The index arrays of the diagonal ``fill_diagonal_`` writes (see the module docstring)."""
    if len(shape) == 2 and wrap and shape[0] > shape[1] + 1:
        rows, cols = shape
        flat = xp.arange(0, rows * cols, cols + 1)
        return flat // cols, flat % cols
    steps = xp.arange(min(shape))
    return (steps,) * len(shape)


class FillDiagonal(Function):
    """The diagonal set to ``value``.   Backward: the gradient with zeros on the diagonal."""

    raw = True
    name = "fill_diagonal"
    node_name = "FillBackward0"
    tangent_rule = "elementwise"  # each output from its own input (or a constant): ẏ = keep·ẋ

    @staticmethod
    def forward(ctx, a, value, wrap):
        xp = xp_for(a)
        places = _diagonal_places(xp, a.shape, wrap)
        out = a.copy()
        out[places] = value
        keep = xp.ones(a.shape, dtype=bool)
        keep[places] = False
        ctx.keep = keep
        return out

    @staticmethod
    def backward(ctx, grad):
        from .selection import Where  # (selection imports the in-place ops' module)

        return Where.apply(ctx.keep, grad, 0.0), None, None


def fill_diagonal_(input: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal, in place (see the module docstring)."""
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise RuntimeError(f"fill_diagonal_: dimensions must larger than 1, got a "
                           f"{len(shape)}-D tensor of shape {shape}")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError(f"fill_diagonal_: all dimensions of input must be of equal length, "
                           f"got shape {shape}; only a 2-D matrix may be rectangular")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if not input.dtype.is_floating_point:  # truncated into integer tensors, as in PyTorch
        fill_value = bool(fill_value) if input.dtype.np == np.bool_ else int(fill_value)
    return apply_inplace(FillDiagonal, input, fill_value, bool(wrap), convert=False)
