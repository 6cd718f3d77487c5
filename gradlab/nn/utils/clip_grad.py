"""Gradient clipping: keep one bad batch from throwing the weights far away.

``clip_grad_norm_`` treats all gradients as one long vector and, if its
norm exceeds ``max_norm``, scales every gradient by max_norm / norm: the
direction of the step is kept, only its length is capped.
``clip_grad_value_`` clamps each gradient value to [-clip_value, clip_value].
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ...autograd.grad_mode import no_grad
from ...ops.creation import tensor as _tensor
from ...ops.joining import stack
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(parameters) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _grads(parameters) -> list[Tensor]:
    return [p.grad for p in _as_list(parameters) if p.grad is not None]


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` together, as if concatenated."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _tensor(0.0)
    with no_grad():
        if math.isinf(norm_type):
            norms = [t.detach().abs().amax() for t in tensors]
            total = norms[0] if len(norms) == 1 else stack(
                [n.to(norms[0].device) for n in norms]).amax()
        else:
            norms = [t.detach().norm(norm_type) for t in tensors]
            total = norms[0] if len(norms) == 1 else stack(
                [n.to(norms[0].device) for n in norms]).norm(norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale the gradients by max_norm / (total_norm + 1e-6) where that is below 1."""
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device, g.dtype))


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Rescale all gradients so that their total norm is at most ``max_norm``.

    Returns the total norm *before* clipping (a 0-d tensor; log it to watch for
    exploding gradients). ``norm_type`` may be ``float('inf')`` (the largest |g|).
    """
    parameters = _as_list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated spelling of ``clip_grad_norm_`` (kept for old code)."""
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float,
                     foreach=None) -> None:
    """Clamp every gradient value into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
