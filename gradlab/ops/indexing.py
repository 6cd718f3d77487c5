"""Indexing: ``x[i]``, ``x[mask]``, ``x[idx] = v``, gather, scatter, index_select, masked_fill.

Two ideas carry the whole module:

1. **Reading picks values; its backward puts the gradient back where they
   came from.** The gradient of ``x[idx]`` is zero everywhere except at
   ``idx``, where the output's gradient is *added*, not written: ``x[[0, 0]]``
   reads ``x[0]`` twice, so ``x[0]`` gets both gradients (a scatter-add,
   ``np.add.at``; a plain ``g[idx] += grad`` would count a repeated index once).
2. **Writing is reading turned around.** ``x[idx] = v`` computes a new array
   out of place and copies it in (see ``inplace.py``): ``v`` gets ``grad[idx]``,
   and the overwritten values of ``x`` get zero.

So ``Index`` (read) and ``IndexPut`` (write) are each other's backward, as
are ``gather`` / ``scatter_add`` and ``index_select`` / ``index_add``.

Indexing follows PyTorch, which differs from NumPy in one case: integers are
applied first, as basic indexing, so with ``x`` of shape (3, 4, 5),
``x[0, :, [1, 2]]`` has shape (4, 2) (NumPy gives (2, 4)). gradlab splits
every index into a *basic* part (ints, slices, None: a view) and an
*advanced* part (integer arrays, masks: a copy) applied to that view.
Unlike PyTorch, slices may have negative steps (``x[::-1]``), as in NumPy.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..tensor import Tensor
from . import creation
from ._util import as_operand, unbroadcast, wrap_dim, xp_for, xp_of
from .elementwise import where
from .inplace import _inplace_variant
from .shape import ConstantPadNd

__all__ = ["gather", "scatter", "scatter_add", "index_select", "index_add", "index_put",
           "masked_fill", "masked_select", "nonzero", "take_along_dim", "select"]
TENSOR_METHODS = [("__getitem__", "getitem"), ("__setitem__", "setitem"), *__all__,
                  "scatter_", "scatter_add_", "index_add_", "index_put_", "masked_fill_"]


def _add_at(target, index, values) -> None:
    """``target[index] += values`` in place, adding once per occurrence of a repeated index."""
    xp = xp_for(target)
    add_at = getattr(xp.add, "at", None)
    if add_at is not None:
        add_at(target, index, values)
    else:  # CuPy before ufunc.at: cupyx has the same operation
        import cupyx

        cupyx.scatter_add(target, index, values)


# --- parsing an index: a basic part (a view) and an advanced part ----------------------------

def _parse(input: Tensor, index, op: str):
    """``index`` as ``(basic, advanced)``: ``x[index]`` is ``x[basic][advanced]``.

    ``basic`` holds ints, slices and None (NumPy returns a view); ``advanced``
    is None or a tuple of full slices and int64 index arrays (masks become
    their ``nonzero()`` arrays, as in PyTorch). Everything is checked here,
    so the errors name the dim, its size and the bad index.
    """
    shape = input._data.shape
    fast = _plain_basic(shape, index)
    if fast is not None:
        return fast, None
    entries = [_entry(e, input, op) for e in (index if isinstance(index, tuple) else (index,))]
    if sum(e is Ellipsis for e in entries) > 1:
        raise IndexError(f"{op}: an index can have only one ellipsis ('...'), got {index!r}")
    used = sum(_dims_used(e) for e in entries if e is not Ellipsis)
    if used > len(shape):
        raise IndexError(f"{op}: too many indices for a tensor of dimension {len(shape)} "
                         f"(shape {tuple(shape)}): the index uses {used} dims")
    xp = xp_of(input)
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
            _check_range(op, e, e, d, shape[d])
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
            advanced.append((out, _int_array(op, e, d, shape[d], allow_negative=True)))
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


def _entry(e, input, op):
    """One index entry as None, Ellipsis, bool, int, slice, or a raw bool/int array."""
    if e is None or e is Ellipsis or isinstance(e, slice):
        return e if not isinstance(e, slice) else _slice(e, op)
    if isinstance(e, (bool, np.bool_)):
        return bool(e)
    if isinstance(e, (int, np.integer)):
        return int(e)
    if isinstance(e, Tensor):
        arr = e.to(input.device)._data
    elif isinstance(e, (list, tuple, np.ndarray)) or hasattr(e, "__cuda_array_interface__"):
        arr = xp_of(input).asarray(e)
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


def _check_range(op, low, high, dim, size, allow_negative=True) -> None:
    lo = -size if allow_negative else 0
    bad = low if low < lo else high if high >= size else None
    if bad is not None:
        valid = f"{lo} to {size - 1}" if size else "none: the dim is empty"
        raise IndexError(f"{op}: index {bad} is out of range for dim {dim} of size {size} "
                         f"(valid: {valid})")


def _int_array(op, arr, dim, size, allow_negative=False):
    """An int64 copy of an index array, checked against the dim's size; negatives wrapped."""
    arr = arr.astype(np.int64)  # a copy: changing the caller's index later can't change ours
    if arr.size:
        low, high = int(arr.min()), int(arr.max())
        _check_range(op, low, high, dim, size, allow_negative)
        if low < 0:
            arr[arr < 0] += size
    return arr


def _region_shape(input: Tensor, key) -> tuple:
    """The shape of ``input[key]``, computed without copying anything."""
    basic, advanced = key
    view = input._data[basic].shape
    if advanced is None:
        return tuple(view)
    positions = [i for i, e in enumerate(advanced) if not isinstance(e, slice)]
    indexed = np.broadcast_shapes(*(advanced[i].shape for i in positions))
    rest = [s for i, s in enumerate(view) if i not in positions]
    if positions == list(range(positions[0], positions[-1] + 1)):  # adjacent: stay in place
        return tuple(rest[:positions[0]]) + indexed + tuple(rest[positions[0]:])
    return indexed + tuple(rest)  # separated: NumPy and PyTorch put the indexed dims first


def _read(a, key):
    basic, advanced = key
    view = a[basic]
    return view if advanced is None else view[advanced]


def _write(out, key, value, accumulate) -> None:
    basic, advanced = key
    region = out[basic]  # a view: writing into it writes into out
    if advanced is None:
        if accumulate:
            region += value
        else:
            region[...] = value
    elif accumulate:
        _add_at(region, advanced, value)
    else:
        region[advanced] = value


# --- x[index] and x[index] = value: each is the other's backward -----------------------------

class Index(Function):
    """``x[index]``: pick values (a view for basic indexing, a copy for advanced).

    Backward: a zero gradient of x's shape with the output's gradient added
    at ``index`` (repeated indices add up): ``zeros.index_put(index, grad,
    accumulate=True)``.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, key):
        ctx.key = key
        return _read(a, key)

    @staticmethod
    def backward(ctx, grad):
        zeros = creation.zeros(ctx.input_shapes[0], dtype=grad.dtype, device=grad.device)
        return IndexPut.apply(zeros, ctx.key, grad, True), None


class IndexPut(Function):
    """A copy of x with ``x[index]`` replaced by ``value`` (with ``accumulate``: increased by it).

    d/dx: the gradient, zeroed where values were replaced (they no longer
    matter); unchanged when accumulating. d/dvalue: ``grad[index]``, summed
    back to value's shape (value was broadcast over the region).
    """

    raw = True
    name = "index_put"

    @staticmethod
    def forward(ctx, a, key, value, accumulate):
        ctx.key, ctx.accumulate = key, accumulate
        out = a.copy()
        _write(out, key, value, accumulate)
        return out

    @staticmethod
    def backward(ctx, grad):
        sa, _, sv, _ = ctx.input_shapes
        grad_a = grad_v = None
        if sa is not None:
            grad_a = grad if ctx.accumulate else IndexPut.apply(grad, ctx.key, 0.0, False)
        if sv is not None:
            grad_v = unbroadcast(Index.apply(grad, ctx.key), sv)
        return grad_a, None, grad_v, None


def getitem(input, index) -> Tensor:
    """``x[index]`` with ints, slices, None, ``...``, masks and integer tensors or lists."""
    return Index.apply(input, _parse(input, index, "index"))


def _value_for(op, input, value, region):
    """``value`` as something ``IndexPut`` can broadcast over ``region`` (a shape)."""
    if not isinstance(value, Tensor):
        value = as_operand(value, input)
        if not isinstance(value, Tensor):
            return value  # a Python number: NumPy casts it like PyTorch does
    value = value.to(input.device).to(input.dtype)  # assignment casts, as in PyTorch
    shape = tuple(value.shape)
    while len(shape) > len(region) and shape[0] == 1:  # PyTorch drops leading 1s
        shape = shape[1:]
    try:
        ok = np.broadcast_shapes(shape, region) == tuple(region)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"{op}: a value of shape {tuple(value.shape)} can't be broadcast to "
                           f"the indexed region of shape {tuple(region)}")
    return value.reshape(shape) if shape != tuple(value.shape) else value


def _inplace(op, target: Tensor, *args) -> Tensor:
    """``inplace.apply_inplace`` for ops whose arguments must pass unconverted (an index key,
    a bool mask): the same leaf check, version bump and history rebase."""
    if target._requires_grad and target.grad_fn is None and state.enabled:
        raise RuntimeError(
            f"{op.name}_: a leaf tensor that requires grad (shape {tuple(target.shape)}) can't "
            "be changed in place: the graph would lose its value. Fix: update weights inside "
            "`with gradlab.no_grad():`, or change a copy (y = x.clone(); y[...] = v)."
        )
    out = _inplace_variant(op).apply(target, *args)
    target._storage.version += 1
    if out.grad_fn is not None:
        target.grad_fn = out.grad_fn
        target._out_index = 0
        target._requires_grad = True
    return target


def setitem(input, index, value) -> None:
    """``x[index] = value`` (a number or a tensor broadcast over the region), in place."""
    key = _parse(input, index, "index_put_")
    value = _value_for("index_put_", input, value, _region_shape(input, key))
    _inplace(IndexPut, input, key, value, False)


def _indices_tuple(op, indices) -> tuple:
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}: indices must be a tuple of tensors, one per indexed dim, got "
                        f"{type(indices).__name__}. Fix: {op}((idx,), values)")
    return tuple(indices)


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """Out-of-place ``x[indices] = values`` (``+=`` with ``accumulate``, repeats adding up)."""
    key = _parse(input, _indices_tuple("index_put", indices), "index_put")
    return IndexPut.apply(input, key, _value_for("index_put", input, values,
                                                 _region_shape(input, key)), bool(accumulate))


def index_put_(input, indices, values, accumulate: bool = False) -> Tensor:
    key = _parse(input, _indices_tuple("index_put_", indices), "index_put_")
    value = _value_for("index_put_", input, values, _region_shape(input, key))
    return _inplace(IndexPut, input, key, value, bool(accumulate))


def select(input, dim: int, index: int) -> Tensor:
    """Slice ``index`` of dim ``dim``, that dim removed: ``x.select(1, 2)`` is ``x[:, 2]``."""
    if input.ndim == 0:
        raise IndexError("select: a 0-d tensor has no dim to select from")
    return getitem(input, (slice(None),) * wrap_dim(dim, input.ndim, "select") + (int(index),))


# --- gather and scatter: index along one dim, position by position ---------------------------

def _index_tensor(op: str, index, input: Tensor):
    if not isinstance(index, Tensor) or index.dtype not in (_dt.int64, _dt.int32):
        what = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise TypeError(f"{op}: index must be an int64 (or int32) tensor, got {what}. "
                        "Fix: gradlab.tensor(idx) or idx.long()")
    return index.to(input.device)._data


def _upto(shape, skip=None) -> tuple:
    """Slices selecting the first ``shape[d]`` entries of each dim (all of dim ``skip``)."""
    return tuple(slice(None) if d == skip else slice(0, s) for d, s in enumerate(shape))


def _scatter_key(xp, index, dim) -> tuple:
    """Where ``scatter`` writes: along ``dim`` the index, elsewhere each entry's own position."""
    n = index.ndim
    return tuple(index if d == dim else
                 xp.arange(s).reshape((1,) * d + (s,) + (1,) * (n - d - 1))
                 for d, s in enumerate(index.shape))


def _pad_to(grad: Tensor, shape) -> Tensor:
    """Zero-pad at the end of each dim up to ``shape`` (src may be larger than index)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    return ConstantPadNd.apply(grad, tuple((0, s - g) for s, g in zip(shape, grad.shape)), 0)


class Gather(Function):
    """``out[i][j] = x[index[i][j]][j]`` (for dim 0).   Backward: scatter-add the gradient."""

    raw = True

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.dim, ctx.index = dim, index
        return xp_for(a).take_along_axis(a[_upto(index.shape, dim)], index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        zeros = creation.zeros(ctx.input_shapes[0], dtype=grad.dtype, device=grad.device)
        return ScatterAdd.apply(zeros, ctx.dim, ctx.index, grad), None, None


class ScatterAdd(Function):
    """A copy of x with ``x[index[i][j]][j] += src[i][j]`` (for dim 0); repeats add up.

    d/dx = grad.  d/dsrc = grad gathered at the same positions.
    """

    raw = True
    name = "scatter_add"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim, ctx.index = dim, index
        out = a.copy()
        _add_at(out, _scatter_key(xp_for(a), index, dim), src[_upto(index.shape)])
        return out

    @staticmethod
    def backward(ctx, grad):
        sa, _, _, ss = ctx.input_shapes
        grad_src = None if ss is None else _pad_to(Gather.apply(grad, ctx.dim, ctx.index), ss)
        return grad if sa is not None else None, None, None, grad_src


class Scatter(Function):
    """A copy of x with ``x[index[i][j]][j] = src[i][j]`` (for dim 0; src may be a number).

    d/dx = grad, zeroed where values were overwritten.  d/dsrc = grad gathered there.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim, ctx.index = dim, index
        out = a.copy()
        out[_scatter_key(xp_for(a), index, dim)] = (
            src[_upto(index.shape)] if hasattr(src, "shape") else src)
        return out

    @staticmethod
    def backward(ctx, grad):
        sa, _, _, ss = ctx.input_shapes
        grad_a = None if sa is None else Scatter.apply(grad, ctx.dim, ctx.index, 0.0)
        grad_src = None if ss is None else _pad_to(Gather.apply(grad, ctx.dim, ctx.index), ss)
        return grad_a, None, None, grad_src


def _check_dims(op, input, dim, idx, src=None) -> int:
    """gather/scatter's shape rules: same number of dims, index no larger than the others."""
    if idx.ndim != max(input.ndim, 1) and not (idx.ndim == 0 and input.ndim <= 1):
        raise RuntimeError(f"{op}: the index must have as many dims as the input, got index "
                           f"shape {tuple(idx.shape)} and input shape {tuple(input.shape)}")
    dim = wrap_dim(dim, input.ndim, op)
    for d in range(idx.ndim):
        if d != dim and input.ndim and idx.shape[d] > input.shape[d]:
            raise RuntimeError(
                f"{op}: the index (shape {tuple(idx.shape)}) can't be larger than the input "
                f"(shape {tuple(input.shape)}) in dim {d}; only dim {dim} may differ")
        if src is not None and src.ndim and idx.shape[d] > src.shape[d]:
            raise RuntimeError(f"{op}: the index (shape {tuple(idx.shape)}) can't be larger "
                               f"than src (shape {tuple(src.shape)}) in dim {d}")
    if idx.size:
        size = input.shape[dim] if input.ndim else 1
        _check_range(op, int(idx.min()), int(idx.max()), dim, size, allow_negative=False)
    return dim


def gather(input, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
    """Pick along ``dim`` one value per index entry: ``out[i][j] = input[i][index[i][j]]``
    for dim 1. The output has the index's shape."""
    idx = _index_tensor("gather", index, input)
    dim = _check_dims("gather", input, dim, idx)
    if input.ndim == 0 or idx.ndim == 0:  # 0-d and 1-d mix, as in PyTorch
        return Gather.apply(input.reshape(-1), 0, idx.reshape(-1)).reshape(idx.shape)
    return Gather.apply(input, dim, idx)


def _scatter_args(op, input, dim, index, src):
    idx = _index_tensor(op, index, input)
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{op}: src has dtype {src.dtype} but the tensor has "
                               f"{input.dtype}. Fix: src.to({input.dtype})")
        if src.ndim != idx.ndim:
            raise RuntimeError(f"{op}: src (shape {tuple(src.shape)}) must have as many dims "
                               f"as the index (shape {tuple(idx.shape)})")
    dim = _check_dims(op, input, dim, idx, src if isinstance(src, Tensor) else None)
    if input.ndim == 0:
        raise RuntimeError(f"{op}: needs a tensor with at least 1 dim, got a 0-d tensor")
    return dim, idx, src


def scatter(input, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor or a number) written at ``index`` along
    ``dim``: ``out[index[i][j]][j] = src[i][j]`` for dim 0. Where an index repeats, which
    write wins is unspecified (as in PyTorch)."""
    src = value if src is None else src
    if src is None:
        raise TypeError("scatter: give src (a tensor) or value (a number)")
    if reduce == "add":
        return scatter_add(input, dim, index, src)
    if reduce is not None:
        raise NotImplementedError(f"scatter: reduce={reduce!r} is not supported; use "
                                  "scatter_add (reduce='add') or scatter_reduce")
    return Scatter.apply(input, *_scatter_args("scatter", input, dim, index, src))


def scatter_(input, dim: int, index, src=None, *, value=None) -> Tensor:
    src = value if src is None else src
    return _inplace(Scatter, input, *_scatter_args("scatter_", input, dim, index, src))


def scatter_add(input, dim: int, index, src) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim``; repeats add up."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add: src must be a Tensor, got {type(src).__name__}")
    return ScatterAdd.apply(input, *_scatter_args("scatter_add", input, dim, index, src))


def scatter_add_(input, dim: int, index, src) -> Tensor:
    return _inplace(ScatterAdd, input, *_scatter_args("scatter_add_", input, dim, index, src))


def take_along_dim(input, indices, dim=None) -> Tensor:
    """``gather`` that broadcasts: input and indices broadcast in every dim except ``dim``
    (with ``dim=None``, both are flattened first)."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"take_along_dim: input (shape {tuple(input.shape)}) and indices "
                           f"(shape {tuple(indices.shape)}) must have the same number of dims")
    dim = wrap_dim(dim, input.ndim, "take_along_dim")
    others = []
    for d, (a, b) in enumerate(zip(input.shape, indices.shape)):
        if d != dim and a != b and 1 not in (a, b):
            raise RuntimeError(f"take_along_dim: input (shape {tuple(input.shape)}) and indices "
                               f"(shape {tuple(indices.shape)}) don't broadcast in dim {d} "
                               f"({a} vs {b}); outside dim {dim} sizes must match or be 1")
        others.append(max(a, b) if d != dim else None)
    return gather(input.expand([s if s is not None else input.shape[dim] for s in others]), dim,
                  indices.expand([s if s is not None else indices.shape[dim] for s in others]))


# --- index_select and index_add: whole slices along one dim ----------------------------------

class IndexSelect(Function):
    """The slices ``index[0], index[1], ...`` of dim ``dim``.   Backward: index_add the gradient."""

    raw = True
    name = "index_select"

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.dim, ctx.index = dim, index
        return xp_for(a).take(a, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        zeros = creation.zeros(ctx.input_shapes[0], dtype=grad.dtype, device=grad.device)
        return IndexAdd.apply(zeros, ctx.dim, ctx.index, grad), None, None


class IndexAdd(Function):
    """A copy of x with ``source``'s slice k added to slice ``index[k]`` of dim ``dim``.

    d/dx = grad.  d/dsource = the gradient's slices at ``index`` (index_select).
    """

    raw = True
    name = "index_add"

    @staticmethod
    def forward(ctx, a, dim, index, source):
        ctx.dim, ctx.index = dim, index
        out = a.copy()
        _add_at(out, (slice(None),) * dim + (index,), source)
        return out

    @staticmethod
    def backward(ctx, grad):
        sa, _, _, ss = ctx.input_shapes
        grad_src = None if ss is None else IndexSelect.apply(grad, ctx.dim, ctx.index)
        return grad if sa is not None else None, None, None, grad_src


def _vector_index(op, index, input, dim):
    idx = _index_tensor(op, index, input)
    if idx.ndim > 1:
        raise IndexError(f"{op}: the index must be 1-D (a list of positions), got shape "
                         f"{tuple(idx.shape)}")
    return _int_array(op, idx.reshape(-1), dim, input.shape[dim])


def index_select(input, dim: int, index) -> Tensor:
    """The slices of dim ``dim`` at positions ``index`` (1-D), in that order, repeats allowed."""
    if input.ndim == 0:
        if isinstance(index, Tensor) and index.numel() != 1:
            raise IndexError(f"index_select: a 0-d tensor has one value, so the index must "
                             f"have one position, got {index.numel()}")
        return index_select(input.reshape(1), 0, index).reshape(())
    dim = wrap_dim(dim, input.ndim, "index_select")
    return IndexSelect.apply(input, dim, _vector_index("index_select", index, input, dim))


def _index_add_args(op, input, dim, index, source, alpha):
    if input.ndim == 0:
        raise RuntimeError(f"{op}: needs a tensor with at least 1 dim, got a 0-d tensor")
    dim = wrap_dim(dim, input.ndim, op)
    idx = _vector_index(op, index, input, dim)
    want = input.shape[:dim] + (len(idx),) + input.shape[dim + 1:]
    if tuple(source.shape) != tuple(want):
        raise RuntimeError(f"{op}: source must have shape {tuple(want)} (the tensor's shape "
                           f"{tuple(input.shape)} with {len(idx)} = len(index) in dim {dim}), "
                           f"got {tuple(source.shape)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}: source has dtype {source.dtype} but the tensor has "
                           f"{input.dtype}. Fix: source.to({input.dtype})")
    return dim, idx, source if alpha == 1 else source * alpha


def index_add(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """A copy of ``input`` with ``alpha * source[k]`` added to slice ``index[k]`` of ``dim``."""
    return IndexAdd.apply(input, *_index_add_args("index_add", input, dim, index, source, alpha))


def index_add_(input, dim: int, index, source, *, alpha=1) -> Tensor:
    return _inplace(IndexAdd, input, *_index_add_args("index_add_", input, dim, index, source,
                                                      alpha))


# --- masks ------------------------------------------------------------------------------------

class MaskedFill(Function):
    """``value`` where ``mask`` is True, the input elsewhere.

    d/dinput = grad where the mask is False (0 where it was filled);
    d/dvalue = the sum of grad where the mask is True (one value, used everywhere there).
    """

    raw = True
    name = "masked_fill"

    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.save_for_backward(mask)
        xp = xp_for(a)
        return xp.where(mask, xp.asarray(value, dtype=a.dtype), a)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        sa, _, sv = ctx.input_shapes
        return (None if sa is None else unbroadcast(where(mask, 0.0, grad), sa), None,
                None if sv is None else where(mask, grad, 0.0).sum().reshape(sv))


def _mask_args(op, input, mask, value, inplace):
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool:
        what = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"{op}: the mask must be a bool tensor, got {what}. "
                        "Fix: pass a comparison (x > 0) or mask.bool()")
    try:
        shape = np.broadcast_shapes(tuple(mask.shape), tuple(input.shape))
    except ValueError:
        shape = None
    if shape is None or (inplace and shape != tuple(input.shape)):
        raise RuntimeError(f"{op}: the mask of shape {tuple(mask.shape)} can't be broadcast "
                           f"to the tensor's shape {tuple(input.shape)}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"{op}: the value must be a number or a 0-d tensor, got shape "
                               f"{tuple(value.shape)}. Fix: use where(mask, value, x)")
        value = value.to(input.device).to(input.dtype)
    return mask.to(input.device), value


def masked_fill(input, mask, value) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or 0-d tensor) where ``mask`` is True."""
    return MaskedFill.apply(input, *_mask_args("masked_fill", input, mask, value, False))


def masked_fill_(input, mask, value) -> Tensor:
    return _inplace(MaskedFill, input, *_mask_args("masked_fill_", input, mask, value, True))


def masked_select(input, mask) -> Tensor:
    """The values where ``mask`` (broadcast with ``input``) is True, as a 1-D tensor."""
    _mask_args("masked_select", input, mask, 0, False)
    shape = np.broadcast_shapes(tuple(mask.shape), tuple(input.shape))
    return getitem(input.expand(shape), mask.expand(shape))


class Nonzero(Function):
    """Positions of the nonzero values (integers: no gradient)."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, a, as_tuple):
        xp = xp_for(a)
        if as_tuple:
            return tuple(i.astype(np.int64) for i in xp.nonzero(a.reshape(-1) if a.ndim == 0
                                                                 else a))
        return xp.argwhere(a).astype(np.int64)


def nonzero(input, *, as_tuple: bool = False):
    """Indices of the nonzero values: an ``(n, ndim)`` int64 tensor, one row per value, or
    with ``as_tuple`` one 1-D tensor per dim (usable as ``x[nonzero(m, as_tuple=True)]``)."""
    if not isinstance(input, Tensor):
        input = creation.tensor(input)
    return Nonzero.apply(input, bool(as_tuple))
