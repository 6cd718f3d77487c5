"""Counting values: bincount, histc, histogram, isin, and aminmax (a summary in one call).

A histogram puts each value in a bin and counts: the result says how many
values fell where, not how they would change if the values moved a little.
Its derivative is zero almost everywhere (and undefined at bin edges), so
these ops are ``differentiable = False``, as in PyTorch: no node is recorded.
``isin`` answers yes or no, a bool. Only ``aminmax`` has a gradient: it is
``amin`` and ``amax`` side by side, so it reuses their backward (ties share
the gradient) rather than writing a new one.

Which bin does a value go to? With ``n`` equal bins over ``[lo, hi]``::

    bin(x) = floor((x - lo) * n / (hi - lo))        (x == hi goes to the last bin)

``histc`` uses this formula as is, like PyTorch. ``histogram`` returns its
edges too, so it places each value by the edges it returns (a binary search:
the last edge ``<= x``). Values outside ``[lo, hi]`` (and NaN) are skipped.
"""

from __future__ import annotations

import math
import warnings
from numbers import Number

import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import widened, wrap_dim, xp_for
from .creation import tensor as _tensor
from .reduction import amax, amin

__all__ = ["bincount", "histc", "histogram", "isin", "aminmax"]
TENSOR_METHODS = ["bincount", "histc", "histogram", "aminmax"]  # PyTorch has no Tensor.isin


# (Named ``gradlab.return_types.histogram`` and ``.aminmax``, as PyTorch's: pickle finds a
# named tuple by module and name, and here ``histogram`` is the function's name.)
_HistogramResult = return_types.histogram
_AminmaxResult = return_types.aminmax


class _Counting(Function):
    """Counts and yes/no answers: no gradient, so no node is recorded."""

    raw = True
    differentiable = False


# --- bincount ----------------------------------------------------------------------------------

class Bincount(_Counting):
    """``out[v]`` = how often ``v`` occurs in ``a`` (or the sum of its ``weights``)."""

    @staticmethod
    def forward(ctx, a, weights, minlength):
        xp = xp_for(a)
        if a.size and int(a.min()) < 0:
            raise RuntimeError(
                f"bincount: the input holds negative values (the smallest is {int(a.min())}), "
                f"but each value is a bin index, so it must be >= 0. Fix: shift the values, "
                f"e.g. x - x.min()")
        a = a.astype(np.int64, copy=False)
        if weights is None:
            return xp.bincount(a, minlength=minlength).astype(np.int64, copy=False)
        # PyTorch: float32 weights give float32 counts; any other weights give float64.
        dtype = np.float32 if weights.dtype == np.float32 else np.float64
        out = xp.bincount(a, weights=weights.astype(np.float64), minlength=minlength)
        return out.astype(dtype, copy=False)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0, 1, ..., max(input)`` occurs in a 1-D tensor of
    non-negative integers: an int64 tensor of length ``max(max(input) + 1, minlength)``.

    With ``weights`` (same length), bin ``v`` holds the sum of the weights of the
    entries equal to ``v`` (float32 weights stay float32, others give float64).
    Not differentiable (no gradient reaches ``weights``), as in PyTorch.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"bincount: expected a Tensor, got {type(input).__name__}")
    if input.dtype.category != 1:
        raise RuntimeError(
            f"bincount: expected an integer tensor (each value is a bin index), got "
            f"{input.dtype.name}. Fix: convert with .long() (after rounding, for floats)")
    if input.ndim != 1:
        raise RuntimeError(
            f"bincount: expected a 1-D tensor, got shape {tuple(input.shape)}. Fix: count "
            f"every value with input.flatten()")
    if isinstance(minlength, bool) or not isinstance(minlength, (int, np.integer)) \
            or minlength < 0:
        raise RuntimeError(f"bincount: minlength must be an int >= 0, got {minlength!r}")
    if weights is not None:
        if not isinstance(weights, Tensor):
            raise TypeError(f"bincount: weights must be a Tensor, got {type(weights).__name__}")
        if tuple(weights.shape) != tuple(input.shape):
            raise RuntimeError(
                f"bincount: weights should be 1-D and as long as the input: got weights of "
                f"shape {tuple(weights.shape)} for an input of shape {tuple(input.shape)}")
    return Bincount.apply(input, weights, int(minlength))


# --- histc and histogram -----------------------------------------------------------------------

def _data_range(op: str, flat, lo: float, hi: float, pad: float, from_data: bool):
    """The histogram's range: ``(lo, hi)``, or the data's min and max when ``from_data``;
    an empty range is widened by ``pad`` on both sides (every value then has a bin)."""
    if from_data and flat.size:
        lo, hi = float(flat.min()), float(flat.max())
    elif lo is None:  # histogram of no values: PyTorch's default range
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(
            f"{op}: the range [{lo}, {hi}] is not finite, so it can't be cut into bins. "
            f"Fix: pass a finite range, or drop NaN/inf values first (x[x.isfinite()])")
    if lo == hi:
        lo, hi = lo - pad, hi + pad
    return lo, hi


def _linear_edges(xp, lo: float, hi: float, bins: int, dtype):
    """``bins + 1`` equally spaced edges from ``lo`` to ``hi`` in ``dtype``, each half counted
    from its own end, as PyTorch's linspace does, so the last edge is ``hi`` exactly. (Its
    vectorised loop may round an edge differently in the last bit.)"""
    lo, hi = dtype.type(lo), dtype.type(hi)
    step = (hi - lo) / dtype.type(bins)
    i = xp.arange(bins + 1, dtype=dtype)
    return xp.where(i < (bins + 1) // 2, lo + i * step, hi - (bins - i) * step).astype(dtype)


class Histc(_Counting):
    """Counts in ``bins`` equal bins over [lo, hi], in the input's dtype."""

    @staticmethod
    def forward(ctx, a, bins, lo, hi):
        xp = xp_for(a)
        # In the input's own dtype, rounding after each step as PyTorch does (float16 too):
        # a value near an edge lands in the same bin.
        flat = a.reshape(-1)
        lo, hi = _data_range("histc", widened(flat), lo, hi, 1.0, from_data=lo == hi)
        kind = flat.dtype.type
        left, right = kind(lo), kind(hi)
        inside = flat[(flat >= left) & (flat <= right)]
        pos = ((inside - left) * kind(bins) / (right - left)).astype(np.int64)
        pos = xp.minimum(pos, bins - 1)  # x == hi belongs to the last bin
        return xp.bincount(pos, minlength=bins).astype(a.dtype)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of ``input``'s values in ``bins`` equal bins over ``[min, max]``.

    ``min == max`` (the default 0, 0) means the data's smallest and largest
    values. Values outside the range are ignored. The counts have the input's
    (float) dtype. Not differentiable: a count doesn't change when a value moves
    a little, except when it jumps a bin edge.
    """
    _check_float_input("histc", input, (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64))
    bins = _check_bins("histc", bins)
    if min > max:
        raise RuntimeError(f"histc: max must be larger than min, got min={min}, max={max}. "
                           f"Fix: swap them")
    return Histc.apply(input, bins, float(min), float(max))


class Histogram(_Counting):
    """(counts or summed weights, bin edges); a value goes to the last edge <= it."""

    @staticmethod
    def forward(ctx, a, bins, edges, lo, hi, weight, density):
        xp = xp_for(a)
        flat = a.reshape(-1)
        if edges is None:
            lo, hi = _data_range("histogram", flat, lo, hi, 0.5, from_data=lo is None)
            edges = _linear_edges(xp, lo, hi, bins, a.dtype)
        bins = edges.shape[0] - 1
        inside = (flat >= edges[0]) & (flat <= edges[-1])
        pos = xp.searchsorted(edges, flat[inside], side="right") - 1
        pos = xp.minimum(pos, bins - 1)  # the last bin includes its right edge
        w = None if weight is None else weight.reshape(-1)[inside]
        hist = xp.bincount(pos, weights=w, minlength=bins).astype(a.dtype)
        if density:
            with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)  # no values: 0/0 is nan
                hist = hist / (hist.sum() * xp.diff(edges))
        return hist.astype(a.dtype, copy=False), xp.array(edges, dtype=a.dtype)


def histogram(input: Tensor, bins: int | Tensor = 100, *, range=None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False):
    """``(hist, bin_edges)``: a histogram of ``input``'s values (flattened).

    ``bins`` is a number of equal bins over ``range`` (default: the data's min
    and max), or a 1-D tensor of increasing edges. Each bin includes its left
    edge; the last one its right edge too. ``weight`` (input's shape) sums
    weights instead of counting; ``density`` divides by the total and the bin
    widths, so the histogram integrates to 1. Not differentiable.
    """
    _check_float_input("histogram", input, (_dt.float32, _dt.float64))
    if weight is not None:
        if not isinstance(weight, Tensor) or tuple(weight.shape) != tuple(input.shape):
            shape = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
            raise RuntimeError(f"histogram: weight must be a tensor of the input's shape "
                               f"{tuple(input.shape)}, got {shape}")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"histogram: weight ({weight.dtype.name}) must have the input's "
                               f"dtype ({input.dtype.name}). Fix: weight.to({input.dtype.name})")
    if isinstance(bins, Tensor):
        if range is not None:
            raise TypeError("histogram: range= goes with a number of bins; with a tensor of "
                            "bin edges, the edges already say the range")
        if bins.ndim != 1 or bins.shape[0] < 2:
            raise RuntimeError(f"histogram: bins must be a 1-D tensor of at least 2 edges, got "
                               f"shape {tuple(bins.shape)}")
        if bins.dtype is not input.dtype:
            raise RuntimeError(f"histogram: the bin edges ({bins.dtype.name}) must have the "
                               f"input's dtype ({input.dtype.name}). Fix: "
                               f"bins.to({input.dtype.name})")
        hist, edges = Histogram.apply(input, None, bins, None, None, weight, bool(density))
        return _HistogramResult(hist, edges)
    bins = _check_bins("histogram", bins)
    lo = hi = None
    if range is not None:
        if len(range) != 2:
            raise RuntimeError(f"histogram: range must be (min, max), 2 numbers, got "
                               f"{len(range)}: {tuple(range)}")
        lo, hi = float(range[0]), float(range[1])
        if lo > hi:
            raise RuntimeError(f"histogram: range min should not exceed max, got {(lo, hi)}. "
                               f"Fix: range=({hi}, {lo})")
    hist, edges = Histogram.apply(input, bins, None, lo, hi, weight, bool(density))
    return _HistogramResult(hist, edges)


def _check_float_input(op: str, input, dtypes) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    if input.dtype not in dtypes:
        names = ", ".join(d.name for d in dtypes)
        raise RuntimeError(f"{op}: expected a tensor of {names}, got {input.dtype.name}. "
                           f"Fix: convert with .float()")


def _check_bins(op: str, bins) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins <= 0:
        raise RuntimeError(f"{op}: bins must be a positive int, got {bins!r}")
    return int(bins)


# --- isin --------------------------------------------------------------------------------------

class Isin(_Counting):
    """Is each element among the test elements? A bool tensor of the elements' shape."""

    @staticmethod
    def forward(ctx, elements, test_elements, dtype, assume_unique, invert):
        xp = xp_for(elements)
        return xp.isin(elements.astype(dtype, copy=False), test_elements.astype(dtype, copy=False),
                       assume_unique=assume_unique, invert=invert)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` equals some element of ``test_elements``
    (compared in their promoted dtype; NaN equals nothing). Either may be a number.
    ``invert`` gives the opposite. A bool tensor of ``elements``' shape; no gradient.
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin: elements and test_elements can't both be numbers (got "
                        f"{type(elements).__name__} and {type(test_elements).__name__}); "
                        f"pass at least one as a Tensor")
    for name, x in (("elements", elements), ("test_elements", test_elements)):
        if not isinstance(x, (Tensor, Number)):
            raise TypeError(f"isin: {name} must be a Tensor or a number, got "
                            f"{type(x).__name__}. Fix: gradlab.tensor({name})")
    for x in (elements, test_elements):
        kind = x.dtype if isinstance(x, Tensor) else _dt.result_type(x)
        if kind.category not in (1, 2):
            raise RuntimeError(f"isin: compares integer and float values, got {kind.name}. Fix: "
                               f"for bools, compare as integers with .long()")
    dtype = _dt.result_type(elements, test_elements)
    like = elements if isinstance(elements, Tensor) else test_elements
    elements, test_elements = (x if isinstance(x, Tensor) else _tensor(x, device=like.device)
                               for x in (elements, test_elements))
    return Isin.apply(elements, test_elements, dtype.np, bool(assume_unique), bool(invert))


# --- aminmax -----------------------------------------------------------------------------------

def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False):
    """``(min, max)`` over ``dim`` (None: all elements), as ``amin`` and ``amax`` give them.

    The gradient is theirs: each output's gradient is shared among the values
    that tie for it.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"aminmax: expected a Tensor, got {type(input).__name__}")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"aminmax: the input of shape {tuple(input.shape)} is empty, so "
                               f"it has no min or max. Fix: pass dim= to reduce over a dim "
                               f"that has elements")
        return _AminmaxResult(amin(input, (), keepdim), amax(input, (), keepdim))
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"aminmax: dim must be an int or None, got {dim!r}; for several dims, "
                        f"use amin and amax")
    d = wrap_dim(int(dim), input.ndim, "aminmax")
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"aminmax: dim {d} of the input of shape {tuple(input.shape)} has size "
                         f"0, so there is no min or max along it; reduce over a dim with "
                         f"elements")
    return _AminmaxResult(amin(input, d, keepdim), amax(input, d, keepdim))
