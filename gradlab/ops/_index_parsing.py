"""What an index means: ``x[0, :, [1, 2]]`` turned into a checked key, before any op runs.

Indexing follows PyTorch, which differs from NumPy in one case: integers are
applied first, as basic indexing, so with ``x`` of shape (3, 4, 5),
``x[0, :, [1, 2]]`` has shape (4, 2) (NumPy gives (2, 4)). gradlab splits
every index into a *basic* part (ints, slices, None: a view) and an
*advanced* part (integer arrays, masks: a copy) applied to that view.
Unlike PyTorch, slices may have negative steps (``x[::-1]``), as in NumPy.

This is plain bookkeeping on shapes and raw index arrays, with no
derivative in it, so it is apart from the indexing ops (``indexing.py``),
whose backwards are the point. Every check is made here, so each error names
the dim, its size and the bad index; ``gather_scatter.py`` checks its index
tensors with the same ``check_index_range`` and ``index_array``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from ..autograd.tracing import note_read
from ..tensor import Tensor
from ._util import xp_for, xp_of

__all__ = ["check_index_range", "index_array"]


@dataclass(frozen=True)
class KeySlot:
    """Where index tensor number ``k`` sits in a key (see :func:`split_tensors`)."""

    k: int


def split_tensors(index) -> tuple:
    """``index`` with each tensor in it replaced by a :class:`KeySlot`, and those tensors.

    Ops indexed by tensors take them as arguments of their own (and parse the key
    inside forward), so that a graph, an event or a trace sees which tensors chose
    the positions, and a replayed graph reads the new ones.
    """
    items = index if isinstance(index, tuple) else (index,)
    tensors = [e for e in items if isinstance(e, Tensor)]
    if not tensors:
        return index, ()
    slots, k = [], 0
    for e in items:
        if isinstance(e, Tensor):
            slots.append(KeySlot(k))
            k += 1
        else:
            slots.append(e)
    return tuple(slots) if isinstance(index, tuple) else slots[0], tuple(tensors)


def fill_tensors(template, arrays):
    """The key of :func:`split_tensors` with the (raw) arrays back in its slots."""
    if isinstance(template, KeySlot):
        return arrays[template.k]
    if isinstance(template, tuple):
        return tuple(arrays[e.k] if isinstance(e, KeySlot) else e for e in template)
    return template


def _parse(input, index, op: str, note_reads: bool = True):
    """``index`` as ``(basic, advanced)``: ``x[index]`` is ``x[basic][advanced]``.

    ``input`` is a tensor, or the raw array inside an op's forward. ``basic``
    holds ints, slices and None (NumPy returns a view); ``advanced`` is None or
    a tuple of full slices and int64 index arrays (masks become their
    ``nonzero()`` arrays, as in PyTorch). Everything is checked here, so the
    errors name the dim, its size and the bad index. While a trace runs, an index
    tensor read here warns (``note_reads``): the key holds its values as they are
    now (ops that take the tensors as arguments parse inside forward instead).
    """
    shape = input._data.shape if isinstance(input, Tensor) else input.shape
    fast = _plain_basic(shape, index)
    if fast is not None:
        return fast, None
    entries = [_entry(e, input, op, note_reads)
               for e in (index if isinstance(index, tuple) else (index,))]
    if sum(e is Ellipsis for e in entries) > 1:
        raise IndexError(f"{op}: an index can have only one ellipsis ('...'), got {index!r}")
    used = sum(_dims_used(e) for e in entries if e is not Ellipsis)
    if used > len(shape):
        raise IndexError(f"{op}: too many indices for a tensor of dimension {len(shape)} "
                         f"(shape {tuple(shape)}): the index uses {used} dims")
    xp = xp_of(input) if isinstance(input, Tensor) else xp_for(input)
    basic, advanced = [], []
    d = out = 0  # the input dim an entry indexes, the dim of x[basic] it becomes
    for e in entries:
        if e is Ellipsis:
            n = len(shape) - used
            basic += [slice(None)] * n
            d, out = d + n, out + n
        elif e is None:
            basic.append(None)
            out += 1
        elif isinstance(e, bool):  # x[True] adds a dim of size 1 (x[False]: size 0)
            basic.append(None)
            advanced.append((out, xp.arange(int(e), dtype=np.int64)))
            out += 1
        elif isinstance(e, int):
            check_index_range(op, e, e, d, shape[d])
            basic.append(e)
            d += 1
        elif isinstance(e, slice):
            basic.append(e)
            d, out = d + 1, out + 1
        elif e.dtype == bool:
            k = e.ndim
            if tuple(e.shape) != shape[d:d + k]:
                raise IndexError(
                    f"{op}: the mask of shape {tuple(e.shape)} doesn't match the tensor's "
                    f"shape {tuple(shape[d:d + k])} at dims {d}..{d + k - 1} (tensor shape "
                    f"{tuple(shape)}); a mask must have exactly the shape of the dims it covers")
            basic += [slice(None)] * k
            advanced += [(out + j, w.astype(np.int64)) for j, w in enumerate(e.nonzero())]
            d, out = d + k, out + k
        else:
            basic.append(slice(None))
            advanced.append((out, index_array(op, e, d, shape[d], allow_negative=True)))
            d, out = d + 1, out + 1
    basic = tuple(basic) + (Ellipsis,)  # a trailing ... keeps a 0-d result an array (a view)
    if not advanced:
        return basic, None
    shapes = [tuple(a.shape) for _, a in advanced]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(f"{op}: index arrays of shapes {shapes} can't be broadcast together; "
                         "index tensors used together must broadcast like operands of +") from None
    key = [slice(None)] * (advanced[-1][0] + 1)
    for pos, arr in advanced:
        key[pos] = arr
    return basic, tuple(key)


def _plain_basic(shape, index):
    """The common case, in-range Python ints and plain slices only, in one quick pass
    (else None, and ``_parse`` does the full work)."""
    items = index if type(index) is tuple else (index,)
    if len(items) > len(shape):
        return None
    for size, e in zip(shape, items):
        kind = type(e)
        if kind is int:
            if not -size <= e < size:
                return None
        elif kind is not slice or e.step == 0 or not all(
                v is None or type(v) is int for v in (e.start, e.stop, e.step)):
            return None
    return items + (Ellipsis,)


def _entry(e, input, op, note=True):
    """One index entry as None, Ellipsis, bool, int, slice, or a raw bool/int array."""
    if e is None or e is Ellipsis or isinstance(e, slice):
        return e if not isinstance(e, slice) else _slice(e, op)
    if isinstance(e, (bool, np.bool_)):
        return bool(e)
    if isinstance(e, (int, np.integer)):
        return int(e)
    if isinstance(e, Tensor):
        if note:  # its values go into the key as they are now
            note_read(e, f"{op} with this index tensor")
        arr = e.to(input.device)._data
    elif isinstance(e, (list, tuple, np.ndarray)) or hasattr(e, "__cuda_array_interface__"):
        arr = (xp_of(input) if isinstance(input, Tensor) else xp_for(input)).asarray(e)
        if arr.size == 0 and arr.dtype.kind == "f":  # x[[]] selects nothing
            arr = arr.astype(np.int64)
    else:
        raise IndexError(f"{op}: only integers, slices (:), None, ellipsis (...) and integer "
                         f"or bool tensors are valid indices, got {type(e).__name__} ({e!r})")
    if arr.dtype.kind not in "biu":
        what = arr.dtype.name if arr.dtype.kind in "OUSV" else _dt.from_numpy_dtype(arr.dtype)
        raise IndexError(f"{op}: tensors used as indices must be integer (int64, int32) or bool, "
                         f"got {what} with shape {tuple(arr.shape)}. Fix: idx.long()")
    if arr.ndim == 0:  # a 0-d index tensor acts like a Python number, as in PyTorch
        return bool(arr) if arr.dtype.kind == "b" else int(arr)
    return arr


def _slice(s: slice, op: str) -> slice:
    try:
        start, stop, step = (None if v is None else operator.index(v)
                             for v in (s.start, s.stop, s.step))
    except TypeError:
        raise IndexError(f"{op}: slice bounds must be integers or None, got {s}") from None
    if step == 0:
        raise ValueError(f"{op}: slice step cannot be zero, got {s}")
    return slice(start, stop, step)


def _dims_used(e) -> int:
    if e is None or isinstance(e, bool):
        return 0
    if isinstance(e, (int, slice)):
        return 1
    return e.ndim if e.dtype == bool else 1


def check_index_range(op, low, high, dim, size, allow_negative=True) -> None:
    """Raise an IndexError naming the dim and its valid range unless ``low..high`` fit in it."""
    lo = -size if allow_negative else 0
    bad = low if low < lo else high if high >= size else None
    if bad is not None:
        valid = f"{lo} to {size - 1}" if size else "none: the dim is empty"
        raise IndexError(f"{op}: index {bad} is out of range for dim {dim} of size {size} "
                         f"(valid: {valid})")


def index_array(op, arr, dim, size, allow_negative=False):
    """An int64 copy of an index array, checked against the dim's size; negatives wrapped."""
    arr = arr.astype(np.int64)  # a copy: changing the caller's index later can't change ours
    if arr.size:
        low, high = int(arr.min()), int(arr.max())
        check_index_range(op, low, high, dim, size, allow_negative)
        if low < 0:
            arr[arr < 0] += size
    return arr
