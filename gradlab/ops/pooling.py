"""Pooling: max_pool1d/2d, and the window geometry every pool shares.

(Average pooling: :mod:`.avg_pooling`; the adaptive pools: :mod:`.adaptive_pooling`.)

A pool reduces each window of the input to one value. The windows are
found without copying them: for each kernel offset ``j``, the elements at
offset ``j`` of every window are one strided slice of the input. And a 2-D
window's max (or sum) is separable: reduce along W first (``kw`` slices),
then along H (``kh`` slices), ``kh + kw`` vectorised steps in all.

* max:  out = max over the window. The gradient goes to the position of the
  max (the first one, in row-major order, if several tie): backward is a
  scatter, and its own backward a gather. Forward keeps which offset won
  each of its two steps; backward retraces them, ``kh + kw`` vectorised
  selects (writes where the windows tile the input, adds where they may
  overlap). The flat int64 indices are only made for ``return_indices``.
  Forward mode: the output moves as its winner moves, so the tangent is
  the input's tangent gathered at the same positions (winners fixed).

Everything runs in 2-D; a 1-D pool is a 2-D one with height 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import as_bits, xp_for
from .convolution import _tuple

__all__ = ["max_pool1d", "max_pool2d"]
FUNCTIONAL = ["max_pool1d", "max_pool2d"]
TENSOR_METHODS: list = []


@dataclass(frozen=True)
class PoolGeometry:
    """Windows of a 2-D pool: ``pads`` are (before, after) per dim, ``after`` may crop (< 0)."""

    in_size: tuple
    kernel: tuple
    stride: tuple
    pads: tuple
    dilation: tuple
    out_size: tuple
    spatial: int

    @property
    def buffer(self) -> tuple:
        """The padded (or cropped) input that the windows exactly cover."""
        return tuple((o - 1) * s + d * (k - 1) + 1 for o, s, d, k in
                     zip(self.out_size, self.stride, self.dilation, self.kernel))

    @property
    def tiled(self) -> bool:
        """The windows tile the buffer: no overlaps, no gaps (stride = kernel, no dilation)."""
        return self.stride == self.kernel and self.dilation == (1, 1)


def _as_2d(a, geo):
    return a if geo.spatial == 2 else a.reshape(a.shape[0], a.shape[1], 1, a.shape[2])


def _from_2d(a, geo):
    return a if geo.spatial == 2 else a.reshape(a.shape[0], a.shape[1], a.shape[3])


def _to_buffer(xp, x, geo, fill):
    """``x`` (N, C, H, W) padded with ``fill`` (or cropped) to the buffer; a view if it can."""
    (pt, _), (pl, _) = geo.pads
    hb, wb = geo.buffer
    h, w = geo.in_size
    if pt == 0 and pl == 0 and hb <= h and wb <= w:
        return x[:, :, :hb, :wb]
    buf = xp.full(x.shape[:2] + (hb, wb), fill, dtype=x.dtype)
    hh, ww = min(h, hb - pt), min(w, wb - pl)
    buf[:, :, pt:pt + hh, pl:pl + ww] = x[:, :, :hh, :ww]
    return buf


def _from_buffer(xp, buf, geo):
    """The gradient of ``_to_buffer``: crop the padding, zero what was cropped."""
    (pt, _), (pl, _) = geo.pads
    h, w = geo.in_size
    hh, ww = min(h, buf.shape[2] - pt), min(w, buf.shape[3] - pl)
    if hh == h and ww == w:
        return xp.ascontiguousarray(buf[:, :, pt:pt + h, pl:pl + w])
    out = xp.zeros(buf.shape[:2] + (h, w), dtype=buf.dtype)
    out[:, :, :hh, :ww] = buf[:, :, pt:pt + hh, pl:pl + ww]
    return out


def _offset(a, axis: int, k: int, geo):
    """The elements at kernel offset ``k`` of every window along ``axis`` (2 = H, 3 = W)."""
    d = axis - 2
    start = k * geo.dilation[d]
    stop = start + geo.stride[d] * (geo.out_size[d] - 1) + 1
    return a[(slice(None),) * axis + (slice(start, stop, geo.stride[d]),)]


def _max_along(xp, a, axis, geo, exact_nan=False):
    """Max over the windows along one axis, and which offset won (int8; the first max wins).

    PyTorch lets a NaN win (the last NaN of the window); ``exact_nan``
    follows that, at the price of one more step.
    """
    best = _offset(a, axis, 0, geo)
    won = None
    for k in range(1, geo.kernel[axis - 2]):
        candidate = _offset(a, axis, k, geo)
        take = candidate > best  # strictly greater: on a tie the earlier offset stays
        if exact_nan:
            take |= xp.isnan(candidate)
        best = xp.maximum(best, candidate)  # NaN-propagating, like PyTorch's value
        if won is None and geo.kernel[axis - 2] == 2:
            won = take.view(xp.int8)  # offsets 0 and 1: the mask itself, as bytes
        else:
            won = xp.zeros(best.shape, dtype=xp.int8) if won is None else won
            xp.copyto(won, k, where=take)
    if won is None:  # a window of one element
        best, won = best.copy(), xp.zeros(best.shape, dtype=xp.int8)
    elif geo.pads[axis - 2][0]:
        _first_inside_on_ties(xp, best, won, axis, geo)
    return best, won


def _first_inside_on_ties(xp, best, won, axis, geo) -> None:
    """A window of -inf keeps its first position *inside* the input, as PyTorch's does.

    The padding holds -inf too, so with strict ``>`` a window whose real values
    are all -inf would keep offset 0, in the padding (a negative index; the
    gradient lost). Only the first few windows along ``axis`` start in the padding.
    """
    d = axis - 2
    pad, stride, dilation = geo.pads[d][0], geo.stride[d], geo.dilation[d]
    for j in range(min(-(-pad // stride), geo.out_size[d])):  # windows starting before 0
        first = -((j * stride - pad) // dilation)  # ceil((pad - j·stride) / dilation)
        at = (slice(None),) * axis + (j,)
        xp.copyto(won[at], first, where=(best[at] == -xp.inf) & (won[at] < first))


def _max_pool_2d(xp, buf, geo, exact_nan=False):
    """The max of each window; the winning row, and the winning column of every row.

    Along W first, then along H: the first max of each row, then the first
    row holding the max, which is the first max in row-major order (PyTorch's
    choice on ties; the other order would not be).
    """
    rows, col_won = _max_along(xp, buf, 3, geo, exact_nan)  # (N, C, Hb, Ow)
    out, row_won = _max_along(xp, rows, 2, geo, exact_nan)  # (N, C, Oh, Ow)
    return out, row_won, col_won


# Selecting by the winning offsets, exactly and fast: ``bits & -1`` keeps a value's bits
# (NaN and inf included), ``bits & 0`` makes +0.0 (see ``keep_where``).

def _saveable(xp, won, k):
    """The winning offsets as a dtype tensors have: bool for windows of 2, else int32."""
    return won.view(xp.bool_) if k <= 2 else won.astype(xp.int32)


def _is_winner(xp, won, k):
    """-1 (all bits set) where offset ``k`` won, 0 elsewhere: int8, widened by the AND.

    A window of two saves ``won`` as bool: True where offset 1 won. Its bytes
    are the answer already (one int8 op, not a comparison of bools with an
    int, which NumPy runs ~10x slower).
    """
    if won.dtype == xp.bool_:
        as_int = won.view(xp.int8)
        return -as_int if k else as_int - 1
    return -(won == k).view(xp.int8)


def _select(xp, parts, won):
    """``parts[won]`` elementwise: one value of each window, the one at its winning offset."""
    picked = xp.bitwise_and(as_bits(parts[0]), _is_winner(xp, won, 0))
    for k in range(1, len(parts)):
        picked |= xp.bitwise_and(as_bits(parts[k]), _is_winner(xp, won, k))
    return picked.view(parts[0].dtype)


def _spread_to_winners(xp, grad, won, axis, size, geo):
    """``_select``'s adjoint along ``axis``: each value to its winning offset, 0 elsewhere."""
    shape = grad.shape[:axis] + (size,) + grad.shape[axis + 1:]
    if geo.tiled:  # the offsets' slices tile ``out``: write each one
        out = xp.empty(shape, dtype=grad.dtype)
        for k in range(geo.kernel[axis - 2]):
            xp.bitwise_and(as_bits(grad), _is_winner(xp, won, k),
                           out=as_bits(_offset(out, axis, k, geo)))
        return out
    out = xp.zeros(shape, dtype=grad.dtype)  # windows may overlap (add up) or leave gaps
    for k in range(geo.kernel[axis - 2]):
        _offset(out, axis, k, geo)[...] += xp.bitwise_and(
            as_bits(grad), _is_winner(xp, won, k)).view(grad.dtype)
    return out


def _flat_index(xp, row_won, col_won, geo):
    """The winners' positions as flat (H·W) indices into the input plane, int64 (as PyTorch)."""
    col_won = _select(xp, [_offset(col_won, 2, k, geo) for k in range(geo.kernel[0])], row_won)
    (pt, _), (pl, _) = geo.pads
    oh, ow = geo.out_size
    r = row_won.astype(xp.int64) * geo.dilation[0] - pt + xp.arange(0, oh * geo.stride[0],
                                                                    geo.stride[0])[:, None]
    c = col_won.astype(xp.int64) * geo.dilation[1] - pl + xp.arange(0, ow * geo.stride[1],
                                                                    geo.stride[1])
    return r * geo.in_size[1] + c


class MaxPool(Function):
    """Max over each window (and its flat H·W index if ``want_indices``).

    For backward it keeps where each max is: the offsets that won each step.
    d/dx = the gradient, put at the max's position (its window's first max).
    """

    raw = True
    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, geo, want_indices):
        xp = xp_for(x)
        buf = _to_buffer(xp, _as_2d(x, geo), geo, -xp.inf)
        out, row_won, col_won = _max_pool_2d(xp, buf, geo)
        if not (want_indices or ctx.needs_input_grad):
            return _from_2d(out, geo)
        if out.size and xp.isnan(out.max()):  # rare: then find the NaN PyTorch picks
            out, row_won, col_won = _max_pool_2d(xp, buf, geo, exact_nan=True)
        if ctx.needs_input_grad:
            ctx.geo = geo
            ctx.save_for_backward(_saveable(xp, row_won, geo.kernel[0]),
                                  _saveable(xp, col_won, geo.kernel[1]))
        if not want_indices:
            return _from_2d(out, geo)
        indices = _from_2d(_flat_index(xp, row_won, col_won, geo), geo)
        ctx.mark_non_differentiable(indices)
        return _from_2d(out, geo), indices

    @staticmethod
    def backward(ctx, grad, *_grad_indices):
        return MaxPoolScatter.apply(grad, ctx.geo, *ctx.saved_tensors), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: ẏ = ẋ at each window's max position (the indices, if any, have none)."""
        tangent = MaxPoolGather.apply(t, ctx.geo, *ctx.saved_tensors)
        return (tangent, None) if len(ctx.results) == 2 else tangent


class MaxPool1d(MaxPool):
    name = "max_pool1d"


class MaxPool2d(MaxPool):
    name = "max_pool2d"


class MaxPoolScatter(Function):
    """max pool's backward: each gradient put at its window's max; overlapping windows add.

    Back through the two steps of ``_max_pool_2d`` (H, then W), given the
    offsets that won. Linear in the gradient; its adjoint (and so its
    backward) is a gather. jvp: the scatter of the gradient's tangent.
    """

    raw = True
    tangent_rule = "linear"
    name, node_name = "max_pool_backward", "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, geo, row_won, col_won):
        xp = xp_for(grad)
        ctx.geo = geo
        ctx.save_for_backward(row_won, col_won)
        hb, wb = geo.buffer
        rows = _spread_to_winners(xp, _as_2d(grad, geo), row_won, 2, hb, geo)
        full = _spread_to_winners(xp, rows, col_won, 3, wb, geo)
        return _from_2d(_from_buffer(xp, full, geo), geo)

    @staticmethod
    def backward(ctx, grad):
        return MaxPoolGather.apply(grad, ctx.geo, *ctx.saved_tensors), None, None, None


class MaxPoolGather(Function):
    """The value at each window's max position (winners fixed): MaxPoolScatter's adjoint.

    Linear in x, so jvp: the gather of x's tangent.
    """

    raw = True
    tangent_rule = "linear"
    name = "max_pool_gather"

    @staticmethod
    def forward(ctx, x, geo, row_won, col_won):
        xp = xp_for(x)
        ctx.geo = geo
        ctx.save_for_backward(row_won, col_won)
        buf = _to_buffer(xp, _as_2d(x, geo), geo, 0)
        rows = _select(xp, [_offset(buf, 3, k, geo) for k in range(geo.kernel[1])], col_won)
        out = _select(xp, [_offset(rows, 2, k, geo) for k in range(geo.kernel[0])], row_won)
        return _from_2d(out, geo)

    @staticmethod
    def backward(ctx, grad):
        return MaxPoolScatter.apply(grad, ctx.geo, *ctx.saved_tensors), None, None, None


# --- argument checks and the public functions ------------------------------------------------

def _geometry(op, input, kernel_size, stride, padding, dilation, ceil_mode, spatial):
    """Check the arguments and work out the windows (PyTorch's output-size rule)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(input).__name__}")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{op}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input, "
            f"got shape {tuple(input.shape)}. Fix: reshape it to (N, C, "
            f"{', '.join('HW'[2 - spatial:])})")
    kernel = _tuple(kernel_size, spatial, "kernel_size", op)
    stride = kernel if stride is None or stride == () or stride == [] else \
        _tuple(stride, spatial, "stride", op)
    padding = _tuple(padding, spatial, "padding", op)
    dilation = _tuple(dilation, spatial, "dilation", op)
    for what, values in (("kernel_size", kernel), ("stride", stride), ("dilation", dilation)):
        if any(v <= 0 for v in values):
            raise RuntimeError(f"{op}: {what} must be positive, got {values}")
    size = tuple(input.shape[-spatial:])
    out = []
    for n, k, s, p, d in zip(size, kernel, stride, padding, dilation):
        reach = d * (k - 1) + 1
        if p < 0 or 2 * p > k:
            raise RuntimeError(
                f"{op}: padding {padding} must be between 0 and half the kernel_size {kernel}, "
                f"so that every window holds an input value. Fix: use padding <= {k // 2}")
        o = (n + 2 * p - reach + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (o - 1) * s >= n + p:  # the last window must start inside
            o -= 1
        if o < 1:
            raise RuntimeError(
                f"{op}: input of shape {tuple(input.shape)} is too small for kernel_size "
                f"{kernel} (dilation {dilation}, padding {padding}): the output size would be "
                f"{o}. Fix: use a smaller kernel or more padding")
        out.append(o)
    lead = (lambda t, one: (one,) + tuple(t)) if spatial == 1 else (lambda t, one: tuple(t))
    pads = tuple((p, (o - 1) * s + d * (k - 1) + 1 - n - p) for n, k, s, p, d, o in
                 zip(size, kernel, stride, padding, dilation, out))
    return PoolGeometry(lead(size, 1), lead(kernel, 1), lead(stride, 1), lead(pads, (0, 0)),
                        lead(dilation, 1), lead(out, 1), spatial)


def _run(fn, input, spatial, *args):
    """Apply a pool Function; an unbatched (C, ...) input gets a batch dim for the call."""
    unbatched = input.ndim == spatial + 1
    if unbatched:
        input = input.unsqueeze(0)
    result = fn.apply(input, *args)
    if not unbatched:
        return result
    if isinstance(result, tuple):
        return tuple(r if r is None else r.squeeze(0) for r in result)
    return result.squeeze(0)


def _max_pool(fn, op, input, kernel_size, stride, padding, dilation, ceil_mode,
              return_indices, spatial):
    geo = _geometry(op, input, kernel_size, stride, padding, dilation, ceil_mode, spatial)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {input.dtype}. "
                           f"Fix: convert with .float()")
    return _run(fn, input, spatial, geo, return_indices)  # (out, indices) if return_indices


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of (N, C, L); ``stride`` defaults to ``kernel_size``."""
    return _max_pool(MaxPool1d, "max_pool1d", input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices, 1)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of (N, C, H, W); padding counts as -inf; ties go to the first max.

    With ``return_indices`` also the flat index (into H·W) of each max.
    """
    return _max_pool(MaxPool2d, "max_pool2d", input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices, 2)
