"""Tensors built from other tensors: block_diag, cartesian_prod, combinations, vander,
rot90 and atleast_1d/2d/3d.

None of these needs a ``Function`` of its own: each is a short composition of ops that
already have their derivatives (pad, cat, stack, meshgrid, index_select, cumprod, flip,
transpose, reshape). So their gradients, double backward and forward mode come from
those ops, and a student can read each one as a recipe:

* ``block_diag``: pad each block with zeros left and right, then ``cat`` the rows.
  Backward: ``cat`` splits the gradient by rows, ``pad`` crops each block back out.
* ``cartesian_prod``: ``meshgrid`` the vectors, flatten each grid, ``stack`` as columns.
* ``combinations``: the index tuples are plain integers (itertools), the values are
  picked with ``index_select``, whose backward adds each gradient back to its source.
* ``vander``: the columns are running products ``1, x, x·x, ...`` (``cumprod``), exact
  at ``x = 0`` where ``x ** k`` with ``k = 0`` would give ``0 · x^-1``.
* ``rot90``: a quarter turn is a flip of one dim then a transpose, as in PyTorch.
* ``atleast_*d``: ``reshape`` / ``unsqueeze`` views, or the input itself.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from . import creation
from ._util import wrap_dim
from .gather_scatter import index_select
from .joining import _check_tensors, cat, meshgrid, stack
from .padding import pad
from .reordering import flip
from .scans import cumprod

__all__ = ["block_diag", "cartesian_prod", "combinations", "vander", "rot90",
           "atleast_1d", "atleast_2d", "atleast_3d"]
TENSOR_METHODS = ["rot90"]  # the others are functions only, as in PyTorch


def _check_tensor(op: str, t, i: int | None = None) -> None:
    if not isinstance(t, Tensor):
        which = "the input" if i is None else f"input {i}"
        raise TypeError(f"{op}: expected a Tensor, but {which} is a {type(t).__name__}. "
                        f"Fix: convert it with gradlab.tensor(...)")


# --- block_diag: blocks along the diagonal ---------------------------------------------------

def block_diag(*tensors) -> Tensor:
    """The blocks along the diagonal of one matrix, zeros elsewhere.

    A 0-d input is a ``(1, 1)`` block and a 1-D one of length n a ``(1, n)`` row, as in
    PyTorch; the dtype is the inputs' promoted dtype. Each block is padded with zeros to
    the full width and the padded rows are ``cat``-ed, so each input's gradient is its
    own block of the output gradient: ``d out[r0+i, c0+j] / d A[i, j] = 1``.
    """
    for i, t in enumerate(tensors):
        _check_tensor("block_diag", t, i)
        if t.ndim > 2:
            raise RuntimeError(
                f"block_diag: input tensors must have 2 or fewer dims, but input {i} has "
                f"shape {tuple(t.shape)}. Fix: reshape it into a matrix, or block_diag its "
                f"matrices one by one (*t.unbind(0))")
    if not tensors:  # PyTorch: an empty (1, 0) matrix
        return creation.zeros((1, 0))
    blocks = [t if t.ndim == 2 else t.reshape(1, t.numel())
              for t in _check_tensors("block_diag", tensors)]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        rows.append(pad(b, (left, width - left - b.shape[1])))
        left += b.shape[1]
    return cat(rows, 0)


# --- cartesian_prod and combinations: tuples of elements as rows -----------------------------

def _check_vectors(op: str, tensors) -> None:
    for i, t in enumerate(tensors):
        _check_tensor(op, t, i)
        if t.ndim != 1:
            raise RuntimeError(f"{op}: expects 1-D tensors, but input {i} has shape "
                               f"{tuple(t.shape)}. Fix: flatten it with t.reshape(-1)")


def cartesian_prod(*tensors) -> Tensor:
    """Every tuple ``(a[i], b[j], ...)`` as a row, the last input varying fastest
    (``itertools.product``): shape ``(len(a) * len(b) * ..., number of inputs)``.

    One input comes back as it is, as in PyTorch. The rows are the flattened
    ``meshgrid(..., indexing='ij')`` grids, so ``d/d a[i]`` sums the gradient of every row
    that holds ``a[i]`` (meshgrid's expand sums it back).
    """
    if not tensors:
        raise RuntimeError("cartesian_prod: expects at least one 1-D tensor, got none")
    _check_vectors("cartesian_prod", tensors)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], dim=1)


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of a 1-D tensor's elements as rows, in
    ``itertools.combinations`` order (``combinations_with_replacement`` if asked).

    The index tuples are plain integers; the values are picked with one
    ``index_select``, whose backward adds each row's gradient back onto the elements it
    holds. ``r = 0`` gives an empty 1-D tensor and ``r > len(input)`` (without
    replacement) an empty ``(0, r)`` one, as in PyTorch.
    """
    _check_vectors("combinations", (input,))
    if r < 0:
        raise RuntimeError(f"combinations: r (how many elements each combination has) must be "
                           f">= 0, got r = {r}")
    if r == 0:
        return creation.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    index = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    picked = index_select(input, 0, creation.tensor(index.reshape(-1), device=input.device))
    return picked.reshape(index.shape[0], r)


# --- vander: powers of a vector as columns ---------------------------------------------------

def vander(x, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix: column ``j`` is ``x ** (N - 1 - j)`` (``x ** j`` if
    ``increasing``), ``N = len(x)`` by default. Integers and bools give int64.

    The powers are running products of ``x`` (``cumprod``), so the gradient
    ``d x^k / dx = k x^(k-1)`` is exact at ``x = 0`` too.
    """
    _check_tensor("vander", x)
    if x.ndim != 1:
        raise RuntimeError(f"vander: x must be a 1-D tensor, got shape {tuple(x.shape)}. "
                           f"Fix: flatten it with x.reshape(-1)")
    n = x.shape[0]
    N = n if N is None else int(N)
    if N < 0:
        raise RuntimeError(f"vander: N (the number of columns) must be >= 0, got N = {N}")
    if not x.dtype.is_floating_point and not x.dtype.is_complex:
        x = x.to(_dt.int64)
    ones = creation.ones((n, min(N, 1)), dtype=x.dtype, device=x.device)
    if N <= 1:
        return ones
    powers = cumprod(x.unsqueeze(1).expand(n, N - 1), 1)  # x, x^2, ..., x^(N-1)
    result = cat([ones, powers], 1)
    return result if increasing else flip(result, 1)


# --- rot90: a quarter turn in a plane --------------------------------------------------------

def rot90(input, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by ``k`` quarter turns in the plane of ``dims``, from the first dim towards
    the second (counter-clockwise for a matrix shown row by row). Any ``k``: ``k % 4``
    turns. One turn is ``flip(dims[1])`` then ``transpose``; three are ``flip(dims[0])``
    then ``transpose``; two are a flip of both. Backward undoes them on the gradient.
    """
    _check_tensor("rot90", input)
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected exactly 2 rotation dims (the plane to turn in), "
                           f"got dims = {dims}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: needs a tensor with at least 2 dims, got shape "
                           f"{tuple(input.shape)}. Fix: gradlab.atleast_2d(x) first")
    d0, d1 = (wrap_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90: the rotation dims must be different, got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]} (the same dim of a {input.ndim}-D tensor). "
                           f"Fix: name two dims, e.g. dims=(0, 1)")
    k = int(k) % 4
    if k == 1:
        return flip(input, d1).transpose(d0, d1).contiguous()  # a new tensor, as PyTorch's
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(input, d0).transpose(d0, d1).contiguous()
    return input.clone()


# --- atleast_1d/2d/3d: views with leading (and trailing) dims of size 1 -----------------------

def _atleast(op: str, make, tensors):
    """One tensor in, one out; several (or a list) in, a tuple out, as in PyTorch."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
        for i, t in enumerate(tensors):
            _check_tensor(op, t, i)
        return tuple(make(t) for t in tensors)
    for i, t in enumerate(tensors):
        _check_tensor(op, t, i if len(tensors) > 1 else None)
    out = tuple(make(t) for t in tensors)
    return out[0] if len(out) == 1 else out


def _one_d(t: Tensor) -> Tensor:
    return t.reshape(1) if t.ndim == 0 else t


def _two_d(t: Tensor) -> Tensor:
    return t.reshape(1, 1) if t.ndim == 0 else t.unsqueeze(0) if t.ndim == 1 else t


def _three_d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:  # (n,) -> (1, n, 1), as NumPy and PyTorch
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.ndim == 2 else t


def atleast_1d(*tensors):
    """A 0-d tensor as shape ``(1,)`` (a view); others unchanged (the input itself)."""
    return _atleast("atleast_1d", _one_d, tensors)


def atleast_2d(*tensors):
    """0-d as ``(1, 1)``, 1-D ``(n,)`` as a row ``(1, n)`` (views); others unchanged."""
    return _atleast("atleast_2d", _two_d, tensors)


def atleast_3d(*tensors):
    """0-d as ``(1, 1, 1)``, ``(n,)`` as ``(1, n, 1)``, ``(m, n)`` as ``(m, n, 1)`` (views);
    others unchanged."""
    return _atleast("atleast_3d", _three_d, tensors)
