"""Reductions: many values in, fewer out (and softmax/cumsum, which mix values along a dim).

The backward of a reduction sends each output's gradient back to the inputs
it summarised: ``sum`` copies it to every input (expand), ``mean`` also
divides by the count, ``amax`` shares it among the inputs that tied for the
max, ``max(dim)`` gives it to the one index it returned.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import check_float, wrap_dim, wrap_dims, xp_for
from .creation import arange
from .elementwise import maximum, minimum, sign, where

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "any", "all",
           "var", "std", "var_mean", "std_mean", "logsumexp", "norm", "cumsum", "softmax",
           "log_softmax", "return_types"]
# PyTorch has no Tensor.var_mean / Tensor.std_mean.
TENSOR_METHODS = [n for n in __all__ if n not in ("var_mean", "std_mean", "return_types")]


class return_types:  # noqa: N801 - PyTorch's name (torch.return_types)
    """``max(x, dim)`` and ``min(x, dim)`` return these named tuples: ``(values, indices)``."""

    max = namedtuple("max", ["values", "indices"])
    min = namedtuple("min", ["values", "indices"])
    max.__qualname__, min.__qualname__ = "return_types.max", "return_types.min"  # for pickle


# --- shared helpers ---------------------------------------------------------------------------

def _dims(input: Tensor, dim, op: str):
    """``dim`` as a sorted tuple of dims; None, () and [] mean every dim (returned as None)."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return None
    return wrap_dims(dim, input.ndim, op)


def _reduced_shape(shape, dims, keepdim):
    if dims is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _count(shape, dims) -> int:
    """How many inputs each output of a reduction over ``dims`` summarises."""
    return math.prod(shape if dims is None else [shape[d] for d in dims])


def expand_reduced(grad: Tensor, shape, dims, keepdim) -> Tensor:
    """Broadcast a reduction's gradient back over the input ``shape``.

    Without ``keepdim`` the reduced dims are gone from ``grad``; put them back
    as size-1 dims, then expand (a view: no copy).
    """
    if not keepdim:
        grad = grad.reshape(_reduced_shape(shape, dims, True))
    return grad.expand(shape)


def _need_elements(op: str, input: Tensor, dims) -> None:
    """max, argmax, ... have no identity (sum has 0, prod 1): they need elements to pick."""
    shape = tuple(input.shape)
    if dims is None and input.numel() == 0:
        raise RuntimeError(f"{op}: the input of shape {shape} is empty, so there is nothing to "
                           f"pick. Fix: pass dim= to reduce over a dim that has elements")
    for d in dims or ():
        if shape[d] == 0:
            raise IndexError(f"{op}: dim {d} of the input of shape {shape} has size 0, so there "
                             f"is nothing to pick; reduce over a dim with elements")


def _quiet(fn):
    """``fn()`` without NumPy's warnings about 0/0: PyTorch quietly gives nan (or inf)."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn()


# --- sum, mean, prod --------------------------------------------------------------------------

class Sum(Function):
    """sum over dims.   d/da_i = 1 for every element: the gradient is copied back."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        ctx.dims, ctx.keepdim = dims, keepdim
        if dtype is None and a.dtype.kind in "biu":
            dtype = "int64"  # PyTorch sums integers and bools as int64
        return a.sum(axis=dims, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shapes[0]
        return expand_reduced(grad, shape, ctx.dims, ctx.keepdim), None, None, None


def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001
    """Sum of all elements, or over ``dim`` (an int or a tuple of ints)."""
    dtype = None if dtype is None else _dt.to_dtype(dtype).np
    return Sum.apply(input, _dims(input, dim, "sum"), keepdim, dtype)


class Mean(Function):
    """mean over dims.   d/da_i = 1/n for each of the n averaged elements."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.count = _count(a.shape, dims)
        if a.size == 0:  # the mean of nothing is nan
            return _quiet(lambda: a.mean(axis=dims, keepdims=keepdim)).astype(a.dtype)
        return a.mean(axis=dims, keepdims=keepdim).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        grad = grad / builtins.max(ctx.count, 1)
        return expand_reduced(grad, ctx.input_shapes[0], ctx.dims, ctx.keepdim), None, None


def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Average of all elements, or over ``dim``. Needs a floating point tensor."""
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"mean: expected a floating point tensor, got {input.dtype} with shape "
            f"{tuple(input.shape)}. Fix: x.float().mean(), or pass dtype=gradlab.float32"
        )
    return Mean.apply(input, _dims(input, dim, "mean"), keepdim)


class Prod(Function):
    """product over dims.   d/da_i = the product of the other elements.

    Without zeros that is out / a_i. With zeros, out / a_i would be 0/0, so
    backward counts them: a lone zero gets the product of the rest, all else 0
    (exact to second order, for double backward).
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        ctx.dims, ctx.keepdim = dims, keepdim
        out = a.prod(axis=dims, keepdims=keepdim, dtype="int64" if a.dtype.kind in "biu" else None)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        dims, shape = ctx.dims, ctx.input_shapes[0]
        grad = expand_reduced(grad, shape, dims, ctx.keepdim)
        if not (a._data == 0).any():
            return grad * expand_reduced(out, shape, dims, ctx.keepdim) / a, None, None
        zero = a == 0
        count = zero.sum(dims, keepdim=True)
        tracker = where(zero, a, 0.0).sum(dims, keepdim=True)  # 0, with d/d(each zero) = 1
        nonzero = where(zero, 1.0, a)
        rest = Prod.apply(nonzero, dims, True)  # the product of the nonzero elements
        # The product of the zeros (for a nonzero a_i) or of the *other* zeros (for a zero
        # a_i), as 0s that still carry the derivatives double backward needs.
        zeros = where(count == 0, 1.0, where(count == 1, tracker, 0.0))
        other_zeros = where(count == 1, 1.0, where(count == 2, tracker - a, 0.0))
        return grad * where(zero, rest * other_zeros, rest / nonzero * zeros), None, None


def prod(input, dim: int | None = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or over one ``dim``; integers and bools multiply as int64."""
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod: dim must be one int, got {dim!r} (prod reduces one dim at a "
                        f"time, as in PyTorch). Fix: chain them, e.g. x.prod(1).prod(0)")
    if dtype is not None:
        input = input.to(dtype)
    return Prod.apply(input, _dims(input, dim, "prod"), keepdim)


# --- max, min and friends ---------------------------------------------------------------------

class Amax(Function):
    """max (or min) over dims.   d/da_i = 1/k for each of the k elements that tie, else 0."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, largest):
        ctx.dims, ctx.keepdim = dims, keepdim
        out = (a.max if largest else a.min)(axis=dims, keepdims=keepdim)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        dims, shape, keepdim = ctx.dims, ctx.input_shapes[0], ctx.keepdim
        winner = a == expand_reduced(out, shape, dims, keepdim)
        share = expand_reduced(grad, shape, dims, keepdim) / winner.sum(dims, keepdim=True)
        return where(winner, share, 0.0), None, None, None


class Amin(Amax):
    """Amax with largest=False; the op gets its own name in the graph."""


class Max(Amax):
    """``x.max()`` (no dim): Amax over all elements, under PyTorch's name."""


class Min(Amax):
    """``x.min()`` (no dim): Amin over all elements, under PyTorch's name."""


class MaxDim(Function):
    """(values, indices) of the max (or min) along one dim.   The gradient goes to the index."""

    raw = True
    name, node_name = "max", "MaxBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim, largest):
        xp = xp_for(a)
        ctx.dim, ctx.keepdim = dim, keepdim
        if a.ndim == 0:
            values, indices = a.copy(), xp.zeros((), dtype="int64")
        else:
            pick = xp.argmax if largest else xp.argmin
            indices = xp.expand_dims(pick(a, axis=dim), dim).astype("int64", copy=False)
            values = xp.take_along_axis(a, indices, axis=dim)
            if not keepdim:
                values, indices = values.squeeze(dim), indices.squeeze(dim)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        (indices,) = ctx.saved_tensors
        shape, dim = ctx.input_shapes[0], ctx.dim
        if not shape:
            return grad, None, None, None
        if not ctx.keepdim:
            grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
        position = arange(shape[dim], device=grad.device).reshape(
            [-1 if i == dim else 1 for i in range(len(shape))])
        return where(position == indices, grad, 0.0), None, None, None


class MinDim(MaxDim):
    name, node_name = "min", "MinBackward0"


def _extreme(op, input, dim, keepdim, other):
    largest = op == "max"
    if other is not None or isinstance(dim, Tensor):  # max(a, b) is maximum(a, b)
        return (maximum if largest else minimum)(input, dim if other is None else other)
    if dim is None:
        _need_elements(op, input, None)
        return (Max if largest else Min).apply(input, None, False, largest)
    d = wrap_dim(dim, input.ndim, op)
    _need_elements(op, input, (d,) if input.ndim else ())
    values, indices = (MaxDim if largest else MinDim).apply(input, d, keepdim, largest)
    return getattr(return_types, op)(values, indices)


def max(input, dim=None, keepdim: bool = False, *,  # noqa: A001
        other=None) -> Tensor | tuple[Tensor, Tensor]:
    """``max(x)``: the largest value (ties share the gradient); ``max(x, dim)``: the
    ``(values, indices)`` along ``dim``; ``max(x, y)`` for a tensor ``y``: ``maximum``."""
    return _extreme("max", input, dim, keepdim, other)


def min(input, dim=None, keepdim: bool = False, *,  # noqa: A001
        other=None) -> Tensor | tuple[Tensor, Tensor]:
    """``min(x)``, ``min(x, dim)`` -> ``(values, indices)``, ``min(x, y)``: see ``max``."""
    return _extreme("min", input, dim, keepdim, other)


def amax(input, dim=(), keepdim: bool = False) -> Tensor:
    """Largest value over ``dim`` (an int or tuple; () means all). Ties share the gradient."""
    dims = _dims(input, dim, "amax")
    _need_elements("amax", input, dims)
    return Amax.apply(input, dims, keepdim, True)


def amin(input, dim=(), keepdim: bool = False) -> Tensor:
    """Smallest value over ``dim`` (an int or tuple; () means all). Ties share the gradient."""
    dims = _dims(input, dim, "amin")
    _need_elements("amin", input, dims)
    return Amin.apply(input, dims, keepdim, False)


class Argmax(Function):
    """int64 index of the max (or min) along dim, or in the flattened tensor. No gradient."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, a, dim, keepdim, largest):
        xp = xp_for(a)
        pick = xp.argmax if largest else xp.argmin
        if dim is None:
            out = pick(a.reshape(-1)).reshape((1,) * a.ndim if keepdim else ())
        else:
            out = xp.expand_dims(pick(a, axis=dim), dim) if keepdim else pick(a, axis=dim)
        return xp.asarray(out, dtype="int64")


class Argmin(Argmax):
    """Argmax with largest=False."""


def _arg(fn, op, input, dim, keepdim):
    dim = None if dim is None or input.ndim == 0 else wrap_dim(dim, input.ndim, op)
    _need_elements(op, input, None if dim is None else (dim,))
    return fn.apply(input, dim, keepdim, fn is Argmax)


def argmax(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest value (the first, on ties)."""
    return _arg(Argmax, "argmax", input, dim, keepdim)


def argmin(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest value (the first, on ties)."""
    return _arg(Argmin, "argmin", input, dim, keepdim)


class Any(Function):
    """Is any (for All: every) value over dims nonzero? A bool: no gradient."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, a, dims, keepdim, every):
        return (xp_for(a).all if every else xp_for(a).any)(a, axis=dims, keepdims=keepdim)


class All(Any):
    pass


def any(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where any element (over ``dim``) is nonzero; False for no elements."""
    return Any.apply(input, _dims(input, dim, "any"), keepdim, False)


def all(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element (over ``dim``) is nonzero; True for no elements."""
    return All.apply(input, _dims(input, dim, "all"), keepdim, True)


# --- variance and standard deviation ----------------------------------------------------------

class Var(Function):
    """var = Σ(a_i - mean)² / (N - correction).   d/da_i = 2 (a_i - mean) / (N - correction)."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, correction):
        ctx.dims, ctx.keepdim = dims, keepdim
        n = _count(a.shape, dims)
        ctx.dof = dof = n - correction
        centered = a - a.sum(axis=dims, keepdims=True) / builtins.max(n, 1)
        squares = (centered * centered).sum(axis=dims, keepdims=keepdim)
        out = squares / dof if dof > 0 else _quiet(lambda: squares / 0.0)  # inf or nan
        ctx.save_for_backward(a)
        return out.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return _var_backward(ctx, grad, a), None, None, None


def _var_backward(ctx, grad, a):
    grad = expand_reduced(grad, a.shape, ctx.dims, ctx.keepdim)
    scale = 2.0 / ctx.dof if ctx.dof > 0 else math.inf
    return grad * (a - a.mean(ctx.dims, keepdim=True)) * scale


class Std(Function):
    """std = √var.   d/da_i = (d var/da_i) / (2 std), taken as 0 where std = 0 (as PyTorch)."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, correction):
        out = xp_for(a).sqrt(Var.forward(ctx, a, dims, keepdim, correction))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        flat = out == 0  # all values equal: √ has an infinite slope at 0
        grad_var = where(flat, 0.0, grad / (where(flat, 1.0, out) * 2))
        return _var_backward(ctx, grad_var, a), None, None, None


def _spread(fn, op, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(x, False): the (input, unbiased) form
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}: pass unbiased= or correction=, not both "
                        f"(unbiased=True is correction=1, unbiased=False is correction=0)")
    if correction is None:
        correction = 0 if unbiased is False else 1
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point tensor, got {input.dtype} with "
                           f"shape {tuple(input.shape)}. Fix: convert first with .float()")
    dims = _dims(input, dim, op)
    if _count(input.shape, dims) <= correction:
        warnings.warn(f"{op}: degrees of freedom <= 0: correction={correction} with only "
                      f"{_count(input.shape, dims)} value(s) per result; the result is inf or "
                      f"nan", UserWarning, stacklevel=3)
    return fn.apply(input, dims, keepdim, correction)


def var(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Variance over ``dim``, dividing by N - correction (correction 1 = unbiased, default)."""
    return _spread(Var, "var", input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Standard deviation over ``dim``: √var, with var's ``unbiased``/``correction``."""
    return _spread(Std, "std", input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    out = _spread(Var, "var_mean", input, dim, unbiased, keepdim, correction)
    return out, mean(input, None if isinstance(dim, bool) else dim, keepdim)


def std_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    out = _spread(Std, "std_mean", input, dim, unbiased, keepdim, correction)
    return out, mean(input, None if isinstance(dim, bool) else dim, keepdim)


# --- norm -------------------------------------------------------------------------------------

class Norm(Function):
    """p-norm (Σ|a_i|^p)^(1/p); p = ±inf: max/min |a_i|; p = 0: the count of nonzeros.

    d/da_i = sign(a_i) |a_i|^(p-1) / out^(p-1), taken as 0 where out = 0 (the
    2-norm of a zero vector has gradient 0, not nan); p = ±inf: sign(a_i)/k for
    the k elements with |a_i| = out.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, p, dims, keepdim):
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        size = xp_for(a).abs(a)
        if math.isinf(p):
            out = (size.max if p > 0 else size.min)(axis=dims, keepdims=keepdim)
        elif p == 0:
            out = (a != 0).sum(axis=dims, keepdims=keepdim)
        elif p == 2:
            out = xp_for(a).sqrt((a * a).sum(axis=dims, keepdims=keepdim))
        else:
            out = (size ** p).sum(axis=dims, keepdims=keepdim) ** (1 / p)
        out = out.astype(a.dtype, copy=False)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        p, dims = ctx.p, ctx.dims
        grad = expand_reduced(grad, a.shape, dims, ctx.keepdim)
        out = expand_reduced(out, a.shape, dims, ctx.keepdim)
        if p == 0:
            return grad * 0.0, None, None, None
        if math.isinf(p):
            winner = a.abs() == out
            share = sign(a) * grad / winner.sum(dims, keepdim=True)
            return where(winner, share, 0.0), None, None, None
        zero = out == 0  # safe denominators: no 0/0, not even in double backward
        scale = where(zero, 0.0, grad / where(zero, 1.0, out) ** (p - 1))
        if p == 2:
            return a * scale, None, None, None
        return sign(a) * where(a == 0, 1.0, a.abs()) ** (p - 1) * scale, None, None, None


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Vector p-norm over ``dim`` (default: all elements); 'fro' is the 2-norm."""
    p = 2 if p == "fro" or p is None else p
    if isinstance(p, str) or (p < 0 and not math.isinf(p)):
        raise ValueError(f"norm: p={p!r} is not supported; use 'fro', a number >= 0, inf or "
                         f"-inf (the nuclear norm 'nuc' needs an SVD)")
    if dtype is not None:
        input = input.to(dtype)
    check_float("norm", input)
    dims = _dims(input, dim, "norm")
    if math.isinf(p):
        _need_elements("norm", input, dims)
    return Norm.apply(input, float(p), dims, keepdim)


# --- along a dim: logsumexp, softmax, log_softmax, cumsum -------------------------------------

def _dim_required(op: str, dim) -> None:
    if dim is None:
        raise TypeError(f"{op}: dim is required: which dim should it work along? For logits "
                        f"of shape (batch, classes) that is the last one: {op}(x, dim=-1)")


def _axis(input: Tensor, dim: int, op: str):
    """The array axis for ``dim``; None for a 0-d tensor (its one element)."""
    d = wrap_dim(dim, input.ndim, op)
    return d if input.ndim else None


class Logsumexp(Function):
    """log Σ exp(a_i) = m + log Σ exp(a_i - m), m = max: nothing overflows.

    d/da_i = exp(a_i - out) = softmax(a)_i.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        xp = xp_for(a)
        ctx.dims, ctx.keepdim = dims, keepdim
        shape = _reduced_shape(a.shape, dims, keepdim)
        if a.size == 0:  # log of an empty sum = log 0
            out = xp.full(shape, -math.inf, dtype=a.dtype)
        else:
            m = a.max(axis=dims, keepdims=True)
            m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))  # all -inf: shift by 0 instead
            with np.errstate(divide="ignore"):  # log 0 = -inf is the right answer here
                out = (xp.log(xp.exp(a - m).sum(axis=dims, keepdims=True)) + m).reshape(shape)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        shape, dims, keepdim = ctx.input_shapes[0], ctx.dims, ctx.keepdim
        softmax_a = (a - expand_reduced(out, shape, dims, keepdim)).exp()
        return expand_reduced(grad, shape, dims, keepdim) * softmax_a, None, None


def logsumexp(input, dim=None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over ``dim`` (required), without overflow; integers become float."""
    _dim_required("logsumexp", dim)
    if not input.dtype.is_floating_point:
        input = input.to(_dt.get_default_dtype())
    return Logsumexp.apply(input, _dims(input, dim, "logsumexp"), keepdim)


class Softmax(Function):
    """y_i = exp(a_i - m) / Σ_j exp(a_j - m), m = max.   Backward: dx = y · (g - Σ_j g_j y_j)."""

    raw = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        e = xp_for(a).exp(a - a.max(axis=dim, keepdims=True)) if a.size else a.copy()
        out = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * (grad - (grad * y).sum(ctx.dim, keepdim=True)), None


class LogSoftmax(Function):
    """y_i = a_i - m - log Σ_j exp(a_j - m), m = max.   Backward: dx = g - softmax · Σ_j g_j."""

    raw = True
    name = "log_softmax"

    @staticmethod
    def forward(ctx, a, dim):
        xp = xp_for(a)
        ctx.dim = dim
        if a.size == 0:
            out = a.copy()
        else:
            shifted = a - a.max(axis=dim, keepdims=True)
            out = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad - y.exp() * grad.sum(ctx.dim, keepdim=True), None


def _normalize(fn, op, input, dim, dtype):
    _dim_required(op, dim)
    if dtype is not None:
        input = input.to(dtype)
    check_float(op, input)
    return fn.apply(input, _axis(input, dim, op))


def softmax(input, dim: int | None = None, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (required): values in [0, 1] that sum to 1."""
    return _normalize(Softmax, "softmax", input, dim, dtype)


def log_softmax(input, dim: int | None = None, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim`` (required), in one stable step."""
    return _normalize(LogSoftmax, "log_softmax", input, dim, dtype)


class Cumsum(Function):
    """Running sum out_k = Σ_{i<=k} a_i.   d/da_i = Σ_{k>=i} g_k: a cumsum from the other end."""

    raw = True

    @staticmethod
    def forward(ctx, a, dim, reverse):
        xp = xp_for(a)
        ctx.dim, ctx.reverse = dim, reverse
        if dim is None:  # a 0-d tensor
            return a.copy()
        if reverse:
            return xp.ascontiguousarray(xp.flip(xp.cumsum(xp.flip(a, dim), axis=dim), dim))
        return xp.cumsum(a, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return Cumsum.apply(grad, ctx.dim, not ctx.reverse), None, None


def cumsum(input, dim: int | None = None, *, dtype=None) -> Tensor:
    """Running sums along ``dim`` (required); integers and bools sum as int64."""
    if dim is None:
        raise TypeError("cumsum: dim is required (the dim to run along), e.g. cumsum(x, dim=0)")
    if dtype is not None:
        input = input.to(dtype)
    elif not input.dtype.is_floating_point and input.dtype is not _dt.int64:
        input = input.to(_dt.int64)
    return Cumsum.apply(input, _axis(input, dim, "cumsum"), False)
