"""How spread out values are, and how large: var, std (and their ``_mean`` forms), norm.

These are reductions built from the simpler ones: var is the mean squared
distance from the mean, std its square root, the p-norm the p-th root of
the sum of |a_i|^p. Each is still one node with its own derivative (given
in the docstrings), so the graph shows ``var`` rather than the sub, mul,
sum and div it stands for, and the backward can treat the points where the
composed formula would divide by zero (std of constant values, the norm of
a zero vector) the way PyTorch does. Forward mode sums the same derivatives
against the input's tangent: ẏ = Σ_i (∂y/∂a_i)·ȧ_i.
"""

from __future__ import annotations

import builtins
import math
import warnings

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import check_float, numpy_keywords, widened, xp_for
from .reduction import (
    expand_reduced,
    mean,
    need_elements,
    quietly,
    reduce_dims,
    reduced_count,
    sum_reduced,
    tangent_from_partials,
)
from .selection import where
from .unary import sign

__all__ = ["var", "std", "var_mean", "std_mean", "norm"]
# PyTorch has no Tensor.var_mean / Tensor.std_mean.
TENSOR_METHODS = ["var", "std", "norm"]


# --- variance and standard deviation ----------------------------------------------------------

class Var(Function):
    """var = Σ(a_i - mean)² / (N - correction).   d/da_i = 2 (a_i - mean) / (N - correction)."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, correction):
        ctx.dims, ctx.keepdim = dims, keepdim
        n = reduced_count(a.shape, dims)
        ctx.dof = dof = n - correction
        wide = widened(a)  # half floats: squared and summed in float32
        centered = wide - wide.sum(axis=dims, keepdims=True) / builtins.max(n, 1)
        squares = (centered * centered).sum(axis=dims, keepdims=keepdim)
        out = squares / dof if dof > 0 else quietly(lambda: squares / 0.0)  # inf or nan
        ctx.save_for_backward(a)
        return out.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return _var_backward(ctx, grad, a), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: ẏ = 2 Σ_i (a_i - mean)·ȧ_i / (N - correction)."""
        return _var_jvp(ctx, t)


def _var_scale(ctx) -> float:
    return 2.0 / ctx.dof if ctx.dof > 0 else math.inf


def _var_backward(ctx, grad, a):
    grad = expand_reduced(grad, a.shape, ctx.dims, ctx.keepdim)
    return grad * (a - a.mean(ctx.dims, keepdim=True)) * _var_scale(ctx)


def _var_jvp(ctx, t):
    a = ctx.primals[0]
    return sum_reduced(ctx, (a - a.mean(ctx.dims, keepdim=True)) * t) * _var_scale(ctx)


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

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: ẏ = (d var)/(2 std), taken as 0 where std = 0 (as backward)."""
        out = ctx.results[0]
        flat = out == 0
        return where(flat, 0.0, _var_jvp(ctx, t) / (where(flat, 1.0, out) * 2))


def _spread(fn, op, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(x, False): the (input, unbiased) form
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}: pass unbiased= or correction=, not both "
                        f"(unbiased=True is correction=1, unbiased=False is correction=0)")
    if correction is None:
        correction = 0 if unbiased is False else 1
    if isinstance(input, Tensor) and input.dtype.is_complex:
        # The spread of points in the plane: E|z - mean z|² = var(Re z) + var(Im z).
        spread = _spread(Var, op, input.real, dim, None, keepdim, correction) + \
            _spread(Var, op, input.imag, dim, None, keepdim, correction)
        return spread if fn is Var else spread.sqrt()
    check_float(op, input)
    dims = reduce_dims(input, dim, op)
    count = reduced_count(input.shape, dims)
    if count <= correction:
        warnings.warn(f"{op}: degrees of freedom <= 0: correction={correction} with only "
                      f"{count} value(s) per result; the result is inf or nan",
                      UserWarning, stacklevel=3)
    return fn.apply(input, dims, keepdim, correction)


@numpy_keywords
def var(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Variance over ``dim``, dividing by N - correction (correction 1 = unbiased, default)."""
    return _spread(Var, "var", input, dim, unbiased, keepdim, correction)


@numpy_keywords
def std(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Standard deviation over ``dim``: √var, with var's ``unbiased``/``correction``."""
    return _spread(Std, "std", input, dim, unbiased, keepdim, correction)


@numpy_keywords
def var_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim``: the variance and the mean it was measured from."""
    out = _spread(Var, "var_mean", input, dim, unbiased, keepdim, correction)
    return out, mean(input, None if isinstance(dim, bool) else dim, keepdim)


@numpy_keywords
def std_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim``: the standard deviation and the mean it was measured from."""
    out = _spread(Std, "std_mean", input, dim, unbiased, keepdim, correction)
    return out, mean(input, None if isinstance(dim, bool) else dim, keepdim)


# --- norm -------------------------------------------------------------------------------------

class Norm(Function):
    """p-norm (Σ|a_i|^p)^(1/p); p = ±inf: max/min |a_i|; p = 0: the count of nonzeros.

    d/da_i = sign(a_i) |a_i|^(p-1) / out^(p-1), taken as 0 where out = 0 (the
    2-norm of a zero vector has gradient 0, not nan); p = ±inf: sign(a_i)/k for
    the k elements with |a_i| = out; p = 0: none at all (as PyTorch: ``.grad``
    stays None), a count being flat.
    """

    raw = True
    node_name = "LinalgVectorNormBackward0"  # PyTorch runs norm() as linalg.vector_norm

    @staticmethod
    def forward(ctx, a, p, dims, keepdim):
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        wide = widened(a)  # half floats: 300² overflows float16, and sums lose digits
        size = xp_for(a).abs(wide)
        if math.isinf(p):
            out = (size.max if p > 0 else size.min)(axis=dims, keepdims=keepdim)
        elif p == 0:
            out = (a != 0).sum(axis=dims, keepdims=keepdim)
        elif p == 2:
            out = xp_for(a).sqrt((wide * wide).sum(axis=dims, keepdims=keepdim))
        else:
            out = (size ** p).sum(axis=dims, keepdims=keepdim) ** (1 / p)
        out = out.astype(a.dtype, copy=False)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        p, dims = ctx.p, ctx.dims
        if p == 0:  # counts nonzeros, a step function: no gradient at all (as PyTorch)
            return None, None, None, None
        grad = expand_reduced(grad, a.shape, dims, ctx.keepdim)
        out = expand_reduced(out, a.shape, dims, ctx.keepdim)
        if math.isinf(p):
            winner = a.abs() == out
            share = sign(a) * grad / winner.sum(dims, keepdim=True)
            return where(winner, share, 0.0), None, None, None
        zero = out == 0  # safe denominators: no 0/0, not even in double backward
        scale = where(zero, 0.0, grad / where(zero, 1.0, out) ** (p - 1))
        if p == 2:
            return a * scale, None, None, None
        return sign(a) * where(a == 0, 1.0, a.abs()) ** (p - 1) * scale, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: ẏ = Σ_i (d out/da_i)·ȧ_i, with backward's derivatives (and its care at 0)."""
        if ctx.p == 0:
            return None  # a count of nonzeros doesn't move when its input moves a little
        return tangent_from_partials(Norm, ctx, t)


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Vector p-norm over ``dim`` (default: all elements); 'fro' is the 2-norm.

    p < 0 and 'nuc' (the sum of singular values) are passed on to
    ``linalg.vector_norm`` and ``linalg.matrix_norm``, as PyTorch does.
    """
    p = 2 if p == "fro" or p is None else p
    if p == "nuc" or (isinstance(p, (int, float)) and p < 0 and not math.isinf(p)):
        from .. import linalg  # (built on this module, so imported when needed)

        if p != "nuc":
            return linalg.vector_norm(input, p, dim, keepdim, dtype=dtype)
        if dim is None and getattr(input, "ndim", 2) != 2:
            raise RuntimeError(
                f"norm: p='nuc' is a matrix norm; a {input.ndim}-D input (shape "
                f"{tuple(input.shape)}) needs dim=(row_dim, col_dim), e.g. dim=(-2, -1)")
        return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim,
                                  dtype=dtype)
    if isinstance(p, str):
        raise ValueError(f"norm: p={p!r} is not supported; use 'fro', 'nuc', a number, inf "
                         f"or -inf")
    if dtype is not None:
        input = input.to(dtype)
    if isinstance(input, Tensor) and input.dtype.is_complex:
        input = input.abs()  # a vector norm sees only the magnitudes |z_i|
    check_float("norm", input)
    dims = reduce_dims(input, dim, "norm")
    if math.isinf(p):
        need_elements("norm", input, dims)
    return Norm.apply(input, float(p), dims, keepdim)
