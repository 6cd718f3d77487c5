"""Reductions: many values in, fewer out.

The backward of a reduction sends each output's gradient back to the inputs
it summarised: ``sum`` copies it to every input (expand), ``mean`` also
divides by the count, ``amax`` shares it among the inputs that tied for the
max, ``max(dim)`` gives it to the one returned index. ``softmax`` and
``cumsum`` keep the shape but mix values along a dim, so they live here too.
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
TENSOR_METHODS = [n for n in __all__ if n not in ("var_mean", "std_mean", "return_types")]


def _named_pair(name: str):
    cls = namedtuple(name, ["values", "indices"])
    cls.__qualname__ = f"return_types.{name}"  # so pickle finds it
    return cls


class return_types:  # noqa: N801 - PyTorch's name (torch.return_types)
    """What ``max(dim)`` / ``min(dim)`` return: a named tuple ``(values, indices)``."""

    max = _named_pair("max")
    min = _named_pair("min")


# --- shared helpers ---------------------------------------------------------------------------

def _dims(input: Tensor, dim, op: str):
    """``dim`` as a sorted tuple of dims; None, () or [] mean every dim (returned as None)."""
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
    """max, argmax, ... have no identity (sum has 0, prod 1): they need elements to pick from."""
    shape = tuple(input.shape)
    if dims is None and input.numel() == 0:
        raise RuntimeError(f"{op}: the input of shape {shape} is empty, so there is nothing to "
                           f"pick. Fix: pass dim= to reduce over a dim that has elements")
    for d in dims or ():
        if shape[d] == 0:
            raise IndexError(f"{op}: dim {d} of the input of shape {shape} has size 0, so there "
                             f"is nothing to pick; reduce over a dim with elements")


def _quiet(fn, *args, **kwargs):
    """Run ``fn`` without NumPy's warnings about 0/0: PyTorch quietly gives nan (or inf)."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def _np_dtype(dtype):
    return _dt.to_dtype(dtype).np


def _to_float(input: Tensor, dtype) -> Tensor:
    """Apply ``dtype=``, then turn integers into the default float (as exp does)."""
    if dtype is not None:
        input = input.to(dtype)
    return input if input.dtype.is_floating_point else input.to(_dt.get_default_dtype())


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
    dims = _dims(input, dim, "sum")
    return Sum.apply(input, dims, keepdim, None if dtype is None else _np_dtype(dtype))


class Mean(Function):
    """mean over dims.   d/da_i = 1/n for each of the n averaged elements."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.count = _count(a.shape, dims)
        out = _quiet(a.mean, axis=dims, keepdims=keepdim) if a.size == 0 else \
            a.mean(axis=dims, keepdims=keepdim)
        return out.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shapes[0]
        count = builtins.max(ctx.count, 1)
        return expand_reduced(grad / count, shape, ctx.dims, ctx.keepdim), None, None


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
    """product over dims.   d/da_i = product of the other elements.

    Without zeros that is out / a_i. With zeros, dividing would give 0/0, so
    backward counts them: one zero gets the product of the rest, everything
    else gets 0 (its product of the others contains the zero).
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
        if not bool((a._data == 0).any()):
            return grad * expand_reduced(out, shape, dims, ctx.keepdim) / a, None, None
        zero = a == 0
        nonzero = where(zero, 1.0, a)
        rest = Prod.apply(nonzero, dims, True)  # product of the nonzero elements
        # 0 wherever a zero exists, but its derivative in that zero keeps double backward right
        zeros = Prod.apply(where(zero, a, 1.0), dims, True)
        lone = zero.sum(dims, keepdim=True) == 1
        return grad * where(zero, rest * lone, rest / nonzero * zeros), None, None


def prod(input, dim: int | None = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or over one ``dim``; integers and bools multiply as int64."""
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod: dim must be one int, got {dim!r} (PyTorch's prod reduces one "
                        f"dim at a time). Fix: chain them, e.g. x.prod(1).prod(0)")
    if dtype is not None:
        input = input.to(dtype)
    return Prod.apply(input, _dims(input, dim, "prod"), keepdim)


# --- max, min and friends ---------------------------------------------------------------------

class Amax(Function):
    """max over dims.   d/da_i = 1/k for each of the k elements equal to the max, else 0."""

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
    """min over dims.   d/da_i = 1/k for each of the k elements equal to the min, else 0."""


class Max(Amax):
    """max of all elements (ties share the gradient, as in PyTorch)."""


class Min(Amax):
    """min of all elements (ties share the gradient, as in PyTorch)."""


class MaxDim(Function):
    """(values, indices) of the max along one dim.   The gradient goes to the index only."""

    raw = True
    name = "max"

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
    """(values, indices) of the min along one dim.   The gradient goes to the index only."""

    name = "min"


def _extreme(op, full, along, pair, both, input, dim, keepdim, other):
    if other is not None or isinstance(dim, Tensor):  # max(a, b) is maximum(a, b)
        return both(input, dim if other is None else other)
    largest = op == "max"
    if dim is None:
        _need_elements(op, input, None)
        return full.apply(input, None, False, largest)
    d = wrap_dim(dim, input.ndim, op)
    _need_elements(op, input, (d,) if input.ndim else ())
    return pair(*along.apply(input, d, keepdim, largest))


def max(input, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001
    """``max(x)``: the largest value. ``max(x, dim)``: ``(values, indices)`` along ``dim``.

    ``max(x, y)`` with a tensor ``y`` is ``maximum(x, y)``, as in PyTorch.
    """
    return _extreme("max", Max, MaxDim, return_types.max, maximum, input, dim, keepdim, other)


def min(input, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001
    """``min(x)``: the smallest value. ``min(x, dim)``: ``(values, indices)`` along ``dim``."""
    return _extreme("min", Min, MinDim, return_types.min, minimum, input, dim, keepdim, other)


def amax(input, dim=(), keepdim: bool = False) -> Tensor:
    """Largest value over ``dim`` (int or tuple; () means all). Ties share the gradient."""
    dims = _dims(input, dim, "amax")
    _need_elements("amax", input, dims)
    return Amax.apply(input, dims, keepdim, True)


def amin(input, dim=(), keepdim: bool = False) -> Tensor:
    """Smallest value over ``dim`` (int or tuple; () means all). Ties share the gradient."""
    dims = _dims(input, dim, "amin")
    _need_elements("amin", input, dims)
    return Amin.apply(input, dims, keepdim, False)


class Argmax(Function):
    """Index of the max along ``dim`` (of the flattened tensor if dim is None). No gradient."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, a, dim, keepdim, largest):
        xp = xp_for(a)
        pick = xp.argmax if largest else xp.argmin
        if dim is None:
            out = pick(a.reshape(-1)).reshape((1,) * a.ndim if keepdim else ())
        else:
            out = pick(a, axis=dim)
            out = xp.expand_dims(out, dim) if keepdim else out
        return xp.asarray(out, dtype="int64")


class Argmin(Argmax):
    """Index of the min along ``dim`` (of the flattened tensor if dim is None). No gradient."""


def argmax(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest value (the first one on ties), as int64."""
    dim = None if dim is None or input.ndim == 0 else wrap_dim(dim, input.ndim, "argmax")
    _need_elements("argmax", input, None if dim is None else (dim,))
    return Argmax.apply(input, dim, keepdim, True)


def argmin(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest value (the first one on ties), as int64."""
    dim = None if dim is None or input.ndim == 0 else wrap_dim(dim, input.ndim, "argmin")
    _need_elements("argmin", input, None if dim is None else (dim,))
    return Argmin.apply(input, dim, keepdim, False)


class Any(Function):
    """Is any value over dims nonzero? A bool result: no gradient."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, a, dims, keepdim, every):
        return (xp_for(a).all if every else xp_for(a).any)(a, axis=dims, keepdims=keepdim)


class All(Any):
    """Are all values over dims nonzero? A bool result: no gradient."""


def any(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where any element (over ``dim``) is nonzero; False for no elements."""
    return Any.apply(input, _dims(input, dim, "any"), keepdim, False)


def all(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element (over ``dim``) is nonzero; True for no elements."""
    return All.apply(input, _dims(input, dim, "all"), keepdim, True)


# --- variance and standard deviation ----------------------------------------------------------

def _variance(ctx, a, dims, keepdim, correction):
    """Σ(a - mean)² / (N - correction); N - correction <= 0 gives inf or nan, like PyTorch."""
    ctx.dims, ctx.keepdim = dims, keepdim
    n = _count(a.shape, dims)
    ctx.dof = n - correction
    centered = a - a.sum(axis=dims, keepdims=True) / builtins.max(n, 1)
    squares = (centered * centered).sum(axis=dims, keepdims=keepdim)
    if ctx.dof > 0:
        return squares / ctx.dof
    return _quiet(lambda: squares / 0.0).astype(a.dtype, copy=False)


def _variance_backward(ctx, grad_var, a):
    """d var / d a_i = 2 (a_i - mean) / (N - correction)."""
    grad = expand_reduced(grad_var, a.shape, ctx.dims, ctx.keepdim)
    scale = 2.0 / ctx.dof if ctx.dof > 0 else math.inf
    return grad * (a - a.mean(ctx.dims, keepdim=True)) * scale


class Var(Function):
    """variance: Σ(a_i - mean)² / (N - correction).   d/da_i = 2 (a_i - mean) / (N - correction)."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, correction):
        ctx.save_for_backward(a)
        return _variance(ctx, a, dims, keepdim, correction)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return _variance_backward(ctx, grad, a), None, None, None


class Std(Function):
    """std = √var.   d/da_i = d var/da_i / (2 std), and 0 where std = 0 (as PyTorch)."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, correction):
        out = xp_for(a).sqrt(_variance(ctx, a, dims, keepdim, correction))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        flat = out == 0  # a constant slice: sqrt has an infinite slope there
        grad_var = where(flat, 0.0, grad / (where(flat, 1.0, out) * 2))
        return _variance_backward(ctx, grad_var, a), None, None, None


def _spread(fn, op, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(x, False): the old (input, unbiased) form
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
    if _count(input.shape, dims) - correction <= 0:
        warnings.warn(f"{op}: degrees of freedom is <= 0 (correction={correction} with "
                      f"{_count(input.shape, dims)} values per output); the result is inf or nan",
                      UserWarning, stacklevel=3)
    return fn.apply(input, dims, keepdim, correction)


def var(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: int | float | None = None) -> Tensor:
    """Variance over ``dim``, dividing by N - correction (correction=1 unless told otherwise)."""
    return _spread(Var, "var", input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: int | float | None = None) -> Tensor:
    """Standard deviation over ``dim``: √var, with var's ``unbiased``/``correction``."""
    return _spread(Std, "std", input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: int | float | None = None) -> tuple[Tensor, Tensor]:
    """``(var(...), mean(...))`` over the same dims."""
    out = _spread(Var, "var_mean", input, dim, unbiased, keepdim, correction)
    return out, mean(input, None if isinstance(dim, bool) else dim, keepdim)


def std_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: int | float | None = None) -> tuple[Tensor, Tensor]:
    """``(std(...), mean(...))`` over the same dims."""
    out = _spread(Std, "std_mean", input, dim, unbiased, keepdim, correction)
    return out, mean(input, None if isinstance(dim, bool) else dim, keepdim)


# --- norm -------------------------------------------------------------------------------------

class Norm(Function):
    """p-norm (Σ|a_i|^p)^(1/p); p = ±inf: max/min |a_i|; p = 0: how many a_i are nonzero.

    d/da_i = sign(a_i) |a_i|^(p-1) / out^(p-1), taken as 0 where out = 0 (so the
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
            return where(winner, sign(a) * grad / winner.sum(dims, keepdim=True), 0.0), \
                None, None, None
        zero = out == 0  # safe denominators: no 0/0, even in double backward
        scale = where(zero, 0.0, grad / where(zero, 1.0, out) ** (p - 1))
        if p == 2:
            return a * scale, None, None, None
        local = sign(a) * where(a == 0, 1.0, a.abs()) ** (p - 1)
        return local * scale, None, None, None


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Vector p-norm over ``dim`` (all elements by default); 'fro' is the 2-norm."""
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str) or p < 0 and not math.isinf(p):
        raise ValueError(f"norm: p={p!r} is not supported; use 'fro', a number >= 0, inf or "
                         f"-inf (for the nuclear norm use a matrix decomposition)")
    if dtype is not None:
        input = input.to(dtype)
    check_float("norm", input)
    dims = _dims(input, dim, "norm")
    if math.isinf(p):
        _need_elements("norm", input, dims)
    return Norm.apply(input, float(p), dims, keepdim)


# --- along one dim: logsumexp, softmax, log_softmax, cumsum -----------------------------------

def _dim_required(op: str, dim) -> None:
    if dim is None:
        raise TypeError(f"{op}: dim is required: which dim should be normalised? For logits "
                        f"of shape (batch, classes) that is the last one: {op}(x, dim=-1)")


def _softmax_dim(input: Tensor, dim: int, op: str):
    """The numpy axis for a softmax-like op; None for a 0-d tensor (its only element)."""
    d = wrap_dim(dim, input.ndim, op)
    return d if input.ndim else None


class Logsumexp(Function):
    """log Σ exp(a_i), as m + log Σ exp(a_i - m), m = max: nothing overflows.

    d/da_i = exp(a_i - out) = softmax(a)_i.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        xp = xp_for(a)
        ctx.dims, ctx.keepdim = dims, keepdim
        shape = _reduced_shape(a.shape, dims, keepdim)
        if a.size == 0:  # a sum of no exps is 0, and log 0 = -inf
            out = xp.full(shape, -math.inf, dtype=a.dtype)
        else:
            m = a.max(axis=dims, keepdims=True)
            m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))  # all -inf: shift by 0 instead
            out = (xp.log(xp.exp(a - m).sum(axis=dims, keepdims=True)) + m).reshape(shape)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        shape = ctx.input_shapes[0]
        out = expand_reduced(out, shape, ctx.dims, ctx.keepdim)
        return expand_reduced(grad, shape, ctx.dims, ctx.keepdim) * (a - out).exp(), None, None


def logsumexp(input, dim=None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over ``dim`` (required), computed without overflow."""
    _dim_required("logsumexp", dim)
    input = _to_float(input, None)
    return Logsumexp.apply(input, _dims(input, dim, "logsumexp"), keepdim)


class Softmax(Function):
    """y_i = exp(a_i - m) / Σ_j exp(a_j - m), m = max (so exp never overflows).

    Backward: dx = y · (g - Σ_j g_j y_j).
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dim):
        xp = xp_for(a)
        ctx.dim = dim
        if a.size == 0:
            out = a.copy()
        else:
            e = xp.exp(a - a.max(axis=dim, keepdims=True))
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


def softmax(input, dim: int | None = None, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (required): values in (0, 1) that sum to 1."""
    _dim_required("softmax", dim)
    if dtype is not None:
        input = input.to(dtype)
    check_float("softmax", input)
    return Softmax.apply(input, _softmax_dim(input, dim, "softmax"))


def log_softmax(input, dim: int | None = None, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim`` (required), computed stably in one step."""
    _dim_required("log_softmax", dim)
    if dtype is not None:
        input = input.to(dtype)
    check_float("log_softmax", input)
    return LogSoftmax.apply(input, _softmax_dim(input, dim, "log_softmax"))


class Cumsum(Function):
    """Running sum out_k = Σ_{i<=k} a_i along dim.

    d/da_i = Σ_{k>=i} g_k: the gradient is a cumsum run from the other end.
    """

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
    return Cumsum.apply(input, _softmax_dim(input, dim, "cumsum"), False)
