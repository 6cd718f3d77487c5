"""NumPy-style joining and splitting by direction, and index bookkeeping.

NumPy names the dims of an image-like array by direction: rows run down
(``v``, vertical, dim 0), columns across (``h``, horizontal, dim 1 — or dim
0 of a 1-D array) and depth back (``d``, dim 2). These ops are that naming
on top of ``cat`` and ``split``, after lifting small inputs to enough dims:

==================  ========================================  ==================
op                  does                                      is
==================  ========================================  ==================
column_stack        vectors become columns, then glued        hstack of (n, 1)s
row_stack           vectors become rows, then glued           vstack
dstack              glue along depth                          cat(atleast_3d, 2)
hsplit/vsplit/      cut along columns / rows / depth          tensor_split
dsplit
split_with_sizes    cut into pieces of exactly these sizes    split
==================  ========================================  ==================

So every gradient here is the partner op's: the gradient of a join is cut
back into the pieces, the gradients of the pieces are joined.

``unravel_index`` and ``argwhere`` compute positions (integers, no
gradient): flat indices as coordinates, and the coordinates of the
nonzero values.
"""

from __future__ import annotations

from numbers import Integral

from .. import dtypes as _dt
from ..tensor import Tensor
from ._util import xp_for
from .indexing import nonzero
from .joining import _check_tensors, cat, hstack, split, tensor_split, vstack
from .matrix_building import _three_d

__all__ = ["column_stack", "row_stack", "dstack", "hsplit", "vsplit", "dsplit",
           "split_with_sizes", "unravel_index", "argwhere"]
TENSOR_METHODS = ["hsplit", "vsplit", "dsplit", "split_with_sizes", "argwhere"]


# --- joining ---------------------------------------------------------------------------------

def column_stack(tensors) -> Tensor:
    """Glue side by side: 0-d and 1-D tensors become columns (n, 1), then ``hstack``."""
    tensors = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t
               for t in _check_tensors("column_stack", tensors)]
    return hstack(tensors)


def row_stack(tensors) -> Tensor:
    """``vstack``'s other name: 0-d and 1-D tensors become rows (1, n), glued along dim 0."""
    return vstack(tensors)


def dstack(tensors) -> Tensor:
    """Glue along depth (dim 2) after ``atleast_3d``: (n,) is (1, n, 1), (m, n) is (m, n, 1)."""
    return cat([_three_d(t) for t in _check_tensors("dstack", tensors)], 2)


# --- splitting -------------------------------------------------------------------------------

def _directional_split(op: str, input, indices_or_sections, dim: int, min_dims: int):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim < min_dims:
        raise RuntimeError(f"{op}: needs a tensor with at least {min_dims} dim(s), got shape "
                           f"{tuple(input.shape)}. Fix: atleast_{max(min_dims, 1)}d(x) first, "
                           f"or tensor_split(x, ..., dim) for another dim")
    if isinstance(indices_or_sections, Integral) and not isinstance(indices_or_sections, bool):
        sections, size = int(indices_or_sections), input.shape[dim]
        if sections <= 0:
            raise RuntimeError(f"{op}: the number of sections must be > 0, got {sections}")
        if size % sections:
            raise RuntimeError(f"{op}: dim {dim} has size {size}, which {sections} doesn't "
                               f"divide: {op} makes equal pieces. Fix: tensor_split(x, "
                               f"{sections}, {dim}) allows unequal ones")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections) -> tuple:
    """Cut along columns: dim 1 (dim 0 for a 1-D tensor). An int n gives n equal pieces (n
    must divide the size); a list of indices cuts before each one. Views."""
    dim = 0 if getattr(input, "ndim", 0) == 1 else 1
    return _directional_split("hsplit", input, indices_or_sections, dim, 1)


def vsplit(input: Tensor, indices_or_sections) -> tuple:
    """Cut along rows (dim 0) of a tensor with at least 2 dims; as ``hsplit`` otherwise."""
    return _directional_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections) -> tuple:
    """Cut along depth (dim 2) of a tensor with at least 3 dims; as ``hsplit`` otherwise."""
    return _directional_split("dsplit", input, indices_or_sections, 2, 3)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Cut ``dim`` into consecutive pieces of exactly ``split_sizes`` (a list; they must add
    up to the dim's size). Views; one node, whose gradient joins the pieces' back."""
    if not isinstance(split_sizes, (list, tuple)) or not all(
            isinstance(s, Integral) and not isinstance(s, bool) for s in split_sizes):
        raise TypeError(f"split_with_sizes: split_sizes must be a list of ints, got "
                        f"{split_sizes!r}. Fix: for pieces of one size use split(x, size, dim)")
    return split(input, [int(s) for s in split_sizes], dim)


# --- positions -------------------------------------------------------------------------------

def unravel_index(indices, shape) -> tuple:
    """The coordinates, in an array of ``shape``, of the flat (row-major) ``indices``: one
    int64 tensor per dim, each shaped like ``indices``.

    As PyTorch, an index outside [0, numel) wraps around like Python's ``%``
    (-1 is the last element) instead of raising: check the range first if
    that matters.
    """
    if isinstance(indices, Tensor):
        if indices.dtype.is_floating_point or indices.dtype is _dt.bool:
            raise TypeError(f"unravel_index: indices must be an integer tensor, got "
                            f"{indices.dtype}. Fix: indices.long()")
    elif isinstance(indices, Integral) and not isinstance(indices, bool):
        from .creation import tensor

        indices = tensor(int(indices))
    else:
        raise TypeError(f"unravel_index: indices must be an integer tensor or an int, got "
                        f"{type(indices).__name__}")
    if isinstance(shape, Integral):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(s, Integral) and not isinstance(s, bool) for s in shape):
        raise TypeError(f"unravel_index: shape must be an int or a sequence of ints, got "
                        f"{shape!r}")
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"unravel_index: shape {shape} has a negative size; sizes are >= 0")
    if 0 in shape:
        raise RuntimeError(f"unravel_index: shape {shape} has no elements, so no flat index "
                           f"lies in it")
    flat = indices._data.astype(xp_for(indices._data).int64)
    coordinates = []
    stride = 1
    for size in reversed(shape):  # the last dim varies fastest
        coordinates.append((flat // stride) % size)
        stride *= size
    from .creation import _new

    xp = xp_for(flat)  # (a 0-d index gives NumPy scalars: arrays again)
    return tuple(_new(xp.asarray(c), indices._device) for c in reversed(coordinates))


def argwhere(input: Tensor) -> Tensor:
    """The coordinates of the nonzero values, one row each: shape (count, ndim), int64.
    (``nonzero``'s result; a 0-d tensor gives shape (1, 0) or (0, 0).)"""
    if not isinstance(input, Tensor):
        raise TypeError(f"argwhere: input must be a Tensor, got {type(input).__name__}")
    return nonzero(input)
