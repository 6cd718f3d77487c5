"""More products and distances: tensordot, inner, mv, kron, cross, cdist, and, for
``nn.functional``, cosine_similarity and pairwise_distance.

Most are *compositions* of ops gradlab already has (einsum, matmul, reshape,
mul, roll, norm): the graph shows those ops, and their gradients, double
backward and forward mode come with them, right by construction. Only
``cdist`` is one op of its own: composed, the Euclidean distance would be
``sqrt`` of a sum of squares, whose gradient at distance 0 is 0/0 = nan;
PyTorch (and ``Cdist`` below) take it as 0 there.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import autocast_once, promote, unbroadcast, wrap_dim, xp_for
from .arithmetic import mul
from .linalg import _LETTERS, einsum, matmul
from .reordering import roll
from .selection import where
from .statistics import norm

__all__ = ["tensordot", "inner", "mv", "kron", "cross", "cdist", "cosine_similarity",
           "pairwise_distance"]
FUNCTIONAL = ["cosine_similarity", "pairwise_distance"]
TENSOR_METHODS = ["inner", "mv", "kron", "cross"]


def _tensors(op: str, a, b) -> None:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected two tensors, got {type(a).__name__} and "
                        f"{type(b).__name__}; wrap numbers with gradlab.tensor(...)")


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """Sum of products over paired dims: ``dims=k`` pairs a's last k dims with b's first k;
    ``dims=([1, 0], [0, 1])`` names the pairs. The output keeps a's other dims, then b's.

    An einsum in which each pair of dims shares a letter, so its gradient is einsum's:
    d out/d a = the product with b of the output gradient, over b's free dims.
    """
    _tensors("tensordot", a, b)
    if out is not None:
        raise TypeError("tensordot: out= is not supported; use the returned tensor")
    dims_a, dims_b = _paired_dims(a, b, dims)
    letters = iter(_LETTERS)
    sub_a = [next(letters) for _ in range(a.ndim)]
    sub_b = [None] * b.ndim
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(
                f"tensordot: dim {da} of a (size {a.shape[da]}) is paired with dim {db} of b "
                f"(size {b.shape[db]}), but paired dims must have the same size (shapes "
                f"{tuple(a.shape)} and {tuple(b.shape)})")
        sub_b[db] = sub_a[da]
    sub_b = [c if c is not None else next(letters) for c in sub_b]
    kept = [c for i, c in enumerate(sub_a) if i not in dims_a] + \
        [c for i, c in enumerate(sub_b) if i not in dims_b]
    equation = f"{''.join(sub_a)},{''.join(sub_b)}->{''.join(kept)}"
    return autocast_once("tensordot", lambda x, y: einsum(equation, x, y), a, b)


def _paired_dims(a: Tensor, b: Tensor, dims) -> tuple[list[int], list[int]]:
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0 or dims > min(a.ndim, b.ndim):
            raise RuntimeError(
                f"tensordot: dims={dims} pairs a's last {dims} dims with b's first {dims}, but "
                f"the shapes are {tuple(a.shape)} and {tuple(b.shape)}; use 0 to "
                f"{min(a.ndim, b.ndim)}, or name the pairs: dims=([1], [0])")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise RuntimeError(f"tensordot: dims must be an int or a pair of lists of dims, e.g. "
                           f"([1, 0], [0, 1]), got {dims!r}")
    dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError(f"tensordot: both lists of dims must have the same length, got "
                           f"{dims_a} and {dims_b}; each dim of a is paired with one of b")
    dims_a = [wrap_dim(d, a.ndim, "tensordot") for d in dims_a]
    dims_b = [wrap_dim(d, b.ndim, "tensordot") for d in dims_b]
    if len(set(dims_a)) != len(dims_a) or len(set(dims_b)) != len(dims_b):
        raise RuntimeError(f"tensordot: a dim is named twice in dims {dims!r}; each dim can be "
                           f"paired once")
    return dims_a, dims_b


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Products summed over the last dim of each: out[i.., j..] = Σ_k a[i.., k] b[j.., k].

    For 1-d tensors the dot product; a 0-d operand multiplies instead.
    """
    _tensors("inner", input, other)
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner: the last dims must have the same size, got shapes "
                           f"{tuple(input.shape)} and {tuple(other.shape)}; did you mean "
                           f"matmul (which pairs a's last dim with b's second-to-last)?")
    # (autocast: PyTorch's 1-d inner is a dot, left alone on the CPU; any other is an mm)
    rule = "dot" if input.ndim == other.ndim == 1 else "tensordot"
    return autocast_once(rule, tensordot, input, other, ([-1], [-1]))


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix times vector: (n, m) @ (m,) -> (n,).   d/dA = grad ⊗ v, d/dv = Aᵀ grad."""
    _tensors("mv", input, vec)
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: expects a matrix (2-d) and a vector (1-d), got shapes "
                           f"{tuple(input.shape)} and {tuple(vec.shape)}; use matmul for "
                           f"other ranks")
    return autocast_once("mv", matmul, input, vec)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """Kronecker product: a block tensor whose block i is a[i] · b, of shape a.shape * b.shape.

    Composed as out[i, k, j, l] = a[i, :, j, :] · b[:, k, :, l] (interleaved new dims,
    broadcasting), then merged to (i·p + k, j·q + l); so d out/d a sums the gradient's
    blocks times b.
    """
    _tensors("kron", input, other)
    ndim = max(input.ndim, other.ndim)
    sa = (1,) * (ndim - input.ndim) + tuple(input.shape)
    sb = (1,) * (ndim - other.ndim) + tuple(other.shape)
    a = input.reshape([n for s in sa for n in (s, 1)])
    b = other.reshape([n for s in sb for n in (1, s)])
    return mul(a, b).reshape([m * n for m, n in zip(sa, sb)])


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (broadcasting the other dims).

    c = (a₁b₂ - a₂b₁, a₂b₀ - a₀b₂, a₀b₁ - a₁b₀) = roll(a, -1)·roll(b, 1) - roll(a, 1)·roll(b, -1),
    linear in each input: d c/d a = [b]ₓᵀ, so a's gradient is b × grad.
    ``dim=None`` takes the first dim of size 3, as PyTorch does (with its warning).
    """
    _tensors("cross", input, other)
    if input.ndim != other.ndim:
        raise RuntimeError(f"cross: input and other must have the same number of dims, got "
                           f"shapes {tuple(input.shape)} and {tuple(other.shape)}; unsqueeze "
                           f"the smaller one (e.g. b.unsqueeze(0)) to broadcast it")
    try:
        shape = _broadcast_shapes(input.shape, other.shape)
    except ValueError:
        raise RuntimeError(f"cross: shapes {tuple(input.shape)} and {tuple(other.shape)} can't "
                           f"be broadcast together") from None
    if dim is None:
        warnings.warn("cross: calling it without dim is deprecated in PyTorch; pass dim "
                      "(e.g. dim=-1) explicitly", UserWarning, stacklevel=2)
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"cross: no dim of size 3 in the broadcast shape {shape}; the "
                               f"cross product needs 3-vectors")
    d = wrap_dim(dim, len(shape), "cross")
    for name, t in (("input", input), ("other", other)):
        if t.shape[d] != 3:
            raise RuntimeError(f"cross: dim {dim} of {name} (shape {tuple(t.shape)}) must have "
                               f"size 3: the cross product is defined for 3-vectors")
    a, b = promote(input, other)
    return roll(a, -1, d) * roll(b, 1, d) - roll(a, 1, d) * roll(b, -1, d)


def _broadcast_shapes(sa, sb) -> tuple:
    return tuple(np.broadcast_shapes(tuple(sa), tuple(sb)))


# --- cdist ------------------------------------------------------------------------------------

def p_norm_of_last(xp, size, p):
    """‖·‖_p over the last dim of ``size`` (absolute differences, raw arrays): the distance
    of cdist and pdist. p = 0 counts the nonzero entries; an empty last dim gives 0."""
    if p == 2:
        return xp.sqrt((size * size).sum(-1))
    if p == 1:
        return size.sum(-1)
    if p == 0:
        return (size != 0).sum(-1)
    if math.isinf(p):
        return size.max(-1) if size.shape[-1] else size.sum(-1)
    return (size ** p).sum(-1) ** (1 / p)


class Cdist(Function):
    """d[..., i, j] = ‖x1[..., i, :] - x2[..., j, :]‖_p, every row of x1 against every row of x2.

    With diff = x1_i - x2_j, d d/d x1_i = local(diff) = -d d/d x2_j, where local is
    sign(diff) for p = 1, diff/d for p = 2, sign(diff)·(|diff|/d)^(p-1) in general, and
    sign(diff) on the coordinates where |diff| = d for p = inf; taken as 0 where d = 0.
    For p = 2 backward needs no (i, j, m) tensor: Σ_j g_ij (x1_i - x2_j)/d_ij = w.sum(j)·x1_i
    - (w @ x2)_i with w = g/d.
    """

    raw = True

    @staticmethod
    def forward(ctx, x1, x2, p):
        ctx.p = p
        xp = xp_for(x1)
        out = p_norm_of_last(xp, xp.abs(x1[..., :, None, :] - x2[..., None, :, :]), p)
        out = out.astype(x1.dtype, copy=False)
        ctx.save_for_backward(x1, x2, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x1, x2, d = ctx.saved_tensors
        s1, s2, _ = ctx.input_shapes
        if ctx.p == 0:
            return (None if s1 is None else x1 * 0.0), (None if s2 is None else x2 * 0.0), None
        if ctx.p == 2:
            zero = d == 0
            w = where(zero, 0.0, grad / where(zero, 1.0, d))  # safe: no 0/0, not even later
            g1 = w.sum(-1).unsqueeze(-1) * x1 - matmul(w, x2)
            g2 = w.sum(-2).unsqueeze(-1) * x2 - matmul(w.mT, x1)
        else:
            weighted = grad.unsqueeze(-1) * _local_derivative(x1, x2, d, ctx.p)
            g1, g2 = weighted.sum(-2), -weighted.sum(-3)
        return (None if s1 is None else unbroadcast(g1, s1),
                None if s2 is None else unbroadcast(g2, s2), None)

    @staticmethod
    def jvp(ctx, t1, t2, _):
        """ḋ_ij = Σ_m local(diff)_ijm · (ẋ1_im - ẋ2_jm)."""
        x1, x2, _p = ctx.primals
        d = ctx.results[0]
        if ctx.p == 0:
            return d * 0.0
        change = (0.0 if t1 is None else t1.unsqueeze(-2)) - \
            (0.0 if t2 is None else t2.unsqueeze(-3))
        return (_local_derivative(x1, x2, d, ctx.p) * change).sum(-1)


def _local_derivative(x1: Tensor, x2: Tensor, d: Tensor, p: float) -> Tensor:
    """∂d_ij/∂x1_im for every (i, j, m), in tensor ops (see ``Cdist``)."""
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    dist = d.unsqueeze(-1)
    if p == 1:
        return diff.sign()
    if math.isinf(p):
        return where(diff.abs() == dist, diff.sign(), 0.0)
    zero = dist == 0
    ratio = diff.abs() / where(zero, 1.0, dist)
    if p == 2:
        return where(zero, 0.0, diff / where(zero, 1.0, dist))
    if p < 1:  # |diff|^(p-1) blows up at diff = 0; PyTorch takes 0 there
        zero = zero | (diff == 0)
        ratio = where(zero, 1.0, ratio)
    return where(zero, 0.0, diff.sign() * ratio ** (p - 1))


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distances between each row of x1 (…, P, M) and each row of x2 (…, R, M):
    (…, P, R). Batch dims broadcast. ``compute_mode`` is accepted and ignored (gradlab always
    subtracts, which is exact; PyTorch may use a faster matmul form for p = 2)."""
    _tensors("cdist", x1, x2)
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist: x1 and x2 must have at least 2 dims (rows, features), got "
                           f"shapes {tuple(x1.shape)} and {tuple(x2.shape)}; use "
                           f"x.unsqueeze(0) for a single point")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: x1 and x2 must have the same number of features (last "
                           f"dim), got shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    if not x1.dtype.is_floating_point or not x2.dtype.is_floating_point:
        raise RuntimeError(f"cdist: only floating point tensors are supported, got {x1.dtype} "
                           f"and {x2.dtype}. Fix: convert with .float()")
    if not p >= 0:
        raise RuntimeError(f"cdist: p must be >= 0 (1: Manhattan, 2: Euclidean, inf: "
                           f"Chebyshev), got {p}")
    try:
        _broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        raise RuntimeError(f"cdist: the batch dims of shapes {tuple(x1.shape)} and "
                           f"{tuple(x2.shape)} can't be broadcast together") from None
    a, b = promote(x1, x2)
    return Cdist.apply(a, b, float(p))


# --- nn.functional ----------------------------------------------------------------------------

def _as_float(t: Tensor) -> Tensor:
    return t if t.dtype.is_floating_point else t.to(_dt.get_default_dtype())


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """cos θ = x1·x2 / (max(‖x1‖, eps) · max(‖x2‖, eps)) along ``dim`` (broadcasting).

    Each vector is divided by its clamped norm first, as PyTorch does: the result stays in
    [-1, 1] and a zero vector gives 0, not nan. Composed of norm, clamp_min, div, mul and
    sum, so its gradient is theirs: d cos/d x1 = (x̂2 - cos·x̂1)/‖x1‖ (norms above eps).
    """
    _tensors("cosine_similarity", x1, x2)
    a, b = promote(_as_float(x1), _as_float(x2))
    if a.shape != b.shape:
        try:
            shape = _broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise RuntimeError(f"cosine_similarity: shapes {tuple(x1.shape)} and "
                               f"{tuple(x2.shape)} can't be broadcast together") from None
        a, b = a.expand(shape), b.expand(shape)
    dim = wrap_dim(dim, a.ndim, "cosine_similarity")
    unit_a = a / norm(a, 2, dim, keepdim=True).clamp_min(eps)
    unit_b = b / norm(b, 2, dim, keepdim=True).clamp_min(eps)
    return (unit_a * unit_b).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """‖x1 - x2 + eps‖_p over the last dim (broadcasting): the distance between matching rows.

    ``eps`` (added to each difference, as PyTorch does) keeps the 2-norm away from its
    kink at 0. Composed of sub, add and norm: d/d x1 = (x1 - x2 + eps)/distance (p = 2).
    """
    _tensors("pairwise_distance", x1, x2)
    a, b = promote(_as_float(x1), _as_float(x2))
    return norm(a - b + eps, p, -1, keepdim=keepdim)
