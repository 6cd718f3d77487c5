"""The 3-D pools' kernels: max and average over (D, H, W) windows, separably.

:mod:`.pooling` pools a 2-D window in two vectorised passes (along W, then
H), each reading one strided slice of the input per kernel offset. A 3-D
window is separable the same way, in three passes (W, then H, then D), so
these ops reuse that module's helpers (``_max_along``, ``_select``,
``_spread_to_winners``) on 5-D arrays; only the padding and the index
arithmetic are new here. No copies of the windows are ever made.

* max: each pass keeps which offset won (the first max along that axis, or
  PyTorch's last NaN); passes in the order W, H, D pick the first max in
  (d, h, w) scan order, PyTorch's choice on ties. Backward spreads the
  gradient back through the three passes to the winners (:class:`MaxPool3dScatter`),
  whose adjoint is :class:`MaxPool3dGather`: each other's backward, so double
  backward and forward mode (the tangent read at the winners) come with them.
* avg: window sums along W, H, D, times 1/divisor; backward adds each
  gradient / divisor onto its window (:class:`AvgPool3dBackward`), and its
  backward is the pool again. Both are linear: forward mode applies the op to
  the tangent.
"""

from __future__ import annotations

import dataclasses

from ..autograd.function import Function
from ._util import xp_for
from .pooling import PoolGeometry, _max_along, _offset, _saveable, _select, _spread_to_winners


class Geometry3d(PoolGeometry):
    """A 3-D pool's windows; ``tiled`` as :class:`PoolGeometry`'s, for three dims (then the
    backward writes each offset's slice instead of adding into zeros)."""

    @property
    def tiled(self) -> bool:
        return self.stride == self.kernel and self.dilation == (1, 1, 1)


def geometry_3d(geo: PoolGeometry) -> Geometry3d:
    return Geometry3d(**{f.name: getattr(geo, f.name) for f in dataclasses.fields(geo)})


def _to_buffer(xp, x, geo, fill):
    """``x`` (N, C, D, H, W) padded with ``fill`` (or cropped) to the windows' extent."""
    buffer = geo.buffer
    befores = [p[0] for p in geo.pads]
    if not any(befores) and all(b <= s for b, s in zip(buffer, geo.in_size)):
        return x[:, :, :buffer[0], :buffer[1], :buffer[2]]
    buf = xp.full(x.shape[:2] + buffer, fill, dtype=x.dtype)
    kept = [min(s, b - p) for s, b, p in zip(geo.in_size, buffer, befores)]
    buf[(Ellipsis,) + tuple(slice(p, p + k) for p, k in zip(befores, kept))] = \
        x[(Ellipsis,) + tuple(slice(0, k) for k in kept)]
    return buf


def _from_buffer(xp, buf, geo):
    """``_to_buffer``'s adjoint: crop the padding; zeros where the buffer cropped x."""
    befores = [p[0] for p in geo.pads]
    kept = [min(s, b - p) for s, b, p in zip(geo.in_size, buf.shape[2:], befores)]
    inner = buf[(Ellipsis,) + tuple(slice(p, p + k) for p, k in zip(befores, kept))]
    if tuple(kept) == tuple(geo.in_size):
        return xp.ascontiguousarray(inner)
    out = xp.zeros(buf.shape[:2] + tuple(geo.in_size), dtype=buf.dtype)
    out[(Ellipsis,) + tuple(slice(0, k) for k in kept)] = inner
    return out


def _max_pool(xp, buf, geo, exact_nan=False):
    """Window maxima and the winning offsets of the passes: W (N, C, Db, Hb, Ow),
    H (N, C, Db, Oh, Ow) and D (N, C, Od, Oh, Ow)."""
    along_w, won_w = _max_along(xp, buf, 4, geo, exact_nan)
    along_h, won_h = _max_along(xp, along_w, 3, geo, exact_nan)
    out, won_d = _max_along(xp, along_h, 2, geo, exact_nan)
    return out, (won_d, won_h, won_w)


def _pick(xp, won, axis, geo, k):
    """``won`` (a later pass's winners) read through the window offsets along ``axis``."""
    return [_offset(won, axis, j, geo) for j in range(k)]


def _flat_index(xp, won, geo):
    """Each max's flat index into D·H·W, int64 (PyTorch's ``return_indices``)."""
    won_d, won_h, won_w = won
    kd, kh, _ = geo.kernel
    w_after_h = _select(xp, _pick(xp, won_w, 3, geo, kh), won_h)          # (N, C, Db, Oh, Ow)
    col = _select(xp, _pick(xp, w_after_h, 2, geo, kd), won_d)
    row = _select(xp, _pick(xp, won_h, 2, geo, kd), won_d)
    position = []
    for a, offset in enumerate((won_d, row, col)):
        start = xp.arange(geo.out_size[a]) * geo.stride[a] - geo.pads[a][0]
        start = start.reshape((-1,) + (1,) * (2 - a))
        position.append(offset.astype(xp.int64) * geo.dilation[a] + start)
    d, h, w = geo.in_size
    return (position[0] * h + position[1]) * w + position[2]


class MaxPool3d(Function):
    """Max over each window (and its flat D·H·W index if ``want_indices``).

    d/dx = the gradient, put at the window's max (its first, in scan order).
    """

    raw = True
    name = "max_pool3d"
    node_name = "MaxPool3DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, geo, want_indices):
        xp = xp_for(x)
        buf = _to_buffer(xp, x, geo, -xp.inf)
        out, won = _max_pool(xp, buf, geo)
        if not (want_indices or ctx.needs_input_grad):
            return out
        if out.size and xp.isnan(out.max()):  # rare: then find the NaN PyTorch picks
            out, won = _max_pool(xp, buf, geo, exact_nan=True)
        if ctx.needs_input_grad:
            ctx.geo = geo
            ctx.save_for_backward(*(_saveable(xp, w, k) for w, k in zip(won, geo.kernel)))
        if not want_indices:
            return out
        indices = _flat_index(xp, won, geo)
        ctx.mark_non_differentiable(indices)
        return out, indices

    @staticmethod
    def backward(ctx, grad, *_grad_indices):
        return MaxPool3dScatter.apply(grad, ctx.geo, *ctx.saved_tensors), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: ẏ = ẋ at each window's max (the indices, if any, have none)."""
        tangent = MaxPool3dGather.apply(t, ctx.geo, *ctx.saved_tensors)
        return (tangent, None) if len(ctx.results) == 2 else tangent


class MaxPool3dScatter(Function):
    """max_pool3d's backward: each gradient to its window's max, back through the D, H and
    W passes; overlapping windows add. Linear; its adjoint is :class:`MaxPool3dGather`."""

    raw = True
    tangent_rule = "linear"
    name, node_name = "max_pool3d_backward", "MaxPool3DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, geo, won_d, won_h, won_w):
        xp = xp_for(grad)
        ctx.geo = geo
        ctx.save_for_backward(won_d, won_h, won_w)
        db, hb, wb = geo.buffer
        grad = _spread_to_winners(xp, grad, won_d, 2, db, geo)
        grad = _spread_to_winners(xp, grad, won_h, 3, hb, geo)
        grad = _spread_to_winners(xp, grad, won_w, 4, wb, geo)
        return _from_buffer(xp, grad, geo)

    @staticmethod
    def backward(ctx, grad):
        return (MaxPool3dGather.apply(grad, ctx.geo, *ctx.saved_tensors),) + (None,) * 4


class MaxPool3dGather(Function):
    """The value at each window's max (winners fixed): :class:`MaxPool3dScatter`'s adjoint."""

    raw = True
    tangent_rule = "linear"
    name = "max_pool3d_gather"

    @staticmethod
    def forward(ctx, x, geo, won_d, won_h, won_w):
        xp = xp_for(x)
        ctx.geo = geo
        ctx.save_for_backward(won_d, won_h, won_w)
        values = _to_buffer(xp, x, geo, 0)
        for axis, won in ((4, won_w), (3, won_h), (2, won_d)):
            values = _select(xp, _pick(xp, values, axis, geo, geo.kernel[axis - 2]), won)
        return values

    @staticmethod
    def backward(ctx, grad):
        return (MaxPool3dScatter.apply(grad, ctx.geo, *ctx.saved_tensors),) + (None,) * 4


def _window_sums(xp, buf, geo):
    """Σ over each window, separably: along W, then H, then D."""
    for axis in (4, 3, 2):
        parts = [_offset(buf, axis, k, geo) for k in range(geo.kernel[axis - 2])]
        if len(parts) > 1:
            buf = parts[0] + parts[1]
            for part in parts[2:]:
                buf += part
        else:
            buf = parts[0]
    return buf.copy() if geo.kernel == (1, 1, 1) else buf  # (a fresh array, not x's view)


def _spread(xp, grad, geo):
    """``_window_sums``' adjoint: each value added onto every element of its window."""
    for axis in (2, 3, 4):
        shape = grad.shape[:axis] + (geo.buffer[axis - 2],) + grad.shape[axis + 1:]
        out = xp.zeros(shape, dtype=grad.dtype)
        for k in range(geo.kernel[axis - 2]):
            _offset(out, axis, k, geo)[...] += grad
        grad = out
    return grad


class AvgPool3d(Function):
    """Σ window / divisor (``divisor`` a (Do, Ho, Wo) NumPy array).

    d/dx = each gradient / its divisor, spread over its window. Linear (jvp: the op of ẋ).
    """

    raw = True
    tangent_rule = "linear"
    name, node_name = "avg_pool3d", "AvgPool3DBackward0"

    @staticmethod
    def forward(ctx, x, geo, divisor):
        xp = xp_for(x)
        ctx.geo, ctx.divisor = geo, divisor
        out = _window_sums(xp, _to_buffer(xp, x, geo, 0), geo)
        out *= xp.asarray(1.0 / divisor, dtype=x.dtype)
        return out

    @staticmethod
    def backward(ctx, grad):
        return AvgPool3dBackward.apply(grad, ctx.geo, ctx.divisor), None, None


class AvgPool3dBackward(Function):
    """avg_pool3d's backward (its adjoint); its own backward is the pool again. Linear."""

    raw = True
    tangent_rule = "linear"
    name, node_name = "avg_pool3d_backward", "AvgPool3DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, geo, divisor):
        xp = xp_for(grad)
        ctx.geo, ctx.divisor = geo, divisor
        scaled = grad * xp.asarray(1.0 / divisor, dtype=grad.dtype)
        return _from_buffer(xp, _spread(xp, scaled, geo), geo)

    @staticmethod
    def backward(ctx, grad):
        return AvgPool3d.apply(grad, ctx.geo, ctx.divisor), None, None
