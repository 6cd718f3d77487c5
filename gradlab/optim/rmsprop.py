"""RMSprop: divide each step by a running root-mean-square of the gradient.

For each parameter θ with gradient g (γ = lr, λ = weight_decay, μ = momentum)::

    g ← -g                          if maximize
    g ← g + λθ                      weight decay
    v ← αv + (1-α)g²                running mean of the squared gradient
    ṽ ← v - ḡ², with ḡ ← αḡ + (1-α)g       if centered (a running variance)
    b ← μb + g/(√ṽ + ε);  θ ← θ - γb       if μ > 0
    θ ← θ - γ g/(√ṽ + ε)                    otherwise
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ops.creation import zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, check_engine_flags, check_option, state_tensor, step_gradient

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes, 2012), with PyTorch's options and defaults."""

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_engine_flags("RMSprop", capturable=capturable, differentiable=differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_option("RMSprop", "lr", group["lr"])
        check_option("RMSprop", "eps", group["eps"])
        check_option("RMSprop", "momentum", group["momentum"])
        check_option("RMSprop", "weight_decay", group["weight_decay"])
        check_option("RMSprop", "alpha", group["alpha"],
                     hint="the decay of the squared gradient's average; 0.99 is usual")

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        alpha, momentum = group["alpha"], group["momentum"]
        if not state:
            state["step"] = 0
            state["square_avg"] = state_tensor(zeros_like(param))
            if momentum > 0:
                state["momentum_buffer"] = state_tensor(zeros_like(param))
            if group["centered"]:
                state["grad_avg"] = state_tensor(zeros_like(param))
        state["step"] += 1
        grad = step_gradient(param, grad, group)
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)
            avg = (square_avg - grad_avg * grad_avg).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg.add_(group["eps"])
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf.mul_(momentum).add_(grad / avg)
            param.sub_(buf, alpha=group["lr"])
        else:
            param.sub_(grad / avg, alpha=group["lr"])
