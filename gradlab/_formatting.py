"""How tensors print: PyTorch's layout, so output reads the same in both."""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt

_DEFAULT_SHOWN = {"float32", "int64", "bool"}
_SUMMARIZE_OVER = 1000


def _float_formatter(values: np.ndarray):
    """One format for all values, chosen as PyTorch chooses it."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return lambda v: f"{v:.4f}" if np.isfinite(v) else str(v).replace("inf", "inf")
    nonzero = np.abs(finite[finite != 0])
    integral = np.all(finite == np.round(finite))
    if integral and (nonzero.size == 0 or nonzero.max() < 1e8):
        return lambda v: f"{v:.0f}." if np.isfinite(v) else _special(v)
    if nonzero.size and (nonzero.max() / nonzero.min() > 1000 or nonzero.max() > 1e8
                         or nonzero.min() < 1e-4):
        return lambda v: f"{v:.4e}" if np.isfinite(v) else _special(v)
    return lambda v: f"{v:.4f}" if np.isfinite(v) else _special(v)


def _special(v) -> str:
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def format_values(host: np.ndarray, indent: int) -> str:
    if host.dtype.kind == "b":
        fmt = lambda v: str(bool(v))  # noqa: E731
    elif host.dtype.kind in "iu":
        fmt = lambda v: str(int(v))  # noqa: E731
    else:
        host = host.astype(np.float64)
        fmt = _float_formatter(host)
    summarize = host.size > _SUMMARIZE_OVER
    text = np.array2string(host, separator=", ", formatter={"all": fmt},
                           threshold=_SUMMARIZE_OVER if summarize else host.size + 1,
                           edgeitems=3, max_line_width=80, prefix=" " * indent)
    return text


def tensor_repr(t) -> str:
    host = t._host()
    prefix = "tensor("
    if host.size == 0 and host.ndim == 1:
        body = "[]"
    elif host.size == 0:
        body = "[]"
    else:
        body = format_values(host, len(prefix))
    extras = []
    if host.size == 0 and host.ndim != 1:
        extras.append(f"size={tuple(host.shape)}")
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if t.dtype.name not in _DEFAULT_SHOWN or (t.dtype is _dt.float32 and
                                               _dt.get_default_dtype() is not _dt.float32):
        extras.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    if t.name:
        extras.append(f"name={t.name!r}")
    return prefix + ", ".join([body] + extras) + ")"


def rebuild_tensor(host, dtype_name, device, requires_grad):
    """Inverse of ``Tensor.__reduce__`` (pickling, e.g. to DataLoader workers)."""
    from .ops.creation import tensor

    return tensor(host, dtype=_dt.to_dtype(dtype_name), device=device,
                  requires_grad=requires_grad)
