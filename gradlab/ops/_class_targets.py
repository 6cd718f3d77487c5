"""Class-index targets: what cross_entropy, nll_loss and multi_margin_loss check and pick.

A classifier's scores are (N, C, d1, ...), one per class along dim 1; its
target holds one class index per sample (and position), shape (N, d1, ...).
Before any loss can be computed, the target must be checked (int64, the
right shape, every class in [0, C), except those equal to ``ignore_index``),
and the loss needs, as raw arrays: where each target class sits in the
scores, which positions are ignored, and each target's class weight. The
shapes are checked by the public function; the values inside the op's
forward, which sees the raw target, so a replayed graph checks them too.

That bookkeeping is the same for every loss over class indices, and it is
plain array work with no derivative in it, so it lives here, apart from the
losses in ``classification_losses.py`` whose derivatives are the point.
The weighted 'mean' (divide by the summed weight of the targets that
count, not by N) is here too, with its forward-mode twin.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..tensor import Tensor
from .reduction import quietly

__all__: list[str] = []  # helpers of classification_losses.py, not public


def _shape(t) -> tuple:
    return tuple(t.shape)


def _check_class_target(op: str, input: Tensor, target, weight) -> None:
    """Check (N, C, d1, ...) scores against (N, d1, ...) class indices: dtypes and shapes.

    The values (every class in range) are checked by :func:`_class_targets`, inside
    the loss's forward, so that a replayed graph (``gradlab.jit``) checks them too.
    """
    if not isinstance(target, Tensor) or target.dtype is not _dt.int64:
        what = target.dtype if isinstance(target, Tensor) else type(target).__name__
        raise TypeError(
            f"{op}: target must hold class indices as int64, got {what} with shape "
            f"{_shape(target) if isinstance(target, Tensor) else '?'} (input "
            f"{_shape(input)}). Fix: target.long()")
    want = input.shape[:1] + input.shape[2:]
    if _shape(target) != tuple(want):
        raise ValueError(
            f"{op}: target shape {_shape(target)} doesn't match input {_shape(input)}: class "
            f"indices need the input's shape without the class dim 1, i.e. {tuple(want)}")
    if weight is not None and _shape(weight) != (input.shape[1],):
        raise ValueError(f"{op}: weight must have one entry per class, shape "
                         f"({input.shape[1]},), got {_shape(weight)} (input {_shape(input)})")


def _class_targets(op: str, xp, scores, t, weight, ignore_index) -> _ClassTargets:
    """The raw targets ``t`` of raw ``scores``, range-checked and prepared for the loss.

    Raises IndexError for a class outside [0, C) that is not ``ignore_index``.
    """
    classes = scores.shape[1]
    maybe_ignored = False
    if t.size:
        low, high = int(t.min()), int(t.max())
        maybe_ignored = ignore_index is not None and low <= ignore_index <= high
        if low < 0 or high >= classes:
            bad = t[(t < 0) | (t >= classes)]
            if ignore_index is not None:
                bad = bad[bad != ignore_index]
            if bad.size:
                skip = "" if ignore_index is None else \
                    f", or equal ignore_index={ignore_index} to be skipped"
                raise IndexError(
                    f"{op}: target has class {int(bad.reshape(-1)[0])} but input has {classes} "
                    f"classes (input {tuple(scores.shape)}, target {tuple(t.shape)}); classes "
                    f"must be in [0, {classes - 1}]{skip}")
    w = None if weight is None else weight.astype(scores.dtype, copy=False)
    return _ClassTargets(xp, t, w, ignore_index, maybe_ignored, scores.dtype)


class _ClassTargets:
    """What cross_entropy and nll_loss know about their targets, as raw arrays.

    ``key`` indexes the target class at every position (``scores[key]`` has
    the target's shape); ``keep`` is False where ``target == ignore_index``
    (None: nothing ignored); ``w_t`` is each target's weight, 0 where ignored
    (None: all 1); ``total`` is their sum, the divisor of ``reduction='mean'``.
    The common case, nothing ignored and no weight, does no extra work.
    """

    __slots__ = ("key", "index", "keep", "w_t", "weight", "total")

    def __init__(self, xp, target, weight, ignore_index, maybe_ignored, dtype):
        keep = target != ignore_index if maybe_ignored else None
        if keep is not None and keep.all():
            keep = None
        self.keep = keep
        self.index = index = target if keep is None else xp.where(keep, target, 0)
        n = index.ndim  # scores are (N, C, d1, ...), index is (N, d1, ...)
        key = [xp.arange(s).reshape((s,) + (1,) * (n - 1 - d)) for d, s in enumerate(index.shape)]
        key.insert(1, index)
        self.key = tuple(key)
        if weight is None:
            self.w_t = None if keep is None else keep.astype(dtype)
        else:
            self.w_t = weight[index] if keep is None else weight[index] * keep
        self.weight = weight
        self.total = index.size if self.w_t is None else self.w_t.sum()

    def per_class(self, ndim: int):
        """The class weights shaped to broadcast along dim 1 of an ``ndim``-dim array (or 1)."""
        w = self.weight
        return 1.0 if w is None else w.reshape((-1,) + (1,) * (ndim - 2))

    def kept(self, ndim: int):
        """``keep`` shaped (N, 1, d1, ...) as 0/1 (or the number 1 when nothing is ignored)."""
        keep = self.keep
        return 1.0 if keep is None else keep.reshape(keep.shape[:1] + (1,) + keep.shape[1:])


def _reduce_weighted(loss, targets: _ClassTargets, reduction: str):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if targets.total:
        return loss.sum() / targets.total
    return quietly(lambda: loss.sum() / targets.total)  # all ignored: 0/0 = nan, as PyTorch


def _mean_divisor(targets: _ClassTargets) -> float:
    total = float(targets.total)
    return total if total != 0 else 1.0  # all ignored: every gradient is 0 anyway


def _reduce_tangent(per_target: Tensor, targets: _ClassTargets, reduction: str) -> Tensor:
    """The reduction of per-target tangents, as forward reduced the losses ('mean': ÷ total)."""
    if reduction == "none":
        return per_target
    total = per_target.sum()
    return total / _mean_divisor(targets) if reduction == "mean" else total
