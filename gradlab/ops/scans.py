"""Scans: cumprod, cummax, cummin, logcumsumexp (cumsum's relatives).

A scan keeps every partial result along one dim: out_k = a_0 ∘ a_1 ∘ ... ∘ a_k
for an associative ∘ (×, max, min, log-add-exp). Each output depends on the
inputs up to it, so each input's gradient collects from the outputs at and
after it: a sum from the other end, like cumsum's backward.

* ``cumprod``: ∂out_k/∂a_i = Π_{j<=k, j≠i} a_j. Without zeros that is out_k / a_i,
  so grad_i = (Σ_{k>=i} g_k out_k) / a_i. Dividing by a zero is wrong, so
  zeros take a second path (see ``Cumprod.backward``).
* ``cummax``/``cummin``: every output is one input, so the gradient goes back to
  ``indices`` (where each running max was found), as for ``max(dim)``.
* ``logcumsumexp``: ∂out_k/∂a_i = exp(a_i - out_k) for i <= k, summed in log space
  so nothing overflows.

Max, min and log-add-exp run as a log-depth scan (``inclusive_scan``): log2(n)
elementwise steps, each combining every value with the one ``shift`` places
before it. NumPy's ``ufunc.accumulate`` would do it in one call, but CuPy
lacks it; the scan runs on both.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ._util import check_float, xp_for
from .complex_parts import conj
from .creation import arange, zeros
from .cumulative import Cumsum
from .gather_scatter import ScatterAdd
from .reduction import dim_axis
from .reordering import flip
from .selection import where
from .sorting import picked_tangent
from .unary import exp, log

__all__ = ["cumprod", "cummax", "cummin", "logcumsumexp"]
TENSOR_METHODS = list(__all__)



def inclusive_scan(combine, a, axis: int):
    """out_k = a_0 ∘ ... ∘ a_k along ``axis`` for an associative elementwise ``combine``.

    Hillis-Steele: after the step with shift s, out_k combines the 2s values ending at k
    (fewer at the start), so log2(n) steps cover every prefix. Each step computes its
    right-hand side in full before writing, so it reads the previous step's values.
    """
    out = a.copy()
    n = a.shape[axis]
    shift = 1
    while shift < n:
        later = (slice(None),) * axis + (slice(shift, None),)
        earlier = (slice(None),) * axis + (slice(0, n - shift),)
        out[later] = combine(out[later], out[earlier])
        shift *= 2
    return out


def _is_float(a) -> bool:
    return a.dtype.kind in "fV"  # V: bfloat16


# --- cumprod ----------------------------------------------------------------------------------

class Cumprod(Function):
    """Running product out_k = Π_{i<=k} a_i.   d/da_i = Σ_{k>=i} g_k Π_{j<=k, j≠i} a_j
    (the products conjugated for complex a: each out_k is holomorphic in each a_i)."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        xp = xp_for(a)
        out = a.copy() if dim is None else xp.ascontiguousarray(xp.cumprod(a, axis=dim))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        """Without zeros: grad_i = reverse_cumsum(g · out)_i / a_i (out_k / a_i is exactly
        the product without a_i, so this is exact to every order).

        With zeros, let z be the first zero of a row. For i < z the formula above still
        holds; a_z's gradient is that of the product with a_z left out, i.e. the same sum
        over cumprod(a with a_z = 1); after z every product still contains a_z = 0, so the
        gradient is 0. That is exact for the gradient, but not for its derivative (the
        zeros after z have a nonzero derivative in a_z), so when a graph of this backward
        is being recorded (create_graph, forward-over-reverse) the products without each
        a_i are built outright instead: an (n, n) matrix per row, O(n²) memory.
        """
        a, out = ctx.saved_tensors
        dim = ctx.dim
        if dim is None or a.shape[dim] <= 1:
            return grad, None
        if not (a._data == 0).any():
            return Cumsum.apply(grad * conj(out), dim, True) / conj(a), None
        if state.enabled or state.dual is not None:
            omitted = _products_without_each(a, dim)  # [..., i, k]
            g = grad.movedim(dim, -1).unsqueeze(-2)
            return (conj(omitted) * g).sum(-1).movedim(-1, dim), None
        zero = a == 0
        zeros_so_far = Cumsum.apply(zero, dim, False)
        before = zeros_so_far == 0
        first = zero & (zeros_so_far == 1)
        # Past a zero, out (past a second zero, the product without the first) is 0: those
        # terms are masked with where, not multiplied by 0, so a NaN grad there stays out.
        grad_before = Cumsum.apply(where(before, grad, 0.0) * conj(out), dim, True) / \
            conj(where(before, a, 1.0))
        grad_first = Cumsum.apply(where(zeros_so_far <= 1, grad, 0.0) *
                                  conj(Cumprod.apply(where(first, 1.0, a), dim)), dim, True)
        return where(before, grad_before, where(first, grad_first, 0.0)), None

    @staticmethod
    def jvp(ctx, t, _):
        """jvp: ẏ_k = Σ_{i<=k} Π_{j<=k, j≠i} a_j ȧ_i; without zeros, out_k · cumsum(ȧ/a)_k."""
        a, out, dim = ctx.primals[0], ctx.results[0], ctx.dim
        if dim is None:
            return t
        if not (a._data == 0).any():
            return out * Cumsum.apply(t / a, dim, False)
        omitted = _products_without_each(a, dim)
        return (omitted * t.movedim(dim, -1).unsqueeze(-1)).sum(-2).movedim(-1, dim)


def _products_without_each(a: Tensor, dim: int) -> Tensor:
    """``P[..., i, k] = Π_{j<=k, j≠i} a_j`` for k >= i (0 for k < i), with ``dim`` moved last:
    the exact partial derivatives ∂out_k/∂a_i of cumprod, zeros included."""
    n = a.shape[dim]
    position = arange(n, device=a.device)
    rows = where(position.unsqueeze(1) == position, 1.0, a.movedim(dim, -1).unsqueeze(-2))
    products = Cumprod.apply(rows, rows.ndim - 1)  # row i: cumprod with a_i replaced by 1
    return where(position.unsqueeze(1) <= position, products, 0.0)


def cumprod(input, dim: int, *, dtype=None) -> Tensor:
    """Running products along ``dim``; integers and bools multiply as int64.

    The gradient is exact with zeros in the input (see ``Cumprod.backward``).
    """
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype.category < 2 and input.dtype is not _dt.int64:  # bool, integers
        input = input.to(_dt.int64)
    return Cumprod.apply(input, dim_axis(input, dim, "cumprod"))


# --- cummax, cummin ---------------------------------------------------------------------------

class Cummax(Function):
    """``(values, indices)``: the running max along ``dim`` and where it was found.

    Ties move the index to the latest equal value, and NaN, once seen, is the max from
    then on (its index the latest NaN), as in PyTorch. The gradient goes to ``indices``.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dim, largest):
        xp = xp_for(a)
        ctx.dim, ctx.keepdim = dim, True
        if dim is None:  # a 0-d tensor
            values, indices = a.copy(), xp.zeros((), dtype=np.int64)
        else:
            values = inclusive_scan(xp.maximum if largest else xp.minimum, a, dim)
            # Where a value equals the running max so far, it set (or tied) it; a later
            # running max is found at the latest such place, so scan those places' positions.
            found = a == values
            if _is_float(a):
                found |= xp.isnan(a)
            shape = [1] * a.ndim
            shape[dim] = a.shape[dim]
            position = xp.arange(a.shape[dim], dtype=np.int64).reshape(shape)
            indices = inclusive_scan(xp.maximum, xp.where(found, position, 0), dim)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        (indices,) = ctx.saved_tensors
        if ctx.dim is None:
            return grad, None, None
        empty = zeros(ctx.input_shapes[0], dtype=grad.dtype, device=grad.device)
        return ScatterAdd.apply(empty, ctx.dim, indices, grad), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: each value's tangent is ȧ at its index (which has none)."""
        return picked_tangent(ctx, t), None


class Cummin(Cummax):
    """Cummax with largest=False; the op gets its own name in the graph."""


def cummax(input, dim: int):
    """``(values, indices)``: the largest value so far along ``dim``, and its position."""
    values, indices = Cummax.apply(input, dim_axis(input, dim, "cummax"), True)
    return return_types.cummax(values, indices)


def cummin(input, dim: int):
    """``(values, indices)``: the smallest value so far along ``dim``, and its position."""
    values, indices = Cummin.apply(input, dim_axis(input, dim, "cummin"), False)
    return return_types.cummin(values, indices)


# --- logcumsumexp -----------------------------------------------------------------------------

class Logcumsumexp(Function):
    """out_k = log Σ_{i<=k} exp(a_i).   d/da_i = Σ_{k>=i} g_k exp(a_i - out_k).

    The scan combines with log-add-exp, log(e^x + e^y) = max + log1p(e^-|x-y|), so no
    exp overflows. The backward sum runs in log space too: split g into its positive and
    negative parts, grad = exp(a + rev_logcumsumexp(log g⁺ - out)) - (the same for g⁻).
    Being logcumsumexp again, it differentiates once more.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        out = a.copy() if dim is None else inclusive_scan(xp_for(a).logaddexp, a, dim)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        if ctx.dim is None:
            return grad, None
        positive, negative = _log_parts(grad)
        rev = _reverse_logcumsumexp
        return (exp(a + rev(positive - out, ctx.dim)) -
                exp(a + rev(negative - out, ctx.dim))), None

    @staticmethod
    def jvp(ctx, t, _):
        """jvp: ẏ_k = Σ_{i<=k} exp(a_i - out_k) ȧ_i, in log space like backward."""
        a, out = ctx.primals[0], ctx.results[0]
        if ctx.dim is None:
            return t
        positive, negative = _log_parts(t)
        return (exp(Logcumsumexp.apply(a + positive, ctx.dim) - out) -
                exp(Logcumsumexp.apply(a + negative, ctx.dim) - out))


def _log_parts(x: Tensor):
    """(log x⁺, log x⁻): log|x| where x > 0 (resp. < 0), else a quarter of the lowest float.

    That stands for log 0: exp of it is 0, yet it is finite, so derivatives see no
    -inf - (-inf) = nan, and sums of a few of them (in double backward) don't overflow.
    """
    lowest = float(ml_dtypes.finfo(x.dtype.np).min) / 4  # ml_dtypes: bfloat16 too
    log_size = log(where(x == 0, 1.0, x.abs()))
    return where(x > 0, log_size, lowest), where(x < 0, log_size, lowest)


def _reverse_logcumsumexp(x: Tensor, dim: int) -> Tensor:
    """out_i = log Σ_{k>=i} exp(x_k): logcumsumexp from the other end."""
    return flip(Logcumsumexp.apply(flip(x, dim), dim), dim)


def logcumsumexp(input, dim: int) -> Tensor:
    """log(cumsum(exp(input))) along ``dim``, computed without overflow. Needs floats."""
    check_float("logcumsumexp", input)
    return Logcumsumexp.apply(input, dim_axis(input, dim, "logcumsumexp"))
