"""More of PyTorch's losses, each a short composition of differentiable ops.

* ``soft_margin_loss``: log(1 + e^(-y x)), a smooth hinge for y = ±1;
* ``multilabel_soft_margin_loss``: one binary cross entropy per class (on
  logits), averaged over the classes, one loss per sample;
* ``poisson_nll_loss``: the negative log likelihood of counts y under a
  Poisson rate (given as a log-rate or as the rate itself);
* ``gaussian_nll_loss``: the negative log likelihood of y under a normal
  distribution with a predicted mean and variance;
* ``triplet_margin_loss``: pulls an anchor towards a positive and pushes it
  away from a negative until they are ``margin`` apart.

Every loss here is built from ops that already have backward and tangent
rules (softplus, logsigmoid, exp, log, pairwise_distance, clamp_min ...),
so their gradients, double backward and forward mode come for free. The
reduction rules (and the deprecated ``size_average``/``reduce``) are in
``_loss_reduction.py``. All are ``nn.functional`` only, as in PyTorch.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from ..tensor import Tensor
from ._loss_reduction import apply_reduction, reduction_mode
from .activation import logsigmoid, softplus
from .products import pairwise_distance
from .regression_losses import _shape
from .selection import minimum, where

__all__: list = []  # PyTorch has these at torch.nn.functional only
FUNCTIONAL = ["soft_margin_loss", "multilabel_soft_margin_loss", "poisson_nll_loss",
              "gaussian_nll_loss", "triplet_margin_loss"]
TENSOR_METHODS: list = []


def _broadcastable(op: str, a, b, names: str = "input and target") -> None:
    try:
        np.broadcast_shapes(_shape(a), _shape(b))
    except ValueError:
        raise RuntimeError(f"{op}: {names} must broadcast together, got shapes {_shape(a)} and "
                           f"{_shape(b)}; usually they have the same shape") from None


def soft_margin_loss(input, target, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + e^(-y x)) for labels y = ±1: small once y x is large and positive.

    Written as softplus(-y x), which never overflows; d/dx = -y σ(-y x).
    """
    reduction = reduction_mode("soft_margin_loss", reduction, size_average, reduce)
    _broadcastable("soft_margin_loss", input, target)
    return apply_reduction(softplus(-target * input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Per class, -(y log σ(x) + (1-y) log σ(-x)) (times ``weight``), averaged over the
    classes (the last dim): one loss per sample. d/dx = w (σ(x) - y) / C.
    """
    op = "multilabel_soft_margin_loss"
    reduction = reduction_mode(op, reduction, size_average, reduce)
    _broadcastable(op, input, target)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        _broadcastable(op, loss, weight, "the per-class losses and weight")
        loss = loss * weight
    classes = input.shape[-1] if input.ndim else 1
    return apply_reduction(loss.sum(-1) / classes if loss.ndim else loss, reduction)


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """-log P(y | rate) up to a constant: e^x - y x when ``input`` is the log-rate x,
    else x - y log(x + eps) for the rate x itself.

    ``full`` adds Stirling's approximation of log(y!), y log y - y + ½ log(2π y),
    where y > 1 (it does not depend on the input, so it changes no gradient).
    """
    reduction = reduction_mode("poisson_nll_loss", reduction, size_average, reduce)
    _broadcastable("poisson_nll_loss", input, target)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = where(big, target, 1.0)  # log of 0 would give nan gradients through where
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + where(big, stirling, 0.0)
    return apply_reduction(loss, reduction)


def _variance_for(input, var):
    """``var`` shaped to broadcast against ``input``, by PyTorch's rules (see below)."""
    if _shape(var) == _shape(input):
        return var
    if _shape(var) == _shape(input)[:-1]:  # one variance per sample: (N, D) input, (N,) var
        return var.unsqueeze(-1)
    if var.ndim == input.ndim and sum(v for i, v in zip(_shape(input), _shape(var))
                                      if i != v) == 1:  # one dim of size 1, shared: (N, 1)
        return var
    raise ValueError(f"gaussian_nll_loss: var is of incorrect size {_shape(var)} for input "
                     f"{_shape(input)}; give one variance per element (the input's shape), one "
                     f"per sample ({_shape(input)[:-1]}), or the input's shape with one dim "
                     f"of size 1")


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """½ (log v + (x - y)² / v) (+ ½ log 2π if ``full``): -log N(y; x, v).

    ``var`` is clamped to at least ``eps`` for the value, but its gradient
    passes as if unclamped (PyTorch clamps it under no_grad):
    d/dv = ½ (1/v - (x - y)²/v²), d/dx = (x - y)/v.
    """
    op = "gaussian_nll_loss"
    if isinstance(var, Real):
        if var < 0:
            raise ValueError(f"{op}: var has negative entry/entries ({var}); a variance is "
                             f">= 0")
        var = input.new_full(_shape(input), float(var))
    elif bool((var < 0).any()):
        raise ValueError(f"{op}: var has negative entry/entries; a variance is >= 0 (predict "
                         f"it through softplus or exp to keep it positive)")
    var = _variance_for(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{op}: {reduction!r} is not valid; use 'none', 'mean' or 'sum'")
    _broadcastable(op, input, target)
    clamped = var + (var.clamp_min(eps) - var).detach()  # the clamp's value, identity's slope
    loss = 0.5 * (clamped.log() + (input - target) ** 2 / clamped)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return apply_reduction(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)), d the p-norm distance over the last dim.

    ``swap`` uses min(d(a, n), d(p, n)) as the negative's distance (the harder
    one). Composed of pairwise_distance and clamp_min.
    """
    op = "triplet_margin_loss"
    reduction = reduction_mode(op, reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"{op}: the anchor, positive, and negative tensors are expected to "
                           f"have the same number of dimensions, got {_shape(anchor)}, "
                           f"{_shape(positive)} and {_shape(negative)}")
    _broadcastable(op, anchor, positive, "anchor and positive")
    _broadcastable(op, anchor, negative, "anchor and negative")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return apply_reduction((margin + d_pos - d_neg).clamp_min(0), reduction)
