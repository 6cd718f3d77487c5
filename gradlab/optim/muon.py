"""Muon: momentum, then the update made orthogonal by a Newton–Schulz iteration.

For a 2-D weight W (a hidden layer's matrix) with gradient G at each step
(γ = lr, λ = weight_decay, μ = momentum)::

    B ← μB + (1-μ)G                         momentum (a running average)
    U ← (1-μ)G + μB  if nesterov, else B    the direction to move in
    O ← NS(U)                               ≈ the nearest semi-orthogonal matrix to U
    W ← W·(1 - γλ) - γ·s·O                  decoupled weight decay, then the step

``NS`` is a few steps of a quintic Newton–Schulz iteration: with X = U/‖U‖
(so its singular values are at most 1; rows ≤ columns, transposing if not),
repeat A = XXᵀ, X ← aX + (bA + cA²)X. It pushes every singular value of U
towards 1 and keeps its singular vectors, so every direction U spans gets the
same step size, whatever the gradient's scale in it. The coefficients are
tuned for speed, not exact convergence, and it runs in bfloat16, as
PyTorch's does. ``s`` rescales the step for the matrix shape: √max(1, rows/cols)
(``adjust_lr_fn="original"``), or 0.2·√max(rows, cols) (``"match_rms_adamw"``,
to reuse AdamW's learning rates).

Only for 2-D parameters: give biases, norms and embeddings to another
optimizer (AdamW), as PyTorch's documentation says.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .. import dtypes as _dt
from ..ops.creation import zeros_like
from ..ops.dense import addmm
from ..tensor import Tensor
from .optimizer import Optimizer, check_option, state_tensor

__all__ = ["Muon"]

_ADJUSTMENTS = ("original", "match_rms_adamw")


class Muon(Optimizer):
    """Muon (Jordan et al., 2024), with PyTorch's options and defaults."""

    complex_params = False  # it orthogonalizes each weight matrix as a whole

    def __init__(self, params: Iterable, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        name = self._name
        check_option(name, "lr", group["lr"])
        check_option(name, "momentum", group["momentum"])
        check_option(name, "weight_decay", group["weight_decay"])
        if group["adjust_lr_fn"] not in (None,) + _ADJUSTMENTS:
            raise ValueError(f"{name}: adjust_lr_fn must be one of {_ADJUSTMENTS} (or None), "
                             f"got {group['adjust_lr_fn']!r}")
        if len(tuple(group["ns_coefficients"])) != 3:
            raise ValueError(f"{name}: ns_coefficients must be three numbers (a, b, c), got "
                             f"{group['ns_coefficients']!r}")
        if not 0 < group["ns_steps"] < 100:
            raise ValueError(f"{name}: ns_steps must be between 1 and 99, got "
                             f"{group['ns_steps']!r}; 5 is usual")
        for p in group["params"]:
            if p.ndim != 2:
                raise ValueError(
                    f"{name} only supports 2D parameters, but got one of shape "
                    f"{tuple(p.shape)}. Fix: give the weight matrices to Muon and the other "
                    "parameters (biases, norms, embeddings) to another optimizer, e.g. AdamW")

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        momentum = group["momentum"]
        if not state:
            state["momentum_buffer"] = state_tensor(zeros_like(grad))
        buffer = state["momentum_buffer"]
        buffer.lerp_(grad, 1 - momentum)
        update = grad.lerp(buffer, momentum) if group["nesterov"] else buffer
        orthogonal = _newton_schulz(update, group["ns_coefficients"], group["ns_steps"],
                                    group["eps"])
        lr = group["lr"]
        param.mul_(1 - lr * group["weight_decay"])
        param.add_(orthogonal, alpha=-lr * _shape_scale(group["adjust_lr_fn"], param.shape))


def _newton_schulz(update: Tensor, coefficients, steps: int, eps: float,
                   dtype: _dt.dtype = _dt.bfloat16) -> Tensor:
    """U with its singular values pushed towards 1 (see the module docstring), computed in
    ``dtype`` (bfloat16, as PyTorch; the tests also run it exactly, in float64)."""
    a, b, c = coefficients
    wide = update.shape[0] <= update.shape[1]
    x = update.to(dtype)
    if not wide:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        x = addmm(x, addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x if wide else x.T


def _shape_scale(adjust_lr_fn: str | None, shape) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return math.sqrt(max(1, rows / cols))
