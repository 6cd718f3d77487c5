"""RAdam: Adam that falls back to momentum SGD while its variance estimate is unreliable.

For each parameter θ with gradient g at step t (γ = lr, λ = weight_decay)::

    g ← -g                                  if maximize
    g ← g + λθ    or    θ ← θ - γλθ         weight decay (decoupled_weight_decay: the latter)
    m ← β₁m + (1-β₁)g;   v ← β₂v + (1-β₂)g²           Adam's moments
    m̂ ← m / (1-β₁ᵗ)
    ρ∞ ← 2/(1-β₂) - 1;   ρₜ ← ρ∞ - 2tβ₂ᵗ/(1-β₂ᵗ)      length of the "simple moving average"
    if ρₜ > 5:   r ← √((ρₜ-4)(ρₜ-2)ρ∞ / ((ρ∞-4)(ρ∞-2)ρₜ))
                 θ ← θ - γ · m̂ · r · √(1-β₂ᵗ) / (√v + ε)
    else:        θ ← θ - γ · m̂                         (the first few steps: no √v at all)

In the first steps ``v`` has seen only a handful of squared gradients, so
dividing by it gives wild step sizes (the reason Adam needs warmup). ``r``
is the factor that makes the variance of the adaptive step constant; it
rises from ~0 toward 1 as ρₜ grows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..ops.creation import zeros_like
from ..tensor import Tensor
from .adam import Adam
from .optimizer import Optimizer, check_engine_flags, state_tensor, step_gradient

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (Liu et al., 2019, "On the variance of the adaptive learning rate"), with
    PyTorch's options and defaults."""

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_engine_flags("RAdam", capturable=capturable, differentiable=differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    _check_group = Adam._check_group  # lr, eps, weight_decay >= 0 and betas in [0, 1)

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = state_tensor(zeros_like(param))
            state["exp_avg_sq"] = state_tensor(zeros_like(param))
        step = state["step"] = state["step"] + 1
        grad = step_gradient(param, grad, group)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2 ** step / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                             ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = math.sqrt(bias_correction2) / exp_avg_sq.sqrt().add_(group["eps"])
            param.sub_(corrected_avg * lr * adaptive * rect)
        else:
            param.sub_(corrected_avg * lr)
