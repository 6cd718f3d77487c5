"""slice_scatter, select_scatter, diagonal_scatter: a copy with one view of it replaced.

Each names a view of a tensor (a slice ``x[:, 1:5:2]``, a selection
``x[:, 2]``, a diagonal ``x.diagonal(offset, d1, d2)``) and returns a copy of
the tensor with that view's values taken from ``src``, which has the view's
shape. They are ``x[view] = src`` out of place, so their Function is
``IndexPut`` (``indexing.py``) under PyTorch's op names, and the
derivatives are its:

* d/dinput: the gradient, zero inside the view (those values were replaced);
* d/dsrc: the gradient read back at the view, ``grad[view]``.

They matter as the functional form of in-place writes (what
``torch.func`` turns ``x[:, 2] = v`` into) and to build a tensor from parts
without a Python loop.
"""

from __future__ import annotations

from numbers import Integral

from ..tensor import Tensor
from ._util import wrap_dim, xp_for
from .indexing import IndexPut

__all__ = ["slice_scatter", "select_scatter", "diagonal_scatter"]
TENSOR_METHODS = list(__all__)


class SliceScatter(IndexPut):
    """A copy of x with ``x[..., start:end:step, ...]`` (along dim) replaced by src."""

    name = "slice_scatter"


class SelectScatter(IndexPut):
    """A copy of x with ``x.select(dim, index)`` replaced by src."""

    name = "select_scatter"


class DiagonalScatter(IndexPut):
    """A copy of x with ``x.diagonal(offset, dim1, dim2)`` replaced by src."""

    name = "diagonal_scatter"


def _tensors(op: str, input, src) -> Tensor:
    """src as a Tensor in input's dtype (PyTorch casts it)."""
    for name, value in (("input", input), ("src", src)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    if input.ndim == 0:
        raise RuntimeError(f"{op}: needs a tensor with at least 1 dim, got a 0-d tensor")
    return src if src.dtype is input.dtype else src.to(input.dtype)


def _check_view_shape(op: str, src: Tensor, view_shape) -> None:
    if tuple(src.shape) != tuple(view_shape):
        raise RuntimeError(f"{op}: src must have the shape of the view it replaces, "
                           f"{tuple(view_shape)}, got {tuple(src.shape)}")


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,
                  step: int = 1) -> Tensor:
    """A copy of ``input`` with ``input[..., start:end:step]`` (along ``dim``) set to
    ``src``. d/dinput = grad outside the slice; d/dsrc = grad's slice."""
    src = _tensors("slice_scatter", input, src)
    dim = wrap_dim(dim, input.ndim, "slice_scatter")
    if not isinstance(step, Integral) or step <= 0:
        raise RuntimeError(f"slice_scatter: step must be a positive int, got {step!r}. Fix: "
                           f"flip() the tensor to write in reverse order")
    part = slice(start, end, int(step))
    view_shape = list(input.shape)
    view_shape[dim] = len(range(*part.indices(input.shape[dim])))
    _check_view_shape("slice_scatter", src, view_shape)
    key = ((slice(None),) * dim + (part,), None)
    return SliceScatter.apply(input, key, src, False)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``input.select(dim, index)`` set to ``src`` (the input's
    shape without ``dim``). d/dinput = grad outside; d/dsrc = grad.select(dim, index)."""
    src = _tensors("select_scatter", input, src)
    dim = wrap_dim(dim, input.ndim, "select_scatter")
    size = input.shape[dim]
    if not isinstance(index, Integral) or not -size <= index < size:
        raise IndexError(f"select_scatter: index {index!r} is out of range for dim {dim} of "
                         f"size {size} (shape {tuple(input.shape)})")
    view_shape = input.shape[:dim] + input.shape[dim + 1:]
    _check_view_shape("select_scatter", src, view_shape)
    key = ((slice(None),) * dim + (int(index) % size,), None)
    return SelectScatter.apply(input, key, src, False)


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``input.diagonal(offset, dim1, dim2)`` set to ``src``
    (its shape: the other dims, then the diagonal's length)."""
    src = _tensors("diagonal_scatter", input, src)
    if input.ndim < 2:
        raise RuntimeError(f"diagonal_scatter: needs at least 2 dims, got shape "
                           f"{tuple(input.shape)}")
    d1 = wrap_dim(dim1, input.ndim, "diagonal_scatter")
    d2 = wrap_dim(dim2, input.ndim, "diagonal_scatter")
    if d1 == d2:
        raise RuntimeError(f"diagonal_scatter: dim1 and dim2 must differ, both are {d1}")
    rows, cols = input.shape[d1], input.shape[d2]
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    others = [s for d, s in enumerate(input.shape) if d not in (d1, d2)]
    _check_view_shape("diagonal_scatter", src, (*others, length))
    xp = xp_for(input._data)
    positions = xp.arange(length)
    key = [slice(None)] * input.ndim
    key[d1] = positions + max(-offset, 0)
    key[d2] = positions + max(offset, 0)
    # NumPy puts the diagonal's dim where the two indexed dims were if they are adjacent,
    # else first; src has it last (as diagonal() does): move it to where NumPy wants it.
    place = min(d1, d2) if abs(d1 - d2) == 1 else 0
    value = src if place == src.ndim - 1 else src.movedim(-1, place)
    return DiagonalScatter.apply(input, ((Ellipsis,), tuple(key)), value, False)
