"""Summaries of tensors: a few numbers and small pictures instead of a copy.

The debugger shows every tensor it meets as a :class:`~gradlab.debug.snapshot.TensorSummary`:
min, max, mean, std and 2-norm of the finite values, how many values are NaN
or infinite, a histogram and a small heatmap. All of it is computed where the
tensor lives (NumPy on the CPU, CuPy on a GPU) with the array's own module,
and the small results cross to the host in ONE transfer, so summarising a big
GPU tensor never copies it to the host.

Never gradlab ops here: they would emit events while the debugger is
recording one.
"""

from __future__ import annotations

import numpy as np

from ..ops._util import xp_for
from .snapshot import TensorSummary

__all__ = ["summarize"]


def _raw(x):
    """(raw array, dtype name, device name) for a gradlab Tensor or a NumPy / CuPy array."""
    data = getattr(x, "_data", None)
    if data is not None:  # a gradlab Tensor
        return data, x.dtype.name, str(x.device)
    if isinstance(x, (bool, int, float, complex, np.generic)):
        x = np.asarray(x)
    xp = xp_for(x)
    device = "cpu" if xp is np else f"cuda:{x.device.id}"
    return x, str(x.dtype), device


def _to_host(array, xp) -> np.ndarray:
    return array if xp is np else xp.asnumpy(array)


def _grid(shape: tuple[int, ...]) -> tuple[int, int]:
    """The 2-D view a heatmap draws: a matrix as is, a vector as one row, more dims flattened."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return 1, shape[0]
    rows = 1
    for s in shape[:-1]:
        rows *= s
    return rows, shape[-1]


def _block_sums(a, out_rows: int, out_cols: int, xp):
    """Sums of ``a`` (2-D) over an out_rows x out_cols grid of near-equal blocks.

    Cumulative sums read at the block boundaries: two passes, any size, no loop.
    """
    rows, cols = a.shape
    rb = (np.arange(out_rows + 1) * rows) // out_rows
    cb = (np.arange(out_cols + 1) * cols) // out_cols
    c = xp.cumsum(a, axis=0)
    c = xp.concatenate([xp.zeros((1, cols), dtype=c.dtype), c], axis=0)[rb]
    c = c[1:] - c[:-1]
    c = xp.cumsum(c, axis=1)
    c = xp.concatenate([xp.zeros((out_rows, 1), dtype=c.dtype), c], axis=1)[:, cb]
    return c[:, 1:] - c[:, :-1]


def _values_text(host: np.ndarray) -> str:
    if host.dtype.kind == "c":  # NumPy pads complex values oddly ("1.+2.j ,"): print's way
        from .._formatting import format_values

        return format_values(host, 0)
    if host.ndim == 0:
        return str(host.item())
    return np.array2string(host, precision=4, separator=", ", threshold=host.size + 1,
                           max_line_width=100)


HOST_FAST_PATH = True
"""NumPy arrays take a path with fewer calls (boolean indexing is free on the host)."""


def _summarize_host(data, shape, dtype, device, bins, heat, values_up_to) -> TensorSummary:
    """:func:`summarize` for a NumPy array: the same numbers, a few times faster when small."""
    numel = data.size
    flat = data.reshape(-1)
    kind = data.dtype.kind
    if kind == "c":
        flat = np.abs(flat)
    f64 = flat.astype(np.float64)
    mask = None
    n, nan = numel, 0
    if kind in "fc":
        finite = np.isfinite(f64)
        n = int(np.count_nonzero(finite))
        if n < numel:
            mask = finite
            nan = int(np.count_nonzero(np.isnan(f64)))
    values = _values_text(data) if numel <= values_up_to else None
    rows, cols = _grid(shape)
    out_rows, out_cols = min(rows, heat[0]), min(cols, heat[1])
    rb = (np.arange(out_rows + 1) * rows) // out_rows
    cb = (np.arange(out_cols + 1) * cols) // out_cols
    zeroed = f64 if mask is None else np.where(mask, f64, 0.0)
    sums = np.add.reduceat(np.add.reduceat(zeroed.reshape(rows, cols), rb[:-1], axis=0),
                           cb[:-1], axis=1)
    if mask is None:
        cells = np.diff(rb)[:, None] * np.diff(cb)[None, :]
    else:
        cells = np.add.reduceat(np.add.reduceat(mask.reshape(rows, cols).astype(np.float64),
                                                rb[:-1], axis=0), cb[:-1], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        grid = np.where(cells > 0, sums / np.maximum(cells, 1), np.nan)
    heatmap = tuple(tuple(r) for r in grid.tolist())
    if n == 0:
        return TensorSummary(shape, dtype, device, numel, nan=nan, inf=numel - nan,
                             values=values, heatmap=heatmap)
    vals = f64 if mask is None else f64[mask]
    lo, hi = float(vals.min()), float(vals.max())
    total = float(vals.sum())
    mean = total / n
    dev = vals - mean
    squares = float(np.dot(dev, dev))
    lo_e, width = (lo, hi - lo) if hi > lo else (lo - 0.5, 1.0)
    index = np.clip(np.floor((vals - lo_e) / width * bins), 0, bins - 1).astype(np.int64)
    counts = tuple(np.bincount(index, minlength=bins).tolist())
    edges = tuple(np.linspace(lo_e, hi if hi > lo else lo + 0.5, bins + 1).tolist())
    return TensorSummary(
        shape, dtype, device, numel, min=lo, max=hi, mean=mean,
        std=(squares / (n - 1)) ** 0.5 if n > 1 else None,
        norm=float(np.dot(vals, vals)) ** 0.5, nan=nan, inf=numel - n - nan,
        histogram=(edges, counts), heatmap=heatmap, values=values)


def summarize(x, *, bins: int = 16, heat: tuple[int, int] = (8, 16),
              values_up_to: int = 16) -> TensorSummary:
    """Statistics of tensor (or raw array) ``x``, computed on its device.

    NaN and Inf are counted and left out of the statistics, the histogram and
    the heatmap (a heatmap cell with no finite value is NaN). ``std`` is the
    sample standard deviation (PyTorch's ``std()``: divides by n - 1).
    """
    data, dtype, device = _raw(x)
    shape = tuple(int(s) for s in data.shape)
    numel = int(data.size)
    if numel == 0:
        return TensorSummary(shape, dtype, device, 0)
    xp = xp_for(data)
    if xp is np and HOST_FAST_PATH:
        return _summarize_host(data, shape, dtype, device, bins, heat, values_up_to)
    flat = data.reshape(-1)
    kind = data.dtype.kind
    if kind == "c":
        flat = xp.abs(flat)  # complex: statistics of the magnitudes
    f64 = flat.astype(xp.float64)
    if kind in "fc":
        mask = xp.isfinite(f64)
        nan = xp.isnan(f64).sum()
        count = mask.sum()
        lo = xp.where(mask, f64, xp.inf).min()
        hi = xp.where(mask, f64, -xp.inf).max()
        zeroed = xp.where(mask, f64, 0.0)
    else:  # integers and bools are all finite
        mask = None
        nan = xp.zeros((), dtype=xp.float64)
        count = xp.asarray(numel, dtype=xp.float64)
        lo, hi, zeroed = f64.min(), f64.max(), f64
    total = zeroed.sum()
    mean = total / xp.maximum(count, 1)
    dev = zeroed - mean if mask is None else xp.where(mask, f64 - mean, 0.0)
    squares = (dev * dev).sum()
    norm_sq = (zeroed * zeroed).sum()
    # Histogram on the device: the bin of each finite value from the (device) range.
    wide = hi > lo
    lo_edge = xp.where(wide, lo, lo - 0.5)
    width = xp.where(wide, hi - lo, 1.0)
    index = xp.floor((zeroed - lo_edge) / width * bins)
    index = xp.clip(xp.nan_to_num(index), 0, bins - 1).astype(xp.int64)
    if mask is not None:
        index = xp.where(mask, index, bins)  # non-finite values go to an extra bin, dropped
    counts = xp.bincount(index, minlength=bins + 1)[:bins]
    rows, cols = _grid(shape)
    out_rows, out_cols = min(rows, heat[0]), min(cols, heat[1])
    sums = _block_sums(zeroed.reshape(rows, cols), out_rows, out_cols, xp)
    if mask is None:
        cells = (np.diff((np.arange(out_rows + 1) * rows) // out_rows)[:, None] *
                 np.diff((np.arange(out_cols + 1) * cols) // out_cols)[None, :])
        heat_counts = xp.asarray(cells, dtype=xp.float64)
    else:
        heat_counts = _block_sums(mask.astype(xp.float64).reshape(rows, cols),
                                  out_rows, out_cols, xp)
    heat_means = sums / xp.maximum(heat_counts, 1)
    heat_means = xp.where(heat_counts > 0, heat_means, xp.nan)
    scalars = xp.stack([xp.asarray(v, dtype=xp.float64)
                        for v in (lo, hi, count, nan, total, squares, norm_sq)])
    packed = _to_host(xp.concatenate([scalars, counts.astype(xp.float64),
                                      heat_means.reshape(-1)]), xp)
    lo_h, hi_h, count_h, nan_h, total_h, squares_h, norm_sq_h = packed[:7].tolist()
    n = int(count_h)
    counts_h = tuple(int(c) for c in packed[7:7 + bins])
    grid = packed[7 + bins:].reshape(out_rows, out_cols)
    values = _values_text(_to_host(data, xp)) if numel <= values_up_to else None
    if n == 0:
        return TensorSummary(shape, dtype, device, numel, nan=int(nan_h),
                             inf=numel - int(nan_h), values=values,
                             heatmap=tuple(tuple(r) for r in grid.tolist()))
    lo_e, hi_e = (lo_h, hi_h) if hi_h > lo_h else (lo_h - 0.5, lo_h + 0.5)
    edges = tuple(np.linspace(lo_e, hi_e, bins + 1).tolist())
    return TensorSummary(
        shape, dtype, device, numel,
        min=lo_h, max=hi_h, mean=total_h / n,
        std=(squares_h / (n - 1)) ** 0.5 if n > 1 else None,
        norm=norm_sq_h ** 0.5, nan=int(nan_h), inf=numel - n - int(nan_h),
        histogram=(edges, counts_h), heatmap=tuple(tuple(r) for r in grid.tolist()),
        values=values)
