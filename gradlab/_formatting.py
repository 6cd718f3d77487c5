"""How tensors print: PyTorch's layout, so output reads the same in both.

PyTorch's rules, as gradlab applies them:

* One format for every value of a tensor, chosen from its nonzero finite
  values: whole numbers print as ``3.``; a spread over 1000x, or values
  above 1e8 or below 1e-4, switch to scientific ``3.0000e+00``; otherwise
  four decimals ``3.0000``. Every value is right-aligned to the widest one.
* Rows wrap at 80 characters; tensors of more than 1000 values show only
  the first and last 3 entries of each long dimension, around ``...``.
* The suffix names what differs from the defaults: ``size=`` for empty
  tensors, ``device=``, ``dtype=`` (not for the default float32, nor for
  int64 and bool unless empty), ``grad_fn=`` or ``requires_grad=True``, and
  gradlab's display ``name=``.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt

PRECISION = 4
LINE_WIDTH = 80
EDGE_ITEMS = 3
SUMMARIZE_OVER = 1000  # more values than this: show only the edges


class _ValueFormat:
    """Formats single values of one tensor, all padded to a common width."""

    def __init__(self, shown: np.ndarray) -> None:
        self.floating = shown.dtype.kind == "f"
        self.int_mode = True  # a float tensor whose values are all whole numbers
        self.sci_mode = False
        self.width = 1
        flat = shown.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.width = max(self.width, len(str(v)))
            return
        nonzero = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero.size == 0:
            return
        magnitude = np.abs(nonzero)
        low, high = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(nonzero == np.ceil(nonzero)))
        self.sci_mode = high / low > 1000.0 or high > 1.0e8 or (
            not self.int_mode and low < 1.0e-4)
        extra = 1 if self.int_mode and not self.sci_mode else 0  # the "." after whole numbers
        self.width = max(len(self._bare(v)) + extra for v in nonzero.tolist())

    def _bare(self, v) -> str:
        if self.sci_mode:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            return f"{v:.0f}"
        return f"{v:.{PRECISION}f}"

    def __call__(self, v) -> str:
        if not self.floating:
            text = str(v)
        else:
            text = self._bare(v)
            if self.int_mode and not self.sci_mode and np.isfinite(v):
                text += "."
        return text.rjust(self.width)


def _edges(host: np.ndarray) -> np.ndarray:
    """Only the values a summarised print shows: 3 at each end of every long dimension."""
    for axis, size in enumerate(host.shape):
        if size > 2 * EDGE_ITEMS:
            keep = list(range(EDGE_ITEMS)) + list(range(size - EDGE_ITEMS, size))
            host = np.take(host, keep, axis=axis)
    return host


def _layout(a: np.ndarray, indent: int, summarize: bool, fmt: _ValueFormat) -> str:
    """Nested brackets; recursion depth is the tensor's ndim, not its size."""
    if a.ndim == 0:
        return fmt(a.item())
    long = summarize and a.shape[0] > 2 * EDGE_ITEMS
    if a.ndim == 1:
        if long:
            items = [fmt(v) for v in a[:EDGE_ITEMS].tolist()] + [" ..."] + \
                [fmt(v) for v in a[-EDGE_ITEMS:].tolist()]
        else:
            items = [fmt(v) for v in a.tolist()]
        per_line = max(1, (LINE_WIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(a.shape[0])
    if long:
        rows = list(range(EDGE_ITEMS)) + [None] + list(range(a.shape[0] - EDGE_ITEMS,
                                                             a.shape[0]))
    parts = ["..." if i is None else _layout(a[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def format_values(host: np.ndarray, indent: int) -> str:
    """The bracketed values of ``host`` as PyTorch prints them, ``indent`` columns in."""
    if host.size == 0:
        return "[]"
    if host.dtype.kind not in "biu" and host.dtype != np.float64:
        host = host.astype(np.float64)  # float16, bfloat16 and float32 print via float64
    summarize = host.size > SUMMARIZE_OVER
    fmt = _ValueFormat(_edges(host) if summarize else host)
    return _layout(host, indent, summarize, fmt)


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items, starting a new line when one would pass 80 columns."""
    parts = [text]
    line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line_len + len(suffix) + 2 > LINE_WIDTH:
            parts.append(",\n" + " " * indent + suffix)
            line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line_len += len(suffix) + 2
    return "".join(parts) + ")"


def tensor_repr(t) -> str:
    prefix = "tensor("
    host = t._host()
    suffixes = []
    if host.size == 0 and host.ndim != 1:
        suffixes.append(f"size={tuple(host.shape)}")
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    # int64 and bool show in the values (1, True), except when there are none
    implied = (_dt.get_default_dtype(),) if host.size == 0 else \
        (_dt.get_default_dtype(), _dt.int64, _dt.bool)
    if t.dtype not in implied:
        suffixes.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    if t.name:
        suffixes.append(f"name={t.name!r}")
    return _with_suffixes(prefix + format_values(host, len(prefix)), suffixes, len(prefix))


def rebuild_tensor(host, dtype_name, device, requires_grad, name=None):
    """Inverse of ``Tensor.__reduce__`` (pickling, e.g. to DataLoader workers)."""
    from .ops.creation import tensor

    return tensor(host, dtype=_dt.to_dtype(dtype_name), device=device,
                  requires_grad=requires_grad, name=name)
