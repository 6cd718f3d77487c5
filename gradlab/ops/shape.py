"""Shape ops: the same values, arranged differently.

Most are views (no copy): reshape of a contiguous tensor, transpose,
permute, expand. Their backward undoes the rearrangement on the gradient:
reshape back, transpose back, flip back; where values were copied
(``expand``, ``repeat``) the copies' gradients are summed; where values were
dropped the gradient there is zero. In forward mode every one of them is
linear in its input, so a tangent is rearranged by the very same op
(``tangent_rule = "linear"``). Copies in a new order (``flip``, ``roll``,
``repeat``, ``tile``) are in ``reordering.py``; cutting out a range and padding
(``narrow``, ``pad``) in ``padding.py``; keeping a triangle (``tril``,
``triu``) in ``triangular.py``.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import unbroadcast, wrap_dim, xp_for

__all__ = ["reshape", "view", "expand", "expand_as", "broadcast_to", "transpose", "swapaxes",
           "swapdims", "permute", "t", "unsqueeze", "squeeze", "flatten", "unflatten", "movedim",
           "moveaxis"]
TENSOR_METHODS = [*__all__, "view_as", "reshape_as"]  # methods only, as in PyTorch


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _infer_shape(op, numel, shape, from_shape):
    if shape.count(-1) > 1:
        raise RuntimeError(f"{op}: only one dimension can be -1, got {shape}")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"{op}: invalid size {min(shape)} in shape {list(shape)}; sizes "
                           "are >= 0, or -1 for the one size to infer")
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
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, shape):
        out = a.reshape(shape)
        if out.base is not None:  # no copy: PyTorch's reshape of such a tensor is a view
            ctx.node_name = "ViewBackward0"
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shapes[0]), None


class View(Reshape):
    """``view``: a reshape its caller checked needs no copy. Its own op so that events and
    graphs say ``view`` where the code said view, as PyTorch's do."""

    supports_complex = True

    @staticmethod
    def forward(ctx, a, shape):
        return a.reshape(shape)


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
    return View.apply(input, shape)


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
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, shape):
        if type(a) is np.ndarray and a.flags.c_contiguous:
            return _broadcast_view(a, shape)
        return xp_for(a).broadcast_to(a, shape)

    @staticmethod
    def backward(ctx, grad):
        return unbroadcast(grad, ctx.input_shapes[0]), None


def _broadcast_view(a: np.ndarray, shape: tuple) -> np.ndarray:
    """``np.broadcast_to(a, shape)`` for a C-contiguous array, made directly.

    NumPy's broadcast_to goes through ``nditer`` and costs ~5 µs, more than the rest
    of a small op; every sum and mean backward expands its gradient, so this builds
    the same read-only view (stride 0 along the repeated dims) in under 1 µs.
    """
    if a.ndim == 0:  # every dim is new; as a buffer a 0-d array is not itself, a 1-d view is
        if not shape:
            return np.broadcast_to(a, shape)
        view = np.ndarray(shape, a.dtype, a.reshape(1), 0, (0,) * len(shape))
        view.flags.writeable = False
        return view
    lead = len(shape) - a.ndim
    strides = [0] * lead
    for size, target, stride in zip(a.shape, shape[lead:], a.strides):
        if size == 1:  # repeated (or kept: NumPy gives every size-1 dim stride 0 too)
            strides.append(0)
        elif size == target:
            strides.append(stride)
        else:  # not a broadcast: let NumPy say why
            return np.broadcast_to(a, shape)
    view = np.ndarray(shape, a.dtype, a, 0, tuple(strides))
    view.flags.writeable = False
    return view


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
        elif s < 0:
            raise RuntimeError(f"expand: invalid size {s} for dim {i} in {list(sizes)}; sizes "
                               "are >= 0, or -1 to keep a dim")
        elif own is not None and own != 1 and own != s:
            raise RuntimeError(
                f"expand: the size of dim {i} must match the existing size ({own}) at "
                f"non-singleton dims: can't expand {tuple(shape)} to {list(sizes)}")
        target.append(s)
    return Expand.apply(input, tuple(target))


def expand_as(input, other) -> Tensor:
    return expand(input, other.shape)


def view_as(input, other) -> Tensor:
    return view(input, tuple(other.shape))


def reshape_as(input, other) -> Tensor:
    return reshape(input, tuple(other.shape))


def broadcast_to(input, shape) -> Tensor:
    return expand(input, tuple(shape))


class Permute(Function):
    """Reorder dims.   Backward: apply the inverse permutation to the gradient."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

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
    supports_complex = True
    tangent_rule = "linear"

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


swapaxes = swapdims = transpose


class T(Transpose):
    """``t()``: Transpose of a matrix, under PyTorch's op and node names."""

    name, node_name = "t", "TBackward0"
    supports_complex = True


def t(input) -> Tensor:
    """Transpose a matrix (1-D and 0-D tensors come back unchanged, as a view)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dims, got shape {tuple(input.shape)}; "
                           "use .transpose(d0, d1) or .mT for batches")
    return T.apply(input, 0, 1) if input.ndim == 2 else T.apply(input, 0, 0)


class Unsqueeze(Function):
    """Insert a size-1 dim.   Backward: remove it."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

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
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, dims):
        return a.reshape(tuple(s for i, s in enumerate(a.shape) if i not in dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shapes[0]), None


class SqueezeDim(Squeeze):
    """``squeeze(dim)``: PyTorch's overload for one dim, under its node name."""

    name, node_name = "squeeze", "SqueezeBackward1"
    supports_complex = True


class SqueezeDims(Squeeze):
    """``squeeze((d0, d1, ...))``: the overload for several dims."""

    name, node_name = "squeeze", "SqueezeBackward2"
    supports_complex = True


def squeeze(input, dim=None) -> Tensor:
    """Remove size-1 dims (all, or those in ``dim`` that have size 1)."""
    shape = input._data.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
        return Squeeze.apply(input, dims)
    op = SqueezeDim if isinstance(dim, (int, np.integer)) else SqueezeDims
    dim = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    dims = tuple(d for d in (wrap_dim(x, input.ndim, "squeeze") for x in dim)
                 if input.ndim and shape[d] == 1)
    return op.apply(input, dims)


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


def unflatten(input, dim: int, sizes) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one may be -1): the inverse of ``flatten``."""
    shape = input._data.shape
    dim = wrap_dim(dim, input.ndim, "unflatten")
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    sizes = _infer_shape("unflatten", shape[dim], sizes, (shape[dim],))
    return reshape(input, shape[:dim] + sizes + shape[dim + 1:])


# --- moving dims: movedim -------------------------------------------------------------------

def movedim(input, source, destination) -> Tensor:
    """Move dim(s) ``source`` to position(s) ``destination``; the others keep their order.

    A permute: ``movedim(x, 0, -1)`` on (a, b, c) is ``x.permute(1, 2, 0)``.
    """
    ndim = input.ndim
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: source {src} and destination {dst} must name as many dims")
    src = tuple(wrap_dim(d, ndim, "movedim") for d in src)
    dst = tuple(wrap_dim(d, ndim, "movedim") for d in dst)
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: {name} {dims} repeats a dim")
    order = [d for d in range(ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order) if ndim else input.view(())


moveaxis = movedim
