"""How tensors print: PyTorch's layout, so output reads the same in both.

PyTorch's rules, as gradlab applies them:

* One format for every value of a tensor, chosen from its nonzero finite
  values: whole numbers print as ``3.``; a spread over 1000x, or values
  above 1e8 or below 1e-4, switch to scientific ``3.0000e+00``; otherwise
  four decimals ``3.0000``. Every value is right-aligned to the widest one.
* Rows wrap at 80 characters; tensors of more than 1000 values show only
  the first and last 3 entries of each long dimension, around ``...``.
  ``gradlab.set_printoptions`` changes these numbers (and can force or forbid
  scientific notation), as ``torch.set_printoptions`` does.
* Complex values print as ``1.5000+2.0000j``, their real and imaginary
  parts each with the format chosen from its own values.
* The suffix names what differs from the defaults: ``size=`` for empty
  tensors, ``device=``, ``dtype=`` (not for the default float32, nor for
  its complex64, int64 and bool unless empty), ``grad_fn=`` or ``requires_grad=True``, and
  gradlab's display ``name=``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import dtypes as _dt


@dataclasses.dataclass
class PrintOptions:
    """How tensors print; change them with ``set_printoptions``."""

    precision: int = 4  # digits after the point (or after the first digit in 1.2345e+00)
    threshold: float = 1000  # more values than this: show only the edges of each dim
    edgeitems: int = 3  # values shown at each end of a long dim when summarising
    linewidth: int = 80  # where rows wrap, and where the suffixes start a new line
    sci_mode: bool | None = None  # None: chosen from the values; True/False: forced


OPTIONS = PrintOptions()
_PROFILES = {
    "default": PrintOptions(),
    "short": PrintOptions(precision=2, edgeitems=2),
    "full": PrintOptions(threshold=math.inf),
}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Change how every tensor prints from now on (PyTorch's options, PyTorch's rules).

    ``profile`` ('default', 'short' or 'full') first resets precision,
    threshold, edgeitems and linewidth; the other arguments then override.
    Options left None keep their value, except ``sci_mode``: as in PyTorch,
    every call sets it, so ``set_printoptions(precision=2)`` also returns to
    choosing scientific notation automatically. ``profile='full'`` prints
    every value of large tensors (``threshold=inf``).
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of "
                             f"{', '.join(repr(p) for p in _PROFILES)}, got {profile!r}")
        base = _PROFILES[profile]
        OPTIONS.precision, OPTIONS.threshold = base.precision, base.threshold
        OPTIONS.edgeitems, OPTIONS.linewidth = base.edgeitems, base.linewidth
    for name, value in (("precision", precision), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"set_printoptions: {name} must be an integer >= 0, "
                                 f"got {value!r}")
            setattr(OPTIONS, name, value)
    if threshold is not None:
        OPTIONS.threshold = threshold
    OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(OPTIONS)


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
        if OPTIONS.sci_mode is not None:
            self.sci_mode = bool(OPTIONS.sci_mode)
        extra = 1 if self.int_mode and not self.sci_mode else 0  # the "." after whole numbers
        self.width = max(len(self._bare(v)) + extra for v in nonzero.tolist())

    def _bare(self, v) -> str:
        if self.sci_mode:
            return f"{v:.{OPTIONS.precision}e}"
        if self.int_mode:
            return f"{v:.0f}"
        return f"{v:.{OPTIONS.precision}f}"

    def __call__(self, v) -> str:
        if not self.floating:
            text = str(v)
        else:
            text = self._bare(v)
            if self.int_mode and not self.sci_mode and np.isfinite(v):
                text += "."
        return text.rjust(self.width)


class _ComplexFormat:
    """Complex values as PyTorch prints them: the real parts with one format, the
    imaginary parts with another (each chosen from its own values), ``1.5000+2.0000j``."""

    def __init__(self, shown: np.ndarray) -> None:
        self.real = _ValueFormat(shown.real.astype(np.float64))
        self.imag = _ValueFormat(shown.imag.astype(np.float64))
        self.width = self.real.width + self.imag.width + 1  # + the sign and the "j"

    def __call__(self, v) -> str:
        imag = self.imag(v.imag).lstrip() + "j"
        return self.real(v.real) + (imag if imag[0] in "+-" else "+" + imag)


def _edges(host: np.ndarray) -> np.ndarray:
    """Only the values a summarised print shows: ``edgeitems`` at each end of every long
    dimension."""
    edge = OPTIONS.edgeitems
    for axis, size in enumerate(host.shape):
        if size > 2 * edge:
            keep = list(range(edge)) + list(range(size - edge, size))
            host = np.take(host, keep, axis=axis)
    return host


def _layout(a: np.ndarray, indent: int, summarize: bool, fmt: _ValueFormat) -> str:
    """Nested brackets; recursion depth is the tensor's ndim, not its size."""
    if a.ndim == 0:
        return fmt(a.item())
    edge = OPTIONS.edgeitems
    long = summarize and a.shape[0] > 2 * edge
    if a.ndim == 1:
        if summarize and edge == 0:
            items = ["..."]
        elif long:
            items = [fmt(v) for v in a[:edge].tolist()] + [" ..."] + \
                [fmt(v) for v in a[a.shape[0] - edge:].tolist()]
        else:
            items = [fmt(v) for v in a.tolist()]
        per_line = max(1, (OPTIONS.linewidth - indent) // (fmt.width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(a.shape[0])
    if long:
        rows = list(range(edge)) + [None] + list(range(a.shape[0] - edge, a.shape[0]))
    parts = ["..." if i is None else _layout(a[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def format_values(host: np.ndarray, indent: int) -> str:
    """The bracketed values of ``host`` as PyTorch prints them, ``indent`` columns in."""
    if host.size == 0:
        return "[]"
    if host.dtype.kind == "c":
        host = host.astype(np.complex128)
    elif host.dtype.kind not in "biu" and host.dtype != np.float64:
        host = host.astype(np.float64)  # float16, bfloat16 and float32 print via float64
    summarize = host.size > OPTIONS.threshold
    shown = _edges(host) if summarize else host
    fmt = _ComplexFormat(shown) if host.dtype.kind == "c" else _ValueFormat(shown)
    return _layout(host, indent, summarize, fmt)


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items, starting a new line when one would pass the line width."""
    parts = [text]
    line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line_len + len(suffix) + 2 > OPTIONS.linewidth:
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
    if (host.size == 0 and host.ndim != 1) or (host.size and OPTIONS.edgeitems == 0):
        suffixes.append(f"size={tuple(host.shape)}")  # edgeitems=0 may show no value at all
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    # int64 and bool show in the values (1, True), except when there are none
    default = _dt.get_default_dtype()
    implied = (default,) if host.size == 0 else \
        (default, default.to_complex(), _dt.int64, _dt.bool)
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
