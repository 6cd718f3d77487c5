"""Pairs of rows and groups of channels: pdist and channel_shuffle.

``pdist`` is the p-norm distance of every pair of rows i < j of an (N, M)
matrix, in the order of ``triu_indices(N, N, 1)``: N(N-1)/2 numbers, the
upper triangle of ``cdist(x, x)`` without computing the rest. With
diff = x_i - x_j and d = ‖diff‖_p, the derivative of d along diff is

    p = 1: sign(diff)      p = 2: diff / d      p = inf: sign(diff) where |diff| = d
    else:  sign(diff) · (|diff| / d)^(p-1)      p = 0 (a count): 0

and, as in PyTorch, 0 where d = 0 (the norm's kink), where diff = 0 for
p < 1 (|diff|^(p-1) would be infinite), and for p = inf on every
coordinate that reaches the max (ties all get the full gradient, not a
share). It is one op, ``Pdist``, because those rules are its own: norm's
gradient splits an inf-norm tie. Row i gets + that times the pair's
gradient and row j gets -, added over all its pairs.

``channel_shuffle`` (ShuffleNet) splits the C channels of (N, C, *) into
``groups`` groups and deals them out like cards: channel k of group g
goes to position k·groups + g. That is a reshape to (N, g, C/g, *), a
transpose of those two dims and a reshape back, so its gradient is the
reverse move, by construction.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .products import p_norm_of_last
from .selection import where

__all__ = ["pdist", "channel_shuffle", "native_channel_shuffle"]
FUNCTIONAL = ["pdist", "channel_shuffle", "native_channel_shuffle"]
TENSOR_METHODS: list = []


# --- pdist ------------------------------------------------------------------------------------

def _pairs(n: int, like: Tensor) -> tuple[Tensor, Tensor]:
    """Rows i and j of every pair i < j, row by row (``triu_indices(n, n, 1)``)."""
    from .diagonals import triu_indices

    i, j = triu_indices(n, n, 1, device=like.device)
    return i, j


def _weighted_derivative(diff: Tensor, dist: Tensor, weight: Tensor, p: float) -> Tensor:
    """weight · ∂d/∂diff for each pair and coordinate, exactly 0 where the derivative is 0
    (a ``where``, so a NaN or inf weight stops there, too). ``dist`` is d with a trailing
    size-1 dim; denominators are never 0, so no NaN appears even in double backward."""
    nonzero = diff != 0
    if p == 1:
        return where(nonzero, weight * diff.sign(), 0.0)
    positive = dist != 0
    safe_dist = where(positive, dist, 1.0)
    if p == 2:
        return where(positive, weight * diff / safe_dist, 0.0)
    if math.isinf(p):
        return where(nonzero & (diff.abs() == dist), weight * diff.sign(), 0.0)
    keep = positive & nonzero  # (p > 1 has derivative 0 at diff = 0 anyway)
    ratio = where(keep, diff.abs() / safe_dist, 1.0)
    return where(keep, weight * diff.sign() * ratio ** (p - 1), 0.0)


class Pdist(Function):
    """d_k = ‖x_i - x_j‖_p for the k-th pair (i < j).

    d/dx_i = Σ_k g_k · ∂d_k/∂diff_k over the pairs with first row i, minus the same sum
    over the pairs with second row i (see the module doc for ∂d/∂diff).
    """

    raw = True

    @staticmethod
    def forward(ctx, x, p):
        xp = xp_for(x)
        i, j = (xp.asarray(k) for k in np.triu_indices(x.shape[0], 1))
        out = p_norm_of_last(xp, xp.abs(x[i] - x[j]), p).astype(x.dtype, copy=False)
        ctx.p = p
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, d = ctx.saved_tensors
        if ctx.p == 0:  # a count of differing coordinates: flat
            return grad.new_zeros(tuple(x.shape)), None
        i, j = _pairs(x.shape[0], x)
        per_pair = _weighted_derivative(x[i] - x[j], d.unsqueeze(-1), grad.unsqueeze(-1),
                                        ctx.p)
        return per_pair.new_zeros(tuple(x.shape)).index_add(0, i, per_pair).index_add(
            0, j, per_pair, alpha=-1), None

    @staticmethod
    def jvp(ctx, t, _):
        """ḋ_k = Σ_m ∂d_k/∂diff_km · (ẋ_i - ẋ_j)_m."""
        x, _p = ctx.primals
        d = ctx.results[0]
        if ctx.p == 0:
            return d * 0.0
        i, j = _pairs(x.shape[0], x)
        return _weighted_derivative(x[i] - x[j], d.unsqueeze(-1), t[i] - t[j], ctx.p).sum(-1)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances of every pair of rows i < j of an (N, M) matrix: N(N-1)/2 of
    them, in ``triu_indices(N, N, 1)`` order (``cdist(x, x, p)``'s upper triangle)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pdist: expected a tensor, got {type(input).__name__}")
    if input.ndim != 2:
        raise RuntimeError(
            f"pdist: expected a 2-D input (N rows of M features), got shape "
            f"{tuple(input.shape)}. Fix: for a batch use cdist(x, x); for one vector of N "
            f"numbers use x.unsqueeze(-1)")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist: only floating point inputs are supported, got "
                           f"{input.dtype}. Fix: convert with .float()")
    if not p >= 0:
        raise RuntimeError(f"pdist: p must be >= 0 (1: Manhattan, 2: Euclidean, inf: "
                           f"Chebyshev, 0: the count of differing features), got {p}")
    return Pdist.apply(input, float(p))


# --- channel_shuffle --------------------------------------------------------------------------

def _channel_shuffle(op: str, input, groups) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(input).__name__}")
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)):
        raise TypeError(f"{op}: groups must be an int, got {type(groups).__name__} "
                        f"({groups!r})")
    if groups <= 0:
        raise RuntimeError(f"{op}: groups (the number of channel groups) must be positive, "
                           f"got {groups}")
    if input.ndim <= 2:
        raise RuntimeError(
            f"{op}: expected an input of shape (N, C, *) with more than 2 dims, got shape "
            f"{tuple(input.shape)}. Fix: add a batch dim with x.unsqueeze(0), or a spatial "
            f"one with x.unsqueeze(-1)")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(
            f"{op}: the number of channels (dim 1 of shape {tuple(input.shape)}) is {c}, "
            f"which is not divisible by groups={groups}: each group takes an equal share. "
            f"Fix: use a groups that divides {c}")
    g = int(groups)
    dealt = input.reshape(n, g, c // g, *rest).transpose(1, 2)  # (N, C/g, g, *)
    return dealt.reshape(n, c, *rest)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with channel k of group g (of ``groups``) moved to position k·groups + g."""
    return _channel_shuffle("channel_shuffle", input, groups)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle`` under the name of PyTorch's kernel (the same result)."""
    return _channel_shuffle("native_channel_shuffle", input, groups)
