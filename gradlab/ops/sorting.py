"""Ordering values: sort, argsort, topk, kthvalue, msort, unique, searchsorted.

Each of ``sort``, ``topk`` and ``kthvalue`` returns ``(values, indices)``
along one dim, and every output value *is* one input value, copied from
position ``indices`` along that dim. So the gradient only has to go back
where the value came from:

    d values[..., j] / d input[..., indices[..., j]] = 1   (and 0 elsewhere)

i.e. ``grad_input = zeros`` with the output gradient scatter-added at
``indices`` along ``dim``. That backward is a ``ScatterAdd``, whose own
backward is a ``Gather``, so second derivatives work too. Forward mode is
that ``Gather`` itself: each value's tangent is the input's tangent at
``indices``.

Order follows PyTorch: NaN sorts as the largest value, and ``stable=True``
keeps equal values in their original order (gradlab's sort is always
stable; PyTorch's ``stable=False`` leaves the order of ties unspecified).
``unique`` and ``searchsorted`` give positions and counts: no gradient.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..tensor import Tensor
from . import creation
from ._util import check_ordered, wrap_dim, xp_for
from .gather_scatter import Gather, ScatterAdd

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive",
           "searchsorted", "bucketize"]
FUNCTIONAL: list[str] = []
TENSOR_METHODS = ["sort", "argsort", "msort", "topk", "kthvalue", "unique",
                  "unique_consecutive"]



def pick_along(ctx, a, indices, dim: int, keepdim: bool) -> tuple:
    """The forward of an op that picks one input per output along ``dim`` (sort, topk,
    kthvalue, ``max(dim)``, median, mode): ``(values, indices)`` read at ``indices`` (the
    dim kept, as ``take_along_axis`` wants), squeezed unless ``keepdim``; the indices are
    saved for backward and get no gradient. A 0-d ``a`` is its own pick (pass None)."""
    xp = xp_for(a)
    if a.ndim == 0:
        values, indices = a.copy(), xp.zeros((), dtype=np.int64)
    else:
        values = xp.take_along_axis(a, indices, axis=dim)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
    ctx.mark_non_differentiable(indices)
    ctx.save_for_backward(indices)
    return values, indices


def gradient_to_picked(ctx, grad: Tensor) -> Tensor:
    """The backward of such an op: each value's gradient goes back to the input it was
    picked from, the rest get 0 (a scatter-add, whose own backward, a gather, gives
    double backward)."""
    (indices,) = ctx.saved_tensors
    shape, dim = ctx.input_shapes[0], ctx.dim
    if not shape:  # a 0-d input is its own pick
        return grad
    if not ctx.keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    zeros = creation.zeros(shape, dtype=grad.dtype, device=grad.device)
    return ScatterAdd.apply(zeros, dim, indices, grad)


class PickFunction(Function):
    """The base of the ops that pick one input per output and return ``(values, indices)``
    (sort, topk, kthvalue, ``max(dim)``, median, mode): forward with ``pick_along``; the
    gradient goes back to the picked inputs, and so does forward mode.

    backward gives one gradient, the input's: an op's other arguments are never tensors.
    """

    raw = True

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        return gradient_to_picked(ctx, grad)

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: each value's tangent is ȧ at its index (the indices have none)."""
        return picked_tangent(ctx, t), None


def picked_tangent(ctx, tangent: Tensor) -> Tensor:
    """Forward mode of ops that pick one input per output and return its index
    (sort, topk, kthvalue, ``max(dim)``): each value's tangent is ȧ at that index."""
    if not tangent.ndim:  # a 0-d input is its own pick
        return tangent
    indices = ctx.results[1]
    if not ctx.keepdim:
        indices = indices.unsqueeze(ctx.dim)
    picked = Gather.apply(tangent, ctx.dim, indices)
    return picked if ctx.keepdim else picked.squeeze(ctx.dim)


# --- the ordering itself, on raw arrays --------------------------------------------------------

def _sort_order(a, dim: int, descending: bool):
    """Stable argsort along ``dim``: equal values keep their order; NaN counts as largest.

    Descending order reverses the array, sorts it ascending, and reverses
    the result: ties then come out in their original order, as PyTorch's
    ``stable=True`` wants (negating would not work for NaN, bool or unsigned).
    """
    xp = xp_for(a)
    if a.dtype.kind == "V":  # bfloat16: NumPy can't order it with NaNs; float32 is exact
        a = a.astype(np.float32)
    if not descending:
        return xp.argsort(a, axis=dim, kind="stable")
    order = xp.argsort(xp.flip(a, axis=dim), axis=dim, kind="stable")
    return xp.ascontiguousarray(xp.flip(a.shape[dim] - 1 - order, axis=dim))  # C order, as PyTorch


class Sort(PickFunction):
    """``(values, indices)`` in order along ``dim``, the first ``k`` of them for topk.

    Backward: the gradient of ``values`` scatter-added back to ``indices`` (see the
    module docstring); ``indices`` has no gradient.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dim, descending, k):
        ctx.dim, ctx.keepdim = dim, True
        indices = None
        if a.ndim:
            indices = _sort_order(a, dim, descending).astype(np.int64, copy=False)
            if k is not None:
                indices = indices[(slice(None),) * dim + (slice(0, k),)].copy()  # drop the rest
        return pick_along(ctx, a, indices, dim, True)



class Topk(Sort):
    """The ``k`` largest (or smallest) values along ``dim``, and where they were."""

    name = "topk"


class Kthvalue(PickFunction):
    """The ``k``-th smallest value along ``dim`` (1-based), and its index.

    Backward: as for sort, the gradient goes back to the one position picked.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dim, k, keepdim):
        ctx.dim, ctx.keepdim = dim, keepdim
        indices = None
        if a.ndim:
            order = _sort_order(a, dim, False).astype(np.int64, copy=False)
            indices = order[(slice(None),) * dim + (slice(k - 1, k),)].copy()
        return pick_along(ctx, a, indices, dim, keepdim)



class Argsort(Function):
    """The positions that would sort ``a`` along ``dim`` (no gradient: they are indices)."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, a, dim, descending):
        if a.ndim == 0:
            return xp_for(a).zeros((), dtype=np.int64)
        return _sort_order(a, dim, descending).astype(np.int64, copy=False)


def _dim(op: str, input, dim: int) -> int:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    return wrap_dim(dim, input.ndim, op)


def sort(input, dim: int = -1, descending: bool = False, *, stable: bool = False):
    """``(values, indices)``: ``input`` sorted along ``dim``, and where each value was.

    Ties keep their original order (a stable sort, whatever ``stable`` says),
    and NaN sorts as the largest value. ``values`` is differentiable: its
    gradient goes back to position ``indices``.
    """
    d = _dim("sort", input, dim)
    values, indices = Sort.apply(input, d, bool(descending), None)
    return return_types.sort(values, indices)


def argsort(input, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The ``indices`` of ``sort``: the positions that would put ``input`` in order."""
    check_ordered("argsort", input)
    return Argsort.apply(input, _dim("argsort", input, dim), bool(descending))


def msort(input) -> Tensor:
    """``input`` sorted along dim 0 (``sort(input, dim=0).values``)."""
    return sort(input, dim=0).values


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """``(values, indices)`` of the ``k`` largest values along ``dim`` (smallest with
    ``largest=False``), largest first. NaN counts as larger than any number.

    gradlab always returns them in order (``sorted=False`` allows any order).
    """
    d = _dim("topk", input, dim)
    size = input.shape[d] if input.ndim else 1
    k = int(k)
    if not 0 <= k <= size:
        raise RuntimeError(
            f"topk: selected index k={k} out of range: dim {d} of the input (shape "
            f"{tuple(input.shape)}) has {size} values, so k must be in [0, {size}]")
    values, indices = Topk.apply(input, d, bool(largest), k)
    return return_types.topk(values, indices)


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):
    """``(values, indices)`` of the ``k``-th smallest value along ``dim`` (k counts from 1).

    With ties, the index is that of the stable sort (the earlier position first).
    """
    d = _dim("kthvalue", input, dim)
    size = input.shape[d] if input.ndim else 1
    k = int(k)
    if size == 0:
        raise IndexError(f"kthvalue: dim {d} of the input (shape {tuple(input.shape)}) is "
                         "empty, so it has no k-th value")
    if not 1 <= k <= size:
        raise RuntimeError(
            f"kthvalue: selected number k={k} out of range for dim {d} of size {size} "
            f"(input shape {tuple(input.shape)}); k counts from 1, so it must be in "
            f"[1, {size}]")
    values, indices = Kthvalue.apply(input, d, k, bool(keepdim))
    return return_types.kthvalue(values, indices)


# --- unique values, counted (no gradient) ------------------------------------------------------

class _Counting(Function):
    """Ops whose results are positions and counts: no node is recorded."""

    raw = True
    differentiable = False


class Unique(_Counting):
    """The distinct values (or slices along ``dim``), sorted, with inverse indices and counts."""

    name = "unique"

    @staticmethod
    def forward(ctx, a, dim):
        xp = xp_for(a)
        if a.size == 0 and dim is None:
            empty = xp.zeros(0, dtype=np.int64)
            return a.reshape(0), empty, empty
        keys = a.astype(np.float32) if a.dtype.kind == "V" else a  # bfloat16: see _sort_order
        # equal_nan=False: each NaN is its own value, as in PyTorch.
        out, inverse, counts = xp.unique(keys, return_inverse=True, return_counts=True,
                                         axis=dim, equal_nan=False)
        return (out.astype(a.dtype, copy=False), inverse.reshape(-1).astype(np.int64, copy=False),
                counts.astype(np.int64, copy=False))


class UniqueConsecutive(_Counting):
    """Runs of equal neighbours collapsed to one value (``[1, 1, 2, 1]`` -> ``[1, 2, 1]``)."""

    name = "unique_consecutive"

    @staticmethod
    def forward(ctx, a, dim):
        xp = xp_for(a)
        if dim is None:
            a = a.reshape(-1)
            dim = 0
        rows = xp.moveaxis(a, dim, 0).reshape(a.shape[dim], -1)
        starts = xp.ones(rows.shape[0], dtype=bool)  # where a new run begins
        starts[1:] = xp.any(rows[1:] != rows[:-1], axis=1)
        first = xp.nonzero(starts)[0]
        inverse = xp.cumsum(starts) - 1
        counts = xp.diff(xp.concatenate([first, xp.asarray([rows.shape[0]])]))
        return (xp.take(a, first, axis=dim), inverse.astype(np.int64, copy=False),
                counts.astype(np.int64, copy=False))


def _unique_results(out, inverse, counts, input, dim, return_inverse, return_counts):
    if dim is None:
        inverse = inverse.reshape(input.shape)
    results = (out,) + ((inverse,) if return_inverse else ()) + \
        ((counts,) if return_counts else ())
    return results if len(results) > 1 else out


def _unique_dim(op: str, input, dim):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    if dim is None:
        return None
    d = wrap_dim(dim, input.ndim, op)
    if input.ndim == 0:
        raise IndexError(f"{op}: a 0-d tensor has no dim {dim}; use dim=None")
    if any(s == 0 for i, s in enumerate(input.shape) if i != d) and input.shape[d] != 0:
        raise RuntimeError(
            f"{op}: the input (shape {tuple(input.shape)}) has a 0-sized dim other than dim "
            f"{d}, so its slices along dim {d} are all empty and can't be told apart")
    return d


def unique(input, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None):
    """The distinct values of ``input``, sorted (with ``dim``: the distinct slices along it).

    ``return_inverse`` adds, for each input value, the position of its value in the
    output (``output[inverse]`` rebuilds the input); ``return_counts`` adds how often
    each distinct value occurs. Each NaN counts as a distinct value, as in PyTorch.
    gradlab always sorts (PyTorch may too with ``sorted=False``). No gradient.
    """
    d = _unique_dim("unique", input, dim)
    if d is not None and input.shape[d] == 0:
        empty = creation.zeros(0, dtype=_dt.int64, device=input.device)
        out, inverse, counts = input, empty, empty
    else:
        out, inverse, counts = Unique.apply(input, d)
    return _unique_results(out, inverse, counts, input, d, return_inverse, return_counts)


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """Collapse each run of equal consecutive values (or slices along ``dim``) to one.

    Unlike ``unique`` nothing is sorted: ``[1, 1, 2, 2, 1]`` gives ``[1, 2, 1]``.
    """
    d = _unique_dim("unique_consecutive", input, dim)
    n = input.numel() if d is None else input.shape[d]
    if n == 0:
        empty = creation.zeros(0, dtype=_dt.int64, device=input.device)
        out = input.reshape(0) if d is None else input
        return _unique_results(out, empty, empty, input, d, return_inverse, return_counts)
    out, inverse, counts = UniqueConsecutive.apply(input, d)
    return _unique_results(out, inverse, counts, input, d, return_inverse, return_counts)


# --- searchsorted and bucketize: where values would go in a sorted sequence --------------------

class Searchsorted(_Counting):
    """For each value, the index where inserting it keeps ``sorted_sequence`` sorted."""

    @staticmethod
    def forward(ctx, sorted_sequence, values, side, out_dtype):
        xp = xp_for(sorted_sequence)
        if sorted_sequence.ndim == 1:
            out = xp.searchsorted(sorted_sequence, values, side=side)
        elif values.size == 0:
            out = xp.zeros(values.shape, dtype=out_dtype)
        else:  # one sorted row per row of values
            rows = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
            vals = values.reshape(rows.shape[0], -1)
            out = xp.stack([xp.searchsorted(r, v, side=side) for r, v in zip(rows, vals)])
            out = out.reshape(values.shape)
        return xp.asarray(out).astype(out_dtype, copy=False)


def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter=None) -> Tensor:
    """Indices that keep ``sorted_sequence`` sorted if each value of ``input`` went there.

    ``right=False`` (``side='left'``) gives the first such place, so
    ``sorted_sequence[i-1] < v <= sorted_sequence[i]``; ``right=True`` the last, so
    ``sorted_sequence[i-1] <= v < sorted_sequence[i]``. A 1-D sequence serves every value;
    an N-D one holds one sorted row per row of ``input`` (their leading dims must match).
    """
    op = "searchsorted"
    check_ordered(op, sorted_sequence, input)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{op}: side can only be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise RuntimeError(f"{op}: side='left' and right=True contradict each other; "
                               "give only one of them")
        right = side == "right"
    if not isinstance(sorted_sequence, Tensor):
        raise TypeError(f"{op}: sorted_sequence must be a Tensor, got "
                        f"{type(sorted_sequence).__name__}")
    if sorted_sequence.ndim == 0:
        raise RuntimeError(f"{op}: sorted_sequence must have at least 1 dim, got a 0-d "
                           "tensor. Fix: sorted_sequence.reshape(1)")
    scalar = not isinstance(input, Tensor)
    values = creation.tensor(input, device=sorted_sequence.device) if scalar else input
    if sorted_sequence.ndim > 1 and (values.ndim != sorted_sequence.ndim or
                                     values.shape[:-1] != sorted_sequence.shape[:-1]):
        raise RuntimeError(
            f"{op}: a sorted_sequence of shape {tuple(sorted_sequence.shape)} holds one sorted "
            f"row per row of the values, so their leading dims must match, but the values "
            f"have shape {tuple(values.shape)}. Fix: use a 1-D sorted_sequence for all values")
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    dtype = _dt.promote_types(sorted_sequence.dtype, values.dtype)
    return Searchsorted.apply(sorted_sequence.to(dtype), values.to(dtype),
                              "right" if right else "left",
                              np.int32 if out_int32 else np.int64)


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each value: ``i`` with ``boundaries[i-1] < v <= boundaries[i]``
    (``right=True``: ``boundaries[i-1] <= v < boundaries[i]``); ``boundaries`` is 1-D."""
    if not isinstance(boundaries, Tensor) or boundaries.ndim != 1:
        got = f"{boundaries.ndim} dims" if isinstance(boundaries, Tensor) else \
            type(boundaries).__name__
        raise RuntimeError(f"bucketize: boundaries must be a 1-D tensor, got {got}. Fix: "
                           "searchsorted takes one row of boundaries per row of values")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
