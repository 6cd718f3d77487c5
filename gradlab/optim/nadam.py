"""NAdam: Adam with Nesterov momentum (look one step ahead along the momentum).

For each parameter θ with gradient g at step t (γ = lr, λ = weight_decay, ψ = momentum_decay)::

    g ← -g                                  if maximize
    g ← g + λθ    or    θ ← θ - γλθ         weight decay (decoupled_weight_decay: the latter)
    μₜ ← β₁(1 - ½·0.96^(tψ));  μₜ₊₁ ← β₁(1 - ½·0.96^((t+1)ψ))   a momentum that warms up
    Πₜ ← Πₜ₋₁ · μₜ                          the product of all μ so far (state "mu_product")
    m ← β₁m + (1-β₁)g;   v ← β₂v + (1-β₂)g²
    d ← √(v / (1-β₂ᵗ)) + ε
    θ ← θ - γ(1-μₜ)/(1-Πₜ) · g/d - γμₜ₊₁/(1-Πₜμₜ₊₁) · m/d

The two terms are Nesterov's look-ahead: the current gradient's share of
the step, plus the momentum's share as it will be *next* step. Πₜ replaces
Adam's 1-β₁ᵗ bias correction because μ changes from step to step.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ops.creation import zeros_like
from ..tensor import Tensor
from .adam import Adam
from .optimizer import Optimizer, check_engine_flags, check_option, state_tensor, step_gradient

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (Dozat, 2016, "Incorporating Nesterov momentum into Adam"), with PyTorch's options
    and defaults. ``mu_product`` is kept as a Python float (PyTorch: a float32 0-d tensor)."""

    def __init__(self, params: Iterable, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_engine_flags("NAdam", capturable=capturable, differentiable=differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        Adam._check_group(self, group)
        check_option("NAdam", "momentum_decay", group["momentum_decay"],
                     hint="how fast the momentum warms up to beta1; 4e-3 is usual")

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        for state in self.state.values():  # PyTorch saves mu_product as a 0-d tensor
            if "mu_product" in state:
                state["mu_product"] = float(state["mu_product"])

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["mu_product"] = 1.0
            state["exp_avg"] = state_tensor(zeros_like(param))
            state["exp_avg_sq"] = state_tensor(zeros_like(param))
        step = state["step"] = state["step"] + 1
        grad = step_gradient(param, grad, group)
        momentum_decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mu_product = state["mu_product"] = state["mu_product"] * mu
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(1 - beta2 ** step).sqrt_().add_(group["eps"])
        param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
        param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))
