"""Copies, neighbours and flat views: repeat_interleave, diff, take, broadcast_tensors, ravel.

Each is a composition of ops that already have their derivatives, so none
needs a formula of its own:

* ``repeat_interleave`` is ``index_select`` with each position listed as often as
  it repeats, so the copies' gradients add up at the original (index_add);
* ``diff`` is ``narrow(x, 1:) - narrow(x, :-1)``, n times: each value's gradient
  is the difference of the gradients of the two outputs it appears in;
* ``take`` reads the flattened tensor at the given positions (an index_select
  that PyTorch's graph calls ``take``);
* ``broadcast_tensors`` expands each tensor (a view; backward sums the copies);
* ``ravel`` is ``reshape(-1)``: a view when the memory allows, else a copy.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from ._index_parsing import index_array
from ._util import wrap_dim
from .arithmetic import broadcast_shapes
from .comparison import logical_xor
from .creation import tensor
from .gather_scatter import IndexSelect, index_select
from .joining import cat
from .padding import narrow
from .shape import expand, reshape

__all__ = ["repeat_interleave", "diff", "take", "broadcast_tensors", "ravel"]
TENSOR_METHODS = ["repeat_interleave", "diff", "take", "ravel"]  # broadcast_tensors: a function


# --- repeat_interleave ------------------------------------------------------------------------

def _repeat_counts(repeats, size: int, dim: int, input_shape) -> np.ndarray:
    """How often each of the ``size`` positions repeats, checked, as a host int64 array."""
    op = "repeat_interleave"
    if isinstance(repeats, Tensor):
        if repeats.dtype not in (_dt.int64, _dt.int32, _dt.int16, _dt.int8, _dt.uint8):
            raise RuntimeError(f"{op}: repeats must be an integer tensor, got {repeats.dtype}. "
                               "Fix: repeats.long()")
        if repeats.ndim > 1:
            raise RuntimeError(f"{op}: repeats must be a number or a 0-d or 1-D tensor (one "
                               f"count per position), got shape {tuple(repeats.shape)}")
        counts = repeats.detach().cpu().numpy().astype(np.int64).reshape(-1)
        if counts.size == 1:
            counts = np.full(size, counts[0], dtype=np.int64)
        elif counts.size != size:
            raise RuntimeError(
                f"{op}: repeats has {counts.size} counts but dim {dim} of the input (shape "
                f"{tuple(input_shape)}) has {size} positions; give one count per position, "
                "or a single count for all")
    elif isinstance(repeats, Integral) and not isinstance(repeats, bool):
        counts = np.full(size, int(repeats), dtype=np.int64)
    else:
        raise TypeError(f"{op}: repeats must be an int or an integer tensor, got "
                        f"{type(repeats).__name__}")
    if (counts < 0).any():
        raise RuntimeError(f"{op}: repeats must be >= 0, got {int(counts.min())}")
    return counts


def repeat_interleave(input, repeats=None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each value (or slice along ``dim``) repeated ``repeats`` times in place:
    ``[1, 2]`` with 2 gives ``[1, 1, 2, 2]`` (``repeat`` would give ``[1, 2, 1, 2]``).

    ``repeats`` is an int or one count per position; ``dim=None`` flattens first.
    ``repeat_interleave(counts)`` alone gives ``arange(len(counts))`` repeated by
    ``counts`` (int64). ``output_size``, the total, is checked if given.
    """
    op = "repeat_interleave"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    if repeats is None:  # the form that takes only the counts
        if input.ndim != 1:
            raise RuntimeError(f"{op}: with no repeats, the input is the counts and must be "
                               f"1-D, got shape {tuple(input.shape)}")
        positions = np.repeat(np.arange(input.shape[0]),
                              _repeat_counts(input, input.shape[0], 0, input.shape))
        return tensor(positions, dtype=_dt.int64, device=input.device)
    if dim is None:
        input, dim = input.reshape(-1), 0
    elif input.ndim == 0:
        raise IndexError(f"{op}: a 0-d tensor has no dim {dim} to repeat along. Fix: leave "
                         "dim=None (the input is flattened first)")
    dim = wrap_dim(dim, input.ndim, op)
    counts = _repeat_counts(repeats, input.shape[dim], dim, input.shape)
    positions = np.repeat(np.arange(input.shape[dim]), counts)
    if output_size is not None and int(output_size) != positions.size:
        raise RuntimeError(f"{op}: output_size={output_size}, but the repeats add up to "
                           f"{positions.size}. Fix: pass output_size=repeats.sum(), or omit it")
    return index_select(input, dim, tensor(positions, dtype=_dt.int64, device=input.device))


# --- diff -------------------------------------------------------------------------------------

def _check_edge(name: str, edge, input: Tensor, dim: int) -> Tensor:
    if not isinstance(edge, Tensor):
        raise TypeError(f"diff: {name} must be a Tensor, got {type(edge).__name__}. Fix: "
                        f"gradlab.full(shape, value) with the input's shape except along dim {dim}")
    if edge.ndim != input.ndim:
        raise RuntimeError(f"diff: {name} must have the input's number of dims ({input.ndim}), "
                           f"got shape {tuple(edge.shape)} for an input of shape "
                           f"{tuple(input.shape)}")
    for d, (a, b) in enumerate(zip(edge.shape, input.shape)):
        if d != dim and a != b:
            raise RuntimeError(f"diff: {name} (shape {tuple(edge.shape)}) must match the input "
                               f"(shape {tuple(input.shape)}) in every dim but dim {dim}; dim "
                               f"{d} has {a} vs {b}")
    return edge


def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The n-th forward difference along ``dim``: out_i = x_{i+1} - x_i, n times over
    (each pass is one shorter; bools give x_{i+1} xor x_i). ``prepend``/``append`` are
    joined on first. d/dx: each value gets the gradient of the output after it minus
    that of the output before it."""
    if not isinstance(input, Tensor):
        raise TypeError(f"diff: expected a Tensor, got {type(input).__name__}")
    if input.ndim == 0:
        raise RuntimeError("diff: the input must have at least one dim, got a 0-d tensor. "
                           "Fix: x.reshape(1) (the difference of one value is empty)")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"diff: the order n must be >= 0, got {n}")
    dim = wrap_dim(dim, input.ndim, "diff")
    if n == 0:  # no difference taken: prepend and append are not joined either (as PyTorch)
        return input
    parts = [_check_edge("prepend", prepend, input, dim)] if prepend is not None else []
    parts.append(input)
    if append is not None:
        parts.append(_check_edge("append", append, input, dim))
    out = cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = out.shape[dim]
        if size == 0:
            break
        later, earlier = narrow(out, dim, 1, size - 1), narrow(out, dim, 0, size - 1)
        out = logical_xor(later, earlier) if out.dtype is _dt.bool else later - earlier
    return out


# --- take, broadcast_tensors, ravel -----------------------------------------------------------

class Take(IndexSelect):
    """``index_select`` on the flattened input, named as in PyTorch's graph (TakeBackward0)."""

    name = "take"


def take(input, index) -> Tensor:
    """The values of the flattened ``input`` at ``index`` (any shape; negatives count from the
    end); the result has the index's shape. d/dx: the gradient added back at each index."""
    if not isinstance(input, Tensor):
        raise TypeError(f"take: expected a Tensor, got {type(input).__name__}")
    if not isinstance(index, Tensor) or index.dtype is not _dt.int64:
        what = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise TypeError(f"take: index must be an int64 tensor, got {what}. Fix: index.long()")
    flat = input.reshape(-1)
    size = flat.shape[0]
    if size == 0 and index.numel():
        raise IndexError(f"take: the input (shape {tuple(input.shape)}) is empty, so there is "
                         "nothing to take")
    positions = index_array("take", index.to(input.device)._data.reshape(-1), 0, size,
                            allow_negative=True)
    return Take.apply(flat, 0, positions).reshape(tuple(index.shape))


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common broadcast shape (views; no copies)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"broadcast_tensors: argument {i} is a {type(t).__name__}, not a "
                            "Tensor. Fix: pass the tensors themselves, broadcast_tensors(a, b), "
                            "not a list")
    try:
        shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    except RuntimeError as error:
        shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
        raise RuntimeError(
            f"broadcast_tensors: shapes {shapes} don't broadcast: compared from the right, "
            "each pair of sizes must be equal or one of them 1. Fix: unsqueeze() or reshape "
            "one so the dims line up") from error
    return tuple(expand(t, tuple(shape)) for t in tensors)


def ravel(input) -> Tensor:
    """The values as one dim, in row-major order: a view when possible, else a copy."""
    return reshape(input, -1)
