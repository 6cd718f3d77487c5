"""``special.zeta(x, q)``: the Hurwitz zeta function ζ(x, q) = Σ_{k>=0} (k + q)^(-x).

ζ(x, 1) is Riemann's ζ(x); ζ(n + 1, q) = (-1)^(n+1) ψ⁽ⁿ⁾(q)/n! links it to polygamma.
The sum converges for x > 1 and slowly (like N^(1-x)), so it is cut after N
terms, N making w = q + N >= max(10, (x + 24)/2), and the rest is the
Euler-Maclaurin formula:

    Σ_{k>=N} (k+q)^(-x) ≈ w^(1-x)/(x-1) + w^(-x)/2
                          + Σ_j B₂ⱼ/(2j)! · x(x+1)…(x+2j-2) · w^(-x-2j+1),   j = 1..12,

(its terms shrink about like ((x + 2j)/(2πw))^(2j)). Computed in float64 and cast back.

Edges as PyTorch (Cephes): inf at x = 1, NaN for x < 1; inf where q is 0 or a
negative integer (a pole); NaN for other q < 0 unless x is an integer (then
(k + q)^(-x) is real); the sum for q < -10⁵ is not attempted (NaN).

Derivative: PyTorch defines only ∂/∂q = -x·ζ(x + 1, q) (∂/∂x raises there, and here).
"""

from __future__ import annotations

import math
from numbers import Number

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import tangent_sum, unbroadcast, xp_for
from .creation import full
from .trigonometry import float_operands

__all__: list[str] = []  # torch.special only: gradlab.special exports it
TENSOR_METHODS: list[str] = []

# B₂ⱼ/(2j)! for j = 1..12
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_EM_COEFFICIENTS = tuple(b / math.factorial(2 * j) for j, b in enumerate(_BERNOULLI, start=1))
_CUT = 10.0
_MOST_TERMS = 100_000


def _zeta_array(x_raw, q_raw):
    """ζ(x, q) on raw arrays, broadcast, in float64 and cast back."""
    xp = xp_for(x_raw if hasattr(x_raw, "shape") else q_raw)
    dtype = x_raw.dtype if hasattr(x_raw, "dtype") else q_raw.dtype
    x, q = xp.broadcast_arrays(xp.asarray(x_raw, dtype=xp.float64),
                               xp.asarray(q_raw, dtype=xp.float64))
    integer_x = x == xp.floor(x)
    summable = (x > 1) & xp.isfinite(x) & xp.isfinite(q) & (
        (q > 0) | (integer_x & (q > -_MOST_TERMS)))
    sx, sq = xp.where(summable, x, 2.0), xp.where(summable, q, 1.0)
    # N: w = q + N >= 10 and >= (x + 24)/2, so that the correction terms fall fast
    terms = xp.maximum(xp.ceil(xp.maximum(_CUT, (xp.minimum(sx, 1000.0) + 24) / 2) - sq), 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        head = xp.zeros_like(sx)
        for k in range(int(xp.max(terms)) if terms.size else 0):
            head = head + xp.where(k < terms, (sq + k) ** -sx, 0.0)
        w = sq + terms
        b = w ** -sx
        tail = b * w / (sx - 1) + b / 2
        rising = sx  # x(x+1)…(x+2j-2)
        b = b / w
        for j, c in enumerate(_EM_COEFFICIENTS, start=1):
            tail = tail + c * rising * b
            rising = rising * (sx + 2 * j - 1) * (sx + 2 * j)
            b = b / (w * w)
        out = head + tail
    # The edges, lowest precedence first
    out = xp.where(summable, out, xp.nan)
    out = xp.where(x == xp.inf, xp.where(q < 1, xp.inf, xp.where(q == 1, 1.0, xp.nan)), out)
    out = xp.where((q <= 0) & ~integer_x, xp.nan, out)
    out = xp.where((q <= 0) & (q == xp.floor(q)), xp.inf, out)
    out = xp.where(x < 1, xp.nan, out)
    out = xp.where(x == 1, xp.inf, out)
    return out.astype(dtype, copy=False)


def _no_x_derivative() -> RuntimeError:
    return RuntimeError(
        "the derivative for 'zeta' is not implemented for its first argument x: "
        "special.zeta(x, q) is differentiable only in q (∂/∂q = -x·ζ(x + 1, q)), as in "
        "PyTorch. Fix: pass x without requires_grad (x.detach())")


class Zeta(Function):
    """ζ(x, q).   ∂/∂q = -x·ζ(x + 1, q); ∂/∂x not implemented (as PyTorch)."""

    raw = True
    name, node_name = "special_zeta", "SpecialZetaBackward0"

    @staticmethod
    def forward(ctx, x, q):
        ctx.save_for_backward(x, q)
        return _zeta_array(x, q)

    @staticmethod
    def _q_derivative(x, q):
        return Zeta.apply(x + 1, q) * -x

    @staticmethod
    def backward(ctx, grad):
        x, q = ctx.saved_tensors
        shape_x, shape_q = ctx.input_shapes
        if shape_x is not None:
            raise _no_x_derivative()
        if shape_q is None:
            return None, None
        return None, unbroadcast(grad * Zeta._q_derivative(x, q), shape_q)

    @staticmethod
    def jvp(ctx, tx, tq):
        if tx is not None:
            raise _no_x_derivative()
        x, q = ctx.primals
        return tangent_sum(ctx.results[0].shape, tq * Zeta._q_derivative(x, q))


def zeta(input, other) -> Tensor:
    """The Hurwitz zeta function ζ(x = input, q = other) = Σ_{k>=0} (k + q)^(-x).

    ``zeta(x, 1.0)`` is Riemann's ζ(x). Either argument may be a number.
    Differentiable in ``other`` only: ∂/∂q = -x·ζ(x + 1, q).
    """
    if isinstance(input, Number) and isinstance(other, Number):
        raise TypeError("special.zeta: expected at least one Tensor, got two numbers. Fix: "
                        "special.zeta(gradlab.tensor(x), q)")
    x, q = float_operands(input, other)
    if not isinstance(x, Tensor):  # a number beside a tensor: a 0-d tensor of its dtype
        x = full((), x, dtype=q.dtype, device=q.device)
    if not isinstance(q, Tensor):
        q = full((), q, dtype=x.dtype, device=x.device)
    return Zeta.apply(x, q)
