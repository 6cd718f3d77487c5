"""Number sequences with an end point included: ``logspace`` and the old ``range``.

``logspace(start, end, steps, base)`` is a geometric progression: ``base`` to
the powers ``linspace(start, end, steps)``, so 0, 3, 4 steps gives 1, 10,
100, 1000. The exponents are computed as PyTorch computes them (the first
half counted up from ``start``, the second half down from ``end``, so both
ends are exact), the powers in float64, then cast: an integer ``dtype``
truncates (``logspace(0, 1, 3, dtype=int64)`` is 1, 3, 10).

``range(start, end, step)`` is ``arange`` with ``end`` *included* and a
float result by default. PyTorch deprecated it for being unlike Python's
``range`` and warns on every call; gradlab warns the same way. Use
``arange(start, end + step, step)`` instead.

Neither records a graph.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from ._factory_keywords import factory_keywords
from .creation import _number, _on_device

__all__ = ["logspace", "range"]
TENSOR_METHODS: list = []


@factory_keywords()
def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``: ``steps`` points spaced evenly on a log scale."""
    start, end, base = float(_number(start)), float(_number(end)), float(_number(base))
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"logspace: steps must be an int (how many points), got "
                        f"{type(steps).__name__}")
    if steps < 0:
        raise RuntimeError(f"logspace: number of steps must be non-negative, got {steps}")
    dtype = _dt.to_dtype(dtype or _dt.get_default_dtype())
    steps = int(steps)
    exponents = np.full(steps, start)
    if steps > 1:
        step = (end - start) / (steps - 1)
        index = np.arange(steps, dtype=np.float64)
        half = steps // 2
        exponents[:half] = start + step * index[:half]
        exponents[half:] = end - step * (steps - 1 - index[half:])
    values = np.power(base, exponents)
    if dtype.category == 1:
        values = np.trunc(values)  # toward zero, as a C cast: 10 ** 0.5 = 3.16 -> 3
    return _on_device(values.astype(dtype.np), device, requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None,  # noqa: A001
          requires_grad: bool = False) -> Tensor:
    """``start, start + step, ...`` up to and including ``end`` (deprecated: use arange)."""
    warnings.warn("gradlab.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "gradlab.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        raise TypeError("range() missing 1 required positional arguments: \"end\" (it counts "
                        "from start up to and including end, e.g. range(0, 4))")
    start, end, step = (float(_number(v)) for v in (start, end, step))
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"range: unsupported range: {start} -> {end} (the ends must be "
                           "finite)")
    if (end - start) * step < 0:
        raise RuntimeError(
            f"range: upper bound and lower bound inconsistent with step sign: counting from "
            f"{start} to {end} in steps of {step} never gets there. Fix: range({start}, "
            f"{end}, {-step})")
    dtype = _dt.to_dtype(dtype or _dt.get_default_dtype())
    count = math.floor((end - start) / step) + 1
    values = start + np.arange(count, dtype=np.float64) * step
    return _on_device(values.astype(dtype.np), device, requires_grad)
