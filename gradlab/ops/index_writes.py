"""index_copy, index_fill, masked_scatter, put: a copy of a tensor with values written in.

Each is a write gradlab already knows (``indexing.py``), seen through a
different way of saying *where*:

==================  =========================================  ==============================
op                  writes                                     is
==================  =========================================  ==============================
index_copy          source's slice k at slice ``index[k]``     ``x[:, index] = source`` (dim 1)
put                 ``source[k]`` at flat position ``index[k]``  ``x.view(-1)[index] = source``
masked_scatter      source's first values where mask is True   ``x[mask] = source.view(-1)[:n]``
index_fill          one value at the slices ``index``          ``masked_fill`` with a slice mask
==================  =========================================  ==============================

So their Functions are ``IndexPut`` and ``MaskedFill`` under PyTorch's op
names (as ``take`` is ``index_select``), and the derivatives are theirs:

* d/dinput: the gradient, zero where a value was overwritten (it no longer
  matters); unchanged where ``put(..., accumulate=True)`` adds instead.
* d/dsource: the gradient read back from where each value went,
  ``grad[index]`` (a source value that was never used gets 0).
* d/dvalue (index_fill with a 0-d tensor): the sum of the gradient over the
  filled places, since one value was used at all of them.

Forward mode comes with them: a write is affine in (input, source), so the
tangent is the input's tangent with the source's tangent written the same way.
The in-place forms (``x.index_copy_(...)`` ...) run the same Function through
``apply_inplace``.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.tracing import note_read
from ..tensor import Tensor
from ._index_parsing import index_array
from ._util import wrap_dim, xp_for
from .creation import _new
from .indexing import IndexPut, MaskedFill, mask_shape
from .inplace import apply_inplace

__all__ = ["index_copy", "index_fill", "masked_scatter", "put"]
TENSOR_METHODS = [*__all__, "index_copy_", "index_fill_", "masked_scatter_", "put_"]


class IndexCopy(IndexPut):
    """``x[:, index] = source`` along ``dim`` (here dim 1), out of place.

    d/dx = grad with the slices at ``index`` zeroed; d/dsource = grad's slices at ``index``.
    """

    name = "index_copy"


class Put(IndexPut):
    """``x.view(-1)[index] = source`` (``+=`` with accumulate), out of place.

    d/dx = grad, zeroed at ``index`` unless accumulating; d/dsource = grad.take(index).
    """

    name = "put"


class MaskedScatter(IndexPut):
    """``x[mask] = source.view(-1)[:n]`` (n = the number of Trues), out of place.

    d/dx = grad where the mask is False; d/dsource = grad[mask], then zeros for the rest.
    """

    name = "masked_scatter"


class IndexFill(MaskedFill):
    """``value`` at the slices ``index`` of ``dim``: a masked_fill whose mask marks those slices.

    d/dx = grad outside the slices; d/dvalue = the sum of grad inside them.
    """

    name = "index_fill"


# --- checks shared by the ops ----------------------------------------------------------------

def _long_index(op: str, index, input: Tensor, vector: bool):
    """The index's raw int64 array on the input's device; ``vector``: it must be 1-D or 0-d."""
    if not isinstance(index, Tensor) or index.dtype is not _dt.int64:
        what = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise TypeError(f"{op}: index must be an int64 tensor, got {what}. "
                        "Fix: gradlab.tensor(positions) or index.long()")
    if vector and index.ndim > 1:
        raise IndexError(f"{op}: index must be 1-D (a list of positions) or 0-d, got shape "
                         f"{tuple(index.shape)}. Fix: index.flatten()")
    note_read(index, f"{op}'s index")  # (a trace would keep these positions)
    return index.to(input.device)._data.reshape(-1)


def _same_dtype(op: str, input: Tensor, source) -> Tensor:
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}: source must be a Tensor, got {type(source).__name__}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}: source has dtype {source.dtype} but the tensor has "
                           f"{input.dtype}. Fix: source.to({input.dtype})")
    return source


def _flat_key(xp, shape, positions):
    """The ``(basic, advanced)`` key of ``indexing.py`` that writes at the flat ``positions``
    (non-negative int64) of an array of ``shape``; a 0-d array is seen as shape (1,)."""
    if not shape:
        return (None, Ellipsis), (positions,)
    return (Ellipsis,), tuple(xp.unravel_index(positions, shape))


def _first_repeat(xp, positions):
    """A position that occurs more than once, or None."""
    if positions.size < 2:
        return None
    ordered = xp.sort(positions)
    repeats = ordered[1:][ordered[1:] == ordered[:-1]]
    return int(repeats[0]) if repeats.size else None


# --- index_copy -------------------------------------------------------------------------------

def _index_copy_args(op, input, dim, index, source):
    dim = wrap_dim(dim, input.ndim, op)
    size = input.shape[dim] if input.ndim else 1
    idx = index_array(op, _long_index(op, index, input, vector=True), dim, size)
    source = _same_dtype(op, input, source)
    xp = xp_for(idx)
    repeat = _first_repeat(xp, idx)
    if repeat is not None:
        raise RuntimeError(
            f"{op}: index names position {repeat} of dim {dim} more than once. PyTorch copies "
            "every slice there and which one ends up in the result is undefined (it may differ "
            "between runs and devices), while each copied slice still gets the gradient. Fix: "
            "pass each position once (index.unique()), or use index_add to add them up")
    if input.ndim == 0:
        if source.numel() != idx.size or source.ndim > 1:
            raise RuntimeError(f"{op}: a 0-d tensor takes a 0-d or 1-element source for each "
                               f"index position, got source shape {tuple(source.shape)} for "
                               f"{idx.size} position(s)")
        return _flat_key(xp, (), idx), source.reshape(-1), False
    want = input.shape[:dim] + (idx.size,) + input.shape[dim + 1:]
    if tuple(source.shape) != tuple(want):
        raise RuntimeError(f"{op}: source must have shape {tuple(want)} (the tensor's shape "
                           f"{tuple(input.shape)} with {idx.size} = len(index) in dim {dim}), "
                           f"got {tuple(source.shape)}")
    return ((Ellipsis,), (slice(None),) * dim + (idx,)), source, False


def index_copy(input, dim: int, index, source) -> Tensor:
    """A copy of ``input`` with slice ``index[k]`` of ``dim`` replaced by ``source``'s slice k
    (``source`` has the input's shape, with ``len(index)`` in ``dim``)."""
    return IndexCopy.apply(input, *_index_copy_args("index_copy", input, dim, index, source))


def index_copy_(input, dim: int, index, source) -> Tensor:
    return apply_inplace(IndexCopy, input,
                         *_index_copy_args("index_copy_", input, dim, index, source),
                         convert=False)


# --- index_fill -------------------------------------------------------------------------------

def _index_fill_args(op, input, dim, index, value):
    dim = wrap_dim(dim, input.ndim, op)
    size = input.shape[dim] if input.ndim else 1
    idx = index_array(op, _long_index(op, index, input, vector=True), dim, size,
                      allow_negative=True)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"{op}: the value must be a number or a 0-d tensor, got shape "
                               f"{tuple(value.shape)}. Fix: value.reshape(()) for one value, "
                               "or index_copy to write a slice per position")
        value = value.to(input.device).to(input.dtype)
    elif not isinstance(value, (bool, int, float, np.generic)):
        raise TypeError(f"{op}: the value must be a number or a 0-d tensor, got "
                        f"{type(value).__name__}")
    xp = xp_for(idx)
    if input.ndim == 0:
        return _new(xp.asarray(idx.size > 0), input._device), value
    mask = xp.zeros(size, dtype=bool)
    mask[idx] = True  # the slices to fill, broadcast over the other dims
    mask = mask.reshape((1,) * dim + (size,) + (1,) * (input.ndim - dim - 1))
    return _new(mask, input._device), value


def index_fill(input, dim: int, index, value) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) in the slices ``index``
    of ``dim``: ``masked_fill`` with a mask that is True on those slices."""
    return IndexFill.apply(input, *_index_fill_args("index_fill", input, dim, index, value))


def index_fill_(input, dim: int, index, value) -> Tensor:
    return apply_inplace(IndexFill, input,
                         *_index_fill_args("index_fill_", input, dim, index, value),
                         convert=False)


# --- masked_scatter ---------------------------------------------------------------------------

def _masked_scatter_args(op, input, mask, source, inplace):
    shape = mask_shape(op, input, mask, inplace)
    source = _same_dtype(op, input, source)
    note_read(mask, f"{op}'s mask")  # (a trace would keep these positions)
    data = mask.to(input.device)._data
    xp = xp_for(data)
    positions = xp.flatnonzero(xp.broadcast_to(data, shape))  # row-major: source's order
    count = int(positions.size)
    if source.numel() < count:
        raise RuntimeError(f"{op}: the mask has {count} True values but source (shape "
                           f"{tuple(source.shape)}) has only {source.numel()} elements; "
                           "source gives one value per True, in row-major order")
    values = source.reshape(-1)
    if values.shape[0] != count:
        values = values[:count]  # the rest of source is unused (its gradient is 0)
    return tuple(shape), _flat_key(xp, tuple(shape), positions), values


def masked_scatter(input, mask, source) -> Tensor:
    """A copy of ``input`` with the first values of ``source`` (row-major) written where
    ``mask`` (broadcast with ``input``) is True, in order."""
    shape, key, values = _masked_scatter_args("masked_scatter", input, mask, source, False)
    if shape != tuple(input.shape):
        input = input.expand(shape)
    return MaskedScatter.apply(input, key, values, False)


def masked_scatter_(input, mask, source) -> Tensor:
    _, key, values = _masked_scatter_args("masked_scatter_", input, mask, source, True)
    return apply_inplace(MaskedScatter, input, key, values, False, convert=False)


# --- put --------------------------------------------------------------------------------------

def _put_args(op, input, index, source, accumulate):
    flat = _long_index(op, index, input, vector=False)
    source = _same_dtype(op, input, source)
    if source.numel() != flat.size:
        raise RuntimeError(f"{op}: source and index must have the same number of elements, got "
                           f"source shape {tuple(source.shape)} ({source.numel()}) and index "
                           f"shape {tuple(index.shape)} ({flat.size})")
    size = input.numel()
    if size == 0 and flat.size:
        raise IndexError(f"{op}: the tensor (shape {tuple(input.shape)}) is empty, so there is "
                         "no position to put a value at")
    positions = index_array(op, flat, 0, size, allow_negative=True)
    key = _flat_key(xp_for(positions), tuple(input.shape), positions)
    return key, source.reshape(-1), bool(accumulate)


def put(input, index, source, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source[k]`` at flat position ``index[k]`` (row-major; negative
    positions count from the end), or added there with ``accumulate`` (repeats add up)."""
    return Put.apply(input, *_put_args("put", input, index, source, accumulate))


def put_(input, index, source, accumulate: bool = False) -> Tensor:
    return apply_inplace(Put, input, *_put_args("put_", input, index, source, accumulate),
                         convert=False)
