"""How a loss reduces: ``reduction='none' | 'mean' | 'sum'``, shared by every loss.

A loss computes one value per element (or per sample), then reduces them:
'none' keeps them, 'mean' averages, 'sum' adds up. The rules are the same
for all of PyTorch's losses, so they are written once, here, and
``losses``, ``regression_losses`` and ``classification_losses`` (and the
``nn`` loss modules) import them:

* ``reduction_mode`` reads the argument, including the deprecated
  ``size_average``/``reduce`` pair (with a warning, as in PyTorch);
* ``apply_reduction`` reduces with tensor ops, for losses composed of ops;
* ``_reduce`` and ``_each`` are the two halves a one-node loss needs: its
  forward reduces raw arrays, and its backward spreads the reduced loss's
  gradient back over the elements (÷ n for the mean: d mean/d l_i = 1/n).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..tensor import Tensor
from ._util import widened, xp_for
from .reduction import quietly

__all__ = ["reduction_mode", "apply_reduction"]


_REDUCTIONS = ("none", "mean", "sum")
_ENUM = {0: "none", 1: "mean", 2: "sum"}  # torch.kl_div(..., reduction=1) and friends


def reduction_mode(op: str, reduction, size_average=None, reduce=None,
                   extra: tuple = ()) -> str:
    """The reduction as a string, from ``reduction`` or the deprecated pair (as PyTorch)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
        warnings.warn(f"{op}: size_average and reduce are deprecated; use "
                      f"reduction='{reduction}' instead.", UserWarning, stacklevel=3)
        return reduction
    if isinstance(reduction, int) and not isinstance(reduction, bool):
        reduction = _ENUM.get(reduction, reduction)
    if reduction not in _REDUCTIONS + extra:
        valid = ", ".join(repr(r) for r in _REDUCTIONS + extra)
        raise ValueError(f"{op}: {reduction!r} is not a valid reduction; use one of {valid}: "
                         "'none' keeps one loss per element, 'mean' averages them, 'sum' adds "
                         "them up")
    return reduction


def apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    """'mean' or 'sum' of the per-element losses, or the losses themselves for 'none'."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _reduce(loss, reduction: str):
    """A loss node's own reduction, on raw arrays: PyTorch folds it into the node too.
    (Half floats add up in float32, see ``widened``.)"""
    if reduction == "none":
        return loss
    wide = widened(loss)
    # the mean of nothing is nan, as in PyTorch
    total = quietly(wide.mean) if reduction == "mean" else wide.sum()
    return total if wide is loss else xp_for(loss).asarray(total).astype(loss.dtype)


def _each(grad, reduction: str, shape) -> Tensor:
    """The gradient reaching each element's loss: ``grad``, or a summed loss's gradient
    spread over every element (÷ n for the mean, whose derivative is 1/n each)."""
    if reduction == "none":
        return grad
    n = int(np.prod(shape))
    if reduction == "mean" and n:
        grad = grad / n
    return grad.expand(shape)
