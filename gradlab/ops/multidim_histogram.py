"""``histogramdd``: a histogram of points in D dimensions (no gradient).

The input's last dim holds a point's D coordinates (shape (..., D): every other
dim just lists points). Each coordinate is cut into bins as ``histogram`` cuts
values: ``bins[d]`` equal bins over ``range``'s d-th (min, max) pair (default:
the data's min and max along d), or given edges. A point lands in the bin
whose left edges are the last ones <= its coordinates; the last bin along a
dim includes its right edge; a point outside any dim's edges is not counted.
``weight`` sums weights instead of counting, ``density`` divides by the total
and each bin's volume (the product of its widths), so the histogram integrates
to 1. Returns ``(hist, bin_edges)``: hist of shape ``bins``, one edge tensor per dim.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .counting import _check_bins, _check_float_input, _data_range, _linear_edges

__all__ = ["histogramdd"]
TENSOR_METHODS: list = []

"""PyTorch's ``torch.return_types.histogramdd`` (hist, bin_edges tuple)."""


class Histogramdd(Function):
    """(counts or summed weights of shape ``bins``, one edge array per dim)."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, a, bins, ranges, weight, density, *edges):
        xp = xp_for(a)
        dims = a.shape[-1]
        points = a.reshape(-1, dims)
        if not edges:
            edges = []
            for d in range(dims):
                lo, hi = (None, None) if ranges is None else ranges[d]
                lo, hi = _data_range("histogramdd", points[:, d], lo, hi, 0.5,
                                     from_data=lo is None)
                edges.append(_linear_edges(xp, lo, hi, bins[d], a.dtype))
        counts = tuple(e.shape[0] - 1 for e in edges)
        inside = xp.ones(points.shape[0], dtype=bool)
        for d, e in enumerate(edges):
            inside &= (points[:, d] >= e[0]) & (points[:, d] <= e[-1])
        flat = xp.zeros(int(inside.sum()), dtype=np.int64)
        for d, e in enumerate(edges):
            pos = xp.searchsorted(e, points[inside, d], side="right") - 1
            flat = flat * counts[d] + xp.minimum(pos, counts[d] - 1)  # the last bin: right edge
        w = None if weight is None else weight.reshape(-1)[inside]
        hist = xp.bincount(flat, weights=w, minlength=int(np.prod(counts)))
        hist = hist.astype(a.dtype).reshape(counts)
        if density:
            volume = xp.ones((), dtype=a.dtype)
            for e in edges:
                volume = volume[..., None] * xp.diff(e)
            with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)  # no points: 0/0 is nan
                hist = (hist / (hist.sum() * volume)).astype(a.dtype)
        return (hist, *(xp.array(e, dtype=a.dtype) for e in edges))


def _per_dim(bins, dims: int) -> list:
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        return [bins] * dims
    bins = list(bins)
    if len(bins) != dims:
        raise RuntimeError(f"histogramdd: The size of bins must be equal to the innermost "
                           f"dimension of the input: got {len(bins)} entries for points with "
                           f"{dims} coordinates")
    return bins


def histogramdd(input: Tensor, bins, *, range=None, weight: Tensor | None = None,  # noqa: A002
                density: bool = False):
    """``(hist, bin_edges)``: a histogram of the points in ``input`` (shape (..., D)); see the
    module docstring. Not differentiable."""
    _check_float_input("histogramdd", input, (_dt.float32, _dt.float64))
    if input.ndim < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions "
                           f"(points along the last one), got shape {tuple(input.shape)}. Fix: "
                           f"x.unsqueeze(-1) for 1-D points, or use histogram")
    dims = input.shape[-1]
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the "
                           f"same shape as the input tensor excluding its innermost dimension, "
                           f"but got input with shape {list(input.shape)} and weight with shape "
                           f"{list(weight.shape)}")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"histogramdd: weight ({weight.dtype.name}) must have the input's "
                           f"dtype ({input.dtype.name}). Fix: weight.to({input.dtype.name})")
    per_dim = _per_dim(bins, dims)
    w = None if weight is None else weight._data
    if per_dim and all(isinstance(b, Tensor) for b in per_dim):
        if range is not None:
            raise TypeError("histogramdd: range= goes with numbers of bins; tensors of bin "
                            "edges already say the range")
        for d, e in enumerate(per_dim):
            if e.ndim != 1 or e.shape[0] < 2:
                raise RuntimeError(f"histogramdd: the edges for dim {d} must be a 1-D tensor of "
                                   f"at least 2 values, got shape {tuple(e.shape)}")
        edges = [e.to(input.dtype) for e in per_dim]
        out = Histogramdd.apply(input, None, None, w, bool(density), *edges)
    else:
        per_dim = [_check_bins_at(b, d) for d, b in enumerate(per_dim)]
        ranges = None
        if range is not None:
            range = [float(r) for r in range]
            if len(range) != 2 * dims:
                raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range "
                                   f"should have {2 * dims} elements, but got {len(range)}")
            ranges = [(range[2 * d], range[2 * d + 1]) for d in builtins_range(dims)]
            for d, (lo, hi) in enumerate(ranges):
                if lo > hi:
                    raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got "
                                       f"min {lo} max {hi} for dimension {d}")
        out = Histogramdd.apply(input, per_dim, ranges, w, bool(density))
    return return_types.histogramdd(out[0], tuple(out[1:]))


builtins_range = range  # (the keyword argument ``range`` hides the builtin inside histogramdd)


def _check_bins_at(bins, d: int) -> int:
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool) and bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension "
                           f"{d}")
    return _check_bins("histogramdd", bins)
