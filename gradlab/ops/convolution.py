"""Convolutions: conv1d, conv2d, conv_transpose1d/2d, each one matrix product.

A convolution ``y = A(x, W)`` is linear in ``x`` and linear in ``W``, and so
are its two gradients. Three linear maps close the whole family::

    A(x, W)    convolution            y[n,o,p]   = Σ W[o,c,i,j] · x[n,c,window(p)+(i,j)]
    T(gy, W)   its input gradient     (col2im of Wᵀ·gy; also conv_transpose's forward)
    B(x, gy)   its weight gradient    (gy · colsᵀ, summed over the batch)

They are adjoints of each other: ⟨A(x,W), gy⟩ = ⟨x, T(gy,W)⟩ = ⟨W, B(x,gy)⟩.
So each map's backward is made of the other two (see each ``backward``):
no derivative is written twice, and since backwards call these ops as
Functions, gradients of gradients (``create_graph=True``) come for free.
``conv_transpose2d`` *is* T, with a bias.

Forward mode follows from the same bilinearity: the tangent of A(x, W) + b
is A(ẋ, W) + A(x, Ẇ) + ḃ (the product rule, with the maps themselves as
the "products"), and likewise for T and B. Each tangent is again one of
the three maps, so forward-over-reverse (Hessian-vector products) works too.

Forward runs im2col (see :mod:`gradlab.ops._im2col`): a strided view of
the windows, copied once into batch-last columns, then ONE matrix product
for the whole batch; so are the two gradients. The bias gradient (a sum
over batch and pixels) is two products with ones (``BiasGrad``): 4x
faster than NumPy's sum over dims (0, 2, 3) on LeNet's gradients.
"""

from __future__ import annotations

from numbers import Integral

from ..autograd.function import Function
from ..tensor import Tensor
from ._im2col import ConvGeometry, fold, from_grid, grid, product, product_t, unfold
from ._util import autocast_inputs, tangent_sum, xp_for
from .complex_parts import conj

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]
FUNCTIONAL = list(__all__)
TENSOR_METHODS: list = []


def _as_2d(a, geo: ConvGeometry):
    """A 1-D convolution's (N, C, L) array as (N, C, 1, L): a view, no copy."""
    return a if geo.spatial == 2 else a.reshape(a.shape[0], a.shape[1], 1, a.shape[2])


def _from_2d(a, geo: ConvGeometry):
    return a if geo.spatial == 2 else a.reshape(a.shape[0], a.shape[1], a.shape[3])


def _bias_grad(grad: Tensor, geo: ConvGeometry) -> Tensor:
    """The bias adds to every pixel of its channel: its gradient sums over batch and pixels."""
    if grad.dtype.is_floating_point and grad.dtype.itemsize >= 4:
        return BiasGrad.apply(grad)
    return grad.sum((0,) + tuple(range(2, 2 + geo.spatial)))  # half floats: sum's own rules


class BiasGrad(Function):
    """Σ grad over the batch and the pixels, per channel (dim 1): the bias's gradient.

    As two matrix products with ones, (N·C, pixels) · 1 then 1 · (N, C):
    NumPy's ``sum`` over dims (0, 2, 3) walks the array in short strided
    pieces, 4x slower (69 vs 16 µs on LeNet's (64, 6, 24, 24) float32
    gradient, 40 vs 8 on (64, 16, 8, 8), measured). It is ``sum`` all the
    same (the same name and node in recorded graphs); linear, so its
    backward spreads the gradient back over every pixel.
    """

    raw = True
    supports_complex = True  # linear: its backward needs no conj
    name, node_name = "sum", "SumBackward1"

    @staticmethod
    def forward(ctx, grad):
        xp = xp_for(grad)
        n, c = grad.shape[:2]
        rows = grad.reshape(n * c, -1)
        per_sample = xp.matmul(rows, xp.ones(rows.shape[1], dtype=grad.dtype))
        return xp.matmul(xp.ones(n, dtype=grad.dtype), per_sample.reshape(n, c))

    @staticmethod
    def backward(ctx, gg):
        shape = ctx.input_shapes[0]
        return gg.reshape((1, -1) + (1,) * (len(shape) - 2)).expand(shape)

    @staticmethod
    def jvp(ctx, t):
        return None if t is None else BiasGrad.apply(t)


def _bias_tangent(tb, geo: ConvGeometry):
    """The bias's tangent (C,) as (C, 1[, 1]): it moves every pixel of its channel."""
    return None if tb is None else tb.reshape((-1,) + (1,) * geo.spatial)


class Convolution(Function):
    """A(x, W) + b: im2col, then one matrix product W · cols (batched over groups only).

    d/dx = T(grad, W)   d/dW = B(x, grad)   d/db = Σ grad
    (For complex numbers the adjoints take the other factor conjugated: T(grad, W̄) and
    B(x̄, grad); so do ConvTranspose's and ConvWeightGrad's below.)
    """

    raw = True
    supports_complex = True
    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, b, geo):
        xp = xp_for(x)
        g, co = geo.groups, w.shape[0]
        cols = unfold(xp, _as_2d(x, geo), geo)                     # (g, C/g·kh·kw, L·N)
        out = product(xp, w.reshape(g, co // g, -1), cols)         # (g, Co/g, L·N)
        ctx.geo = geo
        need_w = bool(ctx.needs_input_grad) and ctx.needs_input_grad[1]
        ctx.save_for_backward(x, w, cols if need_w else None)  # B reuses the columns
        return _from_2d(from_grid(xp, out, co, geo, b), geo)

    @staticmethod
    def backward(ctx, grad):
        x, w, cols = ctx.saved_tensors
        geo = ctx.geo
        sx, sw, sb = ctx.input_shapes[:3]
        if x.dtype.is_complex:  # the saved columns are x's, not x̄'s
            cols = None
        return (None if sx is None else ConvTranspose.apply(grad, conj(w), None, geo),
                None if sw is None else ConvWeightGrad.apply(conj(x), grad, cols, geo),
                None if sb is None else _bias_grad(grad, geo), None)

    @staticmethod
    def jvp(ctx, tx, tw, tb, _):
        """jvp: ẏ = A(ẋ, W) + A(x, Ẇ) + ḃ."""
        x, w, _, geo = ctx.primals
        return tangent_sum(ctx.results[0].shape,
                           None if tx is None else Convolution.apply(tx, w, None, geo),
                           None if tw is None else Convolution.apply(x, tw, None, geo),
                           _bias_tangent(tb, geo))


class ConvTranspose(Function):
    """T(gy, W) + b: Wᵀ times the output-gradient columns, then col2im (conv_transpose's forward).

    d/dgy = A(grad, W)   d/dW = B(grad, gy)   d/db = Σ grad
    """

    raw = True
    supports_complex = True
    name, node_name = "conv_transpose", "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, gy, w, b, geo):
        xp = xp_for(gy)
        g, co, cg = geo.groups, w.shape[0], w.shape[1]
        wm = w.reshape(g, co // g, -1)
        cols = product(xp, wm.swapaxes(-1, -2), grid(xp, _as_2d(gy, geo), geo))
        out = fold(xp, cols, g * cg, geo)
        if b is not None:
            out += b.reshape(-1, 1, 1)
        ctx.geo = geo
        ctx.save_for_backward(gy, w)
        return _from_2d(out, geo)

    @staticmethod
    def backward(ctx, grad):
        gy, w = ctx.saved_tensors
        geo = ctx.geo
        sgy, sw, sb = ctx.input_shapes[:3]
        return (None if sgy is None else Convolution.apply(grad, conj(w), None, geo),
                None if sw is None else ConvWeightGrad.apply(grad, conj(gy), None, geo),
                None if sb is None else _bias_grad(grad, geo), None)

    @staticmethod
    def jvp(ctx, tgy, tw, tb, _):
        """jvp: ẏ = T(ġy, W) + T(gy, Ẇ) + ḃ."""
        gy, w, _, geo = ctx.primals
        return tangent_sum(ctx.results[0].shape,
                           None if tgy is None else ConvTranspose.apply(tgy, w, None, geo),
                           None if tw is None else ConvTranspose.apply(gy, tw, None, geo),
                           _bias_tangent(tb, geo))


class ConvWeightGrad(Function):
    """B(x, gy): the weight gradient gy · colsᵀ, one product summing over batch and pixels.

    Reuses forward's columns if given. d/dx = T(gy, grad)   d/dgy = A(x, grad)
    """

    raw = True
    supports_complex = True
    name, node_name = "convolution_backward_weight", "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, x, gy, cols, geo):
        xp = xp_for(gy)
        if cols is None:
            cols = unfold(xp, _as_2d(x, geo), geo)
        gyg = grid(xp, _as_2d(gy, geo), geo)                       # (g, Co/g, L·N)
        gw_t = product_t(xp, cols, gyg)                            # (g, C/g·kh·kw, Co/g)
        co, cg = gy.shape[1], x.shape[1] // geo.groups
        kernel = geo.kernel if geo.spatial == 2 else geo.kernel[1:]
        ctx.geo = geo
        ctx.save_for_backward(x, gy)
        return gw_t.swapaxes(-1, -2).reshape((co, cg) + tuple(kernel))

    @staticmethod
    def backward(ctx, grad):
        x, gy = ctx.saved_tensors
        geo = ctx.geo
        sx, sgy = ctx.input_shapes[:2]
        return (None if sx is None else ConvTranspose.apply(conj(gy), grad, None, geo),
                None if sgy is None else Convolution.apply(conj(x), grad, None, geo), None,
                None)

    @staticmethod
    def jvp(ctx, tx, tgy, *_):
        """jvp: ẏ = B(ẋ, gy) + B(x, ġy). Not the "multilinear" shortcut: the saved columns
        are x's, so the ẋ term must unfold ẋ itself (cols=None)."""
        x, gy, cols, geo = ctx.primals
        return tangent_sum(ctx.results[0].shape,
                           None if tx is None else ConvWeightGrad.apply(tx, gy, None, geo),
                           None if tgy is None else ConvWeightGrad.apply(x, tgy, cols, geo))


# --- argument checks and the public functions ------------------------------------------------

def _tuple(value, n: int, what: str, op: str) -> tuple:
    """An int or an n-tuple of ints as an n-tuple (``stride=2`` means 2 along every dim)."""
    if isinstance(value, Integral):  # NumPy's integers too, as PyTorch takes them
        return (int(value),) * n
    value = tuple(value)
    if len(value) == 1 and n > 1:
        value = value * n
    if len(value) != n or not all(isinstance(v, Integral) for v in value):
        raise ValueError(f"{op}: {what} must be an int or a tuple of {n} ints, got {value}")
    return tuple(int(v) for v in value)


def _check_positive(values: tuple, what: str, op: str) -> None:
    if any(v <= 0 for v in values):
        raise RuntimeError(f"{op}: {what} must be positive, got {values}. Fix: use {what}=1 "
                           f"for the default")


def _check_operands(op: str, input, weight, bias, spatial: int) -> bool:
    """Shared checks of input/weight/bias; returns True if ``input`` is unbatched."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(f"{op}: input and weight must be tensors, got "
                        f"{type(input).__name__} and {type(weight).__name__}")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{op}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input "
            f"(N, C, {', '.join('HW'[2 - spatial:])}), got shape {tuple(input.shape)}. Fix: "
            f"reshape the input, e.g. x.unsqueeze(1) to add a channel dim")
    if weight.ndim != spatial + 2:
        raise RuntimeError(f"{op}: expected a {spatial + 2}-D weight, got shape "
                           f"{tuple(weight.shape)}")
    for t in (input, weight) + ((bias,) if bias is not None else ()):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"{op}: expected floating point tensors, got {t.dtype} with "
                               f"shape {tuple(t.shape)}. Fix: convert with .float()")
    if weight.dtype is not input.dtype or (bias is not None and bias.dtype is not input.dtype):
        raise RuntimeError(
            f"{op}: input ({input.dtype}), weight ({weight.dtype})"
            + (f" and bias ({bias.dtype})" if bias is not None else "")
            + " must have the same dtype. Fix: convert the input, e.g. x.to(weight.dtype)")
    return input.ndim == spatial + 1


def _check_bias(op: str, bias, channels: int) -> None:
    if bias is not None and tuple(bias.shape) != (channels,):
        raise RuntimeError(f"{op}: bias must have shape ({channels},) (one value per output "
                           f"channel), got {tuple(bias.shape)}")


def _batched_operands(op, input, weight, bias, stride, dilation, spatial) -> tuple:
    """The checks every convolution starts with (see ``_check_operands``), and stride and
    dilation as positive ``spatial``-tuples. Returns ``(input with a batch dim, its shape as
    the user gave it (for the messages), whether it was unbatched, stride, dilation)``."""
    unbatched = _check_operands(op, input, weight, bias, spatial)
    shape = tuple(input.shape)
    x = input.unsqueeze(0) if unbatched else input
    stride = _tuple(stride, spatial, "stride", op)
    dilation = _tuple(dilation, spatial, "dilation", op)
    _check_positive(stride, "stride", op)
    _check_positive(dilation, "dilation", op)
    return x, shape, unbatched, stride, dilation


def _check_channels(op: str, x, shape: tuple, weight, bias, groups) -> int:
    """groups must divide the weight's out_channels, and C/groups · groups must be the channel
    dim of ``x`` (batched; ``shape`` is the input's as given); returns out_channels."""
    c = x.shape[1]
    co, cg = weight.shape[:2]
    if not isinstance(groups, int) or groups < 1:
        raise RuntimeError(f"{op}: groups must be a positive int, got {groups!r}")
    if co % groups:
        raise RuntimeError(f"{op}: out_channels ({co}, weight shape {tuple(weight.shape)}) "
                           f"must be divisible by groups ({groups}). Fix: pick groups that "
                           f"divide both in_channels and out_channels")
    if c != cg * groups:
        raise RuntimeError(
            f"{op}: given groups={groups}, weight of shape {tuple(weight.shape)} expects "
            f"input with {cg * groups} channels, but the input of shape {shape} has {c}. "
            f"Fix: the layer's in_channels must equal the input's channel dim ({c})")
    _check_bias(op, bias, co)
    return co


def _output_size(op: str, shape: tuple, size, kernel, stride, pads, dilation,
                 dims: str = "") -> list:
    """⌊(n + before + after − d·(k−1) − 1) / s⌋ + 1 per spatial dim, refusing a kernel that
    spans more than the padded input (``dims`` names the spatial dims in that message)."""
    out = []
    for d in range(len(size)):
        reach = dilation[d] * (kernel[d] - 1) + 1
        padded = size[d] + sum(pads[d])
        if padded < reach:
            raise RuntimeError(
                f"{op}: the kernel (size {tuple(kernel)}, dilation {dilation}) spans {reach} "
                f"along spatial dim {d}{dims}, more than the padded input's {padded} (input "
                f"shape {shape}, padding {tuple(pads)}). Fix: use a larger input, more "
                f"padding, or a smaller kernel")
        out.append((padded - reach) // stride[d] + 1)
    return out


def _conv(op, input, weight, bias, stride, padding, dilation, groups, spatial) -> Tensor:
    input, weight, bias = autocast_inputs("convolution", input, weight, bias)
    input, shape, unbatched, stride, dilation = _batched_operands(op, input, weight, bias,
                                                                  stride, dilation, spatial)
    kernel = tuple(weight.shape[2:])
    size = input.shape[2:]
    _check_channels(op, input, shape, weight, bias, groups)
    pads = _padding(op, padding, kernel, stride, dilation, spatial)
    out = _output_size(op, shape, size, kernel, stride, pads, dilation)
    geo = _geometry(size, kernel, stride, pads, dilation, groups, out, spatial)
    y = Convolution.apply(input, weight, bias, geo)
    return y.squeeze(0) if unbatched else y


def _padding(op, padding, kernel, stride, dilation, spatial) -> tuple:
    """``(before, after)`` per spatial dim; 'same' pads the odd extra after, like PyTorch."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * spatial
        if padding != "same":
            raise ValueError(f"{op}: padding must be 'valid', 'same', an int or a tuple of "
                             f"{spatial} ints, got {padding!r}")
        if any(s != 1 for s in stride):
            raise ValueError(f"{op}: padding='same' is not supported for strided convolutions "
                             f"(stride={stride}): the output could not keep the input's size. "
                             f"Fix: use stride=1, or give the padding as numbers")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple((t // 2, t - t // 2) for t in total)
    padding = _tuple(padding, spatial, "padding", op)
    if any(p < 0 for p in padding):
        raise RuntimeError(f"{op}: padding must be non-negative, got {padding}")
    return tuple((p, p) for p in padding)


def _geometry(size, kernel, stride, pads, dilation, groups, out, spatial) -> ConvGeometry:
    """The 2-D geometry (a 1-D convolution gets a height-1 first dim)."""
    lift = (lambda t, one: (one,) + tuple(t)) if spatial == 1 else (lambda t, one: tuple(t))
    return ConvGeometry(lift(size, 1), lift(kernel, 1), lift(stride, 1), lift(pads, (0, 0)),
                        lift(dilation, 1), groups, lift(out, 1), spatial)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-D convolution (cross-correlation) of (N, C, L) by (out, C/groups, k) kernels."""
    return _conv("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-D convolution (cross-correlation) of (N, C, H, W) by (out, C/groups, kh, kw) kernels.

    ``padding`` is an int, a pair, 'valid' (none) or 'same' (output size =
    input size; stride 1 only). Out size: ⌊(H + 2p − d·(k−1) − 1) / s⌋ + 1.
    """
    return _conv("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


def _transposed_padding(op: str, padding, output_padding, spatial: int) -> tuple:
    """padding and output_padding as non-negative ``spatial``-tuples."""
    padding = _tuple(padding, spatial, "padding", op)
    output_padding = _tuple(output_padding, spatial, "output_padding", op)
    if any(p < 0 for p in padding + output_padding):
        raise RuntimeError(f"{op}: padding {padding} and output_padding {output_padding} must "
                           f"be non-negative")
    return padding, output_padding


def _check_transposed_groups(op: str, weight, groups) -> int:
    """groups must divide the weight's in_channels (its dim 0); returns out_channels."""
    cin, cg = weight.shape[:2]
    if not isinstance(groups, int) or groups < 1 or cin % groups:
        raise RuntimeError(f"{op}: groups ({groups}) must be a positive int dividing "
                           f"in_channels ({cin}, weight shape {tuple(weight.shape)})")
    return cg * groups


def _transposed_output_size(op: str, shape: tuple, size, kernel, stride, padding, dilation,
                            output_padding) -> list:
    """(n − 1)·s − 2p + d·(k − 1) + output_padding + 1 per spatial dim, which must be
    positive; output_padding must be smaller than the stride or the dilation."""
    for op_, s, d in zip(output_padding, stride, dilation):
        if op_ >= s and op_ >= d:
            raise RuntimeError(f"{op}: output_padding {output_padding} must be smaller than "
                               f"either stride {stride} or dilation {dilation}")
    out = [(i - 1) * s - 2 * p + d * (k - 1) + op_ + 1
           for i, s, p, d, k, op_ in zip(size, stride, padding, dilation, kernel,
                                         output_padding)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"{op}: the output size {tuple(out)} is not positive (input shape "
                           f"{shape}, kernel {tuple(kernel)}, stride {stride}, padding "
                           f"{padding}). Fix: use less padding")
    return out


def _conv_transpose(op, input, weight, bias, stride, padding, output_padding, groups,
                    dilation, spatial) -> Tensor:
    input, weight, bias = autocast_inputs("conv_transpose", input, weight, bias)
    input, shape, unbatched, stride, dilation = _batched_operands(op, input, weight, bias,
                                                                  stride, dilation, spatial)
    padding, output_padding = _transposed_padding(op, padding, output_padding, spatial)
    c, *size = input.shape[1:]
    cin = weight.shape[0]
    kernel = tuple(weight.shape[2:])
    co = _check_transposed_groups(op, weight, groups)
    if c != cin:
        raise RuntimeError(
            f"{op}: weight of shape {tuple(weight.shape)} (in_channels, out_channels/groups, "
            f"...) expects input with {cin} channels, but the input of shape "
            f"{shape} has {c}. Fix: in_channels must equal the input's dim 1")
    _check_bias(op, bias, co)
    out = _transposed_output_size(op, shape, size, kernel, stride, padding, dilation,
                                  output_padding)
    # The geometry of the convolution whose input gradient this is: its input is our output.
    geo = _geometry(out, kernel, stride, tuple((p, p) for p in padding), dilation, groups,
                    size, spatial)
    y = ConvTranspose.apply(input, weight, bias, geo)
    return y.squeeze(0) if unbatched else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1) -> Tensor:
    """The adjoint of conv1d (its input gradient): upsamples (N, Cin, L) by (Cin, out/g, k)."""
    return _conv_transpose("conv_transpose1d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1) -> Tensor:
    """The adjoint of conv2d (its input gradient), with weight (Cin, out/groups, kh, kw).

    Out size: (H − 1)·s − 2p + d·(k − 1) + output_padding + 1.
    """
    return _conv_transpose("conv_transpose2d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation, 2)
