"""The backward formulas of tanh, sigmoid and relu, each computed as one op.

``Tanh.backward`` could be ``grad * (1 - out * out)``: three tensor ops,
three nodes when the backward is recorded (``create_graph=True``), and
three dispatches every time. Here it is one op, ``tanh_backward``, as in
PyTorch (which has these ops by these names). These ops are not called by
users; they exist only for the backward formulas in ``unary.py``, which is
why they live apart from the ops users call.

Each is a ``Function`` like any other, with a forward on raw arrays and its
own derivative below, so double backward differentiates through it. Taking
two inputs (the incoming gradient and the saved output), each writes its
forward-mode ``jvp`` out: ẏ = ∂y/∂grad · ġ + ∂y/∂out · ȯ.
"""

from __future__ import annotations

from ..autograd.function import Function
from ._util import as_bits, tangent_sum, xp_for
from .complex_parts import conj

__all__: list[str] = []  # called by backward formulas, not by users (no torch.<name>)
TENSOR_METHODS: list = []


class TanhBackward(Function):
    """grad · (1 - out²).   d/dgrad = 1 - out²,  d/dout = -2 · grad · out (conjugated for
    complex numbers: tanh's backward passes it conj(out), so its result is
    grad · conj(1 - out²))."""

    raw = True
    supports_complex = True
    name = "tanh_backward"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return grad * (1 - out * out)

    @staticmethod
    def backward(ctx, gg):
        grad, out = ctx.saved_tensors
        return gg * conj(1 - out * out), gg * conj(grad * out) * -2

    @staticmethod
    def jvp(ctx, t_grad, t_out):
        """ẏ = ġ · (1 - out²) - 2 · grad · out · ȯ."""
        grad, out = ctx.primals
        return tangent_sum(ctx.results[0].shape,
                           None if t_grad is None else TanhBackward.apply(t_grad, out),
                           None if t_out is None else grad * out * t_out * -2)


class SigmoidBackward(Function):
    """grad · out (1 - out).   d/dgrad = out (1 - out),  d/dout = grad · (1 - 2 out)
    (conjugated for complex numbers, as TanhBackward)."""

    raw = True
    supports_complex = True
    name = "sigmoid_backward"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return grad * (out * (1 - out))

    @staticmethod
    def backward(ctx, gg):
        grad, out = ctx.saved_tensors
        return gg * conj(out * (1 - out)), gg * conj(grad * (1 - out * 2))

    @staticmethod
    def jvp(ctx, t_grad, t_out):
        """ẏ = ġ · out (1 - out) + grad · (1 - 2 out) · ȯ."""
        grad, out = ctx.primals
        return tangent_sum(ctx.results[0].shape,
                           None if t_grad is None else SigmoidBackward.apply(t_grad, out),
                           None if t_out is None else grad * (1 - out * 2) * t_out)


class ThresholdBackward(Function):
    """grad unless out <= 0, else 0.   d/dgrad = (out > 0); the step in out is flat: no d/dout.

    "Else 0" even where grad is NaN or inf, as in PyTorch: a ReLU that was
    off passes no gradient at all (``grad * mask`` would make inf·0 = NaN).
    Linear in grad with a 0/1 diagonal, so it is its own adjoint: its
    backward is itself, with the same ``out``.
    """

    raw = True
    name = "threshold_backward"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(out)  # already kept alive by relu: saving it costs nothing
        return _keep_positive(xp_for(grad), grad, out)

    @staticmethod
    def backward(ctx, gg):
        (out,) = ctx.saved_tensors
        return ThresholdBackward.apply(gg, out), None

    @staticmethod
    def jvp(ctx, t_grad, t_out):
        """ẏ = ġ where out > 0, else 0 (the step in out moves nothing)."""
        return None if t_grad is None else ThresholdBackward.apply(t_grad, ctx.primals[1])


def _keep_positive(xp, grad, out):
    """``grad`` where ``out`` is not <= 0 (so also where it is NaN, as PyTorch), +0.0 elsewhere.

    On the bits, like ``keep_where``, but in three passes over one integer
    buffer (the result's own bits): the comparison writes 1/0 straight
    into it, minus one makes that 0/-1 (all bits set), and ``&`` with
    grad's bits leaves grad or +0.0, in place. A bool mask widened inside
    the ``&`` (``keep_where``) costs a converting pass more: 152 vs 126 µs
    on LeNet's (64, 6, 24, 24) float32, measured. ``out`` itself is what
    gets saved, not a mask: relu keeps it alive anyway.
    """
    result = xp.empty(grad.shape, dtype=grad.dtype)  # fresh, not a view: adopted as is
    bits = as_bits(result)
    xp.less_equal(out, 0, out=bits, casting="unsafe")
    xp.subtract(bits, 1, out=bits)
    xp.bitwise_and(as_bits(grad), bits, out=bits)
    return result
