"""Classification losses over C classes: cross_entropy, nll_loss, multi_margin_loss.

A classifier outputs one score (logit) per class; these losses say how far
the scores are from the right answer. ``cross_entropy`` is the one almost
every classifier trains with, so it is one node with its own derivative::

    loss_i = -log softmax(x_i)[y_i] = logsumexp(x_i) - x_i[y_i]
    d loss_i / d x_i = softmax(x_i) - one_hot(y_i)

The gradient is "what the model believed minus what was true", and the
one-hot is never built: the backward subtracts the weight at each target.
Forward mode reads the same row of the Jacobian along the tangent:
losṡ_i = Σ_c (softmax(x_i) - one_hot(y_i))_c · ẋ_ic.

Checking class-index targets and picking at them is in ``_class_targets.py``,
the reduction rules every loss shares in ``_loss_reduction.py``;
:mod:`gradlab.ops.losses` re-exports these losses.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor
from ._class_targets import (
    _check_class_target,
    _class_targets,
    _mean_divisor,
    _reduce_tangent,
    _reduce_weighted,
)
from ._loss_reduction import apply_reduction, reduction_mode
from ._util import keep_where, promote, tangent_sum, xp_for
from .creation import arange, as_tensor, zeros, zeros_like
from .gather_scatter import Scatter
from .selection import where
from .softmax_family import log_softmax, softmax

__all__: list[str] = []  # none of these is at torch.<name>
FUNCTIONAL = ["cross_entropy", "nll_loss", "multi_margin_loss"]
TENSOR_METHODS: list = []


def _shape(t) -> tuple:
    return tuple(t.shape)


def _const(value, like: Tensor) -> Tensor:
    """A raw array or number as a constant tensor beside ``like``."""
    return as_tensor(value, dtype=like.dtype, device=like.device)


# --- cross_entropy with class indices: one node ------------------------------------------------

class CrossEntropy(Function):
    """Softmax, log and pick in one stable step; scores (N, C, d1, ...), classes in dim 1.

    loss_i = w[y_i] (logsumexp(x_i) - x_i[y_i]); with label smoothing ε over C
    classes, (1-ε) times that plus ε/C · Σ_c w_c (logsumexp(x_i) - x_ic).
    logsumexp subtracts the row max m first, so exp never overflows.

    d loss_i/d x_ic = w[y_i] (p_ic - [c = y_i]), p = softmax(x_i)
    (+ ε/C (W p_ic - w_c) with smoothing, W = Σ_c w_c).
    jvp: losṡ_i = Σ_c (d loss_i/d x_ic) · ẋ_ic, reduced like the losses.
    """

    raw = True
    name = "cross_entropy"

    @staticmethod
    def forward(ctx, a, target, weight, ignore_index, reduction, smoothing):
        xp = xp_for(a)
        targets = _class_targets("cross_entropy", xp, a, target, weight, ignore_index)
        shifted = a - a.max(axis=1, keepdims=True)
        e = xp.exp(shifted)
        sum_e = e.sum(axis=1, keepdims=True)
        log_sum_e = xp.log(sum_e)[:, 0]
        # -log p[y] = log Σ exp - shifted[y]: only the picked entries of log-softmax are needed
        loss = _ignoring(xp, targets, log_sum_e - shifted[targets.key])
        if smoothing:
            w = targets.weight
            w_sum = a.shape[1] if w is None else w.sum()
            by_class = shifted.sum(axis=1) if w is None else \
                xp.tensordot(w, shifted, axes=([0], [1]))
            smooth = w_sum * log_sum_e - by_class  # -Σ_c w_c log p_c
            if targets.keep is not None:
                smooth = keep_where(xp, smooth, targets.keep)
            loss = (1 - smoothing) * loss + (smoothing / a.shape[1]) * smooth
        ctx.save_for_backward(a, e, sum_e)  # softmax = e / sum_e, finished in backward
        ctx.targets, ctx.reduction, ctx.smoothing = targets, reduction, smoothing
        return _reduce_weighted(loss.astype(a.dtype, copy=False), targets, reduction)

    @staticmethod
    def backward(ctx, grad):
        a, e, sum_e = ctx.saved_tensors
        return CrossEntropyBackward.apply(grad, a, e, sum_e, ctx.targets, ctx.reduction,
                                          ctx.smoothing), None, None, None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        """jvp: each loss's gradient row (backward for 'none' with grad 1) dotted with ȧ."""
        a = ctx.primals[0]
        _, e, sum_e = ctx.saved_tensors
        targets = ctx.targets
        ones = as_tensor(1.0, dtype=a.dtype, device=a.device).expand(targets.index.shape)
        rows = CrossEntropyBackward.apply(ones, a, e, sum_e, targets, "none", ctx.smoothing)
        return _reduce_tangent((rows * ta).sum(1), targets, ctx.reduction)


class CrossEntropyBackward(Function):
    """The gradient of cross_entropy, an op of its own so that it can be differentiated too.

    dx_ic = s_i (k_i p_ic - D_ic): s_i is grad scaled by the reduction (1/total
    for 'mean'), k_i = (1-ε) w[y_i] + ε/C · W (0 if ignored), and D is
    constant: (1-ε) w[y_i] at c = y_i, plus ε/C · w_c with smoothing. Only
    p = softmax(x) depends on x; the one-hot is never built.
    """

    raw = True
    name = "cross_entropy_backward"

    @staticmethod
    def forward(ctx, grad, a, e, sum_e, targets, reduction, smoothing):
        ctx.save_for_backward(grad, a)
        ctx.targets, ctx.reduction, ctx.smoothing = targets, reduction, smoothing
        if reduction == "none":
            scale = grad.reshape(grad.shape[:1] + (1,) + grad.shape[1:])
        else:
            scale = grad / _mean_divisor(targets) if reduction == "mean" else grad
        pick = 1 - smoothing if targets.w_t is None else (1 - smoothing) * targets.w_t
        k = pick if targets.w_t is None else pick.reshape(scale.shape if reduction == "none"
                                                          else sum_e.shape)
        if smoothing:
            w_sum = a.shape[1] if targets.weight is None else targets.weight.sum()
            k = k + (smoothing / a.shape[1] * w_sum) * targets.kept(a.ndim)
        dx = e * (k * scale / sum_e)
        dx[targets.key] -= pick * (grad if reduction == "none" else scale)
        if smoothing:
            dx -= (smoothing / a.shape[1]) * targets.kept(a.ndim) * targets.per_class(a.ndim) \
                * scale
        if targets.keep is not None:  # ignored rows: exactly 0, even for a NaN grad (PyTorch)
            xp = xp_for(dx)
            dx = keep_where(xp, dx, xp.broadcast_to(targets.kept(a.ndim), dx.shape))
        return dx.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, gg):
        grad, a = ctx.saved_tensors
        targets, reduction, smoothing = ctx.targets, ctx.reduction, ctx.smoothing
        classes, nd = a.shape[1], a.ndim
        p = softmax(a, 1)
        pick, k = CrossEntropyBackward.factors(ctx, a)
        grad_grad = grad_a = None
        if ctx.needs_input_grad[0]:  # dx is linear in grad: dx = s(grad) · (k p - D)
            index = as_tensor(targets.index, device=a.device).unsqueeze(1)
            d = zeros_like(a).scatter(1, index, pick.expand(index.shape) if targets.w_t is None
                                      else pick.unsqueeze(1))
            if smoothing:
                d = d + _const(targets.kept(nd), a) * _const(targets.per_class(nd), a) * \
                    (smoothing / classes)
            per_target = (gg * (k * p - d)).sum(1)
            grad_grad = per_target if reduction == "none" else per_target.sum()
            if reduction == "mean":
                grad_grad = grad_grad / _mean_divisor(targets)
        if ctx.needs_input_grad[1]:
            grad_a = CrossEntropyBackward.along_softmax(ctx, grad, p, k, gg)
        return grad_grad, grad_a, None, None, None, None, None

    @staticmethod
    def jvp(ctx, t_grad, ta, *_):
        """jvp: dx is linear in grad (that term is dx of ġrad), and only p depends on a, with
        ṗ = p ⊙ (ȧ - Σ_c p ȧ): ḋx = dx(ġrad) + s · k · p ⊙ (ȧ - Σ_c p ȧ)."""
        grad, a, e, sum_e = ctx.primals[:4]
        term_grad = term_a = None
        if t_grad is not None:
            term_grad = CrossEntropyBackward.apply(t_grad, a, e, sum_e, ctx.targets,
                                                   ctx.reduction, ctx.smoothing)
        if ta is not None:  # the Hessian is symmetric: backward's a-part, along ȧ
            _, k = CrossEntropyBackward.factors(ctx, a)
            term_a = CrossEntropyBackward.along_softmax(ctx, grad, softmax(a, 1), k, ta)
        return tangent_sum(ctx.results[0].shape, term_grad, term_a)

    @staticmethod
    def factors(ctx, a):
        """``pick`` = (1-ε) w[y_i] and k_i (shaped to broadcast along dim 1), as constants."""
        targets, smoothing, classes = ctx.targets, ctx.smoothing, a.shape[1]
        pick = _const(1.0 if targets.w_t is None else targets.w_t, a).mul(1 - smoothing)
        k = pick if targets.w_t is None else pick.unsqueeze(1)
        if smoothing:
            w_sum = classes if targets.weight is None else float(targets.weight.sum())
            k = k + _const(targets.kept(a.ndim), a) * (smoothing / classes * w_sum)
        return pick, k

    @staticmethod
    def along_softmax(ctx, grad, p, k, v):
        """s · k · p ⊙ (v - Σ_c p v): how dx moves with a along v (softmax's backward of
        v · s · k; symmetric, so it serves backward and jvp alike)."""
        if ctx.reduction == "none":
            scale = grad.unsqueeze(1)
        else:
            scale = grad / _mean_divisor(ctx.targets) if ctx.reduction == "mean" else grad
        u = v * k * scale
        return p * (u - (u * p).sum(1, keepdim=True))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (C), (N, C) or (N, C, d1, ...) against ``target``:
    class indices (N,) / (N, d1, ...), or class probabilities with the input's shape.

    'mean' divides by the summed weight of the targets that are not ignored.
    """
    reduction = reduction_mode("cross_entropy", reduction, size_average, reduce)
    input = _logits("cross_entropy", input)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                         f"{label_smoothing}")
    if isinstance(target, Tensor) and target.dtype.is_floating_point:
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction,
                                            label_smoothing)
    batched = input.ndim > 1
    if not batched:  # one sample: (C,) scores and a 0-d class
        input = input.unsqueeze(0)
        if isinstance(target, Tensor):
            target = target.reshape(1) if target.ndim == 0 else target.unsqueeze(0)
    _check_class_target("cross_entropy", input, target, weight)
    out = CrossEntropy.apply(input, target, weight, ignore_index, reduction,
                             float(label_smoothing))
    return out if batched or reduction != "none" else out.reshape(())


def _logits(op: str, input) -> Tensor:
    if not isinstance(input, Tensor) or not input.dtype.is_floating_point:
        what = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise TypeError(f"{op}: expected floating point scores, got {what}. Fix: .float()")
    if input.ndim == 0:
        raise ValueError(f"{op}: input needs a class dim: (C,), (N, C) or (N, C, d1, ...); got "
                         f"a 0-d tensor. Fix: one score per class, e.g. input.reshape(1, -1)")
    return input


def _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, smoothing):
    """Soft targets: loss = -Σ_c w_c t_c log softmax(x)_c; 'mean' averages over the samples."""
    if _shape(target) != _shape(input):
        raise ValueError(
            f"cross_entropy: a float target is read as class probabilities and needs the "
            f"input's shape {_shape(input)}, got {_shape(target)}. For class indices pass "
            f"an int64 target, e.g. target.long()")
    if ignore_index != -100:
        raise ValueError("cross_entropy: ignore_index is not supported for class-probability "
                         "(float) targets: give the ignored samples zero probabilities instead")
    classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    dim = 0 if input.ndim == 1 else 1
    input, target = promote(input, target)  # float16 scores, float32 targets: float32
    if smoothing:
        target = target * (1 - smoothing) + smoothing / classes
    logp = log_softmax(input, dim)
    if weight is not None:
        if _shape(weight) != (classes,):
            raise ValueError(f"cross_entropy: weight must have one entry per class, shape "
                             f"({classes},), got {_shape(weight)} (input {_shape(input)})")
        logp = logp * weight.to(input.dtype).reshape((classes,) + (1,) * (input.ndim - 1 - dim))
    terms = logp * target
    if reduction == "none":
        return -terms.sum(dim)
    if reduction == "sum":
        return -terms.sum()
    return -terms.sum(dim).mean()  # over the samples: numel / C of them


# --- nll_loss: the pick alone, for scores that already are log-probabilities -------------------

def _ignoring(xp, targets, loss):
    """Each target's loss times its class weight, and exactly +0 where the target is
    ignored, even if its scores are NaN or inf (a product with 0 would keep those)."""
    if targets.w_t is not None:
        loss = loss * targets.w_t
    return loss if targets.keep is None else keep_where(xp, loss, targets.keep)


class NllLoss(Function):
    """loss_i = -w[y_i] · x_i[y_i].   d/dx_ic = -w[y_i] where c = y_i, else 0.

    jvp: linear in x, so the same pick of ẋ ("linear").
    """

    raw = True
    name = "nll_loss"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, target, weight, ignore_index, reduction):
        targets = _class_targets("nll_loss", xp_for(a), a, target, weight, ignore_index)
        ctx.targets, ctx.reduction = targets, reduction
        return _reduce_weighted(_ignoring(xp_for(a), targets, -a[targets.key]), targets,
                                reduction)

    @staticmethod
    def backward(ctx, grad):
        targets, reduction = ctx.targets, ctx.reduction
        index = targets.index.reshape(targets.index.shape[:1] + (1,) + targets.index.shape[1:])
        if reduction == "none":
            src = -grad.unsqueeze(1)
        else:
            src = -(grad / _mean_divisor(targets) if reduction == "mean" else grad)
        if targets.w_t is not None:
            src = src * as_tensor(targets.w_t.reshape(index.shape), device=grad.device)
        if targets.keep is not None:  # ignored rows: exactly 0, even for a NaN grad (PyTorch)
            src = where(as_tensor(targets.keep.reshape(index.shape), device=grad.device), src, 0.0)
        empty = zeros(ctx.input_shapes[0], dtype=grad.dtype, device=grad.device)
        return Scatter.apply(empty, 1, index, src.expand(index.shape)), None, None, None, None


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of log-probabilities ``input`` (C), (N, C) or (N, C, d1, ...)
    at the class indices ``target``: ``-input[i, target[i]]``, weighted by ``weight[target[i]]``.

    'mean' divides by the summed weight of the targets that are not ignored.
    """
    reduction = reduction_mode("nll_loss", reduction, size_average, reduce)
    input = _logits("nll_loss", input)
    batched = input.ndim > 1
    if not batched:
        input = input.unsqueeze(0)
        if isinstance(target, Tensor):
            target = target.reshape(1) if target.ndim == 0 else target.unsqueeze(0)
    _check_class_target("nll_loss", input, target, weight)
    out = NllLoss.apply(input, target, weight, ignore_index, reduction)
    return out if batched or reduction != "none" else out.reshape(())


# --- multi_margin_loss: the SVM hinge over classes ---------------------------------------------

def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge: Σ_{j≠y} w[y] max(0, margin - x_y + x_j)^p / C, for (N, C) or (C) scores.

    Composed of tensor ops (gather, clamp, a mask off the target class).
    """
    op = "multi_margin_loss"
    reduction = reduction_mode(op, reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError(f"{op}: only p = 1 and p = 2 are supported, got p={p}")
    input = _logits(op, input)
    if input.ndim > 2:
        raise ValueError(f"{op}: input must be (C,) or (N, C) scores, got shape {_shape(input)}")
    batched = input.ndim == 2
    if not batched:
        input = input.unsqueeze(0)
        if isinstance(target, Tensor):
            target = target.reshape(1) if target.ndim == 0 else target
    if weight is not None and weight.ndim != 1:
        raise ValueError(f"{op}: weight must be one-dimensional (one per class), got shape "
                         f"{_shape(weight)}")
    _check_class_target(op, input, target, weight)
    _class_targets(op, xp_for(target._data), input._data, target._data, None, None)  # range
    index = target.unsqueeze(1)
    z = (margin - input.gather(1, index) + input).clamp(min=0)
    if p == 2:
        z = z * z
    classes = input.shape[1]
    others = arange(classes, device=input.device) != index  # j ≠ y: the target adds nothing
    loss = where(others, z, 0.0).sum(1) / classes  # not z * others: NaN·0 would leak
    if weight is not None:
        loss = loss * weight.to(input.dtype)[target]
    loss = loss if batched else loss.reshape(())
    return apply_reduction(loss, reduction)
