"""``as_strided``: any view of a tensor's memory, and ``as_strided_scatter``, its write.

A tensor's elements sit in one block of memory (its *storage*); shape, strides
and a storage offset say where: element ``(i, j)`` of a view with strides
``(s0, s1)`` and offset ``o`` is storage element ``o + i·s0 + j·s1``.
``x.as_strided(size, stride, storage_offset)`` is the view with *those* numbers,
on x's storage (gradlab's storage of a view is its base's memory, counted
from the base's first element, as ``storage_offset()`` counts). Windows,
diagonals, overlapping patches: every view op is an as_strided.

Strides may make elements overlap (``as_strided((3, 2), (1, 1))`` of
``[a, b, c, d]`` is ``[[a, b], [b, c], [c, d]]``), so the gradient is PyTorch's
AsStridedBackward: add the output's gradient into a zero storage at the
places each output element reads (overlaps add up), then read the input's
elements from it. An input that overlaps itself (an ``expand``) shares each
storage gradient among the elements that view it. Storage the input does not
cover gets no gradient. Such an overlapping view is read-only here (a write
would land in several elements at once).

Both directions move values between two sets of storage places, so one
Function, ``StorageRemap``, does it for the backward, the double backward
and forward mode: scatter-add at ``from_pos``, then gather at ``to_pos``; its
adjoint is itself with the two swapped.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import add_at, xp_for
from .introspection import storage_offset as _storage_offset

__all__ = ["as_strided", "as_strided_scatter"]
TENSOR_METHODS = ["as_strided", "as_strided_scatter"]


def _positions(xp, shape, strides, offset: int):
    """The storage place of every element of the view (shape, strides, offset)."""
    pos = xp.full(tuple(shape), int(offset), dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        step = xp.arange(n, dtype=np.int64) * int(s)
        pos = pos + step.reshape((n,) + (1,) * (len(shape) - d - 1))
    return pos


def _overlaps(shape, strides) -> bool:
    """Could two elements share a storage place? (Checked dim by dim from the smallest
    stride: each stride must step past everything the smaller ones span.)"""
    span = 0
    for n, s in sorted(((n, s) for n, s in zip(shape, strides) if n > 1), key=lambda p: p[1]):
        if s <= span:
            return True
        span += (n - 1) * s
    return False


class StorageRemap(Function):
    """``y = gather(scatter_add(x · pre, from_pos), to_pos) · post`` on a storage of ``numel``.

    Linear in x; its adjoint (the backward) is the same op with (from_pos, pre) and
    (to_pos, post) swapped.
    """

    raw = True
    name = "as_strided_remap"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, x, from_pos, to_pos, numel, pre, post):
        ctx.remap = (from_pos, to_pos, numel, pre, post)
        storage = xp_for(x).zeros(numel, dtype=x.dtype)
        add_at(storage, from_pos.reshape(-1), (x if pre is None else x * pre).reshape(-1))
        out = storage[to_pos]
        return out if post is None else out * post

    @staticmethod
    def backward(ctx, grad):
        from_pos, to_pos, numel, pre, post = ctx.remap
        return (StorageRemap.apply(grad, to_pos, from_pos, numel, post, pre),
                None, None, None, None, None)


def _remap(x, from_pos, to_pos, numel, pre=None, post=None):
    return StorageRemap.apply(x, from_pos, to_pos, numel, pre, post)


class AsStrided(Function):
    """The view ``size``/``stride``/``offset`` of the input's storage (see the module docstring).

    ``in_stride`` and ``in_offset`` say where the input's own elements sit in that
    storage. Backward: the gradient added into the storage, read at the input's places.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, size, stride, offset, in_stride, in_offset):
        xp = xp_for(a)
        out_pos = _positions(xp, size, stride, offset)
        in_pos = _positions(xp, a.shape, in_stride, in_offset)
        numel = int(max(out_pos.max(initial=-1), in_pos.max(initial=-1))) + 1
        ctx.places = (out_pos, in_pos, numel, _sharing(xp, in_pos, numel, a.dtype))
        view = _view_of_memory(a, size, stride, offset, in_stride, in_offset)
        if view is None:  # the input is not laid out as in_stride says: copy, then read
            storage = xp.zeros(numel, dtype=a.dtype)
            storage[in_pos] = a
            return storage[out_pos]
        return view

    @staticmethod
    def backward(ctx, grad):
        out_pos, in_pos, numel, share = ctx.places
        return _remap(grad, out_pos, in_pos, numel, None, share), None, None, None, None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        """ẏ = the input's tangent moved to the places the view reads (linear)."""
        out_pos, in_pos, numel, share = ctx.places
        return _remap(tangent, in_pos, out_pos, numel, share, None)


def _sharing(xp, in_pos, numel, dtype):
    """1 / (how many input elements view the same place), at each input element; None when
    the input doesn't overlap itself."""
    if in_pos.size == 0:
        return None
    counts = xp.bincount(in_pos.reshape(-1), minlength=numel)
    if int(counts.max()) <= 1:
        return None
    return (1.0 / counts[in_pos]).astype(dtype)


def _view_of_memory(a, size, stride, offset, in_stride, in_offset):
    """The view on ``a``'s own memory, or None when ``a``'s strides are not ``in_stride``
    (a gradient laid out otherwise, when a view's steps are replayed on it)."""
    item = a.itemsize
    if any(n > 1 and s // item != t for n, s, t in zip(a.shape, a.strides, in_stride)):
        return None
    owner = a if a.base is None else a.base
    if not hasattr(owner, "flags") or not owner.flags.c_contiguous or \
            int(np.prod(size)) == 0:
        return None
    start = array_address(a) - array_address(owner) - in_offset * item  # the storage's first byte
    first = start + offset * item
    last = first + sum((n - 1) * s for n, s in zip(size, stride)) * item
    if first < 0 or last + item > owner.nbytes:
        return None
    byte_strides = tuple(s * item for s in stride)
    if type(owner) is np.ndarray:
        view = np.ndarray(tuple(size), a.dtype, owner, first, byte_strides)
        view.flags.writeable = bool(a.flags.writeable) and not _overlaps(size, stride)
        return view
    flat = owner.reshape(-1)[first // item:]  # CuPy: its own strided view on the memory
    return xp_for(a).lib.stride_tricks.as_strided(flat, tuple(size), byte_strides)


def array_address(array) -> int:
    """Where a NumPy or CuPy array's first value sits in memory."""
    iface = getattr(array, "__array_interface__", None) or array.__cuda_array_interface__
    return int(iface["data"][0])


def _geometry(op: str, size, stride, storage_offset) -> tuple:
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"{op}: mismatch in length of strides and shape: size {list(size)} "
                           f"has {len(size)} dims, stride {list(stride)} has {len(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{op}: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}. Fix: flip() the result instead")
    if any(n < 0 for n in size):
        raise RuntimeError(f"{op}: sizes must be non-negative, got {list(size)}")
    if storage_offset is not None and int(storage_offset) < 0:
        raise RuntimeError(f"{op}: invalid storage offset {storage_offset}; it counts elements "
                           f"from the start of the storage, so it is >= 0")
    return size, stride


def _storage_size(input: Tensor) -> int:
    """How many elements the storage of ``input`` holds, from its base's first element."""
    data = input._data
    owner = data if data.base is None else data.base
    nbytes = getattr(owner, "nbytes", None)
    base = input._view_base if input._view_base is not None else input
    if nbytes is None:
        return base.numel()
    return (nbytes - (array_address(data) - array_address(owner))) // data.itemsize + \
        _storage_offset(input)


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """The view of ``input``'s storage with the given size, strides and offset (default: the
    input's own offset). See the module docstring for the gradient."""
    size, stride = _geometry("as_strided", size, stride, storage_offset)
    in_offset = _storage_offset(input)
    offset = in_offset if storage_offset is None else int(storage_offset)
    if int(np.prod(size)) > 0:
        needed = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        held = _storage_size(input)
        if needed > held:
            raise RuntimeError(
                f"as_strided: sizes {list(size)}, strides {list(stride)} and storage offset "
                f"{offset} reach storage element {needed - 1}, out of bounds for a storage of "
                f"{held} elements. Fix: smaller sizes or strides, or a smaller offset")
    return AsStrided.apply(input, size, stride, offset, input.stride(), in_offset)


class AsStridedScatter(Function):
    """``input`` with the strided places replaced by ``src``.

    Backward: to ``input``, the gradient with zeros where ``src`` was written; to
    ``src``, the gradient read at the places it was written. (PyTorch 2.13 gives
    ``input`` the gradient *at* the written places instead, which fails its own
    gradcheck; gradlab's is the derivative.)
    """

    raw = True

    @staticmethod
    def forward(ctx, a, src, in_pos, out_pos, numel):
        xp = xp_for(a)
        storage = xp.zeros(numel, dtype=a.dtype)
        storage[in_pos] = a
        storage[out_pos] = src
        kept = xp.ones(numel, dtype=bool)
        kept[out_pos] = False
        ctx.kept = kept[in_pos]
        ctx.places = (in_pos, out_pos, numel)
        return storage[in_pos]

    @staticmethod
    def backward(ctx, grad):
        from .selection import Where  # (selection is imported by the in-place ops' module)

        in_pos, out_pos, numel = ctx.places
        grad_input = Where.apply(ctx.kept, grad, 0.0) if ctx.needs_input_grad[0] else None
        grad_src = _remap(grad, in_pos, out_pos, numel) if ctx.needs_input_grad[1] else None
        return grad_input, grad_src, None, None, None

    @staticmethod
    def jvp(ctx, t_input, t_src, *_):
        """ẏ = ṫ_input off the written places + ṫ_src at them (linear in both)."""
        from .selection import Where

        in_pos, out_pos, numel = ctx.places
        terms = []
        if t_input is not None:
            terms.append(Where.apply(ctx.kept, t_input, 0.0))
        if t_src is not None:
            terms.append(_remap(t_src, out_pos, in_pos, numel))
        return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def as_strided_scatter(input: Tensor, src: Tensor, size, stride,
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` whose view ``as_strided(size, stride, storage_offset)`` holds
    ``src``. The places are counted in the copy's storage, which is laid out like
    ``input`` (its strides if it is a dense tensor, row-major otherwise) and starts at
    ``input``'s storage offset, as PyTorch's clone is."""
    size, stride = _geometry("as_strided_scatter", size, stride, storage_offset)
    if tuple(src.shape) != size:
        raise RuntimeError(f"as_strided_scatter: expected src to have a size equal to the slice "
                           f"of self. src size = {list(src.shape)}, slice size = {list(size)}")
    in_offset = _storage_offset(input)
    offset = in_offset if storage_offset is None else int(storage_offset)
    in_stride = input.stride()
    if _overlaps(input.shape, in_stride) or not _dense(input.shape, in_stride):
        in_stride = _row_major(input.shape)
    xp = xp_for(input._data)
    in_pos = _positions(xp, input.shape, in_stride, in_offset)
    out_pos = _positions(xp, size, stride, offset)
    if out_pos.size and (int(out_pos.min()) < in_offset or
                         int(out_pos.max()) >= in_offset + input.numel()):
        raise RuntimeError(
            f"as_strided_scatter: sizes {list(size)}, strides {list(stride)} and storage offset "
            f"{offset} reach outside the input's storage (elements {in_offset} to "
            f"{in_offset + input.numel() - 1}). Fix: smaller sizes or strides, or an offset "
            f"of at least {in_offset}")
    numel = in_offset + input.numel()
    return AsStridedScatter.apply(input, src, in_pos, out_pos, numel)


def _row_major(shape) -> tuple:
    strides, step = [], 1
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _dense(shape, strides) -> bool:
    """Do the strides cover a block of numel elements with no gaps (any dim order)?"""
    step = 1
    for n, s in sorted(((n, s) for n, s in zip(shape, strides) if n > 1), key=lambda p: p[1]):
        if s != step:
            return False
        step *= n
    return True
