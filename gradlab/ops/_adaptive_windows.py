"""The mean over PyTorch's adaptive windows along one axis, as one op (for adaptive_avg_pool3d).

Adaptive windows ``[⌊i·n/out⌋, ⌈(i+1)·n/out⌉)`` have (nearly) equal lengths
but need not tile the axis, so no strided view reads them. They are read
offset by offset instead: offset ``k`` of every window is one ``take`` along
the axis (a window shorter than the longest repeats its last position there,
masked out with ``where``, not multiplied by 0, which would turn an inf next
to the window into NaN). The mean is separable, so a 3-D pool is this op
along W, then H, then D.

The op is linear; its adjoint has the same shape of computation with the
table transposed: input position ``j`` receives ``grad[i] / length[i]`` from
each window ``i`` holding it, and those windows are contiguous in ``i`` (starts
and ends only grow). So backward is the same op in its transposed form, and
the transposed form's backward is the op again: any order of derivative,
and forward mode is the op applied to the tangent.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ._util import xp_for


class WindowPlan:
    """The windows of one axis (size ``n`` into ``out``), read offset by offset:
    ``pos``/``real`` (out, longest) for the mean, ``t_pos``/``t_real`` (n, most
    windows holding one position) for its adjoint, and the windows' lengths."""

    def __init__(self, n: int, out: int) -> None:
        starts = np.arange(out) * n // out
        ends = -(-(np.arange(1, out + 1) * n) // out)
        self.lengths = ends - starts
        offsets = np.arange(self.lengths.max())
        self.pos = np.minimum(starts[:, None] + offsets, (ends - 1)[:, None])
        self.real = offsets < self.lengths[:, None]
        j = np.arange(n)[:, None]
        holds = (starts[None, :] <= j) & (j < ends[None, :])           # (n, out)
        counts, first = holds.sum(1), holds.argmax(1)
        offsets = np.arange(counts.max())
        self.t_pos = np.minimum(first[:, None] + offsets, (first + counts - 1)[:, None])
        self.t_real = offsets < counts[:, None]


def _along(xp, values, axis: int):
    """A 1-D array shaped to broadcast along ``axis`` (negative) of an array."""
    return values.reshape((-1,) + (1,) * (-axis - 1))


class AdaptiveMeanAlong(Function):
    """``out[..., i, ...] = Σ_{j in window i} x[..., j, ...] / length_i`` along ``axis``;
    ``transposed``: the adjoint, ``out[j] = Σ_{windows i holding j} x[i] / length_i``."""

    raw = True
    tangent_rule = "linear"
    name = "adaptive_avg_pool3d"

    @staticmethod
    def forward(ctx, x, axis: int, plan: WindowPlan, transposed: bool):
        xp = xp_for(x)
        ctx.axis, ctx.plan, ctx.transposed = axis, plan, transposed
        lengths = _along(xp, xp.asarray(plan.lengths, dtype=x.dtype), axis)
        if transposed:
            x, pos, real = x / lengths, plan.t_pos, plan.t_real
        else:
            pos, real = plan.pos, plan.real
        total = None
        for k in range(pos.shape[1]):
            part = xp.take(x, xp.asarray(pos[:, k]), axis=axis)
            if not real[:, k].all():
                part = xp.where(_along(xp, xp.asarray(real[:, k]), axis), part, 0)
            if total is None:
                total = part
            else:
                total += part
        return total if transposed else total / lengths

    @staticmethod
    def backward(ctx, grad):
        return (AdaptiveMeanAlong.apply(grad, ctx.axis, ctx.plan, not ctx.transposed),
                None, None, None)
