"""Order statistics: median, nanmedian, mode, quantile, nanquantile; and NaN-aware sums.

An order statistic is a value picked by its rank in sorted order, so its
gradient goes back to the input it picked, as for ``sort`` and ``kthvalue``:
``median(x, dim)`` and ``mode(x, dim)`` return ``(values, indices)`` and
send each value's gradient to its index. ``median(x)`` over all elements
returns a value only; like PyTorch, its gradient is shared by all the inputs
equal to it.

For an even count the median is the *lower* of the two middle values (no
averaging: the result is one of the inputs), as in PyTorch. NaN sorts as
the largest value; ``median`` and ``quantile`` return NaN where there is
one, ``nanmedian`` and ``nanquantile`` leave NaNs out.

``quantile`` interpolates between two sorted values, v = v_lo + w·(v_hi - v_lo)
with w the fractional part of the rank q·(n - 1). It is composed of ``sort``,
``gather`` and arithmetic, so its gradient flows through the interpolation
weights to the two values it used (and, through w, to ``q``), with no
formula of its own. ``nanmean``, ``nansum`` and ``count_nonzero`` are
compositions too: ``where`` sets NaNs aside before a ``sum``.
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import numpy_keywords, wrap_dim, xp_for
from .comparison import isnan, logical_not
from .creation import tensor
from .gather_scatter import gather
from .reduction import reduce_dims, tangent_from_partials
from .scans import inclusive_scan
from .selection import where
from .sorting import PickFunction, _sort_order, pick_along, sort

__all__ = ["median", "nanmedian", "mode", "quantile", "nanquantile", "nanmean", "nansum",
           "count_nonzero"]
TENSOR_METHODS = list(__all__)



def _is_float(a) -> bool:
    return a.dtype.kind in "fV"  # V: bfloat16


def _median_indices(a, dim: int, ignore_nan: bool):
    """Where the lower median of each row along ``dim`` is (keeping ``dim`` as size 1).

    Sorted, NaNs come last. With n values of which m are NaN, median's pick is the
    first NaN (position n - m) if m > 0, else position (n - 1) // 2; nanmedian's is
    position (n - m - 1) // 2 of the n - m numbers (the first NaN if all are NaN).
    """
    xp = xp_for(a)
    order = _sort_order(a, dim, False)
    n = a.shape[dim]
    nans = xp.isnan(a).sum(axis=dim, keepdims=True) if _is_float(a) else \
        xp.zeros(a.shape[:dim] + (1,) + a.shape[dim + 1:], dtype=np.int64)
    if ignore_nan:
        rank = xp.maximum(n - nans - 1, 0) // 2
    else:
        rank = xp.where(nans > 0, n - nans, (n - 1) // 2)
    return xp.take_along_axis(order, rank.astype(np.int64), axis=dim)


# --- median and nanmedian ---------------------------------------------------------------------

class MedianAll(Function):
    """The lower median of all elements.   d/da_i = 1/k for the k elements equal to it.

    (PyTorch shares the gradient among ties here, unlike ``median(x, dim)``; a NaN
    median shares it among the NaNs.)
    """

    raw = True
    name, node_name = "median", "MedianBackward0"

    @staticmethod
    def forward(ctx, a, ignore_nan):
        xp = xp_for(a)
        ctx.dims, ctx.keepdim = None, False
        if a.size == 0:  # the median of nothing is nan, as in PyTorch
            out = xp.full((), np.nan, dtype=a.dtype)
        else:
            flat = a.reshape(-1)
            out = flat[_median_indices(flat, 0, ignore_nan)].reshape(())
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        picked = (a == out) | (isnan(a) & isnan(out))
        return where(picked, grad / picked.sum(), 0.0), None

    @classmethod
    def jvp(cls, ctx, t, _):
        """jvp: ẏ = the mean of ȧ over the elements equal to the median."""
        return tangent_from_partials(cls, ctx, t)


class NanmedianAll(MedianAll):
    name, node_name = "nanmedian", "NanmedianBackward0"


class Median(PickFunction):
    """``(values, indices)`` of the lower median along ``dim``.   The gradient goes to the index."""

    raw = True
    node_name = "MedianBackward1"

    @staticmethod
    def forward(ctx, a, dim, keepdim, ignore_nan):
        ctx.dim, ctx.keepdim = dim, keepdim
        indices = _median_indices(a, dim, ignore_nan) if a.ndim else None
        return pick_along(ctx, a, indices, dim, keepdim)



class Nanmedian(Median):
    node_name = "NanmedianBackward1"


def _check_reduction_dim(op: str, input, dim: int) -> int:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    d = wrap_dim(dim, input.ndim, op)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{op}: dim {d} of the input (shape {tuple(input.shape)}) has size 0, "
                         f"so it has no {op.rstrip('()')} to pick; reduce over a dim with "
                         "elements")
    return d


def _median(op, all_fn, dim_fn, result, input, dim, keepdim, ignore_nan):
    if dim is None:
        if not isinstance(input, Tensor):
            raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
        if input.numel() == 0 and not input.dtype.is_floating_point:
            raise RuntimeError(f"{op}: the {input.dtype} input of shape {tuple(input.shape)} is "
                               "empty, so it has no median (a float input would give nan). "
                               "Fix: check x.numel() first")
        return all_fn.apply(input, ignore_nan)
    d = _check_reduction_dim(op, input, dim)
    values, indices = dim_fn.apply(input, d, bool(keepdim), ignore_nan)
    return result(values, indices)


def median(input, dim: int | None = None, keepdim: bool = False):
    """``median(x)``: the lower median of all elements (a value); ``median(x, dim)``:
    ``(values, indices)`` along ``dim``. NaN anywhere in a row makes its median NaN."""
    return _median("median", MedianAll, Median, return_types.median, input, dim, keepdim, False)


def nanmedian(input, dim: int | None = None, keepdim: bool = False):
    """``median`` with NaNs left out (NaN only where a row is all NaN)."""
    return _median("nanmedian", NanmedianAll, Nanmedian, return_types.nanmedian, input, dim,
                   keepdim, True)


# --- mode -------------------------------------------------------------------------------------

class Mode(PickFunction):
    """``(values, indices)``: the most frequent value along ``dim`` and where it last occurs.

    Ties between values go to the smallest, as in PyTorch. Sorting puts equal values in
    runs; a run's length is its end minus its start (found by a running max of the run
    starts). The gradient goes to the index.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        xp = xp_for(a)
        ctx.dim, ctx.keepdim = dim, keepdim
        indices = None
        if a.ndim:
            order = xp.moveaxis(_sort_order(a, dim, False), dim, -1).astype(np.int64)
            runs = xp.take_along_axis(xp.moveaxis(a, dim, -1), order, axis=-1)
            n = runs.shape[-1]
            position = xp.arange(n, dtype=np.int64)
            starts = xp.ones(runs.shape, dtype=bool)  # where a run of equal values begins
            starts[..., 1:] = runs[..., 1:] != runs[..., :-1]
            if runs.dtype.kind == "f":  # NaNs count as equal (sorted last): one run, as PyTorch
                starts[..., 1:] &= ~(xp.isnan(runs[..., 1:]) & xp.isnan(runs[..., :-1]))
            ends = xp.ones(runs.shape, dtype=bool)
            ends[..., :-1] = starts[..., 1:]
            run_start = inclusive_scan(xp.maximum, xp.where(starts, position, 0), runs.ndim - 1)
            length = xp.where(ends, position - run_start + 1, 0)
            best = xp.argmax(length, axis=-1)[..., None]  # the first, i.e. smallest, longest run
            indices = xp.moveaxis(xp.take_along_axis(order, best, axis=-1), -1, dim)
        return pick_along(ctx, a, indices, dim, keepdim)



def mode(input, dim: int = -1, keepdim: bool = False):
    """``(values, indices)``: the most common value along ``dim`` (the smallest, on ties
    between values) and the index of its last occurrence."""
    d = _check_reduction_dim("mode", input, dim)
    values, indices = Mode.apply(input, d, bool(keepdim))
    return return_types.mode(values, indices)


# --- quantile and nanquantile -----------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_q(op: str, input: Tensor, q) -> Tensor:
    """``q`` as a checked 1-D tensor of input's dtype."""
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{op}: q must be a number or a 0-d or 1-D tensor, got shape "
                               f"{tuple(q.shape)}. Fix: q.flatten(), then reshape the result")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{op}: q ({q.dtype}) must have the input's dtype "
                               f"({input.dtype}). Fix: q.to(x.dtype)")
        values = q.detach().cpu().numpy()
        q = q.reshape(-1)
    elif isinstance(q, Number) and not isinstance(q, bool):
        values = np.asarray([q], dtype=np.float64)
        q = tensor([float(q)], dtype=input.dtype, device=input.device)
    else:
        raise TypeError(f"{op}: q must be a float or a tensor, got {type(q).__name__}")
    if values.size and not ((values >= 0) & (values <= 1)).all():
        raise RuntimeError(f"{op}: q must be in [0, 1], got {values.tolist()}. "
                           "Fix: for percentiles divide by 100")
    return q


def _quantile(op: str, input, q, dim, keepdim, interpolation, ignore_nan):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    if input.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"{op}: the input must be float32 or float64, got {input.dtype}. "
                           "Fix: x.float() or x.double()")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}: interpolation must be one of {', '.join(_INTERPOLATIONS)}; "
                           f"got {interpolation!r}")
    scalar_q = not isinstance(q, Tensor) or q.ndim == 0
    q = _quantile_q(op, input, q)
    if input.numel() == 0:
        raise RuntimeError(f"{op}: the input (shape {tuple(input.shape)}) is empty, so it has "
                           "no quantiles")
    if dim is None:
        rows = input.reshape(-1)
    else:
        d = wrap_dim(dim, input.ndim, op)
        rows = input.movedim(d, -1) if input.ndim else input.reshape(1)
    values = sort(rows, -1).values  # NaNs last
    n = rows.shape[-1]
    nan = isnan(values)
    if ignore_nan:  # rank among the numbers; all NaN: rank 0, a NaN
        ranks = q * (logical_not(nan).sum(-1, keepdim=True) - 1)
        ranks = where(ranks < 0, 0.0, ranks)
    else:  # a NaN in the row: the last rank, a NaN
        ranks = where(nan.any(-1, keepdim=True), float(n - 1), q * (n - 1))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()  # half to even, as PyTorch
    below = ranks.detach().floor().to(_dt.int64)
    out = gather(values, -1, below)
    if interpolation in ("linear", "midpoint"):
        weight = 0.5 if interpolation == "midpoint" else ranks - below.to(ranks.dtype)
        above = gather(values, -1, ranks.detach().ceil().to(_dt.int64))
        out = out + weight * (above - out)
    out = out.movedim(-1, 0)  # q's dim first, then the dims that were not reduced
    if keepdim:
        kept = (1,) * input.ndim if dim is None else \
            tuple(1 if i == d else s for i, s in enumerate(input.shape))
        out = out.reshape((out.shape[0],) + kept)
    return out.reshape(tuple(out.shape[1:])) if scalar_q else out


def quantile(input, q, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles along ``dim`` (all elements if None); ``q`` a float or a 1-D tensor
    (then the result gets a leading dim of ``len(q)``). A NaN in a row gives NaN.

    ``interpolation`` between the sorted values v_lo <= v_hi around rank q·(n - 1):
    'linear' v_lo + w·(v_hi - v_lo) with w the rank's fraction, 'lower' v_lo, 'higher'
    v_hi, 'midpoint' (v_lo + v_hi)/2, 'nearest' the value at the rounded rank.
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``quantile`` with NaNs left out: the ranks count only the numbers of each row."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# --- NaN-aware mean and sum, counting ---------------------------------------------------------

@numpy_keywords
def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The mean of the non-NaN values over ``dim`` (NaN where there are none).

    Composed: sum(where(isnan, 0, x)) / count, so d/dx_i = 1/count, or 0 for a NaN.
    ``dtype`` converts the input first.
    """
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"nanmean: expected a floating point tensor, got {input.dtype} with "
                           f"shape {tuple(input.shape)}. Fix: x.float().nanmean() (an integer "
                           "tensor has no NaNs: mean works too)")
    number = logical_not(isnan(input))
    total = where(number, input, 0.0).sum(dim, keepdim)
    count = number.sum(dim, keepdim)
    # A safe denominator: no 0/0 (nor its warning) where a row is all NaN, in backward too.
    return where(count == 0, float("nan"), total / where(count == 0, 1, count).to(input.dtype))


@numpy_keywords
def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum over ``dim`` with NaNs counted as 0.   d/dx_i = 1, or 0 for a NaN."""
    if input.dtype.is_floating_point:
        input = where(isnan(input), 0.0, input)
    return input.sum(dim, keepdim, dtype=dtype)


def count_nonzero(input, dim=None) -> Tensor:
    """How many values are not 0 over ``dim`` (an int, a tuple, or None for all); int64."""
    if not isinstance(input, Tensor):
        raise TypeError(f"count_nonzero: expected a Tensor, got {type(input).__name__}")
    return (input != 0).sum(reduce_dims(input, dim, "count_nonzero"))
