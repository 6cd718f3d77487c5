"""Other names and forms PyTorch gives ops gradlab already has.

Nothing here is a new derivative: each name is a short composition of ops
that carry their own backward, so the graph shows the underlying ops.

* ``x.where(condition, y)``: the method form of ``gradlab.where``, in PyTorch's
  argument order (x is the value where ``condition`` holds).
* ``x.sum_to_size(*size)``: ``x`` summed down to a shape it could have been
  broadcast from (what a broadcast's backward does to a gradient).
* ``adjoint``, ``x.mH``, ``x.H``: the conjugate transpose (of the last two dims;
  for a real tensor the transpose, a view).
* ``narrow_copy``: ``narrow`` that copies (its own memory, not a view).
* ``unsafe_chunk``, ``unsafe_split``, ``unsafe_split_with_sizes``: in PyTorch these
  skip a safety check on views changed in place; gradlab keeps the check, so
  they are plain ``chunk``/``split``/``split_with_sizes``.
* ``nonzero_static(size=...)``: ``nonzero`` padded (or cut) to exactly ``size`` rows,
  so the result's shape doesn't depend on the data.
* ``x.output_nr``: which output of its ``grad_fn`` a tensor is (0 for a leaf).
* ``gradlab.detach(x)``: ``x.detach()``.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..tensor import Tensor
from . import creation, indexing, joining, padding, selection, stacking
from ._util import unbroadcast
from .complex_parts import conj

__all__ = ["adjoint", "narrow_copy", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes",
           "nonzero_static", "detach"]
TENSOR_METHODS = ["adjoint", "narrow_copy", "unsafe_chunk", "unsafe_split",
                  "unsafe_split_with_sizes", "nonzero_static", "sum_to_size",
                  ("where", "_where_method"), ("H", "_conjugate_transpose"),
                  ("mH", "_matrix_adjoint"), ("output_nr", "_output_nr")]


def _where_method(self: Tensor, condition, other) -> Tensor:
    """``x.where(condition, y)``: x where ``condition`` holds, else y (``gradlab.where(condition,
    x, y)``). The gradient goes to x where the condition holds, to y elsewhere."""
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): the condition must be a bool Tensor, got "
                        f"{type(condition).__name__}; write x.where(x > 0, y)")
    return selection.where(condition, self, other)


def sum_to_size(input: Tensor, *size) -> Tensor:
    """``input`` summed down to ``size``, a shape that broadcasts to ``input``'s.

    The backward of a broadcast: the values that broadcasting copied add up (over
    leading dims that broadcasting added and over dims where ``size`` is 1).
    Derivative: the gradient broadcast back to ``input``'s shape.
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    size = tuple(int(s) for s in size)
    shape = tuple(input.shape)
    if not _expandable(size, shape):
        raise RuntimeError(
            f"sum_to_size: size {list(size)} is not expandable to the tensor's size "
            f"{list(shape)}: compared from the right, each dim of the size must be 1 or "
            f"equal to the tensor's, and it can't have more dims. Fix: pick a shape the "
            f"tensor could have been broadcast from, e.g. {list((1,) + shape[1:])}")
    if size == shape:
        return input
    out = unbroadcast(input, size)
    return out if tuple(out.shape) == size else out.reshape(size)


def _expandable(size: tuple, shape: tuple) -> bool:
    if len(size) > len(shape):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(size), reversed(shape)))


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of each matrix: the last two dims swapped (a view), and
    conjugated for complex tensors. Derivative: that of transpose and conj."""
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor (shape {tuple(input.shape)}). "
                           f"Fix: unsqueeze a vector to a row or column first")
    return conj(input.transpose(-2, -1))


def _matrix_adjoint_fn(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor (shape {tuple(self.shape)})")
    return conj(self.transpose(-2, -1))


def _conjugate_transpose_fn(self: Tensor) -> Tensor:
    if self.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=3)
        return conj(self)
    if self.ndim != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.{hint}")
    return conj(self.transpose(0, 1))


_matrix_adjoint = property(_matrix_adjoint_fn, doc=(
    "The conjugate transpose of each matrix in a batch (last two dims swapped; real "
    "tensors: ``mT``)."))
_conjugate_transpose = property(_conjugate_transpose_fn, doc=(
    "The conjugate transpose of a matrix (2-D only; real tensors: ``T``)."))


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` as a copy with its own memory. Derivative: the gradient placed back at
    ``start`` along ``dim``, zeros elsewhere (narrow's)."""
    return padding.narrow(input, dim, start, length).clone()


unsafe_chunk = joining.chunk
unsafe_split = joining.split
unsafe_split_with_sizes = stacking.split_with_sizes


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The indices of the nonzero values as ``nonzero`` gives them, in exactly ``size`` rows:
    cut after ``size`` rows, or padded with rows of ``fill_value``. Shape ``(size, ndim)``,
    int64 (a fixed shape, for code that must not depend on the data)."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got "
                           f"{size!r}")
    found = indexing.nonzero(input)
    count = found.shape[0]
    if count >= size:
        return found[:size]
    pad = creation.full((size - count, input.ndim), int(fill_value), dtype=found.dtype,
                        device=found.device)
    return joining.cat([found, pad], 0)


def _output_nr_fn(self: Tensor) -> int:
    return self._out_index if self.grad_fn is not None else 0


_output_nr = property(_output_nr_fn, doc=(
    "Which output of its ``grad_fn`` this tensor is (``unbind(x)[2].output_nr == 2``); 0 "
    "for a leaf."))


def detach(input: Tensor) -> Tensor:
    """``x.detach()``: the same memory, cut from the graph (no gradient flows back)."""
    return input.detach()
