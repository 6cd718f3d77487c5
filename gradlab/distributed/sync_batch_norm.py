"""SyncBatchNorm's op: batch statistics over every rank's share of the batch.

With data parallel training each rank sees only its share of a batch, so a
plain BatchNorm normalises with the statistics of a few samples.
SyncBatchNorm computes them over the whole batch instead:

* **forward**: each rank sends (count, mean, M2 = Σ (x - mean)²) per channel;
  every rank combines them the same way (Chan's parallel formula, in
  float64): N = Σ nᵢ, mean = Σ nᵢ meanᵢ / N, M2 = Σ (M2ᵢ + nᵢ (meanᵢ - mean)²),
  var = M2 / N; then it normalises its own rows with them;
* **backward**: BatchNorm's input gradient needs Σ grad and Σ grad·x̂ over
  the batch; the ranks add theirs up (``all_reduce``), and each uses the
  totals with N. The weight and bias get this rank's own sums, which
  ``DistributedDataParallel`` then averages like any gradient.

So two ranks on half a batch each compute what one BatchNorm computes on the
whole batch (the tests check it). The backward's collectives make it
once-differentiable: double backward through it raises, and so does forward
mode (its tangents would need the other ranks').
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..ops._util import xp_for
from ..ops.normalization import _channel_shape
from .collectives import all_gather_array, all_reduce_array

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(Function):
    """y = (x - mean) · invstd · weight + bias with the whole batch's mean and variance."""

    raw = True
    name = "sync_batch_norm"
    node_name = "SyncBatchNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, momentum, eps):
        axes = (0,) + tuple(range(2, x.ndim))
        channels = x.shape[1]
        cshape = _channel_shape(x.ndim, channels)
        wide = x.astype(np.float64)
        count = x.size // channels if channels else 0
        local_mean = wide.mean(axis=axes) if count else np.zeros(channels)
        local_m2 = ((wide - local_mean.reshape(cshape)) ** 2).sum(axis=axes)
        stats = all_gather_array(np.stack([np.full(channels, float(count)), local_mean,
                                           local_m2]))  # (ranks, 3, C)
        counts, means, m2s = stats[:, 0], stats[:, 1], stats[:, 2]
        total = counts.sum(axis=0)
        if np.any(total < 2):
            raise ValueError(f"sync_batch_norm: expected more than 1 value per channel over all "
                             f"ranks when training, got {int(total.min())}")
        mean = (counts * means).sum(axis=0) / total
        var = (m2s + counts * (means - mean) ** 2).sum(axis=0) / total
        if running_mean is not None:  # the in-place update, as BatchNorm's
            running_mean *= 1 - momentum
            running_mean += (momentum * mean).astype(running_mean.dtype)
            running_var *= 1 - momentum
            running_var += (momentum * var * total / (total - 1)).astype(running_var.dtype)
        xp = xp_for(x)
        mean = xp.asarray(mean.reshape(cshape).astype(x.dtype))
        invstd = xp.asarray((1 / np.sqrt(var + eps)).reshape(cshape).astype(x.dtype))
        scale = invstd if weight is None else invstd * weight.reshape(cshape)
        shift = -mean * scale
        if bias is not None:
            shift = shift + bias.reshape(cshape)
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.count, ctx.axes = float(total[0]), axes
        return (x * scale + shift).astype(x.dtype, copy=False)

    @staticmethod
    def jvp(ctx, *tangents):
        raise _no_forward_mode()

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, invstd = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        grads = SyncBatchNormBackward.apply(grad, x, weight, mean, invstd, ctx.count, ctx.axes,
                                            need_x)
        return (grads[0] if need_x else None, grads[1] if need_w else None,
                grads[2] if need_b else None, None, None, None, None)


class SyncBatchNormBackward(Function):
    """The gradients of SyncBatchNorm: Σ grad and Σ grad·x̂ summed over the ranks."""

    raw = True
    name = "sync_batch_norm_backward"

    @staticmethod
    def forward(ctx, grad, x, weight, mean, invstd, count, axes, need_x):
        centered = x - mean
        sum_g = grad.sum(axis=axes, keepdims=True)
        sum_g_xhat = (grad * centered).sum(axis=axes, keepdims=True) * invstd
        grad_x = None
        if need_x:  # every rank's backward reaches here alike: the collective lines up
            totals = all_reduce_array(np.stack([np.asarray(sum_g, dtype=np.float64),
                                                np.asarray(sum_g_xhat, dtype=np.float64)]))
            xp = xp_for(x)
            all_g, all_g_xhat = (xp.asarray(t.astype(x.dtype)) for t in totals)
            k1 = invstd if weight is None else invstd * weight.reshape(mean.shape)
            grad_x = (grad * k1 + (centered * (-k1 * invstd * all_g_xhat / count)
                                   - k1 * all_g / count)).astype(x.dtype, copy=False)
        return grad_x, sum_g_xhat.reshape(-1), sum_g.reshape(-1)

    @staticmethod
    def jvp(ctx, *tangents):
        raise _no_forward_mode()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("sync_batch_norm: double backward (create_graph=True through "
                           "SyncBatchNorm) is not supported: its backward talks to the other "
                           "ranks. Fix: use BatchNorm where you need second derivatives")


def _no_forward_mode() -> RuntimeError:
    return RuntimeError("sync_batch_norm: forward-mode AD (jvp, forward_ad) is not supported "
                        "through SyncBatchNorm: its tangents would need the other ranks' "
                        "tangents too. Fix: reverse mode (backward), or BatchNorm")
