"""Copies of a tensor's values in a new order: flip, roll, repeat, tile.

Unlike the views in ``shape.py`` these allocate (as in PyTorch). Each value
of the output is one value of the input, so backward sends the gradient back
where each value came from: flip and roll undo themselves on the gradient;
where repeat made copies, the copies' gradients add up. All are linear, so
forward mode runs the same op on the tangent.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dim, wrap_dims, xp_for
from .shape import _shape_arg

__all__ = ["flip", "fliplr", "flipud", "roll", "repeat", "tile"]
TENSOR_METHODS = list(__all__)


# --- reversing and rotating: flip, roll ------------------------------------------------------

def _flip_indexer(ndim, dims):
    return tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(ndim))


class Flip(Function):
    """Reverse the order along ``dims`` (a copy, as in PyTorch).   Backward: flip the gradient."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a[_flip_indexer(a.ndim, dims) + (Ellipsis,)].copy()

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None


def flip(input, *dims) -> Tensor:
    """The values in reverse order along each dim in ``dims``: a sequence, or (as the
    method ``x.flip(2, 3)`` takes them) separate ints."""
    if not dims:
        raise TypeError("flip: missing dims, e.g. x.flip(0) or gradlab.flip(x, (0, 1))")
    dims = dims[0] if len(dims) == 1 else dims
    return Flip.apply(input, wrap_dims(dims, input.ndim, "flip") or ())


def fliplr(input) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f"fliplr: needs at least 2 dims, got shape {tuple(input.shape)}")
    return flip(input, 1)


def flipud(input) -> Tensor:
    if input.ndim < 1:
        raise RuntimeError("flipud: needs at least 1 dim, got a 0-d tensor")
    return flip(input, 0)


class Roll(Function):
    """Shift values along dims, wrapping around.   Backward: roll the gradient back."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        if dims is None:  # roll the flattened values, keep the shape
            return xp_for(a).roll(a.reshape(-1), shifts[0]).reshape(a.shape)
        return xp_for(a).roll(a, shifts, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, tuple(-s for s in ctx.shifts), ctx.dims), None, None


def roll(input, shifts, dims=None) -> Tensor:
    """Shift by ``shifts`` along ``dims`` (values pushed off one end come back at the other)."""
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: without dims, give exactly one shift, got {shifts}")
        return Roll.apply(input, (int(shifts[0]),), None)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts {shifts} and dims {dims} must have the same length "
                           "(one shift per dim)")
    return Roll.apply(input, tuple(int(s) for s in shifts),
                      tuple(wrap_dim(d, input.ndim, "roll") for d in dims))


# --- copies of the values: repeat, tile ------------------------------------------------------

class Repeat(Function):
    """Tile the tensor ``sizes[i]`` times along dim i.

    Backward: every copy of a value sends its gradient back to that one value,
    so the tiles are summed: view the gradient as ``(r0, s0, r1, s1, ...)``
    (repeat count, original size) and sum over the ``r`` axes.
    """

    raw = True
    tangent_rule = "linear"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, sizes):
        ctx.sizes = sizes
        return xp_for(a).tile(a, sizes) if sizes else a.copy()

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shapes[0]
        sizes = ctx.sizes
        padded = (1,) * (len(sizes) - len(shape)) + tuple(shape)
        tiles = grad.reshape(tuple(x for r, s in zip(sizes, padded) for x in (r, s)))
        summed = tiles.sum(tuple(range(0, 2 * len(sizes), 2))) if sizes else tiles
        return summed.reshape(shape), None


def repeat(input, *sizes) -> Tensor:
    """Copies of the tensor along each dim: ``(2, 3)`` repeated ``(2, 1)`` is ``(4, 3)``.

    Extra leading ``sizes`` add new leading dims. (NumPy calls this ``tile``;
    for NumPy's ``repeat`` see ``repeat_interleave``.)
    """
    sizes = _shape_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"repeat: the number of repeat counts ({len(sizes)}) can't be smaller than the "
            f"number of dims ({input.ndim}, shape {tuple(input.shape)}). Fix: give one count "
            f"per dim, e.g. x.repeat({', '.join(['1'] * input.ndim)})")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"repeat: repeat counts must be >= 0, got {list(sizes)}")
    return Repeat.apply(input, sizes)


def tile(input, dims) -> Tensor:
    """Like ``repeat``, but fewer counts than dims mean 1 for the leading dims."""
    dims = _shape_arg((dims,))
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)
