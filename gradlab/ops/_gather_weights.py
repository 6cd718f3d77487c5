"""Weighted sums of gathered taps: the inner loop of ``grid_sample``, as three ops.

Interpolating at a point is ``out[n, c, p] = Σ_t w[n, t, p] · x[n, c, tap(n, t, p)]``:
every channel reads the same taps with the same weights. Written with generic
ops (``gather`` on an index expanded over channels, a ``where`` for taps off
the image, a product and a sum) that is several full-size intermediates and
a multi-dimensional scatter-add in backward; here it is one op whose forward
is ONE flat ``take`` and whose input gradient is ONE flat ``add.at``.

* :class:`Taps` holds each tap's position in the flattened image (N, K), with
  the value ``S`` (one past the end) for a tap off the image. The image is
  read with a zero appended at position ``S``, so such a tap reads 0 and its
  gradient lands on the appended slot, which is dropped: no masks needed.
* :class:`TapGather` ``x -> x[taps]`` and :class:`TapScatter` (scatter-add
  back) are each other's backward, so any order of derivative works.
* :class:`TapSum` is the weighted sum; its backward is written with the two
  above and tensor ops, so double backward works too:
  d/dx = scatter(grad · w), d/dw = Σ_c grad · x[taps].
  All three are linear in each tensor input: forward mode is the op applied to
  the tangents (``tangent_rule``).

(Flat ``add.at`` with 1-D int indices: ~1 ms for 400k adds with NumPy 2, about 3x
faster than ``bincount``, which also works in float64 only.)
"""

from __future__ import annotations

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor
from ._util import add_at, xp_for
from .creation import as_tensor


class Taps:
    """Where each tap lies in a flattened (N, C, S) image: ``index`` (N, K) raw ints,
    ``S`` for a tap off the image; the same positions for every channel."""

    def __init__(self, index, size: int, channels: int) -> None:
        self.index, self.size, self.channels = index, size, channels
        self._flat = None

    def flat(self):
        """Positions in the whole padded image (N·C·(S + 1),), built once per forward."""
        if self._flat is None:
            xp = xp_for(self.index)
            n, k = self.index.shape
            rows = xp.arange(n * self.channels).reshape(n, self.channels, 1) * (self.size + 1)
            self._flat = (rows + self.index[:, None, :]).reshape(-1)
        return self._flat


class TapGather(Function):
    """``out[n, c, k] = x[n, c, index[n, k]]`` (0 for an off-image tap). Backward: scatter-add."""

    raw = True
    name = "gather"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, x, taps):
        ctx.taps = taps
        xp = xp_for(x)
        n, c, s = x.shape
        padded = xp.concatenate([x, xp.zeros((n, c, 1), dtype=x.dtype)], axis=2)
        return padded.reshape(-1).take(taps.flat()).reshape(n, c, taps.index.shape[1])

    @staticmethod
    def backward(ctx, grad):
        return TapScatter.apply(grad, ctx.taps), None


class TapScatter(Function):
    """``out[n, c, index[n, k]] += src[n, c, k]`` into zeros (N, C, S); repeats add up,
    off-image taps drop out. Backward: gather at the same positions."""

    raw = True
    name = "scatter_add"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, src, taps):
        ctx.taps = taps
        xp = xp_for(src)
        n, c = src.shape[:2]
        out = xp.zeros(n * c * (taps.size + 1), dtype=src.dtype)
        add_at(out, taps.flat(), src.reshape(-1))
        return xp.ascontiguousarray(out.reshape(n, c, taps.size + 1)[:, :, :taps.size])

    @staticmethod
    def backward(ctx, grad):
        return TapGather.apply(grad, ctx.taps), None


class TapSum(Function):
    """``out[n, c, p] = Σ_t w[n, t, p] · x[n, c, tap(n, t, p)]`` for x (N, C, S), w (N, T, P)
    and taps (N, T·P) (t-major). d/dx = scatter(grad · w); d/dw = Σ_c grad · x[taps]."""

    raw = True
    name = "grid_sampler"
    tangent_rule = "multilinear"

    @staticmethod
    def forward(ctx, x, w, taps):
        ctx.taps = taps
        ctx.save_for_backward(x, w)
        n, c = x.shape[:2]
        values = TapGather.forward(ctx, x, taps).reshape(n, c, *w.shape[1:])
        ctx.values = values  # for d/dw when backward records no graph (see backward)
        return (values * w[:, None]).sum(2)

    @staticmethod
    def backward(ctx, grad: Tensor):
        x, w = ctx.saved_tensors
        n, c = grad.shape[:2]
        grad = grad.unsqueeze(2)                                          # (N, C, 1, P)
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            spread = (grad * w.unsqueeze(1)).reshape(n, c, ctx.taps.index.shape[1])
            grad_x = TapScatter.apply(spread, ctx.taps)
        if ctx.needs_input_grad[1]:
            if is_grad_enabled():  # create_graph: x[taps] must stay a function of x
                values = TapGather.apply(x, ctx.taps).reshape(n, c, *w.shape[1:])
            else:  # a plain backward: reuse forward's read (saves a gather, ~0.5 ms)
                values = as_tensor(ctx.values, device=grad.device)
            grad_w = (values * grad).sum(1)
        return grad_x, grad_w, None
