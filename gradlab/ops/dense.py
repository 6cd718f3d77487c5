"""linear: the affine map of ``nn.Linear``, ``y = x Wᵀ + b``, as one op.

It could be written as ``x @ weight.T + bias`` (three ops: transpose,
matmul, add), but it runs on every layer of every step, so it is one node
with one matrix product and the bias added in place. For x of shape
(..., in), W of shape (out, in) and b of shape (out,), with g = dL/dy of
shape (..., out):

    dL/dx = g W               (..., out) @ (out, in)  -> (..., in)
    dL/dW = gᵀ x              every row of the batch adds its outer product g_r x_rᵀ
    dL/db = Σ_rows g          the bias is added to every row

(the leading batch dims are flattened into rows first).
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor

__all__: list[str] = []  # PyTorch has no torch.linear in its public API, only F.linear
FUNCTIONAL = ["linear"]
TENSOR_METHODS: list = []


class Linear(Function):
    """y = x Wᵀ + b.   dx = g W,  dW = gᵀ x,  db = Σ_rows g."""

    raw = True

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        if x.ndim <= 2:
            out = x @ weight.T
        else:  # fold the batch dims into rows: one matrix product, not one per batch entry
            out = (x.reshape(-1, x.shape[-1]) @ weight.T).reshape(*x.shape[:-1], weight.shape[0])
        if bias is not None:
            out += bias
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        grad_x = grad_w = grad_b = None
        if need_x:
            grad_x = grad @ weight
        if need_w or need_b:
            rows = grad if grad.ndim == 2 else grad.reshape(-1, weight.shape[0])
            if need_w:
                inputs = x if x.ndim == 2 else x.reshape(-1, weight.shape[1])
                grad_w = rows.mT @ inputs
            if need_b:
                grad_b = rows.sum(0)
        return grad_x, grad_w, grad_b


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: input (..., in), weight (out, in), bias (out,)."""
    try:  # the common case in two lines: every layer of every step comes through here
        wshape = weight._data.shape
        ok = (input._data.shape[-1:] == wshape[1:] and len(wshape) == 2 and
              input.dtype is weight.dtype and
              (bias is None or (bias._data.shape == wshape[:1] and bias.dtype is input.dtype)))
    except AttributeError:
        ok = False
    if not ok:
        _explain(input, weight, bias)
    return Linear.apply(input, weight, bias)


def _explain(input, weight, bias) -> None:
    """Raise the error that says what is wrong with linear's arguments."""
    for what, t in (("input", input), ("weight", weight), ("bias", bias)):
        if not isinstance(t, Tensor) and (t is not None or what != "bias"):
            raise TypeError(f"linear: {what} must be a Tensor, got {type(t).__name__}")
    if weight.ndim != 2:
        raise RuntimeError(f"linear: weight must be 2-D (out_features, in_features), got shape "
                           f"{tuple(weight.shape)}")
    if input.ndim == 0:
        raise RuntimeError("linear: input must have at least 1 dimension (its last dim holds "
                           "the features), got a 0-d tensor. Fix: x.reshape(1)")
    out_features, in_features = weight.shape
    if input.shape[-1] != in_features:
        hint = ""
        if input.shape[-1] == out_features:
            hint = " (is the weight transposed? nn.Linear keeps it as (out, in))"
        raise RuntimeError(
            f"linear: input of shape {tuple(input.shape)} has {input.shape[-1]} features in "
            f"its last dim, but the weight of shape {tuple(weight.shape)} expects "
            f"in_features={in_features}{hint}. Fix: make the layer's in_features match the "
            "input, or reshape the input (e.g. x.flatten(1))")
    if bias is not None and tuple(bias.shape) != (out_features,):
        raise RuntimeError(f"linear: bias must have shape ({out_features},) (one per output "
                           f"feature), got {tuple(bias.shape)}")
    raise RuntimeError(
        f"linear: input, weight and bias must have the same dtype, got input {input.dtype}, "
        f"weight {weight.dtype}" + ("" if bias is None else f", bias {bias.dtype}") +
        ". Fix: convert the input (x.to(layer.weight.dtype)) or the layer (layer.double())")
