"""linear: the affine map of ``nn.Linear``, ``y = x Wᵀ + b``, as one op (and addmm's family).

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

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..tensor import Tensor
from ._util import autocast_inputs, autocast_once, tangent_sum, unbroadcast, widened
from .complex_parts import conj
from .linalg import Matmul, _product_dtype, einsum, host_operands, matrix_product

# PyTorch has no torch.linear in its public API, only F.linear.
__all__ = ["addmm", "addmv", "baddbmm", "addbmm", "bilinear"]
FUNCTIONAL = ["linear", "bilinear"]
TENSOR_METHODS = ["addmm", "addmv", "baddbmm", "addbmm"]


class Linear(Function):
    """y = x Wᵀ + b.   dx = g W,  dW = gᵀ x,  db = Σ_rows g (for complex numbers, W and x
    conjugated)."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        ctx.node_name = _LINEAR_NODE_NAMES[min(x.ndim, 3), bias is not None]
        if x.ndim <= 2:
            out = matrix_product(x, weight.T)
        else:  # fold the batch dims into rows: one matrix product, not one per batch entry
            out = matrix_product(x.reshape(-1, x.shape[-1]), weight.T).reshape(
                *x.shape[:-1], weight.shape[0])
        if bias is not None:
            out += bias
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        grad_x = grad_w = grad_b = None
        if need_x:
            grad_x = grad @ conj(weight)
        if need_w or need_b:
            rows = grad if grad.ndim == 2 else grad.reshape(-1, weight.shape[0])
            if need_w:
                inputs = x if x.ndim == 2 else x.reshape(-1, weight.shape[1])
                grad_w = rows.mT @ conj(inputs)
            if need_b:
                grad_b = rows.sum(0)
        return grad_x, grad_w, grad_b

    @staticmethod
    def jvp(ctx, tx, tw, tb):
        """jvp: ẏ = ẋ Wᵀ + x Ẇᵀ + ḃ (product rule on x Wᵀ; ḃ is added to every row)."""
        x, weight, _ = ctx.primals
        return tangent_sum(ctx.results[0].shape,
                           None if tx is None else Linear.apply(tx, weight, None),
                           None if tw is None else Linear.apply(x, tw, None), tb)


_LINEAR_NODE_NAMES = {
    (2, True): "AddmmBackward0", (2, False): "MmBackward0",
    (1, True): "ViewBackward0", (1, False): "SqueezeBackward4",
    (3, True): "ViewBackward0", (3, False): "UnsafeViewBackward0",
}
"""What PyTorch's graph calls linear's node, by input rank (3: three or more) and bias:
its linear is addmm (mm without a bias) on a matrix and ends in a reshape otherwise."""


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: input (..., in), weight (out, in), bias (out,)."""
    if _grad_state.autocast is not None:
        input, weight, bias = autocast_inputs("linear", input, weight, bias)
    try:  # the common case in two lines: every layer of every step comes through here
        wshape = weight._data.shape
        ok = (input._data.shape[-1:] == wshape[1:] and len(wshape) == 2 and
              input.dtype is weight.dtype and
              (bias is None or (bias._data.shape in (wshape[:1], (1,)) and
                                bias.dtype is input.dtype)))
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
    if bias is not None and tuple(bias.shape) not in ((out_features,), (1,)):
        raise RuntimeError(f"linear: bias must have shape ({out_features},) (one per output "
                           f"feature; (1,) is added to every one), got {tuple(bias.shape)}")
    raise RuntimeError(
        f"linear: input, weight and bias must have the same dtype, got input {input.dtype}, "
        f"weight {weight.dtype}" + ("" if bias is None else f", bias {bias.dtype}") +
        ". Fix: convert the input (x.to(layer.weight.dtype)) or the layer (layer.double())")


# --- addmm and its family: β·input + α·(product), one node each ---------------------------------
#
# ``addmm(b, x, W.t())`` is how hand-written layers (and PyTorch's own linear, once)
# spell x Wᵀ + b. With P the product of m1 and m2 and g = dL/dout:
#
#     d/dinput = β g (summed to input's shape: it was broadcast)
#     d/dm1    = α g m2ᵀ          d/dm2 = α m1ᵀ g
#
# (for addmv, m2 is a vector v: d/dm1 = α g vᵀ, an outer product; d/dv = α m1ᵀ g).
# With β = 0 the input is ignored, so nan or inf in it does not leak through (PyTorch's rule).
# Forward mode is the product rule on the product (see ``Addmm.jvp``).

class Addmm(Function):
    """out = β·input + α·(m1 @ m2).   dinput = β g,  dm1 = α g m2ᵀ,  dm2 = α m1ᵀ g (for
    complex numbers: conjugates of β, α and the factors, m2ᴴ and m1ᴴ)."""

    raw = True
    supports_complex = True
    name = "addmm"

    @staticmethod
    def forward(ctx, input, m1, m2, beta, alpha):
        ctx.save_for_backward(m1, m2)
        ctx.scales = (beta, alpha)
        # Half floats are multiplied, scaled and added in float32 and rounded once at the
        # end, as PyTorch does (rounding the product first drifts: Muon's iterations show it)
        dtype = _product_dtype(m1, m2)
        product = matrix_product(*host_operands(m1, m2))
        if alpha != 1:
            product *= alpha
        if beta != 0:  # (beta = 0 ignores the input, nan and inf included)
            product += input if beta == 1 else beta * widened(input)
        return product.astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        m1, m2 = ctx.saved_tensors
        beta, alpha = ctx.scales
        need_input, need_m1, need_m2 = ctx.needs_input_grad[:3]
        grad_input = grad_m1 = grad_m2 = None
        scaled = grad if alpha == 1 else grad * conj(alpha)
        if need_input:  # β = 0 still gives a (zero) gradient, as in PyTorch
            grad_input = unbroadcast(grad if beta == 1 else grad * conj(beta),
                                     ctx.input_shapes[0])
        if need_m1:
            grad_m1 = scaled.unsqueeze(-1) * conj(m2) if m2.ndim == 1 else scaled @ m2.mH
        if need_m2:
            grad_m2 = m1.mH @ scaled
        return grad_input, grad_m1, grad_m2, None, None

    @staticmethod
    def jvp(ctx, t_input, t_m1, t_m2, *_):
        """jvp: ẏ = β·ṫ + α·(ṁ1 @ m2 + m1 @ ṁ2), ṫ the input's tangent (ignored when β = 0,
        like the input's value)."""
        _, m1, m2, beta, alpha = ctx.primals
        product = tangent_sum(ctx.results[0].shape,
                              None if t_m1 is None else Matmul.apply(t_m1, m2),
                              None if t_m2 is None else Matmul.apply(m1, t_m2))
        if product is not None and alpha != 1:
            product = product * alpha
        if beta == 0 or t_input is None:
            return product
        return tangent_sum(ctx.results[0].shape, product,
                           t_input if beta == 1 else t_input * beta)


class Addmv(Addmm):
    """out = β·input + α·(M @ v).   dinput = β g,  dM = α g vᵀ,  dv = α Mᵀ g."""

    name = "addmv"
    supports_complex = True


class Baddbmm(Addmm):
    """out = β·input + α·(b1 @ b2), one product per batch entry; derivatives as addmm's."""

    name = "baddbmm"
    supports_complex = True


_EXPECTED = {"addmm": (2, 2, "two matrices (n, m) and (m, p)"),
             "addmv": (2, 1, "a matrix (n, m) and a vector (m,)"),
             "baddbmm": (3, 3, "two batches of matrices (b, n, m) and (b, m, p)")}


def _add_product(op: type[Addmm], input, m1, m2, beta, alpha) -> Tensor:
    name = op.name
    input, m1, m2 = autocast_inputs(name, input, m1, m2)
    nd1, nd2, what = _EXPECTED[name]
    for label, t in (("input", input), ("first", m1), ("second", m2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: the {label} argument must be a Tensor, got "
                            f"{type(t).__name__}")
    if m1.ndim != nd1 or m2.ndim != nd2:
        raise RuntimeError(f"{name}: expected {what}, got shapes {tuple(m1.shape)} and "
                           f"{tuple(m2.shape)}")
    inner = m2.shape[-2] if nd2 >= 2 else m2.shape[0]
    if m1.shape[-1] != inner or (nd1 == 3 and m1.shape[0] != m2.shape[0]):
        raise RuntimeError(f"{name}: shapes {tuple(m1.shape)} and {tuple(m2.shape)} can't be "
                           f"multiplied ({m1.shape[-1]} != {inner}"
                           + (f", or batch {m1.shape[0]} != {m2.shape[0]}" if nd1 == 3 else "")
                           + "); did you mean to transpose one (W.t())?")
    if not (input.dtype is m1.dtype and m1.dtype is m2.dtype):
        raise RuntimeError(f"{name}: input, and both factors must have the same dtype, got "
                           f"{input.dtype}, {m1.dtype} and {m2.dtype}. Fix: convert them, e.g. "
                           f"x.to({m1.dtype})")
    if not m1.dtype.is_floating_point and any(isinstance(s, float) for s in (beta, alpha)):
        raise RuntimeError(f"{name}: for integer tensors beta and alpha must be integers, got "
                           f"beta={beta!r}, alpha={alpha!r}")
    out_shape = m1.shape[:-1] + (m2.shape[-1],) if nd2 >= 2 else m1.shape[:-1]
    try:
        broadcast = np.broadcast_shapes(tuple(input.shape), tuple(out_shape))
    except ValueError:
        broadcast = None
    if broadcast != tuple(out_shape):
        raise RuntimeError(f"{name}: input of shape {tuple(input.shape)} can't be broadcast to "
                           f"the product's shape {tuple(out_shape)}")
    return op.apply(input, m1, m2, beta, alpha)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """β·input + α·(mat1 @ mat2): input broadcasts to (n, p); ``addmm(b, x, W.t())`` is linear."""
    return _add_product(Addmm, input, mat1, mat2, beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """β·input + α·(mat @ vec): a matrix-vector product plus a vector."""
    return _add_product(Addmv, input, mat, vec, beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """β·input + α·(batch1 @ batch2) for each of the b matrices (attention scores use it)."""
    return _add_product(Baddbmm, input, batch1, batch2, beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """β·input + α·Σ_b batch1[b] @ batch2[b]: the products summed over the batch.

    Σ_b A_b B_b is one matrix product of A's blocks side by side, (n, b·m), with
    B's stacked, (b·m, p), so this is addmm on those reshapes (one addmm node).
    """
    if not (isinstance(batch1, Tensor) and isinstance(batch2, Tensor)) or \
            batch1.ndim != 3 or batch2.ndim != 3:
        shapes = [tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__
                  for t in (batch1, batch2)]
        raise RuntimeError(f"addbmm: expected two batches of matrices (b, n, m) and (b, m, p), "
                           f"got {shapes[0]} and {shapes[1]}")
    b, n, m = batch1.shape
    if batch2.shape[:2] != (b, m):
        raise RuntimeError(f"addbmm: shapes {tuple(batch1.shape)} and {tuple(batch2.shape)} "
                           f"can't be multiplied batch by batch (need (b, n, m) and (b, m, p))")
    side_by_side = batch1.permute(1, 0, 2).reshape(n, b * m)
    stacked = batch2.reshape(b * m, batch2.shape[2])
    return addmm(input, side_by_side, stacked, beta=beta, alpha=alpha)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y_k = x1ᵀ W_k x2 + b_k`` for weight (out, in1, in2), inputs (..., in1) and (..., in2).

    An einsum (its backward is einsum's); the layer is ``nn.Bilinear``.
    """
    if weight.ndim != 3 or input1.shape[-1] != weight.shape[1] or \
            input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear: expected inputs (..., in1) and (..., in2) and weight (out, in1, in2) "
            f"with matching sizes, got {tuple(input1.shape)}, {tuple(input2.shape)} and "
            f"weight {tuple(weight.shape)}")
    def product(x1, w, x2, b):
        out = einsum("...i,kij,...j->...k", x1, w, x2)
        return out if b is None else out + b

    return autocast_once("bilinear", product, input1, weight, input2, bias)
