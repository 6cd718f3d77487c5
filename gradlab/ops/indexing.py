"""Indexing: ``x[i]``, ``x[mask]``, ``x[idx] = v``, index_put, masked_fill, nonzero.

Two ideas carry the whole module:

1. **Reading picks values; its backward puts the gradient back where they
   came from.** The gradient of ``x[idx]`` is zero everywhere except at
   ``idx``, where the output's gradient is *added*, not written: ``x[[0, 0]]``
   reads ``x[0]`` twice, so ``x[0]`` gets both gradients (a scatter-add,
   ``np.add.at``; a plain ``g[idx] += grad`` would count a repeated index once).
2. **Writing is reading turned around.** ``x[idx] = v`` computes a new array
   out of place and copies it in (``apply_inplace`` in ``inplace.py``): ``v``
   gets ``grad[idx]``, and the overwritten values of ``x`` get zero.

So ``Index`` (read) and ``IndexPut`` (write) are each other's backward. The
same pairing along one dim (gather / scatter_add, index_select / index_add)
is in ``gather_scatter.py``.

In forward mode a read is linear (the tangent is read at the same index),
a write affine in (x, v): ẏ is ẋ with v̇ written at the index (zeros stand
in for a missing tangent; ``apply_inplace`` hands it to the tensor written).

What an index means (PyTorch's rules, a *basic* part that is a view and an
*advanced* part that copies, every check and its error) is worked out before
any op runs, in ``_index_parsing.py``; the ops here take the parsed key.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from . import creation
from ._index_parsing import _parse, _plain_basic, fill_tensors, split_tensors
from ._util import add_at, as_operand, unbroadcast, wrap_dim, xp_for
from .inplace import apply_inplace
from .selection import where

__all__ = ["index_put", "masked_fill", "masked_select", "nonzero", "select"]
TENSOR_METHODS = [("__getitem__", "getitem"), ("__setitem__", "setitem"), *__all__,
                  "index_put_", "masked_fill_"]


# --- a parsed key: the shape it selects, reading and writing there ---------------------------

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
        add_at(region, advanced, value)
    else:
        region[advanced] = value


def tangent_or_zeros(tangent, primal: Tensor) -> Tensor:
    """Forward mode: ``tangent``, or zeros of ``primal``'s shape when it has none."""
    return tangent if tangent is not None else creation.zeros(
        primal.shape, dtype=primal.dtype, device=primal.device)


# --- x[index] and x[index] = value: each is the other's backward -----------------------------

class Index(Function):
    """``x[index]``: pick values (a view for basic indexing, a copy for advanced).

    Backward: a zero gradient of x's shape with the output's gradient added
    at ``index`` (repeated indices add up): ``zeros.index_put(index, grad,
    accumulate=True)``.
    """

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, key):
        ctx.key = key
        name = _basic_node_name(key)
        if name is not None:
            ctx.node_name = name
        return _read(a, key)

    @staticmethod
    def backward(ctx, grad):
        zeros = creation.zeros(ctx.input_shapes[0], dtype=grad.dtype, device=grad.device)
        return IndexPut.apply(zeros, ctx.key, grad, True), None



class IndexByTensors(Index):
    """``x[index]`` where the index holds tensors: they come as arguments after a key
    template (``split_tensors``), and the key is made from them here, in forward, so a
    replayed graph indexes with the new tensors."""

    name, node_name = "index", Index.node_name
    supports_complex = True

    @staticmethod
    def forward(ctx, a, template, *arrays):
        return Index.forward(ctx, a, _parse(a, fill_tensors(template, arrays), "index"))

    @staticmethod
    def backward(ctx, grad):
        return (Index.backward(ctx, grad)[0], None) + (None,) * (len(ctx.input_shapes) - 2)


def _basic_node_name(key) -> str | None:
    """PyTorch's node name for basic indexing, which it runs as one op per index, left to
    right: the last one names the node (``x[0]`` SelectBackward0, ``x[1:]`` SliceBackward0,
    ``x[None]`` UnsqueezeBackward0). None for advanced indexing (IndexBackward0)."""
    basic, advanced = key
    if advanced is not None:
        return None
    name, full_slices = None, 0
    for item in basic:
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            name = "SelectBackward0"
        elif isinstance(item, slice):
            if item != slice(None):
                name = "SliceBackward0"
            else:
                full_slices += 1
        elif item is None:
            name = "UnsqueezeBackward0"
        elif item is not Ellipsis:
            return None
    if name is None:  # nothing but ':' and '...': x[:] slices, x[...] and x[:, :] alias
        return "SliceBackward0" if full_slices == 1 else "AliasBackward0"
    return name


class IndexPut(Function):
    """A copy of x with ``x[index]`` replaced by ``value`` (with ``accumulate``: increased by it).

    d/dx: the gradient, zeroed where values were replaced (they no longer
    matter); unchanged when accumulating. d/dvalue: ``grad[index]``, summed
    back to value's shape (value was broadcast over the region).
    """

    raw = True
    name = "index_put"
    supports_complex = True

    @staticmethod
    def forward(ctx, a, key, value, accumulate):
        ctx.key, ctx.accumulate = key, accumulate
        out = a.copy()
        _write(out, key, value, accumulate)
        return out

    @staticmethod
    def backward(ctx, grad):
        sa, sv = ctx.input_shapes[0], ctx.input_shapes[2]  # (x, key, value, accumulate ...)
        grad_a = grad_v = None
        if sa is not None:
            grad_a = grad if ctx.accumulate else IndexPut.apply(grad, ctx.key, 0.0, False)
        if sv is not None:
            grad_v = unbroadcast(Index.apply(grad, ctx.key), sv)
        return grad_a, None, grad_v, None

    @staticmethod
    def jvp(ctx, tangent, _, value_tangent, __):
        """jvp: ẏ = index_put(ẋ, index, v̇, accumulate) (a missing tangent is zero)."""
        a, key, _, accumulate = ctx.primals
        if value_tangent is None and accumulate:
            return tangent  # adding a constant: ẏ = ẋ
        return IndexPut.apply(tangent_or_zeros(tangent, a), key,
                              0.0 if value_tangent is None else value_tangent, accumulate)



class IndexPutByTensors(IndexPut):
    """``IndexPut`` whose index holds tensors: ``(x, template, value, accumulate, *index
    tensors)``, the key made in forward (see ``IndexByTensors``)."""

    name, node_name = "index_put", IndexPut.node_name
    supports_complex = True

    @staticmethod
    def forward(ctx, a, template, value, accumulate, *arrays):
        key = _parse(a, fill_tensors(template, arrays), "index_put")
        return IndexPut.forward(ctx, a, key, value, accumulate)

    @staticmethod
    def backward(ctx, grad):
        return IndexPut.backward(ctx, grad) + (None,) * (len(ctx.input_shapes) - 4)

    @staticmethod
    def jvp(ctx, tangent, _, value_tangent, *__):
        """jvp: as IndexPut's, with the key forward made."""
        a, accumulate = ctx.primals[0], ctx.primals[3]
        if value_tangent is None and accumulate:
            return tangent
        return IndexPut.apply(tangent_or_zeros(tangent, a), ctx.key,
                              0.0 if value_tangent is None else value_tangent, accumulate)


def getitem(input, index) -> Tensor:
    """``x[index]`` with ints, slices, None, ``...``, masks and integer tensors or lists."""
    fast = _plain_basic(input._data.shape, index)  # ints and slices: the common case
    if fast is not None:
        return Index.apply(input, (fast, None))
    template, tensors = split_tensors(index)
    if tensors:
        return IndexByTensors.apply(input, template,
                                    *(t.to(input.device) for t in tensors))
    return Index.apply(input, _parse(input, index, "index"))


def _put_args(op, input, index, value, note_reads: bool = True):
    """``(key, value)`` for ``IndexPut``: the parsed index, and the value checked against the
    region it writes."""
    key = _parse(input, index, op, note_reads)
    return key, _value_for(op, input, value, _region_shape(input, key))


def _put(op, input, index, value, accumulate, in_place: bool):
    """``x[index] = value`` (``+=`` with ``accumulate``), in place or on a copy. An index
    holding tensors passes them to the op (``IndexPutByTensors``); it is checked here all
    the same, so the errors come before anything runs."""
    template, tensors = split_tensors(index)
    key, value = _put_args(op, input, index, value, note_reads=not tensors)
    if tensors:
        fn, args = IndexPutByTensors, (template, value, accumulate,
                                       *(t.to(input.device) for t in tensors))
    else:
        fn, args = IndexPut, (key, value, accumulate)
    if in_place:
        return apply_inplace(fn, input, *args, convert=False)
    return fn.apply(input, *args)


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


def setitem(input, index, value) -> None:
    """``x[index] = value`` (a number or a tensor broadcast over the region), in place."""
    _put("index_put_", input, index, value, False, in_place=True)


def _indices_tuple(op, indices) -> tuple:
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}: indices must be a tuple of tensors, one per indexed dim, got "
                        f"{type(indices).__name__}. Fix: {op}((idx,), values)")
    return tuple(indices)


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """Out-of-place ``x[indices] = values`` (``+=`` with ``accumulate``, repeats adding up)."""
    return _put("index_put", input, _indices_tuple("index_put", indices), values,
                bool(accumulate), in_place=False)


def index_put_(input, indices, values, accumulate: bool = False) -> Tensor:
    return _put("index_put_", input, _indices_tuple("index_put_", indices), values,
                bool(accumulate), in_place=True)


def select(input, dim: int, index: int) -> Tensor:
    """Slice ``index`` of dim ``dim``, that dim removed: ``x.select(1, 2)`` is ``x[:, 2]``."""
    if input.ndim == 0:
        raise IndexError("select: a 0-d tensor has no dim to select from")
    return getitem(input, (slice(None),) * wrap_dim(dim, input.ndim, "select") + (int(index),))


# --- masks ------------------------------------------------------------------------------------

class MaskedFill(Function):
    """``value`` where ``mask`` is True, the input elsewhere.

    d/dinput = grad where the mask is False (0 where it was filled);
    d/dvalue = the sum of grad where the mask is True (one value, used everywhere there).
    """

    raw = True
    name = "masked_fill"
    supports_complex = True  # linear: its backward needs no conj

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

    @staticmethod
    def jvp(ctx, tangent, _, value_tangent):
        """jvp: ẏ = masked_fill(ẋ, mask, v̇): v̇ where the mask is True, ẋ elsewhere."""
        a, mask, _ = ctx.primals
        return MaskedFill.apply(tangent_or_zeros(tangent, a), mask,
                                0.0 if value_tangent is None else value_tangent)


def mask_shape(op: str, input: Tensor, mask, inplace: bool) -> tuple:
    """The shape a bool ``mask`` and ``input`` broadcast to, or an error saying why not
    (in place, the mask must fit the tensor itself: the result can't grow)."""
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
    return shape


def _mask_args(op, input, mask, value, inplace):
    mask_shape(op, input, mask, inplace)
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
    return apply_inplace(MaskedFill, input, *_mask_args("masked_fill_", input, mask, value, True),
                         convert=False)


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
