"""Adadelta: a step size in the units of the parameter, with no learning rate to tune.

For each parameter θ with gradient g (ρ = rho, λ = weight_decay, γ = lr)::

    g ← -g                              if maximize
    g ← g + λθ                          weight decay
    v ← ρv + (1-ρ)g²                    running mean of squared gradients
    Δ ← √(u + ε) / √(v + ε) · g         u: running mean of squared updates
    u ← ρu + (1-ρ)Δ²
    θ ← θ - γΔ

The ratio √u/√v gives the step the units of θ (Zeiler's argument), so
``lr`` stays at 1.0 in most uses.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ops.creation import zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, check_engine_flags, check_option, state_tensor, step_gradient

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), with PyTorch's options and defaults."""

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_engine_flags("Adadelta", capturable=capturable, differentiable=differentiable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_option("Adadelta", "lr", group["lr"])
        check_option("Adadelta", "rho", group["rho"], 0.0, 1.0, high_included=True,
                     hint="the decay of the running averages; 0.9 is usual")
        check_option("Adadelta", "eps", group["eps"])
        check_option("Adadelta", "weight_decay", group["weight_decay"])

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        rho, eps = group["rho"], group["eps"]
        if not state:
            state["step"] = 0
            state["square_avg"] = state_tensor(zeros_like(param))
            state["acc_delta"] = state_tensor(zeros_like(param))
        state["step"] += 1
        grad = step_gradient(param, grad, group)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
        delta = (acc_delta + eps).sqrt_().div_((square_avg + eps).sqrt_()).mul_(grad)
        acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
        param.sub_(delta, alpha=group["lr"])
