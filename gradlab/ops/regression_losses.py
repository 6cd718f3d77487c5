"""Regression losses: how far each prediction is from its target value.

* ``mse_loss`` (x-y)², the squared error;
* ``l1_loss`` |x-y|, the absolute error;
* ``smooth_l1_loss`` and ``huber_loss``: quadratic near 0, linear beyond, so
  outliers pull less than with the squared error.

Each compares two tensors of one shape element by element, d = x - y, and
each derivative is a slope in d: ∂l/∂x = dl/dd = -∂l/∂y. They are separate
from :mod:`gradlab.ops.losses` (probabilities and margins) because they share
that shape of derivative, and the check below that input and target line up.
``losses`` re-exports them, so ``FUNCTIONAL`` there lists every loss.

As in PyTorch, mse, smooth_l1 and huber are one node each (``MseLossBackward0``
...), with the reduction folded in (``_reduce`` forward, ``_each`` backward, from
``_loss_reduction.py``); l1 is composed of abs and mean/sum. Forward mode: the
tangent is the reduction of dl/dd · (ẋ - ẏ).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._loss_reduction import _each, _reduce, apply_reduction, reduction_mode
from ._util import promote, tangent_sum, unbroadcast, xp_for
from .selection import where

__all__: list[str] = []  # none of these is at torch.<name>
FUNCTIONAL = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]
TENSOR_METHODS: list = []


def _shape(t) -> tuple:
    return tuple(t.shape)


def _check_pair(op: str, input, target):
    """``input`` and ``target`` in their common dtype (a float32 input against int64
    targets stays float32, as PyTorch; raw NumPy would make float64). Different shapes
    broadcast, as in PyTorch, but usually by mistake: warn, or explain."""
    input, target = promote(input, target)
    a, b = _shape(input), _shape(target)
    if a == b:
        return input, target
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        raise RuntimeError(f"{op}: input {a} and target {b} can't be broadcast together; they "
                           f"should have the same shape. Fix: reshape the target to {a}") from None
    warnings.warn(f"{op}: using a target size {b} that is different to the input size {a}; "
                  "they broadcast, which is likely not what you want. Give them the same shape.",
                  UserWarning, stacklevel=3)
    return input, target


def _with_weight(op: str, loss, weight, input, reduction, mean_by_weight: bool = True):
    """mse/l1/huber's optional per-element weight; mse and l1 average by Σ weight (PyTorch)."""
    if weight is None:
        return apply_reduction(loss, reduction)
    if _shape(weight) != _shape(input):
        raise ValueError(f"{op}: weight must have the input's shape {_shape(input)}, got "
                         f"{_shape(weight)}")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return apply_reduction(loss, reduction)


def _diff_tangent(ctx, tx, ty):
    """d = x - y (broadcast) and its tangent ḋ = ẋ - ẏ, for the regression losses' jvp."""
    x, y = ctx.primals[:2]
    diff = x - y
    return diff, tangent_sum(diff.shape, tx, None if ty is None else -ty)


class MseLoss(Function):
    """l = (x - y)², reduced.   d/dx = 2 (x - y) = -d/dy."""

    raw = True
    name = "mse_loss"

    @staticmethod
    def forward(ctx, x, y, reduction):
        ctx.reduction = reduction
        ctx.save_for_backward(x, y)
        diff = x - y
        return _reduce(diff * diff, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        diff = x - y
        g = _each(grad, ctx.reduction, diff.shape) * diff * 2
        return unbroadcast(g, ctx.input_shapes[0]), unbroadcast(-g, ctx.input_shapes[1]), None

    @staticmethod
    def jvp(ctx, tx, ty, _):
        """jvp: l̇ = reduce(2 (x - y) · (ẋ - ẏ))."""
        diff, diff_dot = _diff_tangent(ctx, tx, ty)
        return apply_reduction(diff * diff_dot * 2, ctx.reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
             weight=None) -> Tensor:
    """(x - y)², the squared error.   d/dx = 2 (x - y)."""
    reduction = reduction_mode("mse_loss", reduction, size_average, reduce)
    input, target = _check_pair("mse_loss", input, target)
    if weight is None:
        return MseLoss.apply(input, target, reduction)
    diff = input - target
    return _with_weight("mse_loss", diff * diff, weight, input, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
            weight=None) -> Tensor:
    """|x - y|, the absolute error.   d/dx = sign(x - y).

    PyTorch composes it from abs and mean/sum too (no L1Loss node).
    """
    reduction = reduction_mode("l1_loss", reduction, size_average, reduce)
    input, target = _check_pair("l1_loss", input, target)
    return _with_weight("l1_loss", (input - target).abs(), weight, input, reduction)


class _PiecewiseLoss(Function):
    """A loss of d = x - y, quadratic near 0 and linear beyond ``ctx.width``: backward and
    the tangent both scale by the slope dl/dd (the subclass's ``slope``)."""

    raw = True

    @classmethod
    def backward(cls, ctx, grad):
        x, y = ctx.saved_tensors
        diff = x - y
        g = _each(grad, ctx.reduction, diff.shape) * cls.slope(diff, ctx.width)
        return unbroadcast(g, ctx.input_shapes[0]), unbroadcast(-g, ctx.input_shapes[1]), \
            None, None

    @classmethod
    def jvp(cls, ctx, tx, ty, *_):
        """jvp: l̇ = reduce(slope(d) · (ẋ - ẏ))."""
        diff, diff_dot = _diff_tangent(ctx, tx, ty)
        return apply_reduction(cls.slope(diff, ctx.width) * diff_dot, ctx.reduction)


class SmoothL1Loss(_PiecewiseLoss):
    """l = 0.5 d²/β where |d| < β, else |d| - 0.5 β (d = x - y), reduced.

    d/dx = d/β inside, sign(d) outside (= -d/dy): the two pieces meet with the same slope.
    """

    name = "smooth_l1_loss"

    @staticmethod
    def forward(ctx, x, y, reduction, beta):
        ctx.reduction, ctx.width = reduction, beta
        ctx.save_for_backward(x, y)
        diff = x - y
        size = xp_for(diff).abs(diff)
        loss = xp_for(diff).where(size < beta, 0.5 * diff * diff / beta, size - 0.5 * beta)
        return _reduce(loss.astype(diff.dtype, copy=False), reduction)  # (bfloat16 · 0.5: f32)

    @staticmethod
    def slope(diff, beta):
        """dl/dd: d/β inside the quadratic zone, sign(d) outside."""
        return where(diff.abs() < beta, diff / beta, diff.sign())


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d²/β where |d| < β, else |d| - 0.5 β (d = x - y): L2 near 0, L1 beyond."""
    reduction = reduction_mode("smooth_l1_loss", reduction, size_average, reduce)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0 (the width of the quadratic "
                         f"zone), got {beta}")
    input, target = _check_pair("smooth_l1_loss", input, target)
    if beta == 0:  # no quadratic zone: plain L1 (PyTorch too)
        return apply_reduction((input - target).abs(), reduction)
    return SmoothL1Loss.apply(input, target, reduction, float(beta))


class HuberLoss(_PiecewiseLoss):
    """l = 0.5 d² where |d| < δ, else δ (|d| - 0.5 δ) (d = x - y), reduced: smooth_l1 times δ.

    d/dx = d inside, δ sign(d) outside (= -d/dy).
    """

    name = "huber_loss"

    @staticmethod
    def forward(ctx, x, y, reduction, delta):
        ctx.reduction, ctx.width = reduction, delta
        ctx.save_for_backward(x, y)
        diff = x - y
        size = xp_for(diff).abs(diff)
        loss = xp_for(diff).where(size < delta, 0.5 * diff * diff, delta * (size - 0.5 * delta))
        return _reduce(loss.astype(diff.dtype, copy=False), reduction)  # (bfloat16 · 0.5: f32)

    @staticmethod
    def slope(diff, delta):
        """dl/dd: d inside, δ sign(d) outside."""
        return where(diff.abs() < delta, diff, diff.sign() * delta)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0,
               weight=None) -> Tensor:
    """0.5 d² where |d| < δ, else δ (|d| - 0.5 δ): smooth_l1 scaled by δ."""
    reduction = reduction_mode("huber_loss", reduction)
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be > 0 (where the loss turns linear), got "
                         f"{delta}")
    input, target = _check_pair("huber_loss", input, target)
    if weight is None:
        return HuberLoss.apply(input, target, reduction, float(delta))
    loss = HuberLoss.apply(input, target, "none", float(delta))
    return _with_weight("huber_loss", loss, weight, input, reduction, mean_by_weight=False)
