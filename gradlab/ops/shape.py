"""Shape ops: the same values, arranged differently.

Most are views (no copy): reshape of a contiguous tensor, transpose,
permute, expand, narrow. Their backward undoes the rearrangement on the
gradient: reshape back, transpose back, flip back; where values were copied
(``expand``, ``repeat``) the copies' gradients are summed; where values were
dropped (``narrow``, ``tril``, cropping ``pad``) the gradient there is zero.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import unbroadcast, wrap_dim, wrap_dims, xp_for

__all__ = ["reshape", "view", "expand", "expand_as", "broadcast_to", "transpose", "swapaxes",
           "swapdims", "permute", "t", "unsqueeze", "squeeze", "flatten", "unflatten", "flip",
           "fliplr", "flipud", "roll", "movedim", "moveaxis", "repeat", "tile", "tril", "triu",
           "narrow", "pad"]
TENSOR_METHODS = [n for n in __all__ if n != "pad"]  # pad is nn.functional.pad in PyTorch


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


swapaxes = swapdims = transpose


def t(input) -> Tensor:
    """Transpose a matrix (1-D and 0-D tensors come back unchanged, as a view)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dims, got shape {tuple(input.shape)}; "
                           "use .transpose(d0, d1) or .mT for batches")
    return transpose(input, 0, 1) if input.ndim == 2 else transpose(input, 0, 0)


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
        dim = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
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


def unflatten(input, dim: int, sizes) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one may be -1): the inverse of ``flatten``."""
    shape = input._data.shape
    dim = wrap_dim(dim, input.ndim, "unflatten")
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    sizes = _infer_shape("unflatten", shape[dim], sizes, (shape[dim],))
    return reshape(input, shape[:dim] + sizes + shape[dim + 1:])


# --- reordering values: flip, roll, movedim ---------------------------------------------------

def _flip_indexer(ndim, dims):
    return tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(ndim))


class Flip(Function):
    """Reverse the order along ``dims`` (a copy, as in PyTorch).   Backward: flip the gradient."""

    raw = True

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a[_flip_indexer(a.ndim, dims) + (Ellipsis,)].copy()

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None


def flip(input, dims) -> Tensor:
    """The values in reverse order along each dim in ``dims`` (an int or a sequence)."""
    return Flip.apply(input, wrap_dims(dims, input.ndim, "flip") or ())


def fliplr(input) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f"fliplr: needs at least 2 dims, got shape {tuple(input.shape)}")
    return flip(input, 1)


def flipud(input) -> Tensor:
    if input.ndim < 1:
        raise RuntimeError("flipud: needs at least 1 dim, got a 0-d tensor")
    return flip(input, 0)


class Roll(Function):
    """Shift values along dims, wrapping around.   Backward: roll the gradient back."""

    raw = True

    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        if dims is None:  # roll the flattened values, keep the shape
            return xp_for(a).roll(a.reshape(-1), shifts[0]).reshape(a.shape)
        return xp_for(a).roll(a, shifts, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, tuple(-s for s in ctx.shifts), ctx.dims), None, None


def roll(input, shifts, dims=None) -> Tensor:
    """Shift by ``shifts`` along ``dims`` (values pushed off one end come back at the other)."""
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: without dims, give exactly one shift, got {shifts}")
        return Roll.apply(input, (int(shifts[0]),), None)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts {shifts} and dims {dims} must have the same length "
                           "(one shift per dim)")
    return Roll.apply(input, tuple(int(s) for s in shifts),
                      tuple(wrap_dim(d, input.ndim, "roll") for d in dims))


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


# --- copies of the values: repeat, tile ------------------------------------------------------

class Repeat(Function):
    """Tile the tensor ``sizes[i]`` times along dim i.

    Backward: every copy of a value sends its gradient back to that one value,
    so the tiles are summed: view the gradient as ``(r0, s0, r1, s1, ...)``
    (repeat count, original size) and sum over the ``r`` axes.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, sizes):
        ctx.sizes = sizes
        return xp_for(a).tile(a, sizes) if sizes else a.copy()

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shapes[0]
        sizes = ctx.sizes
        padded = (1,) * (len(sizes) - len(shape)) + tuple(shape)
        tiles = grad.reshape(tuple(x for r, s in zip(sizes, padded) for x in (r, s)))
        summed = tiles.sum(tuple(range(0, 2 * len(sizes), 2))) if sizes else tiles
        return summed.reshape(shape), None


def repeat(input, *sizes) -> Tensor:
    """Copies of the tensor along each dim: ``(2, 3)`` repeated ``(2, 1)`` is ``(4, 3)``.

    Extra leading ``sizes`` add new leading dims. (NumPy calls this ``tile``;
    for NumPy's ``repeat`` see ``repeat_interleave``.)
    """
    sizes = _shape_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"repeat: the number of repeat counts ({len(sizes)}) can't be smaller than the "
            f"number of dims ({input.ndim}, shape {tuple(input.shape)}). Fix: give one count "
            f"per dim, e.g. x.repeat({', '.join(['1'] * input.ndim)})")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"repeat: repeat counts must be >= 0, got {list(sizes)}")
    return Repeat.apply(input, sizes)


def tile(input, dims) -> Tensor:
    """Like ``repeat``, but fewer counts than dims mean 1 for the leading dims."""
    dims = _shape_arg((dims,))
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


# --- triangles --------------------------------------------------------------------------------

def _triangle(a, diagonal, lower):
    """Keep the lower (or upper) triangle of the last two dims, zero the rest."""
    xp = xp_for(a)
    n, m = a.shape[-2:]
    keep = xp.tri(n, m, diagonal, dtype=bool)
    if not lower:
        keep = ~xp.tri(n, m, diagonal - 1, dtype=bool)
    return xp.where(keep, a, xp.zeros((), dtype=a.dtype))


class Tril(Function):
    """The lower triangle (on and below diagonal k).   Backward: the gradient's lower triangle."""

    raw = True

    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return _triangle(a, diagonal, lower=True)

    @staticmethod
    def backward(ctx, grad):
        return Tril.apply(grad, ctx.diagonal), None


class Triu(Function):
    """The upper triangle (on and above diagonal k).   Backward: the gradient's upper triangle."""

    raw = True

    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return _triangle(a, diagonal, lower=False)

    @staticmethod
    def backward(ctx, grad):
        return Triu.apply(grad, ctx.diagonal), None


def _check_matrix(op, input):
    if input.ndim < 2:
        raise RuntimeError(f"{op}: the input must have at least 2 dims (a matrix or a batch "
                           f"of them), got shape {tuple(input.shape)}")


def tril(input, diagonal: int = 0) -> Tensor:
    """Zero everything above diagonal ``diagonal`` of the last two dims (0 = main diagonal)."""
    _check_matrix("tril", input)
    return Tril.apply(input, int(diagonal))


def triu(input, diagonal: int = 0) -> Tensor:
    """Zero everything below diagonal ``diagonal`` of the last two dims (0 = main diagonal)."""
    _check_matrix("triu", input)
    return Triu.apply(input, int(diagonal))


# --- a range of one dim, and padding (each is the other's backward) ---------------------------

class Narrow(Function):
    """``length`` values of dim ``dim`` from ``start`` (a view).

    Backward: the gradient padded with zeros back to the input's size.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dim, start, length):
        ctx.pads = tuple((start, a.shape[d] - start - length) if d == dim else (0, 0)
                         for d in range(a.ndim))
        return a[(slice(None),) * dim + (slice(start, start + length),)]

    @staticmethod
    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, ctx.pads, 0), None, None, None


def narrow(input, dim: int, start, length: int) -> Tensor:
    """The slice ``start:start+length`` of dim ``dim``, as a view (``x.narrow(0, 1, 2)``)."""
    if input.ndim == 0:
        raise RuntimeError("narrow: a 0-d tensor has no dim to narrow")
    dim = wrap_dim(dim, input.ndim, "narrow")
    size = input.shape[dim]
    start, length = int(start), int(length)
    if not -size <= start <= size:
        raise IndexError(f"narrow: start {start} is out of range for dim {dim} of size {size} "
                         f"(expected [{-size}, {size}])")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(
            f"narrow: start ({start}) + length ({length}) exceeds dim {dim} of size {size} "
            f"(shape {tuple(input.shape)}); length must be in [0, {size - start}]")
    return Narrow.apply(input, dim, start, length)


class ConstantPadNd(Function):
    """Pad each dim with ``(before, after)`` copies of ``value``; negative amounts crop.

    Backward: pad the gradient by the negated amounts. That crops the padding
    away (padding values don't depend on the input) and puts zeros where the
    input was cropped (those values never reached the output).
    """

    raw = True
    name = "constant_pad_nd"

    @staticmethod
    def forward(ctx, a, pads, value):
        ctx.pads = pads
        out_shape = tuple(s + b + e for s, (b, e) in zip(a.shape, pads))
        out = xp_for(a).full(out_shape, value, dtype=a.dtype)
        src, dst = [], []
        for s, (b, e) in zip(a.shape, pads):
            lo, hi = max(-b, 0), s - max(-e, 0)  # what survives cropping
            src.append(slice(lo, max(hi, lo)))
            dst.append(slice(max(b, 0), max(b, 0) + max(hi - lo, 0)))
        out[tuple(dst)] = a[tuple(src)]
        return out

    @staticmethod
    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, tuple((-b, -e) for b, e in ctx.pads), 0), None, None


PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad (or, with negative amounts, crop) the last dims of ``input``.

    ``pad`` lists ``(left, right)`` pairs starting from the LAST dim, as in
    PyTorch: ``(1, 2)`` pads the last dim with 1 before and 2 after;
    ``(1, 2, 3, 4)`` also pads the dim before it with 3 and 4. ``mode``:
    ``'constant'`` (``value``, 0 when None), ``'reflect'`` (mirror without the
    edge), ``'replicate'`` (repeat the edge) or ``'circular'`` (wrap around).
    Unlike PyTorch, the non-constant modes pad any number of dims.
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(f"pad: the padding length ({len(pad)}) must be even: (left, right) "
                           f"pairs, last dim first, got {pad}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(
            f"pad: {len(pad) // 2} pairs of padding for a tensor with {input.ndim} dims "
            f"(shape {tuple(input.shape)}); give at most one (left, right) pair per dim")
    if mode not in PAD_MODES:
        raise NotImplementedError(f"pad: mode must be one of {PAD_MODES}, got {mode!r}")
    pairs = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        pairs[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    for d, (s, (b, e)) in enumerate(zip(input.shape, pairs)):
        if s + b + e < 0:
            raise RuntimeError(f"pad: padding {(b, e)} of dim {d} (size {s}) leaves a negative "
                               f"size {s + b + e}; it can crop at most {s} values")
    if mode == "constant":
        return ConstantPadNd.apply(input, tuple(pairs), 0 if value is None else value)
    if value is not None:
        raise RuntimeError(f"pad: mode {mode!r} copies the input's own values and takes no "
                           f"value (got value={value}); use mode='constant' to pad with it")
    return _pad_with_copies(input, pairs, mode)


def _pad_with_copies(input, pairs, mode):
    """Reflect/replicate/circular padding, composed from narrow, flip, expand and cat."""
    from .joining import cat

    out = input
    for d, (b, e) in enumerate(pairs):
        if b < 0 or e < 0:  # crop first, then pad what is left
            out = narrow(out, d, max(-b, 0), out.shape[d] - max(-b, 0) - max(-e, 0))
            b, e = max(b, 0), max(e, 0)
        if b == 0 and e == 0:
            continue
        n = out.shape[d]
        limit = {"reflect": n - 1, "circular": n, "replicate": None if n else 0}[mode]
        if limit is not None and max(b, e) > limit:
            raise RuntimeError(f"pad: {mode} padding of {max(b, e)} is too large for dim {d} "
                               f"of size {n} (at most {limit})")
        parts = [_pad_part(out, d, k, mode, before) for k, before in ((b, True), (e, False))]
        out = cat([p for p in (parts[0], out, parts[1]) if p is not None], d)
    return out


def _pad_part(x, d, k, mode, before):
    """The ``k`` values placed before (or after) ``x`` along dim ``d``."""
    if k == 0:
        return None
    n = x.shape[d]
    if mode == "reflect":
        return flip(narrow(x, d, 1 if before else n - 1 - k, k), d)
    if mode == "circular":
        return narrow(x, d, n - k if before else 0, k)
    edge = narrow(x, d, 0 if before else n - 1, 1)  # replicate
    return edge.expand(tuple(k if i == d else s for i, s in enumerate(x.shape)))
