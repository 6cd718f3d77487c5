"""Normalization: batch_norm, layer_norm, group_norm (and normalize, to unit length).

All three standardise a group of values to mean 0 and variance 1, then
scale and shift them per channel::

    x̂ = (x - mean) · invstd,   invstd = 1 / sqrt(var + eps),   y = x̂ · weight + bias

They differ only in *which* values form a group: ``batch_norm`` takes each
channel over the batch and the spatial dims, ``layer_norm`` each sample's
last dims, ``group_norm`` each sample's channels in groups of C/G.

Each is one node with a closed-form backward instead of the dozen mean,
sub, mul, rsqrt nodes it could be composed from: the graph says
``batch_norm``, and backward is a few array passes. Over a group of n
values, with ĝ = grad · weight::

    dx = invstd · (ĝ - mean(ĝ) - x̂ · mean(ĝ · x̂))
    dweight = Σ grad · x̂           dbias = Σ grad

(the two subtracted terms are what flows back through the mean and the
variance). The backward is tensor code: with ``create_graph=True`` it
recomputes x̂ from x with tensor ops, so second derivatives are exact.

Forward mode needs the same formula: the Jacobian of x ↦ x̂ is symmetric, so
the tangent of x̂ is dx's expression applied to ẋ, and by the product rule::

    ẏ = invstd · (ẋ - mean(ẋ) - x̂ · mean(ẋ · x̂)) · weight + x̂ · ẇeight + ḃias
"""

from __future__ import annotations

import numbers

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ._util import check_float, tangent_sum, xp_for

__all__ = ["layer_norm", "group_norm"]
# Re-exported by gradlab.nn.functional (normalize too: PyTorch has no torch.normalize).
FUNCTIONAL = ["batch_norm", "layer_norm", "group_norm", "normalize"]
TENSOR_METHODS: list = []


# --- shared helpers: raw statistics in forward, the derivative in tensor ops ------------------

def _moments(x, axes):
    """Mean, biased variance (over ``axes``, kept as size-1 dims) and x - mean, in float32
    at least."""
    if x.dtype.itemsize < 4:  # float16/bfloat16: accumulate in float32, as PyTorch does
        x = x.astype(np.float32)
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=axes, keepdims=True)
    return mean, var, centered


def _standardize(x: Tensor, mean: Tensor, invstd: Tensor, dims, eps: float, batch_stats: bool):
    """x̂ and invstd as tensors for backward.

    Normally the saved statistics are constants. When backward itself is
    being recorded (``create_graph=True``) and they were computed from x,
    they are recomputed from x with tensor ops, so the gradient's own
    gradient sees how mean and variance depend on x.
    """
    if batch_stats and state.enabled:
        centered = x - x.mean(dims, keepdim=True)
        invstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
        return centered * invstd, invstd
    return (x - mean) * invstd, invstd


def _input_grad(ghat: Tensor, xhat: Tensor, invstd: Tensor, dims) -> Tensor:
    """dx = invstd · (ĝ - mean(ĝ) - x̂ · mean(ĝ · x̂)), the means over one group (``dims``)."""
    return (ghat - ghat.mean(dims, keepdim=True)
            - xhat * (ghat * xhat).mean(dims, keepdim=True)) * invstd


def _affine_tangent(out_shape, xhat_dot, xhat, weight, t_weight, t_bias, shape=None):
    """ẏ = ẋ̂ · weight + x̂ · ẇeight + ḃias, with weight and bias reshaped to ``shape``
    (None: as they are) to line up with x̂."""
    def lined_up(t):
        return t if t is None or shape is None else t.reshape(shape)

    if xhat_dot is not None and weight is not None:
        xhat_dot = xhat_dot * lined_up(weight)
    return tangent_sum(out_shape, xhat_dot,
                       None if t_weight is None else xhat * lined_up(t_weight),
                       lined_up(t_bias))


def _channel_shape(ndim: int, channels: int) -> tuple:
    """(1, C, 1, ...): a per-channel vector lined up with dim 1 of an (N, C, *) input."""
    return (1, channels) + (1,) * (ndim - 2)


# --- batch_norm -------------------------------------------------------------------------------

class BatchNorm(Function):
    """y = (x - mean) · invstd · weight + bias, per channel (dim 1).

    Training: mean and the biased variance of each channel over the batch and
    spatial dims, n values per channel; the running statistics move toward
    them (``running = (1 - momentum) · running + momentum · batch``, with the
    unbiased variance var · n/(n-1)). Evaluation: the running statistics are
    constants, so y is an affine map of x and dx = grad · weight · invstd.

    Backward works per channel as far as it can: with s = Σ grad and
    t = Σ grad · x̂ (which are dbias and dweight), the input gradient
    ``w·invstd·(grad - s/n - x̂·t/n)`` is ``grad·k1 + (x - mean)·k2 + k3`` for
    three per-channel numbers, so few passes go over the full-size arrays.
    """

    raw = True
    name = "batch_norm"
    node_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
        axes = (0,) + tuple(range(2, x.ndim))
        cshape = _channel_shape(x.ndim, x.shape[1])
        xp = xp_for(x)
        if training:
            mean, var, _ = _moments(x, axes)
            if running_mean is not None:  # the in-place update PyTorch makes, without a graph
                n = x.size // x.shape[1]
                running_mean *= 1 - momentum
                running_mean += (momentum * mean.reshape(-1)).astype(running_mean.dtype)
                running_var *= 1 - momentum
                running_var += (momentum * n / (n - 1) * var.reshape(-1)).astype(
                    running_var.dtype)
        else:
            mean = running_mean.reshape(cshape).copy()  # a copy: later updates don't touch it
            var = running_var.reshape(cshape)
        invstd = (1 / xp.sqrt(var + eps)).astype(x.dtype, copy=False)
        mean = mean.astype(x.dtype, copy=False)
        # y = x · scale + shift with per-channel scale = invstd·w, shift = b - mean·scale.
        scale = invstd if weight is None else invstd * weight.reshape(cshape)
        shift = -mean * scale
        if bias is not None:
            shift = shift + bias.reshape(cshape)
        out = x * scale
        out += shift
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.training, ctx.eps, ctx.axes = training, eps, axes
        return out.astype(x.dtype, copy=False)  # float16 x, float32 weight: float16 (PyTorch)

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, invstd = ctx.saved_tensors
        dims = ctx.axes
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        if ctx.training and state.enabled:  # create_graph: mean and invstd as functions of x
            _, invstd = _standardize(x, mean, invstd, dims, ctx.eps, True)
            mean = x.mean(dims, keepdim=True)
        centered = x - mean  # not x itself: Σ grad·x - mean·Σ grad would cancel badly
        sum_g = grad.sum(dims, keepdim=True)
        sum_g_xhat = (grad * centered).sum(dims, keepdim=True) * invstd  # Σ grad·x̂
        grad_x = None
        if need_x:
            k1 = invstd if weight is None else invstd * weight.reshape(
                _channel_shape(x.ndim, x.shape[1]))
            if ctx.training:
                n = x.numel() // x.shape[1]
                k2 = -k1 * invstd * sum_g_xhat / n
                grad_x = grad * k1 + (centered * k2 - k1 * sum_g / n)
            else:
                grad_x = grad * k1
        return (grad_x, sum_g_xhat.reshape(-1) if need_w else None,
                sum_g.reshape(-1) if need_b else None, None, None, None, None, None)

    @staticmethod
    def jvp(ctx, tx, tw, tb, *_):
        """jvp: ẏ = ẋ̂ · w + x̂ · ẇ + ḃ with, training, ẋ̂ = invstd · (ẋ - mean(ẋ) - x̂ ·
        mean(ẋ · x̂)) per channel; evaluating, ẋ̂ = invstd · ẋ. As in PyTorch the running
        statistics are not differentiable: tangents on them are ignored (backward gives None)."""
        x, weight = ctx.primals[:2]
        mean, invstd = ctx.saved_tensors[2:]
        dims = ctx.axes
        xhat, invstd = _standardize(x, mean, invstd, dims, ctx.eps, ctx.training)
        xhat_dot = None
        if tx is not None:
            xhat_dot = _input_grad(tx, xhat, invstd, dims) if ctx.training else tx * invstd
        return _affine_tangent(ctx.results[0].shape, xhat_dot, xhat, weight, tw, tb,
                               _channel_shape(x.ndim, x.shape[1]))


def _check_channel_vector(op: str, what: str, t, channels: int, input: Tensor) -> None:
    if t is not None and tuple(t.shape) != (channels,):
        raise RuntimeError(
            f"{op}: {what} should have one value per channel, shape ({channels},), but got "
            f"{tuple(t.shape)} for an input of shape {tuple(input.shape)} (channels are dim 1)")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) of an (N, C), (N, C, L) or (N, C, H, W) input.

    ``training=True`` uses the batch's statistics and updates ``running_mean``
    and ``running_var`` in place (if given); ``training=False`` uses them.
    """
    check_float("batch_norm", input)
    if input.ndim < 2:
        raise ValueError(
            f"batch_norm: expected an input of shape (N, C, ...) with at least 2 dims, got "
            f"shape {tuple(input.shape)}. Fix: add a batch dim with input.unsqueeze(0)")
    channels = input.shape[1]
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(
            "batch_norm: running_mean and running_var must be given in evaluation mode "
            "(training=False): they are the statistics it normalises with. Fix: pass them, "
            "or training=True to use the batch's own statistics")
    if (running_mean is None) != (running_var is None):
        raise RuntimeError("batch_norm: give both running_mean and running_var, or neither")
    for what, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_channel_vector("batch_norm", what, t, channels, input)
    if training:
        per_channel = input.numel() // channels if channels else 0
        if per_channel == 1:
            raise ValueError(
                f"batch_norm: expected more than 1 value per channel when training, got input "
                f"of shape {tuple(input.shape)}: the variance of one value is 0. Fix: use a "
                f"batch of 2 or more, or call model.eval() to use the running statistics")
    out = BatchNorm.apply(input, weight, bias, running_mean, running_var, bool(training),
                          float(momentum), float(eps))
    if training and running_mean is not None:
        running_mean._storage.version += 1  # changed in place: backward checks versions
        running_var._storage.version += 1
    return out


# --- layer_norm -------------------------------------------------------------------------------

class LayerNorm(Function):
    """y = (x - mean) · invstd · weight + bias, statistics over the last k dims of each sample.

    dx = invstd · (ĝ - mean(ĝ) - x̂ · mean(ĝ · x̂)), ĝ = grad · weight (means over
    those k dims); dweight = Σ grad · x̂ and dbias = Σ grad over the leading dims.
    """

    raw = True
    name = "layer_norm"
    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, k, eps):
        axes = tuple(range(x.ndim - k, x.ndim))
        mean, var, centered = _moments(x, axes)
        invstd = 1 / xp_for(x).sqrt(var + eps)
        out = (centered * invstd).astype(x.dtype, copy=False)
        invstd = invstd.astype(x.dtype, copy=False)
        mean = mean.astype(x.dtype, copy=False)
        if weight is not None:
            out *= weight
        if bias is not None:
            out += bias
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.eps, ctx.axes = eps, axes
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, invstd = ctx.saved_tensors
        dims = ctx.axes
        lead = tuple(range(x.ndim - len(dims)))
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        xhat, invstd = _standardize(x, mean, invstd, dims, ctx.eps, True)
        grad_x = grad_w = grad_b = None
        if need_x:
            ghat = grad if weight is None else grad * weight
            grad_x = _input_grad(ghat, xhat, invstd, dims)
        if need_w:
            grad_w = (grad * xhat).sum(lead) if lead else grad * xhat
        if need_b:
            grad_b = grad.sum(lead) if lead else grad
        return grad_x, grad_w, grad_b, None, None

    @staticmethod
    def jvp(ctx, tx, tw, tb, *_):
        """jvp: ẏ = invstd · (ẋ - mean(ẋ) - x̂ · mean(ẋ · x̂)) · w + x̂ · ẇ + ḃ (means over the
        normalised dims)."""
        x, weight = ctx.primals[:2]
        mean, invstd = ctx.saved_tensors[2:]
        xhat, invstd = _standardize(x, mean, invstd, ctx.axes, ctx.eps, True)
        xhat_dot = None if tx is None else _input_grad(tx, xhat, invstd, ctx.axes)
        return _affine_tangent(ctx.results[0].shape, xhat_dot, xhat, weight, tw, tb)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims of each sample."""
    check_float("layer_norm", input)
    shape = normalized_shape_of("layer_norm", input, normalized_shape, weight=weight, bias=bias)
    return LayerNorm.apply(input, weight, bias, len(shape), float(eps))


def normalized_shape_of(op: str, input: Tensor, normalized_shape, **affine) -> tuple[int, ...]:
    """``normalized_shape`` as a tuple, checked against the input's last dims, and each of
    the ``affine`` tensors given (weight, bias) against it (layer_norm's and rms_norm's rule)."""
    shape = (int(normalized_shape),) if isinstance(normalized_shape, numbers.Integral) else \
        tuple(int(s) for s in normalized_shape)
    k = len(shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(
            f"{op}: normalized_shape={shape} must match the last dims of the input, expected "
            f"an input of shape (*, {', '.join(map(str, shape))}), got {tuple(input.shape)}. "
            f"Fix: normalized_shape=x.shape[-1:] normalises the last dim")
    for what, t in affine.items():
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"{op}: {what} must have shape normalized_shape={shape}, "
                               f"got {tuple(t.shape)}")
    return shape


# --- group_norm -------------------------------------------------------------------------------

class GroupNorm(Function):
    """Each sample's C channels in G groups of C/G; each group is standardised over its
    channels and spatial positions, then weight and bias apply per channel.

    The derivative is layer_norm's, on the (N, G, C/G · spatial) view of x.
    """

    raw = True
    name = "group_norm"
    node_name = "NativeGroupNormBackward0"

    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        grouped = x.reshape(x.shape[0], num_groups, -1)
        mean, var, centered = _moments(grouped, (2,))
        invstd = 1 / xp_for(x).sqrt(var + eps)
        out = (centered * invstd).astype(x.dtype, copy=False).reshape(x.shape)
        invstd = invstd.astype(x.dtype, copy=False)
        mean = mean.astype(x.dtype, copy=False)
        cshape = _channel_shape(x.ndim, x.shape[1])
        if weight is not None:
            out *= weight.reshape(cshape)
        if bias is not None:
            out += bias.reshape(cshape)
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.num_groups, ctx.eps = num_groups, eps
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, invstd = ctx.saved_tensors
        shape, cshape = tuple(x.shape), _channel_shape(x.ndim, x.shape[1])
        grouped = (shape[0], ctx.num_groups, -1)
        need_x, _, need_w, need_b = ctx.needs_input_grad[:4]
        xhat, invstd = _standardize(x.reshape(grouped), mean, invstd, (2,), ctx.eps, True)
        grad_x = grad_w = grad_b = None
        dims = (0,) + tuple(range(2, len(shape)))
        if need_x:
            ghat = grad if weight is None else grad * weight.reshape(cshape)
            grad_x = _input_grad(ghat.reshape(grouped), xhat, invstd, (2,)).reshape(shape)
        if need_w:
            grad_w = (grad * xhat.reshape(shape)).sum(dims)
        if need_b:
            grad_b = grad.sum(dims)
        return grad_x, None, grad_w, grad_b, None

    @staticmethod
    def jvp(ctx, tx, _, tw, tb, __):
        """jvp: layer_norm's on the (N, G, C/G · spatial) view, then ẏ = ẋ̂ · w + x̂ · ẇ + ḃ
        per channel."""
        x, _, weight = ctx.primals[:3]
        mean, invstd = ctx.saved_tensors[2:]
        shape = tuple(x.shape)
        grouped = (shape[0], ctx.num_groups, -1)
        xhat, invstd = _standardize(x.reshape(grouped), mean, invstd, (2,), ctx.eps, True)
        xhat_dot = None if tx is None else \
            _input_grad(tx.reshape(grouped), xhat, invstd, (2,)).reshape(shape)
        return _affine_tangent(shape, xhat_dot, xhat.reshape(shape), weight, tw, tb,
                               _channel_shape(x.ndim, x.shape[1]))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each sample's channels (dim 1) in ``num_groups`` groups."""
    check_float("group_norm", input)
    if input.ndim < 2:
        raise RuntimeError(
            f"group_norm: expected an input of shape (N, C, ...) with at least 2 dims, got "
            f"shape {tuple(input.shape)}. Fix: add a batch dim with input.unsqueeze(0)")
    channels = input.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(
            f"group_norm: the number of channels must be divisible by num_groups, got input "
            f"of shape {tuple(input.shape)} ({channels} channels) and num_groups={num_groups}")
    for what, t in (("weight", weight), ("bias", bias)):
        _check_channel_vector("group_norm", what, t, channels, input)
    if input.numel() == 0:
        return input * 1.0 if weight is None else input * weight.reshape(
            _channel_shape(input.ndim, channels))
    return GroupNorm.apply(input, int(num_groups), weight, bias, float(eps))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out=None) -> Tensor:
    """Scale vectors along ``dim`` to unit p-norm: x / max(‖x‖_p, eps).

    Embeddings and contrastive losses compare directions, not lengths.
    ``eps`` keeps a zero vector at zero instead of 0/0 = nan. Composed of
    norm, clamp and div (the graph shows those three), so its gradient is
    theirs: for ‖x‖ > eps, d(x/‖x‖)/dx = (I - x̂x̂ᵀ)/‖x‖ (p = 2).
    """
    from .arithmetic import div
    from .selection import clamp
    from .statistics import norm

    if out is not None:
        raise TypeError("normalize: out= is not supported in gradlab; assign the result "
                        "(x = F.normalize(x)) or copy it in: out.copy_(F.normalize(x))")
    if not isinstance(input, Tensor):
        raise TypeError(f"normalize: expected a Tensor, got {type(input).__name__}")
    if not input.dtype.is_complex:  # (complex: divided by its real norm, as PyTorch)
        check_float("normalize", input)
    if input.ndim == 0 and dim in (0, -1):
        dim = None  # a 0-d tensor is its own one-element vector
    denom = clamp(norm(input, p, dim, keepdim=True), min=eps)
    return div(input, denom)
