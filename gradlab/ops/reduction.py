"""Reductions: many values in, fewer out.

The backward of a reduction sends each output's gradient back to the inputs
it summarised: ``sum`` copies it to every input (expand), ``mean`` also
divides by the count, ``amax`` shares it among the inputs that tied for the
max, ``max(dim)`` gives it to the one index it returned.

Forward mode collects the tangents each output summarises, ẏ = Σ_i (∂y/∂a_i)·ȧ_i:
``sum`` and ``mean`` are linear (their tangent is the op applied to ȧ);
``max(dim)``, like sort, picks ȧ at the index it returned.

The helpers below (which dims, the reduced shape, ``expand_reduced``) are
shared with the families built on reductions: ``statistics`` (var, std,
norm) and ``softmax_family`` (softmax, log_softmax, logsumexp); ``cumulative``
(cumsum) uses ``dim_axis``.
"""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ._util import check_ordered, numpy_keywords, widened, wrap_dim, wrap_dims, xp_for
from .complex_parts import conj
from .creation import ones_like
from .selection import maximum, minimum, where
from .shape import Expand
from .sorting import PickFunction, pick_along

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "any", "all"]
TENSOR_METHODS = list(__all__)



# --- shared helpers ---------------------------------------------------------------------------

def reduce_dims(input: Tensor, dim, op: str):
    """``dim`` as a sorted tuple of dims; None, () and [] mean every dim (returned as None)."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return None
    return wrap_dims(dim, input.ndim, op)


def reduced_shape(shape, dims, keepdim):
    """The shape of a reduction's output: reduced dims dropped, or kept as 1 with keepdim."""
    if dims is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def reduced_count(shape, dims) -> int:
    """How many inputs each output of a reduction over ``dims`` summarises."""
    return math.prod(shape if dims is None else [shape[d] for d in dims])


def expand_reduced(grad: Tensor, shape, dims, keepdim) -> Tensor:
    """Broadcast a reduction's gradient back over the input ``shape``.

    Without ``keepdim`` the reduced dims are gone from ``grad``; put them back
    as size-1 dims, then expand (a view: no copy). A full reduction's 0-d
    gradient broadcasts to any shape as it is.
    """
    if not keepdim and grad.ndim:
        grad = grad.reshape(reduced_shape(shape, dims, True))
    return Expand.apply(grad, tuple(shape))  # not expand(): this shape is valid by construction


def sum_reduced(ctx, x: Tensor) -> Tensor:
    """``x`` (of the input's shape) summed over the dims the op reduced: the output's shape."""
    return Sum.apply(x, ctx.dims, ctx.keepdim, None)


def tangent_from_partials(fn, ctx, tangent: Tensor) -> Tensor:
    """Forward mode of a reduction from its backward: ẏ = Σ_i (∂y/∂a_i)·ȧ_i, where the
    partials ∂y/∂a_i are what ``fn.backward`` sends back for an output gradient of ones
    (so ties, zeros and 0/0 are handled once, the way backward handles them)."""
    partials = fn.backward(ctx, ones_like(ctx.results[0]))[0]
    return sum_reduced(ctx, conj(partials) * tangent)  # (backward's are conjugated)


def need_elements(op: str, input: Tensor, dims) -> None:
    """max, argmax, ... have no identity (sum has 0, prod 1): they need elements to pick."""
    shape = tuple(input.shape)
    if dims is None and input.numel() == 0:
        raise RuntimeError(f"{op}: the input of shape {shape} is empty, so there is nothing to "
                           f"pick. Fix: pass dim= to reduce over a dim that has elements")
    for d in dims or ():
        if shape[d] == 0:
            raise IndexError(f"{op}: dim {d} of the input of shape {shape} has size 0, so there "
                             f"is nothing to pick; reduce over a dim with elements")


def dim_axis(input: Tensor, dim: int, op: str):
    """The array axis for ``dim`` in ops along one dim; None for a 0-d tensor (its one element)."""
    d = wrap_dim(dim, input.ndim, op)
    return d if input.ndim else None


def quietly(fn):
    """``fn()`` without NumPy's warnings about 0/0: PyTorch quietly gives nan (or inf)."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn()


# --- sum, mean, prod --------------------------------------------------------------------------

class Sum(Function):
    """sum over dims.   d/da_i = 1 for every element: the gradient is copied back."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"  # ẏ = sum(ȧ)

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        ctx.dims, ctx.keepdim = dims, keepdim
        if dims is not None:
            ctx.node_name = "SumBackward1"  # PyTorch's overload over dims
        if dtype is None and a.dtype.kind in "biu":
            dtype = "int64"  # PyTorch sums integers and bools as int64
        # asarray: a full sum is a NumPy scalar; as a 0-d array it takes the dispatcher's
        # short path for fresh arrays. Half floats add up in float32 (see ``widened``).
        out = xp_for(a).asarray(widened(a).sum(axis=dims, keepdims=keepdim, dtype=dtype))
        return out.astype(a.dtype, copy=False) if dtype is None else out

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shapes[0]
        return expand_reduced(grad, shape, ctx.dims, ctx.keepdim), None, None, None


@numpy_keywords
def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001
    """Sum of all elements, or over ``dim`` (an int or a tuple of ints)."""
    dtype = None if dtype is None else _dt.to_dtype(dtype).np
    return Sum.apply(input, reduce_dims(input, dim, "sum"), keepdim, dtype)


class Mean(Function):
    """mean over dims.   d/da_i = 1/n for each of the n averaged elements."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"  # ẏ = mean(ȧ)

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        ctx.dims, ctx.keepdim = dims, keepdim
        if dims is not None:
            ctx.node_name = "MeanBackward1"  # PyTorch's overload over dims
        ctx.count = reduced_count(a.shape, dims)
        if a.size == 0:  # the mean of nothing is nan
            return quietly(lambda: a.mean(axis=dims, keepdims=keepdim)).astype(a.dtype)
        return widened(a).mean(axis=dims, keepdims=keepdim).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        grad = grad / builtins.max(ctx.count, 1)
        return expand_reduced(grad, ctx.input_shapes[0], ctx.dims, ctx.keepdim), None, None


@numpy_keywords
def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Average of all elements, or over ``dim``. Needs a floating point tensor."""
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.category < 2:
        raise RuntimeError(
            f"mean: expected a floating point or complex tensor, got {input.dtype} with "
            f"shape {tuple(input.shape)}. Fix: x.float().mean(), or pass dtype=gradlab.float32"
        )
    return Mean.apply(input, reduce_dims(input, dim, "mean"), keepdim)


class Prod(Function):
    """product over dims.   d/da_i = the product of the other elements.

    Without zeros that is out / a_i. With zeros, out / a_i would be 0/0, so
    backward counts them: a lone zero gets the product of the rest, all else 0
    (exact to second order, for double backward). For complex numbers the gradient takes
    the conjugate of that partial product.
    """

    raw = True
    supports_complex = True

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
            return grad * conj(expand_reduced(out, shape, dims, ctx.keepdim) / a), None, None
        if dims is None and not (state.enabled or state.dual is not None) and \
                (a._data == 0).sum() >= 2:
            # Every partial product holds a zero: exactly 0, even for a NaN grad, as PyTorch.
            # (Recorded for double backward, the exact path below keeps the second order.)
            return grad.new_zeros(shape), None, None
        zero = a == 0
        count = zero.sum(dims, keepdim=True)
        tracker = where(zero, a, 0.0).sum(dims, keepdim=True)  # 0, with d/d(each zero) = 1
        nonzero = where(zero, 1.0, a)
        rest = Prod.apply(nonzero, dims, True)  # the product of the nonzero elements
        # The product of the zeros (for a nonzero a_i) or of the *other* zeros (for a zero
        # a_i), as 0s that still carry the derivatives double backward needs.
        zeros = where(count == 0, 1.0, where(count == 1, tracker, 0.0))
        other_zeros = where(count == 1, 1.0, where(count == 2, tracker - a, 0.0))
        partial = where(zero, rest * other_zeros, rest / nonzero * zeros)
        return grad * conj(partial), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: ẏ = Σ_i (∏_{j≠i} a_j)·ȧ_i, with backward's partials (exact with zeros)."""
        return tangent_from_partials(Prod, ctx, t)


@numpy_keywords
def prod(input, dim: int | None = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or over one ``dim``; integers and bools multiply as int64."""
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod: dim must be one int, got {dim!r} (prod reduces one dim at a "
                        f"time, as in PyTorch). Fix: chain them, e.g. x.prod(1).prod(0)")
    if dtype is not None:
        input = input.to(dtype)
    return Prod.apply(input, reduce_dims(input, dim, "prod"), keepdim)


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

    @classmethod
    def jvp(cls, ctx, t, *_):
        """jvp: ẏ = the mean of ȧ_i over the k elements that tie for the max (as PyTorch)."""
        return tangent_from_partials(cls, ctx, t)


class Amin(Amax):
    """Amax with largest=False; the op gets its own name in the graph."""


class Max(Amax):
    """``x.max()`` (no dim): Amax over all elements, under PyTorch's name."""

    node_name = "MaxBackward1"  # MaxBackward0 is max along a dim (MaxDim)


class Min(Amax):
    """``x.min()`` (no dim): Amin over all elements, under PyTorch's name."""

    node_name = "MinBackward1"


class MaxDim(PickFunction):
    """(values, indices) of the max (or min) along one dim.   The gradient goes to the index."""

    raw = True
    name, node_name = "max", "MaxBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim, largest):
        xp = xp_for(a)
        ctx.dim, ctx.keepdim = dim, keepdim
        indices = None
        if a.ndim:
            pick = xp.argmax if largest else xp.argmin
            indices = xp.expand_dims(pick(a, axis=dim), dim).astype("int64", copy=False)
        return pick_along(ctx, a, indices, dim, keepdim)



class MinDim(MaxDim):
    name, node_name = "min", "MinBackward0"


def _extreme(op, input, dim, keepdim, other):
    largest = op == "max"
    if other is not None or isinstance(dim, Tensor):  # max(a, b) is maximum(a, b)
        return (maximum if largest else minimum)(input, dim if other is None else other)
    if dim is None:
        need_elements(op, input, None)
        return (Max if largest else Min).apply(input, None, False, largest)
    d = wrap_dim(dim, input.ndim, op)
    need_elements(op, input, (d,) if input.ndim else ())
    values, indices = (MaxDim if largest else MinDim).apply(input, d, keepdim, largest)
    return getattr(return_types, op)(values, indices)


@numpy_keywords
def max(input, dim=None, keepdim: bool = False, *,  # noqa: A001
        other=None) -> Tensor | tuple[Tensor, Tensor]:
    """``max(x)``: the largest value (ties share the gradient); ``max(x, dim)``: the
    ``(values, indices)`` along ``dim``; ``max(x, y)`` for a tensor ``y``: ``maximum``."""
    return _extreme("max", input, dim, keepdim, other)


@numpy_keywords
def min(input, dim=None, keepdim: bool = False, *,  # noqa: A001
        other=None) -> Tensor | tuple[Tensor, Tensor]:
    """``min(x)``, ``min(x, dim)`` -> ``(values, indices)``, ``min(x, y)``: see ``max``."""
    return _extreme("min", input, dim, keepdim, other)


@numpy_keywords
def amax(input, dim=(), keepdim: bool = False) -> Tensor:
    """Largest value over ``dim`` (an int or tuple; () means all). Ties share the gradient."""
    dims = reduce_dims(input, dim, "amax")
    need_elements("amax", input, dims)
    return Amax.apply(input, dims, keepdim, True)


@numpy_keywords
def amin(input, dim=(), keepdim: bool = False) -> Tensor:
    """Smallest value over ``dim`` (an int or tuple; () means all). Ties share the gradient."""
    dims = reduce_dims(input, dim, "amin")
    need_elements("amin", input, dims)
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
    need_elements(op, input, None if dim is None else (dim,))
    return fn.apply(input, dim, keepdim, fn is Argmax)


@numpy_keywords
def argmax(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest value (the first, on ties)."""
    check_ordered("argmax", input)
    return _arg(Argmax, "argmax", input, dim, keepdim)


@numpy_keywords
def argmin(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest value (the first, on ties)."""
    check_ordered("argmin", input)
    return _arg(Argmin, "argmin", input, dim, keepdim)


class Any(Function):
    """Is any (for All: every) value over dims nonzero? A bool: no gradient."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, a, dims, keepdim, every):
        out = (xp_for(a).all if every else xp_for(a).any)(a, axis=dims, keepdims=keepdim)
        return out.astype(a.dtype) if a.dtype == np.uint8 else out  # uint8 in, uint8 out (PyTorch)


class All(Any):
    pass


@numpy_keywords
def any(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where any element (over ``dim``) is nonzero; False for no elements."""
    return Any.apply(input, reduce_dims(input, dim, "any"), keepdim, False)


@numpy_keywords
def all(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element (over ``dim``) is nonzero; True for no elements."""
    return All.apply(input, reduce_dims(input, dim, "all"), keepdim, True)
