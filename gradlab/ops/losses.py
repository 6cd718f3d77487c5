"""Loss functions: one number that says how wrong a model is, for backward to minimise.

Each loss computes a value per element (or per sample), then reduces:
``reduction='none'`` keeps them, ``'mean'`` averages, ``'sum'`` adds up
(the deprecated ``size_average``/``reduce`` arguments still work, with a
warning, as in PyTorch; those rules are in ``_loss_reduction.py``). Names,
arguments and defaults are PyTorch's.

* regression (in :mod:`gradlab.ops.regression_losses`): ``mse_loss`` (x-y)²,
  ``l1_loss`` |x-y|, ``smooth_l1_loss`` and ``huber_loss`` (quadratic near 0,
  linear beyond, so outliers pull less);
* probabilities: ``binary_cross_entropy`` (and ``_with_logits``), ``kl_div``;
* margins and embeddings: ``margin_ranking_loss``, ``hinge_embedding_loss``,
  ``cosine_embedding_loss``;
* classes (in :mod:`gradlab.ops.classification_losses`): ``cross_entropy``,
  ``nll_loss``, ``multi_margin_loss``.

This module holds the probability and margin losses and lists all of them
(``FUNCTIONAL``, re-exported as ``gradlab.nn.functional``).

Where PyTorch's graph shows one node for a loss (``MseLossBackward0``,
``BinaryCrossEntropyWithLogitsBackward0`` ...), the loss here is one
``Function`` too, with the reduction folded in and its derivative below it;
that also keeps it stable (log 0, exp of a large logit). The others (l1,
kl_div, the margin losses) are short compositions, as in PyTorch.

Forward mode: a loss node's tangent is the reduction of ∂l/∂x · ẋ + ∂l/∂y · ẏ,
the same per-element slopes its backward uses.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._loss_reduction import _each, _reduce, apply_reduction, reduction_mode
from ._util import promote, tangent_sum, xp_for
from .classification_losses import FUNCTIONAL as _CLASSIFICATION
from .classification_losses import (  # noqa: F401 - listed in FUNCTIONAL (F.cross_entropy ...)
    cross_entropy,
    multi_margin_loss,
    nll_loss,
)
from .reduction import quietly
from .regression_losses import FUNCTIONAL as _REGRESSION
from .regression_losses import (  # noqa: F401 - listed in FUNCTIONAL (F.mse_loss ...)
    _check_pair,
    huber_loss,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from .selection import where

__all__ = ["binary_cross_entropy_with_logits", "kl_div", "hinge_embedding_loss",
           "margin_ranking_loss", "cosine_embedding_loss"]  # PyTorch has these at torch.<name>
FUNCTIONAL = [*_REGRESSION, "binary_cross_entropy", "binary_cross_entropy_with_logits",
              "kl_div", "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
              *_CLASSIFICATION]
TENSOR_METHODS: list = []


def _shape(t) -> tuple:
    return tuple(t.shape)


# --- binary cross entropy: one probability per element ----------------------------------------

def _same_shape(op: str, input, target) -> None:
    if _shape(target) != _shape(input):
        raise ValueError(f"{op}: target shape {_shape(target)} must equal input shape "
                         f"{_shape(input)} (one target per prediction). Fix: reshape the target, "
                         f"e.g. target.view({_shape(input)})")


def _weight_for(op: str, weight, input):
    """A weight that broadcasts to the input's shape, as a raw array of its dtype (or None)."""
    if weight is None:
        return None
    shape = _shape(input)
    try:
        ok = np.broadcast_shapes(_shape(weight), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{op}: weight of shape {_shape(weight)} must broadcast to the input's "
                         f"shape {shape}")
    return weight._data.astype(input._data.dtype, copy=False)


class BinaryCrossEntropy(Function):
    """l = -w (y log x + (1-y) log(1-x)), each log clamped at -100 so that x = 0 or 1 stays finite.

    d/dx = w (x - y) / max(x (1-x), 1e-12);  d/dy = w (log(1-x) - log x).
    The reduction is part of the node, as in PyTorch.
    """

    raw = True
    name = "binary_cross_entropy"

    @staticmethod
    def forward(ctx, x, y, w, reduction):
        ctx.reduction = reduction
        xp = xp_for(x)
        log_x = quietly(lambda: xp.maximum(xp.log(x), -100))  # log 0 = -inf, clamped
        log_1mx = quietly(lambda: xp.maximum(xp.log1p(-x), -100))
        loss = -(y * log_x + (1 - y) * log_1mx)
        ctx.save_for_backward(x, y, w)
        return _reduce(loss if w is None else loss * w, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y, w = ctx.saved_tensors
        grad = _each(grad, ctx.reduction, x.shape)
        if w is not None:
            grad = grad * w
        slope_x, slope_y = BinaryCrossEntropy.slopes(x, y, *ctx.needs_input_grad[:2])
        return (None if slope_x is None else grad * slope_x,
                None if slope_y is None else grad * slope_y, None, None)

    @staticmethod
    def jvp(ctx, tx, ty, *_):
        """jvp: l̇ = reduce(w (dl/dx · ẋ + dl/dy · ẏ)), with backward's slopes."""
        x, y = ctx.primals[:2]
        w = ctx.saved_tensors[2]
        slope_x, slope_y = BinaryCrossEntropy.slopes(x, y, tx is not None, ty is not None)
        per = tangent_sum(x.shape, None if tx is None else tx * slope_x,
                          None if ty is None else ty * slope_y)
        return apply_reduction(per if w is None else per * w, ctx.reduction)

    @staticmethod
    def slopes(x, y, need_x: bool, need_y: bool):
        """(dl/dx, dl/dy) per element, without the weight (None where not needed)."""
        slope_x = (x - y) / (x * (1 - x)).clamp(min=1e-12) if need_x else None
        slope_y = (-x).log1p().clamp(min=-100) - x.log().clamp(min=-100) if need_y else None
        return slope_x, slope_y


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """-w (y log x + (1-y) log(1-x)) for probabilities ``input`` in [0, 1]."""
    reduction = reduction_mode("binary_cross_entropy", reduction, size_average, reduce)
    _same_shape("binary_cross_entropy", input, target)
    x = input._data
    if x.size and not bool(((x >= 0) & (x <= 1)).all()):  # (NaN fails this too, as PyTorch)
        raise ValueError(
            "binary_cross_entropy: all elements of input should be between 0 and 1, got values "
            f"in [{float(x.min()):.4g}, {float(x.max()):.4g}] (shape {_shape(input)}). If these "
            "are logits, use binary_cross_entropy_with_logits (or sigmoid them first)")
    w = _weight_for("binary_cross_entropy", weight, input)
    return BinaryCrossEntropy.apply(input, target.to(input.dtype), w, reduction)


class BinaryCrossEntropyWithLogits(Function):
    """l = w ((1-y) x + (1 + (pw-1) y) softplus(-x)), softplus(-x) = max(-x, 0) + log1p(e^-|x|).

    Written this way nothing overflows for any x (without pos_weight it is
    max(x, 0) - x y + log1p(e^-|x|)).
    d/dx = w ((1 + (pw-1) y) sigmoid(x) - pw y);  d/dy = w ((pw-1) softplus(-x) - x).
    The reduction is part of the node, as in PyTorch.
    """

    raw = True
    name = "binary_cross_entropy_with_logits"

    @staticmethod
    def forward(ctx, x, y, w, pw, reduction):
        ctx.reduction = reduction
        xp = xp_for(x)
        softplus_neg = xp.maximum(-x, 0) + xp.log1p(xp.exp(-xp.abs(x)))
        log_weight = 1 if pw is None else 1 + (pw - 1) * y
        loss = (1 - y) * x + log_weight * softplus_neg
        ctx.save_for_backward(x, y, w, pw)
        return _reduce(loss if w is None else loss * w, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y, w, pw = ctx.saved_tensors
        grad = _each(grad, ctx.reduction, x.shape)
        if w is not None:
            grad = grad * w
        need_x, need_y = ctx.needs_input_grad[:2]
        slope_x, slope_y = BinaryCrossEntropyWithLogits.slopes(x, y, pw, need_x, need_y)
        return (None if slope_x is None else grad * slope_x,
                None if slope_y is None else grad * slope_y, None, None, None)

    @staticmethod
    def jvp(ctx, tx, ty, *_):
        """jvp: l̇ = reduce(w (dl/dx · ẋ + dl/dy · ẏ)), with backward's slopes."""
        x, y = ctx.primals[:2]
        _, _, w, pw = ctx.saved_tensors
        slope_x, slope_y = BinaryCrossEntropyWithLogits.slopes(x, y, pw, tx is not None,
                                                               ty is not None)
        per = tangent_sum(x.shape, None if tx is None else tx * slope_x,
                          None if ty is None else ty * slope_y)
        return apply_reduction(per if w is None else per * w, ctx.reduction)

    @staticmethod
    def slopes(x, y, pw, need_x: bool, need_y: bool):
        """(dl/dx, dl/dy) per element, without the weight (None where not needed)."""
        slope_x = slope_y = None
        if need_x:
            slope_x = x.sigmoid() - y if pw is None else \
                (1 + (pw - 1) * y) * x.sigmoid() - pw * y
        if need_y:
            if pw is None:
                slope_y = -x
            else:
                softplus_neg = (-x).relu() + (-x.abs()).exp().log1p()
                slope_y = (pw - 1) * softplus_neg - x
        return slope_x, slope_y


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:
    """Binary cross entropy of sigmoid(``input``), computed from the logits without overflow.

    ``pos_weight`` (broadcast over the last dim: one per class) scales the positive term.
    """
    op = "binary_cross_entropy_with_logits"
    reduction = reduction_mode(op, reduction, size_average, reduce)
    _same_shape(op, input, target)
    w = _weight_for(op, weight, input)
    pw = None
    if pos_weight is not None:
        try:
            pw = _weight_for(op, pos_weight, input)
        except ValueError:
            raise ValueError(
                f"{op}: pos_weight of shape {_shape(pos_weight)} must broadcast to the input's "
                f"shape {_shape(input)}; it holds one weight per class (the last dim)") from None
    return BinaryCrossEntropyWithLogits.apply(input, target.to(input.dtype), w, pw, reduction)


# --- KL divergence: how far a distribution is from a target distribution ----------------------

class XLogY(Function):
    """t log t, with 0 log 0 = 0 (PyTorch's xlogy(t, t)): the entropy part of kl_div.

    d/dt = log t + 1.   jvp: ṫ · (log t + 1) ("elementwise").
    """

    raw = True
    name = "xlogy"
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, t):
        xp = xp_for(t)
        ctx.save_for_backward(t)
        return quietly(lambda: xp.where(t == 0, 0, t * xp.log(t))).astype(t.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (t,) = ctx.saved_tensors
        return grad * (t.log() + 1)


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) per element; ``input`` holds log-probabilities.

    Use reduction='batchmean' for the true KL divergence (the sum over a
    sample, averaged over the batch); 'mean' also divides by the number of
    classes, and warns, as PyTorch does.
    """
    reduction = reduction_mode("kl_div", reduction, size_average, reduce, extra=("batchmean",))
    if reduction == "mean" and size_average is None and reduce is None:
        warnings.warn("kl_div: reduction='mean' divides the total loss by both the batch size "
                      "and the support size; 'batchmean' divides only by the batch size, which "
                      "is the KL divergence's definition.", UserWarning, stacklevel=2)
    _check_pair("kl_div", input, target)
    input, target = _broadcast(*promote(input, target))  # float16 vs float32: float32
    # l = t (log t - x), or e^t (t - x) for log-probability targets: composed, as PyTorch does
    loss = target.exp() * (target - input) if log_target else XLogY.apply(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return apply_reduction(loss, reduction)


def _broadcast(a: Tensor, b: Tensor):
    shape = np.broadcast_shapes(_shape(a), _shape(b))
    return (a if _shape(a) == shape else a.expand(shape),
            b if _shape(b) == shape else b.expand(shape))


# --- margins: a loss only when a score is on the wrong side (or too close) ---------------------

def _same_ndim(op: str, *tensors) -> None:
    if len({t.ndim for t in tensors}) > 1:
        shapes = ", ".join(str(_shape(t)) for t in tensors)
        raise RuntimeError(f"{op}: input1, input2 and target must have the same number of dims, "
                           f"got shapes {shapes}")


def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -y (x1 - x2) + margin): y = 1 wants x1 ranked above x2 by the margin, y = -1 below."""
    reduction = reduction_mode("margin_ranking_loss", reduction, size_average, reduce)
    _same_ndim("margin_ranking_loss", input1, input2, target)
    return apply_reduction((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """x where y = 1, max(0, margin - x) where y = -1 (x is usually a distance)."""
    reduction = reduction_mode("hinge_embedding_loss", reduction, size_average, reduce)
    _check_pair("hinge_embedding_loss", input, target)
    far_enough = (margin - input).clamp(min=0)
    loss = where(target != 1, far_enough, 0.0) + where(target != -1, input, 0.0)
    return apply_reduction(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where y = 1; max(0, cos(x1, x2) - margin) where y = -1.

    Rows of (N, D) inputs with (N,) targets, or one (D,) pair with a 0-d target.
    """
    op = "cosine_embedding_loss"
    reduction = reduction_mode(op, reduction, size_average, reduce)
    if input1.ndim not in (1, 2) or _shape(input1) != _shape(input2) or \
            target.ndim != input1.ndim - 1 or _shape(target) != _shape(input1)[:-1]:
        raise RuntimeError(f"{op}: expected inputs of one shape, (N, D) with an (N,) target or "
                           f"(D,) with a 0-d target; got {_shape(input1)}, {_shape(input2)} and "
                           f"target {_shape(target)}")
    dim = input1.ndim - 1
    dot = (input1 * input2).sum(dim)
    norms = (((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)).sqrt()
    cos = dot / norms
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp(min=0),
                                                   0.0)
    return apply_reduction(loss, reduction)
