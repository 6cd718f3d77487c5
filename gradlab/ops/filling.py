"""One value everywhere: ``scalar_tensor`` and the out-of-place ``fill``.

``scalar_tensor(3)`` is a 0-d tensor of the *default float dtype* (not
int64 as ``tensor(3)`` would be): PyTorch made it for numbers that take part
in float math. ``fill(input, value)`` is a new tensor of ``input``'s shape,
dtype and device with every element ``value`` (``input.fill_(value)``
without touching ``input``).

``fill`` is differentiable in ``value`` when that is a 0-d tensor: every
output element is ``value``, so d(sum of outputs)/d(value) is the sum of
the output gradient. ``input``'s values are not used at all: its gradient
is exactly 0 (as in PyTorch, a zero tensor, not None).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import tangent_sum, xp_for
from .creation import _number, full, zeros_like

__all__ = ["scalar_tensor", "fill"]
TENSOR_METHODS: list = []  # Tensor.fill_ is the in-place form (inplace.py); no Tensor.fill


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, float (the default dtype) unless ``dtype`` says."""
    s = _number(s)
    if not isinstance(s, (bool, int, float, np.number, np.bool_)):
        raise TypeError(f"scalar_tensor: expected a number, got {type(s).__name__}. For "
                        "other data use gradlab.tensor(data)")
    return full((), s, dtype=dtype or _dt.get_default_dtype(), device=device,
                requires_grad=requires_grad)


class Fill(Function):
    """``y = value`` everywhere, in input's shape and dtype.
    dy/dvalue = 1 at each element (so grad_value = Σ grad); dy/dinput = 0."""

    raw = True

    @staticmethod
    def forward(ctx, a, value):
        ctx.value_dtype = getattr(value, "dtype", None)
        return xp_for(a).full(a.shape, value, dtype=a.dtype)

    @staticmethod
    def backward(ctx, grad):
        grad_input = zeros_like(grad) if ctx.needs_input_grad[0] else None
        grad_value = None
        if len(ctx.needs_input_grad) > 1 and ctx.needs_input_grad[1]:
            grad_value = grad.sum().to(_dt.from_numpy_dtype(ctx.value_dtype))
        return grad_input, grad_value

    @staticmethod
    def jvp(ctx, input_tangent, value_tangent=None):
        """ẏ = valuė at every element; input's tangent doesn't reach the output."""
        out = ctx.results[0] if isinstance(ctx.results, tuple) else ctx.results
        if value_tangent is None:
            return None
        return tangent_sum(tuple(out.shape), value_tangent.to(out.dtype))


def fill(input: Tensor, value) -> Tensor:
    """A copy of ``input`` with every element set to ``value`` (a number or a 0-d tensor);
    ``value`` is converted to input's dtype (truncated into integers, as ``fill_`` does)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fill: expected a Tensor as input, got {type(input).__name__}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill: only supports 0-dimension value tensor but got a tensor "
                               f"of shape {tuple(value.shape)}. Fix: pass value[0] or "
                               "value.reshape(()) for a one-element tensor")
        if value.device != input.device:
            value = value.to(input.device)
        return Fill.apply(input, value)
    if not isinstance(value, (bool, int, float, np.number, np.bool_)):
        raise TypeError(f"fill: value must be a number or a 0-d tensor, got "
                        f"{type(value).__name__}")
    dtype = input.dtype
    if dtype is _dt.bool:
        value = bool(value)
    elif dtype.category == 1:  # must fit (uint8 takes -1 as 255, as a C cast), then truncate
        _dt.check_integer_fits("fill", np.asarray(value), dtype)
        value = _dt.wrap_integer(int(value), dtype)
    elif abs(float(value)) != float("inf") and abs(float(value)) > float(
            ml_dtypes.finfo(dtype.np).max):
        raise RuntimeError(f"fill: value cannot be converted to type {dtype.name} without "
                           f"overflow: {value} is beyond {dtype}'s largest finite value. Fix: "
                           "a wider dtype (float32, float64), or fill with inf on purpose")
    return Fill.apply(input, value)
