"""Fused ops: addcmul, addcdiv and lerp, several arithmetic steps as one node.

``input + value * t1 * t2`` written with ``+`` and ``*`` makes three nodes
and two temporaries; ``addcmul`` is one node whose derivative is written out
once. They sit apart from :mod:`gradlab.ops.arithmetic` (one operator, one
op) because each is a whole update step, the kind optimizer code is made of:
Adam's ``v.mul_(beta2).addcmul_(g, g, value=1 - beta2)`` and
``p.addcdiv_(m, v.sqrt() + eps, value=-lr)``, a moving average's
``avg.lerp_(x, 1 - decay)``. Their in-place forms (``inplace.py``) reuse the
operand checks below.

Each still acts value by value: backward is the chain rule per value, summed
back to each input's shape (``unbroadcast``), and ``jvp`` adds up the inputs'
tangents times the same partial derivatives.
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import scale_first, tangent_sum, unbroadcast, xp_for
from .complex_parts import conj

__all__ = ["addcmul", "addcdiv", "lerp"]
TENSOR_METHODS = list(__all__)


class Addcmul(Function):
    """input + value · t1 · t2.   d/dinput = 1, d/dt1 = value · t2, d/dt2 = value · t1
    (conjugated for complex numbers, as every product's)."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a, t1, t2, value):
        ctx.save_for_backward(t1, t2)
        ctx.value = value
        out = a + value * (t1 * t2)
        return out.astype(a.dtype, copy=False)  # ml_dtypes: bf16 * 0.5 is f32

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        sa, s1, s2, _ = ctx.input_shapes
        scaled = grad * conj(ctx.value)
        return (unbroadcast(grad, sa),
                None if s1 is None else unbroadcast(scaled * conj(t2), s1),
                None if s2 is None else unbroadcast(scaled * conj(t1), s2), None)

    @staticmethod
    def jvp(ctx, ta, t1_dot, t2_dot, _):
        """ẏ = ȧ + value · (ṫ1 · t2 + t1 · ṫ2)."""
        _, t1, t2, value = ctx.primals
        return tangent_sum(ctx.results[0].shape, ta,
                           None if t1_dot is None else t1_dot * t2 * value,
                           None if t2_dot is None else t1 * t2_dot * value)


class Addcdiv(Function):
    """input + value · t1 / t2.   d/dinput = 1, d/dt1 = value / t2,
    d/dt2 = -value · t1 / t2² = -(d/dt1) · t1 / t2 (conjugated for complex numbers)."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a, t1, t2, value):
        ctx.save_for_backward(t1, t2)
        ctx.value = value
        out = a + value * (t1 / t2)
        return out.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        sa, s1, s2, _ = ctx.input_shapes
        grad_t1 = grad * conj(ctx.value / t2)
        return (unbroadcast(grad, sa),
                None if s1 is None else unbroadcast(grad_t1, s1),
                None if s2 is None else unbroadcast(-grad_t1 * conj(t1 / t2), s2), None)

    @staticmethod
    def jvp(ctx, ta, t1_dot, t2_dot, _):
        """ẏ = ȧ + value · ṫ1 / t2 - value · (t1 / t2) · ṫ2 / t2."""
        _, t1, t2, value = ctx.primals
        return tangent_sum(ctx.results[0].shape, ta,
                           None if t1_dot is None else t1_dot / t2 * value,
                           None if t2_dot is None else -(t1 / t2 * t2_dot / t2 * value))


def addcmul(input, tensor1, tensor2, *deprecated, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2``, broadcasting, as one op (Adam's second moment:
    ``v.mul_(beta2).addcmul_(g, g, value=1 - beta2)``)."""
    (tensor1, tensor2), value = scale_first("addcmul", (tensor1, tensor2, *deprecated), 2,
                                            "value", value)
    return Addcmul.apply(*_addc_operands("addcmul", input, tensor1, tensor2, value))


def addcdiv(input, tensor1, tensor2, *deprecated, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2``, broadcasting, as one op (Adam's step:
    ``p.addcdiv_(m, v.sqrt() + eps, value=-lr)``)."""
    (tensor1, tensor2), value = scale_first("addcdiv", (tensor1, tensor2, *deprecated), 2,
                                            "value", value)
    return Addcdiv.apply(*_addc_operands("addcdiv", input, tensor1, tensor2, value))


def _addc_operands(op: str, input, tensor1, tensor2, value):
    """The three tensors cast to their common dtype (PyTorch's promotion), and ``value`` as
    a number of that dtype."""
    for name, t in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}. "
                            f"Fix: gradlab.tensor(...); a number goes in value=")
    value = _scalar_argument(op, "value", value)
    if op.startswith("addcdiv") and tensor1.dtype.category < 2 and tensor2.dtype.category < 2:
        raise RuntimeError(
            f"{op}: tensor1 ({tensor1.dtype}) and tensor2 ({tensor2.dtype}) are both integers; "
            "integer division is not supported here (PyTorch removed it). Fix: .float() one "
            "of them for true division, or input + value * (tensor1 // tensor2)")
    dtype = _dt.result_type(input, tensor1, tensor2)
    if dtype.category < 2 and isinstance(value, (float, complex)):
        raise RuntimeError(
            f"{op}: for integer tensors ({dtype}) value must be an integer, got {value}. "
            "Fix: convert the tensors with .float() first")
    return (*(t if t.dtype is dtype else t.to(dtype) for t in (input, tensor1, tensor2)), value)


def _scalar_argument(op: str, name: str, value):
    """A Python number from a number, NumPy scalar or one-element tensor."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(f"{op}: {name} must be a number or a one-element tensor, got "
                               f"shape {tuple(value.shape)}")
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    if not isinstance(value, Number):
        raise TypeError(f"{op}: {name} must be a number, got {type(value).__name__}")
    return value


class Lerp(Function):
    """input + weight · (end - input): the line from input (weight 0) to end (weight 1).
    d/dinput = 1 - weight, d/dend = weight, d/dweight = end - input (conjugated for complex
    numbers)."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a, end, weight):
        ctx.save_for_backward(a, end, weight)
        diff = end - a
        # Measured from the nearer end, so weight 1 gives exactly end (as PyTorch does).
        if isinstance(weight, (float, complex)):
            out = a + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
        else:
            xp = xp_for(a)
            out = xp.where(xp.abs(weight) < 0.5, a + weight * diff, end - diff * (1 - weight))
        return out.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        a, end, weight = ctx.saved_tensors
        sa, se, sw = ctx.input_shapes
        return (None if sa is None else unbroadcast(grad * conj(1 - weight), sa),
                None if se is None else unbroadcast(grad * conj(weight), se),
                None if sw is None else unbroadcast(grad * conj(end - a), sw))

    @staticmethod
    def jvp(ctx, ta, te, tw):
        """ẏ = (1 - weight) · ȧ + weight · ė + (end - input) · ẇ."""
        a, end, weight = ctx.primals
        return tangent_sum(ctx.results[0].shape,
                           None if ta is None else ta * (1 - weight),
                           None if te is None else te * weight,
                           None if tw is None else tw * (end - a))


def lerp(input, end, weight) -> Tensor:
    """Linear interpolation ``input + weight * (end - input)``, broadcasting; ``weight`` is a
    number or a tensor (an exponential moving average is ``avg.lerp_(x, 1 - decay)``)."""
    return Lerp.apply(*_lerp_operands("lerp", input, end, weight))


def _lerp_operands(op: str, input, end, weight):
    """PyTorch's lerp doesn't promote: end and a weight tensor must have input's float dtype."""
    for name, t in (("input", input), ("end", end)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}. "
                            "Fix: gradlab.full_like(input, value) makes a tensor of a number")
    if input.dtype.category < 2:
        raise RuntimeError(f"{op}: interpolates floating point values, got a {input.dtype} "
                           f"input of shape {tuple(input.shape)}. Fix: input.float()")
    if not isinstance(weight, Tensor):
        weight = _scalar_argument(op, "weight", weight)
        weight = complex(weight) if isinstance(weight, complex) else float(weight)
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype:
            raise RuntimeError(
                f"{op}: expected dtype {input.dtype} for {name} (input's dtype) but got "
                f"{t.dtype}; lerp doesn't mix dtypes. Fix: {name}.to(input.dtype)")
    return input, end, weight
