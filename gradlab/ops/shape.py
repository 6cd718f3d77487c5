"""Shape ops: the same values, arranged differently.

Most are views (no copy): reshape of a contiguous tensor, transpose,
permute, expand. Their backward undoes the rearrangement on the gradient:
reshape back, transpose back, and for ``expand`` sum over the copies.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import unbroadcast, wrap_dim

__all__ = ["reshape", "view", "expand", "expand_as", "broadcast_to", "transpose", "swapaxes",
           "permute", "t", "unsqueeze", "squeeze", "flatten"]
TENSOR_METHODS = ["reshape", "view", "expand", "expand_as", "broadcast_to", "transpose",
                  "swapaxes", "permute", "t", "unsqueeze", "squeeze", "flatten"]


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _infer_shape(op, numel, shape, from_shape):
    if shape.count(-1) > 1:
        raise RuntimeError(f"{op}: only one dimension can be -1, got {shape}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(
                f"{op}: shape {list(shape)} is invalid for input of size {numel} "
                f"(shape {tuple(from_shape)})")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(
            f"{op}: shape {list(shape)} is invalid for input of size {numel}: the input has "
            f"shape {tuple(from_shape)}, and {numel} elements can't fill {known} places")
    return shape


class Reshape(Function):
    """Same values, new shape.   Backward: reshape the gradient back."""

    raw = True

    @staticmethod
    def forward(ctx, a, shape):
        return a.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shapes[0]), None


def reshape(input, *shape) -> Tensor:
    """The values in a new shape (a view when possible); one dim may be -1."""
    shape = _infer_shape("reshape", input._data.size, _shape_arg(shape), input._data.shape)
    return Reshape.apply(input, shape)


def view(input, *shape) -> Tensor:
    """Like ``reshape``, but never copies: a non-contiguous input raises."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
        return input.to(shape[0])  # view(dtype) reinterprets in PyTorch; gradlab converts
    shape = _infer_shape("view", input._data.size, _shape_arg(shape), input._data.shape)
    if not _viewable(input._data, shape):
        raise RuntimeError(
            f"view: shape {list(shape)} is not a view of a tensor of shape "
            f"{tuple(input.shape)} with strides {input.stride()} (its memory is not laid "
            "out in that order). Fix: use .reshape(...), or .contiguous().view(...)."
        )
    return Reshape.apply(input, shape)


def _viewable(array, shape) -> bool:
    """Can ``array`` be read as ``shape`` without copying? (Setting .shape never copies.)"""
    if array.flags.c_contiguous:
        return True
    probe = array.view()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            probe.shape = shape
        except AttributeError:
            return False
    return True


class Expand(Function):
    """Repeat size-1 dims without copying.   Backward: sum the gradient over the copies."""

    raw = True

    @staticmethod
    def forward(ctx, a, shape):
        from ._util import xp_for
        return xp_for(a).broadcast_to(a, shape)

    @staticmethod
    def backward(ctx, grad):
        return unbroadcast(grad, ctx.input_shapes[0]), None


def expand(input, *sizes) -> Tensor:
    """A view with size-1 dims repeated to ``sizes`` (-1 keeps a dim)."""
    sizes = _shape_arg(sizes)
    shape = input._data.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(f"expand: the target {list(sizes)} has fewer dims than the tensor "
                           f"{tuple(shape)}")
    target = []
    for i, s in enumerate(sizes):
        own = shape[i - lead] if i >= lead else None
        if s == -1:
            if own is None:
                raise RuntimeError(f"expand: -1 is not allowed for new leading dim {i}")
            s = own
        elif own is not None and own != 1 and own != s:
            raise RuntimeError(
                f"expand: the size of dim {i} must match the existing size ({own}) at "
                f"non-singleton dims: can't expand {tuple(shape)} to {list(sizes)}")
        target.append(s)
    return Expand.apply(input, tuple(target))


def expand_as(input, other) -> Tensor:
    return expand(input, other.shape)


def broadcast_to(input, shape) -> Tensor:
    return expand(input, tuple(shape))


class Permute(Function):
    """Reorder dims.   Backward: apply the inverse permutation to the gradient."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a.transpose(dims)

    @staticmethod
    def backward(ctx, grad):
        inverse = tuple(np.argsort(ctx.dims))
        return Permute.apply(grad, inverse), None


def permute(input, *dims) -> Tensor:
    dims = _shape_arg(dims)
    ndim = input.ndim
    if len(dims) != ndim:
        raise RuntimeError(f"permute: the tensor has {ndim} dims but {len(dims)} were given "
                           f"({list(dims)}); name every dim once")
    dims = tuple(wrap_dim(d, ndim, "permute") for d in dims)
    if sorted(dims) != list(range(ndim)):
        raise RuntimeError(f"permute: {list(dims)} repeats a dim; name every dim once")
    return Permute.apply(input, dims)


class Transpose(Function):
    """Swap two dims.   Backward: swap the same two dims of the gradient back."""

    raw = True

    @staticmethod
    def forward(ctx, a, d0, d1):
        ctx.dims_swapped = (d0, d1)
        return a.swapaxes(d0, d1) if a.ndim else a.view()

    @staticmethod
    def backward(ctx, grad):
        d0, d1 = ctx.dims_swapped
        return Transpose.apply(grad, d0, d1), None, None


def transpose(input, dim0: int, dim1: int) -> Tensor:
    """Swap dims ``dim0`` and ``dim1`` (a view)."""
    ndim = input.ndim
    return Transpose.apply(input, wrap_dim(dim0, ndim, "transpose"),
                           wrap_dim(dim1, ndim, "transpose"))


swapaxes = transpose


def t(input) -> Tensor:
    """Transpose a matrix (1-D and 0-D tensors are returned as they are)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dims, got shape {tuple(input.shape)}; "
                           "use .transpose(d0, d1) or .mT for batches")
    return transpose(input, 0, 1) if input.ndim == 2 else input


class Unsqueeze(Function):
    """Insert a size-1 dim.   Backward: remove it."""

    raw = True

    @staticmethod
    def forward(ctx, a, dim):
        return a.reshape(a.shape[:dim] + (1,) + a.shape[dim:])

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shapes[0]), None


def unsqueeze(input, dim: int) -> Tensor:
    return Unsqueeze.apply(input, wrap_dim(dim, input.ndim + 1, "unsqueeze"))


class Squeeze(Function):
    """Drop size-1 dims.   Backward: put them back."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims):
        return a.reshape(tuple(s for i, s in enumerate(a.shape) if i not in dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shapes[0]), None


def squeeze(input, dim=None) -> Tensor:
    """Remove size-1 dims (all, or those in ``dim`` that have size 1)."""
    shape = input._data.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(d for d in (wrap_dim(x, input.ndim, "squeeze") for x in dim)
                     if input.ndim and shape[d] == 1)
    return Squeeze.apply(input, dims)


def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one."""
    shape = input._data.shape
    if input.ndim == 0:
        return reshape(input, (1,))
    s = wrap_dim(start_dim, input.ndim, "flatten")
    e = wrap_dim(end_dim, input.ndim, "flatten")
    if s > e:
        raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])
