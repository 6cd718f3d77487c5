"""scatter_reduce and index_reduce: scatter with a reduction where indices collide.

``scatter_add`` (in ``gather_scatter.py``) adds the values that land on one
position. ``scatter_reduce`` lets you choose how they combine: 'sum',
'prod', 'mean', 'amax' or 'amin'. With ``include_self=True`` the input's own
value takes part; with False it is replaced wherever something lands (and
kept where nothing does). ``index_reduce`` is the same with whole slices:
slice k of ``source`` lands on slice ``index[k]`` of ``dim``; it is
scatter_reduce with the index spread over the slice.

The output at position p depends on x[p] and on the src values j that
land on p, each with its own local derivative, so backward and forward mode
share one picture: output gradient → ``D_self ∘ grad`` for x, and
``D_src ∘ gather(grad)`` for src (forward mode: ẏ = D_self ∘ ẋ +
scatter_add(D_src ∘ ṡ)). With N the number of values that took part at p:

    sum    D_self = 1                        D_src = 1
    mean   D_self = 1/N                      D_src = 1/N at their position
    prod   D_self = (product of the others)  D_src = (product of the others)
    amax   D_self = 1/N if x[p] is the max    D_src = 1/N if src[j] is the max
    amin   the same with the min             (N: how many tie for it)

'prod' computes "the product of the others" without dividing by a zero
(a value that is 0 gets the product of the rest, PyTorch's way), and
'amax'/'amin' split the gradient evenly among ties, as PyTorch does. With
include_self=False, x gets no gradient where something landed. Every rule
is PyTorch's, including one quirk: with include_self=False a replaced x[p]
that equals the maximum still counts in N, so the src ties share less.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..tensor import Tensor
from . import creation
from ._util import wrap_dim, xp_for
from .gather_scatter import (
    Gather,
    Scatter,
    ScatterAdd,
    _check_dims,
    _index_tensor,
    _scatter_key,
    _vector_index,
)
from .selection import where

__all__ = ["scatter_reduce", "index_reduce"]
TENSOR_METHODS = list(__all__)

_UFUNCS = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum",
           "amin": "minimum"}


def _identity(reduce: str, dtype):
    """What a position starts from when its own value is left out (include_self=False)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    low, high = ((-np.inf, np.inf) if dtype.kind in "fV" else
                 (np.iinfo(dtype).min, np.iinfo(dtype).max) if dtype.kind in "iu" else (0, 1))
    return low if reduce == "amax" else high


def _reduce_at(xp, reduce: str, out, key, values) -> None:
    """``out[key] = out[key] ⊕ values`` once per occurrence of a repeated position."""
    ufunc = getattr(xp, _UFUNCS[reduce])
    at = getattr(ufunc, "at", None)
    if at is not None:
        at(out, key, values)
        return
    import cupyx  # CuPy without ufunc.at: cupyx has add, max and min

    fallback = {"add": cupyx.scatter_add, "maximum": cupyx.scatter_max,
                "minimum": cupyx.scatter_min}.get(_UFUNCS[reduce])
    if fallback is None:
        raise NotImplementedError(f"scatter_reduce: reduce={reduce!r} needs ufunc.at, which "
                                  f"this CuPy lacks. Fix: upgrade CuPy, or compute on the CPU")
    fallback(out, key, values)


def _counts(xp, a, key, include_self: bool):
    """N: how many values took part at each position (at least 1, to divide by)."""
    counts = xp.ones(a.shape, dtype=xp.int64) if include_self else \
        xp.zeros(a.shape, dtype=xp.int64)
    _reduce_at(xp, "sum", counts, key, 1)
    return xp.maximum(counts, 1)


class ScatterReduce(Function):
    """A copy of x with each src[j] combined (sum, prod, mean, amax, amin) into the position
    ``index[j]`` of ``dim``. Derivatives: see the module docstring."""

    raw = True
    name = "scatter_reduce"

    @staticmethod
    def forward(ctx, a, dim, index, src, reduce, include_self):
        xp = xp_for(a)
        key = _scatter_key(xp, index, dim)
        out = a.copy()
        if not include_self:
            out[key] = _identity(reduce, a.dtype)
        _reduce_at(xp, reduce, out, key, src)
        if reduce == "mean":
            counts = _counts(xp, a, key, include_self)
            if a.dtype.kind in "fV":
                out = (out / counts).astype(a.dtype, copy=False)
            else:
                out = xp.floor_divide(out, counts).astype(a.dtype, copy=False)
        ctx.save_for_backward(a, src, out)
        ctx.dim, ctx.index, ctx.reduce, ctx.include_self = dim, index, reduce, include_self
        return out

    @staticmethod
    def _local_derivatives(ctx, a: Tensor, src: Tensor, out: Tensor, backward: bool = False):
        """``(to_self, to_src)``: multiply a gradient (or tangent) by D_self, a gathered one
        by D_src (see the module docstring), with ``where`` so a zero derivative stays 0."""
        dim, index, reduce, include = ctx.dim, ctx.index, ctx.reduce, ctx.include_self
        if reduce == "sum":
            return (lambda g: g), (lambda g: g)
        if reduce == "mean":
            xp = xp_for(a._data)
            counts = _counts(xp, a._data, _scatter_key(xp, index, dim), include)
            n = creation._new(counts.astype(a._data.dtype), a.device)
            return (lambda g: g / n), (lambda g: g / Gather.apply(n, dim, index))
        if reduce == "prod":
            masked_self = where(a == 0, 1.0, a)
            self_factor = ScatterReduce.apply(masked_self, dim, index, src, "prod",
                                              include) / masked_self
            src_zero = src == 0
            zeros = a.new_zeros(tuple(a.shape))
            zero_counts = Gather.apply(ScatterAdd.apply(zeros, dim, index, src_zero.to(a.dtype)),
                                       dim, index)
            if backward and state.enabled and bool((zero_counts > 1).any()):  # create_graph
                raise RuntimeError(
                    "scatter_reduce: double backward of reduce='prod' is not supported where "
                    "two or more zeros of src land on one position (as in PyTorch): the "
                    "gradient there needs the products of the other values. Fix: avoid exact "
                    "zeros (e.g. add a tiny eps) or don't differentiate the gradient")
            single_zero = src_zero & (zero_counts == 1)
            without_it = ScatterReduce.apply(a, dim, index, where(single_zero, 1.0, src),
                                             "prod", include)
            src_factor = where(single_zero, Gather.apply(without_it, dim, index),
                               Gather.apply(out, dim, index) / where(src_zero, 1.0, src))
            return (lambda g: g * self_factor), (lambda g: g * src_factor)
        # amax / amin: the values equal to the result share it evenly
        self_wins = a == out
        src_wins = src == Gather.apply(out, dim, index)
        ties = ScatterAdd.apply(self_wins.to(a.dtype), dim, index, src_wins.to(a.dtype))
        ties = where(ties == 0, 1.0, ties)  # (0 only where NaN won: no division by 0)
        return (lambda g: where(self_wins, g / ties, 0.0),
                lambda g: where(src_wins, g / Gather.apply(ties, dim, index), 0.0))

    @staticmethod
    def backward(ctx, grad):
        a, src, out = ctx.saved_tensors
        sa, _, _, ss, _, _ = ctx.input_shapes
        to_self, to_src = ScatterReduce._local_derivatives(ctx, a, src, out, backward=True)
        grad_a = grad_src = None
        if sa is not None:
            grad_a = to_self(grad)
            if not ctx.include_self:  # replaced where something landed: exactly 0 there
                grad_a = Scatter.apply(grad_a, ctx.dim, ctx.index, 0.0)
        if ss is not None:
            grad_src = to_src(Gather.apply(grad, ctx.dim, ctx.index))
        return grad_a, None, None, grad_src, None, None

    @staticmethod
    def jvp(ctx, tangent, _dim, _index, src_tangent, _reduce, _include_self):
        """ẏ = D_self ∘ ẋ + scatter_add(D_src ∘ ṡ) (a missing tangent is zero)."""
        a, dim, index, src, _, include = ctx.primals
        to_self, to_src = ScatterReduce._local_derivatives(ctx, a, src, ctx.results[0])
        out = a.new_zeros(tuple(a.shape)) if tangent is None else to_self(tangent)
        if tangent is not None and not include:
            out = Scatter.apply(out, dim, index, 0.0)
        if src_tangent is not None:
            out = ScatterAdd.apply(out, dim, index, to_src(src_tangent))
        return out


class IndexReduce(ScatterReduce):
    """``index_reduce``: ScatterReduce with the slice index spread over source's shape."""

    name = "index_reduce"


def _check_reduce(op: str, reduce, allowed) -> None:
    if reduce not in allowed:
        raise RuntimeError(f"{op}: reduce must be one of {', '.join(map(repr, allowed))}, got "
                           f"{reduce!r}" + (". For a sum use index_add" if reduce == "sum" and
                                            op.startswith("index") else ""))


def _check_source(op: str, input: Tensor, src) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}: src must be a Tensor, got {type(src).__name__}. Fix: "
                        f"gradlab.full(index.shape, value) for one value everywhere")
    if src.dtype is not input.dtype:
        raise RuntimeError(f"{op}: src has dtype {src.dtype} but the tensor has "
                           f"{input.dtype}. Fix: src.to({input.dtype})")


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """A copy of ``input`` where each ``src`` value is combined into position ``index`` along
    ``dim`` (``out[index[i][j]][j] ⊕= src[i][j]`` for dim 0), ⊕ by ``reduce``: 'sum',
    'prod', 'mean', 'amax' or 'amin'. ``include_self=False`` leaves the input's own
    value out wherever something lands."""
    _check_reduce("scatter_reduce", reduce, ("sum", "prod", "mean", "amax", "amin"))
    _check_source("scatter_reduce", input, src)
    ids = _index_tensor("scatter_reduce", index, input)
    idx = ids._data
    if src.ndim != idx.ndim:
        raise RuntimeError(f"scatter_reduce: src (shape {tuple(src.shape)}) must have as many "
                           f"dims as the index (shape {tuple(idx.shape)})")
    if input.ndim == 0:
        out = scatter_reduce(input.reshape(1), 0, index.reshape(-1), src.reshape(-1), reduce,
                             include_self=include_self)
        return out.reshape(())
    dim = _check_dims("scatter_reduce", input, dim, idx, src)
    if tuple(src.shape) != idx.shape:  # only the part the index covers takes part
        src = src[tuple(slice(0, s) for s in idx.shape)]
    return ScatterReduce.apply(input, dim, ids, src, reduce, bool(include_self))


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """A copy of ``input`` with slice k of ``source`` combined into slice ``index[k]`` of
    ``dim`` by ``reduce``: 'prod', 'mean', 'amax' or 'amin' (for a sum, ``index_add``)."""
    _check_reduce("index_reduce", reduce, ("prod", "mean", "amax", "amin"))
    _check_source("index_reduce", input, source)
    if input.ndim == 0:
        raise RuntimeError("index_reduce: needs a tensor with at least 1 dim, got a 0-d tensor")
    dim = wrap_dim(dim, input.ndim, "index_reduce")
    idx = _vector_index("index_reduce", index, input, dim)
    want = input.shape[:dim] + (len(idx),) + input.shape[dim + 1:]
    if tuple(source.shape) != tuple(want):
        raise RuntimeError(f"index_reduce: source must have shape {tuple(want)} (the tensor's "
                           f"shape {tuple(input.shape)} with {len(idx)} = len(index) in dim "
                           f"{dim}), got {tuple(source.shape)}")
    spread = idx.reshape((1,) * dim + (len(idx),) + (1,) * (input.ndim - dim - 1))
    spread = xp_for(idx).ascontiguousarray(xp_for(idx).broadcast_to(spread, want))
    return IndexReduce.apply(input, dim, spread, source, reduce, bool(include_self))

