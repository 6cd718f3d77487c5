"""Two more margin losses, each a composition of differentiable ops.

* ``multilabel_margin_loss``: a hinge between every target class of a sample
  and every class that is not one of its targets (several right answers);
* ``triplet_margin_with_distance_loss``: ``triplet_margin_loss`` with any
  distance function in place of the p-norm.

Both are built from ops that already have backward and tangent rules (gather,
relu, where, clamp_min, minimum), so gradients, double backward and forward
mode come for free. The reduction rules are in ``_loss_reduction.py``. Both
are ``nn.functional`` only, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import dtypes as _dt
from ..tensor import Tensor
from ._loss_reduction import apply_reduction, reduction_mode
from ._util import xp_for
from .activation import relu
from .creation import as_tensor
from .products import pairwise_distance
from .selection import minimum, where

__all__: list = []  # PyTorch has these at torch.nn.functional only
FUNCTIONAL = ["multilabel_margin_loss", "triplet_margin_with_distance_loss"]
TENSOR_METHODS: list = []


def _shape(t) -> tuple:
    return tuple(t.shape)


def _target_sets(op: str, target: Tensor, classes: int):
    """Read (N, C) class indices that end at the first -1, as raw arrays: which slots j
    hold a real target (``listed``), the indices with -1 read as 0 (``index``, safe to
    gather with), and which classes are targets of their sample (``chosen``)."""
    t = target._data
    if t.size and (int(t.min()) < -1 or int(t.max()) >= classes):
        bad = t[(t < -1) | (t >= classes)].reshape(-1)[0]
        raise IndexError(f"{op}: target holds {int(bad)}, out of range: each entry is a class "
                         f"in [0, {classes - 1}], or -1 to end the sample's list of targets")
    xp = xp_for(t)
    listed = (t >= 0).astype(xp.int8).cumprod(axis=1).astype(bool)  # up to the first -1
    index = t * listed  # (a -1 read as class 0; never counted, see listed)
    hits = (index[:, :, None] == xp.arange(classes)) & listed[:, :, None]
    return listed, index, hits.any(axis=1)


def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """Σ_j Σ_{i not a target} max(0, 1 - (x[y_j] - x[i])) / C for each sample, where
    y_0, y_1, ... are the sample's target classes, up to the first -1.

    Scores (C,) or (N, C); the target has the input's shape (int64). Each
    target class should beat each other class by a margin of 1. The hinge is
    ``relu``, whose slope at exactly 0 is 0, as in PyTorch's kernel (z > 0).
    d/dx[i] = Σ_j [z_ji > 0] / C, d/dx[y_j] = -Σ_i [z_ji > 0] / C.
    """
    op = "multilabel_margin_loss"
    reduction = reduction_mode(op, reduction, size_average, reduce)
    if not isinstance(input, Tensor) or not input.dtype.is_floating_point:
        what = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise TypeError(f"{op}: expected floating point scores, got {what}. Fix: .float()")
    if not isinstance(target, Tensor) or target.dtype is not _dt.int64:
        what = target.dtype if isinstance(target, Tensor) else type(target).__name__
        raise TypeError(f"{op}: target must hold class indices as int64 (-1 ends a list), got "
                        f"{what}. Fix: target.long()")
    if input.ndim > 2 or (input.ndim and input.shape[-1] == 0):
        raise ValueError(f"{op}: input must be non-empty (C,) or (N, C) scores, got shape "
                         f"{_shape(input)}")
    if _shape(target) != _shape(input):
        raise ValueError(f"{op}: target shape {_shape(target)} doesn't match input "
                         f"{_shape(input)}: each sample lists its target classes in a row as "
                         f"long as its scores, padded with -1")
    batched = input.ndim == 2
    classes = input.shape[-1] if input.ndim else 1
    x = input.reshape(-1, classes)
    listed, index, chosen = _target_sets(op, target.reshape(-1, classes), classes)
    device = input.device
    x_target = x.gather(1, as_tensor(index, device=device))  # x[y_j], (N, j)
    z = relu(1 - x_target.unsqueeze(2) + x.unsqueeze(1))  # (N, j, i)
    counts = as_tensor(listed[:, :, None] & ~chosen[:, None, :], device=device)
    loss = where(counts, z, 0.0).sum((1, 2)) / classes  # not z * mask: NaN·0 would leak
    if not batched:
        loss = loss.reshape(())
    if reduction == "mean" and loss.numel() == 0:
        return loss.sum()  # PyTorch: the mean over no samples is 0 here, not nan
    return apply_reduction(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) for any distance d (default: pairwise_distance,
    the 2-norm over the last dim).

    ``swap`` uses min(d(a, n), d(p, n)), the harder negative distance. Any
    function of two tensors made of differentiable ops works as d (cosine
    distance, a learned metric ...); the loss's gradient is d's chained
    through the hinge.
    """
    op = "triplet_margin_with_distance_loss"
    reduction = reduction_mode(op, reduction)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"{op}: the anchor, positive, and negative tensors are expected to "
                           f"have the same number of dimensions, but got: anchor "
                           f"{anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    if not callable(distance):
        raise TypeError(f"{op}: distance_function must be a function of two tensors (or None "
                        f"for pairwise_distance), got {type(distance).__name__}")
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return apply_reduction((margin + d_pos - d_neg).clamp_min(0), reduction)
