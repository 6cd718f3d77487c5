"""Joining and splitting: cat, stack, split, chunk, tensor_split, unbind (and meshgrid).

These come in inverse pairs, and each one's backward is its partner:

* ``cat`` glues tensors along a dim; its gradient is ``split`` back into
  the pieces' sizes. ``split`` (and ``chunk``) cut a tensor into pieces; the
  pieces' gradients are ``cat``-ed back together.
* ``stack`` glues tensors along a NEW dim; its gradient is ``unbind``-ed.
  ``unbind`` removes a dim, returning its slices; their gradients are
  ``stack``-ed.

``split``, ``chunk`` and ``unbind`` are one node with several outputs:
forward returns a tuple of arrays, backward receives one gradient per
output (the engine fills in zeros for outputs that got none).

In forward mode all of them are linear: ``split`` and ``unbind`` cut the
tangent as they cut the value (``tangent_rule = "linear"``); ``cat`` and
``stack`` join the pieces' tangents, with zeros for a piece that has none.
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from . import creation
from ._util import wrap_dim, xp_for

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "split", "chunk",
           "tensor_split", "unbind", "meshgrid"]
TENSOR_METHODS = ["split", "chunk", "tensor_split", "unbind"]  # cat, stack: functions only


def _check_tensors(op, tensors) -> list:
    """A non-empty list of Tensors on one dtype (promoted as PyTorch does)."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}: expected a sequence of tensors, got a single Tensor of shape "
                        f"{tuple(tensors.shape)}. Fix: {op}([a, b], dim), not {op}(a, b)")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{op}: expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected a sequence of tensors, but element {i} is a "
                            f"{type(t).__name__}. Fix: convert it with gradlab.tensor(...)")
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = _dt.promote_types(dtype, t.dtype)
    return [t if t.dtype is dtype else t.to(dtype) for t in tensors]


def _tangents_or_zeros(pieces, tangents) -> list:
    """Forward mode: each piece's tangent, zeros for a piece that has none (a constant)."""
    return [t if t is not None else creation.zeros(p.shape, dtype=p.dtype, device=p.device)
            for p, t in zip(pieces, tangents)]


# --- cat and split: each is the other's backward ---------------------------------------------

class Cat(Function):
    """Glue tensors end to end along ``dim``.

    Backward: each input gets its own stretch of the gradient, i.e. the
    gradient ``split`` into the inputs' sizes along ``dim``.
    """

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, dim, *arrays):
        ctx.dim = dim
        ctx.sizes = tuple(a.shape[dim] for a in arrays)
        return xp_for(arrays[0]).concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return (None, *split(grad, list(ctx.sizes), ctx.dim))

    @staticmethod
    def jvp(ctx, _, *tangents):
        """jvp: ẏ = cat(ẋ₁, ẋ₂, ...), a zero stretch for a piece without tangent."""
        return Cat.apply(ctx.primals[0], *_tangents_or_zeros(ctx.primals[1:], tangents))


def cat(tensors, dim: int = 0) -> Tensor:
    """Concatenate ``tensors`` along an existing dim; the other dims must match.

    Mixed dtypes are promoted (int32 with float16 gives float16). As in
    PyTorch, 1-D empty tensors (shape ``(0,)``) are skipped whatever the others'
    shape (an old convenience for building up a tensor from nothing).
    """
    tensors = _check_tensors("cat", tensors)
    kept = [t for t in tensors if t._data.shape != (0,)] or tensors[:1]
    first = kept[0]
    k = next(i for i, t in enumerate(tensors) if t is first)
    dim = wrap_dim(dim, first.ndim, "cat")
    for i, t in enumerate(tensors):
        if t._data.shape == (0,) and t is not first:
            continue
        if t.ndim == 0:
            raise RuntimeError(f"cat: tensor {i} is 0-d and can't be concatenated (it has no "
                               "dim to join along). Fix: stack() makes a new dim, or use "
                               "t.reshape(1)")
        if t.ndim != first.ndim:
            raise RuntimeError(
                f"cat: tensors must have the same number of dims, got {tuple(first.shape)} "
                f"(tensor {k}) and {tuple(t.shape)} (tensor {i}); did you "
                "mean unsqueeze, or stack?")
        for d in range(first.ndim):
            if d != dim and t.shape[d] != first.shape[d]:
                raise RuntimeError(
                    f"cat: sizes must match except in dim {dim}: tensor {i} has size "
                    f"{t.shape[d]} in dim {d} but tensor {k} has "
                    f"{first.shape[d]} (shapes {tuple(t.shape)} and {tuple(first.shape)})")
    if len(kept) == 1:
        return Cat.apply(dim, kept[0])  # still a new tensor (a copy), as in PyTorch
    return Cat.apply(dim, *kept)


concat = concatenate = cat


class Split(Function):
    """Cut ``dim`` into consecutive pieces of the given sizes (views, one output each).

    Backward: the pieces' gradients ``cat``-ed back along ``dim``.
    """

    raw = True
    supports_complex = True
    name = "split_with_sizes"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, sizes, dim):
        ctx.dim = dim
        pieces, start = [], 0
        for s in sizes:
            pieces.append(a[(slice(None),) * dim + (slice(start, start + s),)])
            start += s
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        return cat(list(grads), ctx.dim), None, None


def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Cut into pieces along ``dim``: an int gives pieces of that size (the last may be
    smaller), a list gives pieces of exactly those sizes (they must add up to the dim)."""
    if tensor.ndim == 0:
        raise RuntimeError("split: a 0-d tensor has no dim to split")
    dim = wrap_dim(dim, tensor.ndim, "split")
    n = tensor.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise RuntimeError(
                f"split: the sizes {sizes} must be >= 0 and add up to {n}, the size of dim "
                f"{dim} (shape {tuple(tensor.shape)}); they add up to {sum(sizes)}")
    else:
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and n != 0):
            raise RuntimeError(
                f"split: split_size must be positive (it can be 0 only for an empty dim), got "
                f"{size} for dim {dim} of size {n}")
        sizes = [min(size, n - start) for start in range(0, n, size)] if n else [0]
    return Split.apply(tensor, tuple(sizes), dim)


def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """Cut into ``chunks`` pieces of equal size ``ceil(n / chunks)`` along ``dim``.

    The last piece may be smaller, and there may be fewer than ``chunks``
    pieces: ``chunk(arange(6), 4)`` gives three pieces of 2.
    """
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk: chunks must be > 0, got {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk: a 0-d tensor has no dim to cut")
    dim = wrap_dim(dim, input.ndim, "chunk")
    n = input.shape[dim]
    if n == 0:
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


def _split_points(op, indices_or_sections):
    """tensor_split's second argument as an int (sections) or a list of ints (indices)."""
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t.ndim > 1:
            raise RuntimeError(f"{op}: expected tensor_indices_or_sections to be a 0-d or 1-D "
                               f"tensor, but got one of shape {tuple(t.shape)}")
        if t.dtype is not _dt.int64:
            raise RuntimeError(f"{op}: expected tensor_indices_or_sections to have dtype int64 "
                               f"(long), but got {t.dtype}. Fix: .long() it")
        return int(t.item()) if t.ndim == 0 else [int(i) for i in t.tolist()]
    if isinstance(indices_or_sections, (list, tuple)):
        bad = [i for i in indices_or_sections if not isinstance(i, int)]
        if bad:
            raise TypeError(f"{op}: indices must be ints, got {bad[0]!r}")
        return list(indices_or_sections)
    if not isinstance(indices_or_sections, int):
        raise TypeError(f"{op}: indices_or_sections must be an int (number of sections), a "
                        f"list of ints (indices) or an int64 tensor, got "
                        f"{type(indices_or_sections).__name__}")
    return indices_or_sections


def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:
    """Cut along ``dim`` like NumPy's ``array_split``: views, so gradients flow back.

    An int ``k`` gives ``k`` pieces as equal as can be: the first ``n % k`` get one
    extra element (``chunk`` would instead fix the size and vary the count). A list
    ``[i, j]`` cuts before index i and j: ``x[:i], x[i:j], x[j:]``, with Python's
    slice rules (clamped, negatives from the end). Consecutive pieces are one
    ``split`` node; overlapping or backwards cuts fall back to one slice each.
    """
    points = _split_points("tensor_split", indices_or_sections)
    if input.ndim == 0:
        raise RuntimeError("tensor_split: expected at least a 1-D tensor, but got a 0-d one. "
                           "Fix: t.reshape(1)")
    dim = wrap_dim(dim, input.ndim, "tensor_split")
    n = input.shape[dim]
    if isinstance(points, int):
        if points <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got "
                               f"{points}")
        small, extra = divmod(n, points)
        return split(input, [small + (i < extra) for i in range(points)], dim)
    bounds = [slice(start, stop).indices(n)[:2]
              for start, stop in zip([None, *points], [*points, None])]
    if all(a <= b for a, b in bounds) and all(b == a2 for (_, b), (a2, _) in zip(bounds,
                                                                                  bounds[1:])):
        return split(input, [b - a for a, b in bounds], dim)
    lead = (slice(None),) * dim
    return tuple(input[lead + (slice(a, max(a, b)),)] for a, b in bounds)


# --- stack and unbind: each is the other's backward ------------------------------------------

class Stack(Function):
    """Put equal-shaped tensors side by side along a new dim.

    Backward: input i gets slice i of the gradient along that dim (``unbind``).
    """

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, dim, *arrays):
        ctx.dim = dim
        return xp_for(arrays[0]).stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return (None, *unbind(grad, ctx.dim))

    @staticmethod
    def jvp(ctx, _, *tangents):
        """jvp: ẏ = stack(ẋ₁, ẋ₂, ...), a zero slice for a piece without tangent."""
        return Stack.apply(ctx.primals[0], *_tangents_or_zeros(ctx.primals[1:], tangents))


def stack(tensors, dim: int = 0) -> Tensor:
    """Join equal-shaped tensors along a new dim ``dim`` (``stack([a, b])`` has shape
    ``(2, *a.shape)``)."""
    tensors = _check_tensors("stack", tensors)
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(
                f"stack: every tensor must have the same shape, but tensor 0 has "
                f"{tuple(shape)} and tensor {i} has {tuple(t.shape)}. Fix: cat() joins along "
                "an existing dim where sizes may differ")
    return Stack.apply(wrap_dim(dim, len(shape) + 1, "stack"), *tensors)


def hstack(tensors) -> Tensor:
    """Join column-wise: along dim 1, or dim 0 for 1-D tensors."""
    tensors = [t.reshape(1) if t.ndim == 0 else t for t in _check_tensors("hstack", tensors)]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Join row-wise along dim 0, after making 0-d and 1-D tensors rows."""
    tensors = [t.reshape(1, -1) if t.ndim < 2 else t for t in _check_tensors("vstack", tensors)]
    return cat(tensors, 0)


class Unbind(Function):
    """The slices of ``dim``, one output each (views).   Backward: ``stack`` their gradients."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        lead = (slice(None),) * dim
        return tuple(a[lead + (i, Ellipsis)] for i in range(a.shape[dim]))

    @staticmethod
    def backward(ctx, *grads):
        return stack(list(grads), ctx.dim), None


def unbind(input, dim: int = 0) -> tuple:
    """The slices along ``dim`` as a tuple, that dim removed: rows of a matrix for dim 0."""
    if input.ndim == 0:
        raise RuntimeError("unbind: a 0-d tensor has no dim to unbind")
    return Unbind.apply(input, wrap_dim(dim, input.ndim, "unbind"))


# --- meshgrid: 1-D coordinates spread over a grid -------------------------------------------

def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D tensors: ``meshgrid(xs, ys, indexing='ij')`` gives ``X``
    and ``Y`` of shape ``(len(xs), len(ys))`` with ``X[i, j] = xs[i]``, ``Y[i, j] = ys[j]``.

    ``indexing='xy'`` (NumPy's default, for plotting) swaps the first two dims: shape
    ``(len(ys), len(xs))``. Each grid is one input reshaped and ``expand``-ed, a view
    with no copy, so the gradient of a grid sums back onto its input (expand's backward).
    Leaving out ``indexing`` means 'ij' and warns, as PyTorch does.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid: expects a non-empty list of tensors")
    if indexing is None:
        warnings.warn("meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument ('ij' or 'xy'); using 'ij' (rows follow the first "
                      "tensor)", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"meshgrid: expected tensors, but argument {i} is a "
                            f"{type(t).__name__}. Fix: convert it with gradlab.tensor(...)")
        if t.ndim > 1:
            raise RuntimeError(f"meshgrid: expected 0-D or 1-D tensors, but tensor {i} has "
                               f"shape {tuple(t.shape)}. Fix: flatten it with t.reshape(-1)")
        if t.dtype is not tensors[0].dtype or t.device != tensors[0].device:
            raise RuntimeError(
                f"meshgrid: expects all tensors to have the same dtype and device, but tensor "
                f"0 is {tensors[0].dtype} on {tensors[0].device} and tensor {i} is {t.dtype} "
                f"on {t.device}. Fix: t.to(...) them first")
    axes = list(range(len(tensors)))  # which dim of the grid each tensor runs along
    if indexing == "xy" and len(tensors) >= 2:
        axes[0], axes[1] = 1, 0
    sizes = [t.numel() for t in tensors]
    shape = [0] * len(tensors)
    for axis, size in zip(axes, sizes):
        shape[axis] = size
    grids = []
    for t, axis in zip(tensors, axes):
        line = [1] * len(tensors)
        line[axis] = -1
        grids.append(t.reshape(line).expand(shape))
    return tuple(grids)
