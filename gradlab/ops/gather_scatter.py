"""Gather and scatter along one dim: index a dim with a tensor of positions.

``gather`` picks one value per index entry: for dim 1,
``out[i][j] = x[i][index[i][j]]``, so the output has the index's shape.
``scatter`` writes the other way round, ``out[i][index[i][j]] = src[i][j]``,
and ``scatter_add`` adds there instead (a repeated index adds up).
``index_select`` and ``index_add`` do the same with whole slices: slice
``index[k]`` of the dim, for each k.

As in ``indexing.py``, reading and writing are each other's backward: the
gradient of a gather is scatter-added back to the positions it read, and
the gradient of an added ``src`` is gathered from where it went
(``Gather`` <-> ``ScatterAdd``, ``IndexSelect`` <-> ``IndexAdd``).

In forward mode the reads are linear in x (the tangent is read at the same
positions) and the writes affine in (x, src) together (the tangents are
written the same way, zeros standing in for a missing one).
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.tracing import note_read
from ..tensor import Tensor
from . import creation
from ._index_parsing import check_index_range, index_array
from ._util import add_at, wrap_dim, xp_for
from .indexing import tangent_or_zeros
from .inplace import apply_inplace
from .padding import ConstantPadNd

__all__ = ["gather", "scatter", "scatter_add", "index_select", "index_add", "take_along_dim"]
TENSOR_METHODS = [*__all__, "scatter_", "scatter_add_", "index_add_"]


def _index_tensor(op: str, index, input: Tensor):
    if not isinstance(index, Tensor) or index.dtype not in (_dt.int64, _dt.int32):
        what = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise TypeError(f"{op}: index must be an int64 (or int32) tensor, got {what}. "
                        "Fix: gradlab.tensor(idx) or idx.long()")
    return index.to(input.device)


# The ops below take the index as a tensor argument, not as its array: their forward sees
# the array all the same, and graphs, events and traces see which tensor chose the places.


# --- gather and scatter: one value per index entry -------------------------------------------

def _upto(shape, skip=None) -> tuple:
    """Slices selecting the first ``shape[d]`` entries of each dim (all of dim ``skip``)."""
    return tuple(slice(None) if d == skip else slice(0, s) for d, s in enumerate(shape))


def _scatter_key(xp, index, dim) -> tuple:
    """Where ``scatter`` writes: along ``dim`` the index, elsewhere each entry's own position."""
    n = index.ndim
    return tuple(index if d == dim else
                 xp.arange(s).reshape((1,) * d + (s,) + (1,) * (n - d - 1))
                 for d, s in enumerate(index.shape))


def _pad_to(grad: Tensor, shape) -> Tensor:
    """Zero-pad at the end of each dim up to ``shape`` (src may be larger than index)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    return ConstantPadNd.apply(grad, tuple((0, s - g) for s, g in zip(shape, grad.shape)), 0)


class Gather(Function):
    """``out[i][j] = x[index[i][j]][j]`` (for dim 0).   Backward: scatter-add the gradient."""

    raw = True
    tangent_rule = "linear"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.dim, ctx.index = dim, index
        return xp_for(a).take_along_axis(a[_upto(index.shape, dim)], index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        zeros = creation.zeros(ctx.input_shapes[0], dtype=grad.dtype, device=grad.device)
        return ScatterAdd.apply(zeros, ctx.dim, ctx.index, grad), None, None


class ScatterAdd(Function):
    """A copy of x with ``x[index[i][j]][j] += src[i][j]`` (for dim 0); repeats add up.

    d/dx = grad.  d/dsrc = grad gathered at the same positions.
    """

    raw = True
    name = "scatter_add"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim, ctx.index = dim, index
        out = a.copy()
        add_at(out, _scatter_key(xp_for(a), index, dim), src[_upto(index.shape)])
        return out

    @staticmethod
    def backward(ctx, grad):
        sa, _, _, ss = ctx.input_shapes
        grad_src = None if ss is None else _pad_to(Gather.apply(grad, ctx.dim, ctx.index), ss)
        return grad if sa is not None else None, None, None, grad_src

    @staticmethod
    def jvp(ctx, tangent, _, __, src_tangent):
        """jvp: ẏ = scatter_add(ẋ, dim, index, ṡ) (a missing tangent is zero)."""
        a, dim, index, _ = ctx.primals
        if src_tangent is None:
            return tangent
        return ScatterAdd.apply(tangent_or_zeros(tangent, a), dim, index, src_tangent)


class Scatter(Function):
    """A copy of x with ``x[index[i][j]][j] = src[i][j]`` (for dim 0; src may be a number).

    d/dx = grad, zeroed where values were overwritten.  d/dsrc = grad gathered there.
    """

    raw = True

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim, ctx.index = dim, index
        out = a.copy()
        out[_scatter_key(xp_for(a), index, dim)] = (
            src[_upto(index.shape)] if hasattr(src, "shape") else src)
        return out

    @staticmethod
    def backward(ctx, grad):
        sa, _, _, ss = ctx.input_shapes
        grad_a = None if sa is None else Scatter.apply(grad, ctx.dim, ctx.index, 0.0)
        grad_src = None if ss is None else _pad_to(Gather.apply(grad, ctx.dim, ctx.index), ss)
        return grad_a, None, None, grad_src

    @staticmethod
    def jvp(ctx, tangent, _, __, src_tangent):
        """jvp: ẏ = scatter(ẋ, dim, index, ṡ): ṡ where src was written, ẋ elsewhere."""
        a, dim, index, _ = ctx.primals
        return Scatter.apply(tangent_or_zeros(tangent, a), dim, index,
                             0.0 if src_tangent is None else src_tangent)


def _check_dims(op, input, dim, idx, src=None) -> int:
    """gather/scatter's shape rules: same number of dims, index no larger than the others."""
    if idx.ndim != max(input.ndim, 1) and not (idx.ndim == 0 and input.ndim <= 1):
        raise RuntimeError(f"{op}: the index must have as many dims as the input, got index "
                           f"shape {tuple(idx.shape)} and input shape {tuple(input.shape)}")
    dim = wrap_dim(dim, input.ndim, op)
    for d in range(idx.ndim):
        if d != dim and input.ndim and idx.shape[d] > input.shape[d]:
            raise RuntimeError(
                f"{op}: the index (shape {tuple(idx.shape)}) can't be larger than the input "
                f"(shape {tuple(input.shape)}) in dim {d}; only dim {dim} may differ")
        if src is not None and src.ndim and idx.shape[d] > src.shape[d]:
            raise RuntimeError(f"{op}: the index (shape {tuple(idx.shape)}) can't be larger "
                               f"than src (shape {tuple(src.shape)}) in dim {d}")
    if idx.size:
        size = input.shape[dim] if input.ndim else 1
        check_index_range(op, int(idx.min()), int(idx.max()), dim, size, allow_negative=False)
    return dim


def gather(input, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
    """Pick along ``dim`` one value per index entry: ``out[i][j] = input[i][index[i][j]]``
    for dim 1. The output has the index's shape."""
    ids = _index_tensor("gather", index, input)
    dim = _check_dims("gather", input, dim, ids._data)
    if input.ndim == 0 or ids.ndim == 0:  # 0-d and 1-d mix, as in PyTorch
        return Gather.apply(input.reshape(-1), 0, ids.reshape(-1)).reshape(ids.shape)
    return Gather.apply(input, dim, ids)


def _scatter_args(op, input, dim, index, src):
    ids = _index_tensor(op, index, input)
    idx = ids._data
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{op}: src has dtype {src.dtype} but the tensor has "
                               f"{input.dtype}. Fix: src.to({input.dtype})")
        if src.ndim != idx.ndim:
            raise RuntimeError(f"{op}: src (shape {tuple(src.shape)}) must have as many dims "
                               f"as the index (shape {tuple(idx.shape)})")
    dim = _check_dims(op, input, dim, idx, src if isinstance(src, Tensor) else None)
    if input.ndim == 0:
        raise RuntimeError(f"{op}: needs a tensor with at least 1 dim, got a 0-d tensor")
    return dim, ids, src


def scatter(input, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor or a number) written at ``index`` along
    ``dim``: ``out[index[i][j]][j] = src[i][j]`` for dim 0. Where an index repeats, which
    write wins is unspecified (as in PyTorch)."""
    src = value if src is None else src
    if src is None:
        raise TypeError("scatter: give src (a tensor) or value (a number)")
    if reduce == "add":
        return scatter_add(input, dim, index, src)
    if reduce is not None:
        raise NotImplementedError(f"scatter: reduce={reduce!r} is not supported; use "
                                  "scatter_add (reduce='add') or scatter_reduce")
    return Scatter.apply(input, *_scatter_args("scatter", input, dim, index, src))


def scatter_(input, dim: int, index, src=None, *, value=None) -> Tensor:
    src = value if src is None else src
    return apply_inplace(Scatter, input, *_scatter_args("scatter_", input, dim, index, src),
                         convert=False)


def scatter_add(input, dim: int, index, src) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim``; repeats add up."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add: src must be a Tensor, got {type(src).__name__}")
    return ScatterAdd.apply(input, *_scatter_args("scatter_add", input, dim, index, src))


def scatter_add_(input, dim: int, index, src) -> Tensor:
    return apply_inplace(ScatterAdd, input,
                         *_scatter_args("scatter_add_", input, dim, index, src), convert=False)


def take_along_dim(input, indices, dim=None) -> Tensor:
    """``gather`` that broadcasts: input and indices broadcast in every dim except ``dim``
    (with ``dim=None``, both are flattened first)."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"take_along_dim: input (shape {tuple(input.shape)}) and indices "
                           f"(shape {tuple(indices.shape)}) must have the same number of dims")
    dim = wrap_dim(dim, input.ndim, "take_along_dim")
    others = []
    for d, (a, b) in enumerate(zip(input.shape, indices.shape)):
        if d != dim and a != b and 1 not in (a, b):
            raise RuntimeError(f"take_along_dim: input (shape {tuple(input.shape)}) and indices "
                               f"(shape {tuple(indices.shape)}) don't broadcast in dim {d} "
                               f"({a} vs {b}); outside dim {dim} sizes must match or be 1")
        others.append(max(a, b) if d != dim else None)
    return gather(input.expand([s if s is not None else input.shape[dim] for s in others]), dim,
                  indices.expand([s if s is not None else indices.shape[dim] for s in others]))


# --- index_select and index_add: whole slices along one dim ----------------------------------

class IndexSelect(Function):
    """The slices ``index[0], index[1], ...`` of dim ``dim``.   Backward: index_add the gradient."""

    raw = True
    name = "index_select"
    tangent_rule = "linear"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, dim, index):
        index = index_array("index_select", index.reshape(-1), dim, a.shape[dim])
        ctx.dim, ctx.index = dim, index
        return xp_for(a).take(a, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        zeros = creation.zeros(ctx.input_shapes[0], dtype=grad.dtype, device=grad.device)
        return IndexAdd.apply(zeros, ctx.dim, ctx.index, grad), None, None


class IndexAdd(Function):
    """A copy of x with ``source``'s slice k added to slice ``index[k]`` of dim ``dim``.

    d/dx = grad.  d/dsource = the gradient's slices at ``index`` (index_select).
    """

    raw = True
    name = "index_add"
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, dim, index, source):
        index = index_array("index_add", index.reshape(-1), dim, a.shape[dim])
        ctx.dim, ctx.index = dim, index
        out = a.copy()
        add_at(out, (slice(None),) * dim + (index,), source)
        return out

    @staticmethod
    def backward(ctx, grad):
        sa, _, _, ss = ctx.input_shapes
        grad_src = None if ss is None else IndexSelect.apply(grad, ctx.dim, ctx.index)
        return grad if sa is not None else None, None, None, grad_src

    @staticmethod
    def jvp(ctx, tangent, _, __, source_tangent):
        """jvp: ẏ = index_add(ẋ, dim, index, ṡ) (a missing tangent is zero)."""
        a, dim, index, _ = ctx.primals
        if source_tangent is None:
            return tangent
        return IndexAdd.apply(tangent_or_zeros(tangent, a), dim, index, source_tangent)


def _vector_index_tensor(op, index, input):
    """The index of index_select/index_add: a tensor of positions on input's device, 1-D.
    The op checks the positions against the dim itself (on every call, replays included)."""
    ids = _index_tensor(op, index, input)
    if ids.ndim > 1:
        raise IndexError(f"{op}: the index must be 1-D (a list of positions), got shape "
                         f"{tuple(ids.shape)}")
    return ids


def _vector_index(op, index, input, dim):
    """The positions as a checked int64 array, read now (for ops that prepare them first)."""
    ids = _vector_index_tensor(op, index, input)
    note_read(ids, f"{op}'s index")
    return index_array(op, ids._data.reshape(-1), dim, input.shape[dim])


def index_select(input, dim: int, index) -> Tensor:
    """The slices of dim ``dim`` at positions ``index`` (1-D), in that order, repeats allowed."""
    if input.ndim == 0:
        if isinstance(index, Tensor) and index.numel() != 1:
            raise IndexError(f"index_select: a 0-d tensor has one value, so the index must "
                             f"have one position, got {index.numel()}")
        return index_select(input.reshape(1), 0, index).reshape(())
    dim = wrap_dim(dim, input.ndim, "index_select")
    return IndexSelect.apply(input, dim, _vector_index_tensor("index_select", index, input))


def _index_add_args(op, input, dim, index, source, alpha):
    if input.ndim == 0:
        raise RuntimeError(f"{op}: needs a tensor with at least 1 dim, got a 0-d tensor")
    dim = wrap_dim(dim, input.ndim, op)
    ids = _vector_index_tensor(op, index, input)
    count = ids.numel()
    want = input.shape[:dim] + (count,) + input.shape[dim + 1:]
    if tuple(source.shape) != tuple(want):
        raise RuntimeError(f"{op}: source must have shape {tuple(want)} (the tensor's shape "
                           f"{tuple(input.shape)} with {count} = len(index) in dim {dim}), "
                           f"got {tuple(source.shape)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}: source has dtype {source.dtype} but the tensor has "
                           f"{input.dtype}. Fix: source.to({input.dtype})")
    return dim, ids, source if alpha == 1 else source * alpha


def index_add(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """A copy of ``input`` with ``alpha * source[k]`` added to slice ``index[k]`` of ``dim``."""
    return IndexAdd.apply(input, *_index_add_args("index_add", input, dim, index, source, alpha))


def index_add_(input, dim: int, index, source, *, alpha=1) -> Tensor:
    return apply_inplace(IndexAdd, input,
                         *_index_add_args("index_add_", input, dim, index, source, alpha),
                         convert=False)
