"""Adam: per-coordinate step sizes from running averages of the gradient and its square.

For each parameter θ with gradient g at step t (γ = lr, λ = weight_decay)::

    g ← -g                            if maximize
    g ← g + λθ                        weight decay as an L2 penalty (Adam)
    θ ← θ - γλθ                       or decoupled from the gradient (AdamW)
    m ← β₁m + (1-β₁)g                 first moment: a smoothed gradient
    v ← β₂v + (1-β₂)g²                second moment: the gradient's typical size
    v_max ← max(v_max, v); use v_max for v below      if amsgrad
    θ ← θ - γ · (m / (1-β₁ᵗ)) / (√(v / (1-β₂ᵗ)) + ε)

The divisions by ``1 - βᵗ`` undo the bias of starting the averages at zero.
Dividing by √v makes the step about γ in every coordinate, whatever the
gradient's scale.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..ops.creation import zeros_like
from ..ops.selection import maximum
from ..tensor import Tensor
from .optimizer import Optimizer, check_engine_flags, check_option, state_tensor, step_gradient

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014), with PyTorch's options and defaults."""

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        check_engine_flags(type(self).__name__, fused=fused, differentiable=differentiable,
                           capturable=capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        name = self._name
        check_option(name, "lr", group["lr"])
        check_option(name, "eps", group["eps"])
        check_option(name, "weight_decay", group["weight_decay"])
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}. "
                             "Fix: e.g. betas=(0.9, 0.999).")
        for i, hint in enumerate(("the decay of the gradient's running average; 0.9 is usual",
                                  "the decay of the squared gradient's average; 0.999 is usual")):
            check_option(name, f"betas[{i}]", betas[i], 0.0, 1.0, hint=hint)

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = state_tensor(zeros_like(param))
            state["exp_avg_sq"] = state_tensor(zeros_like(param))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = state_tensor(zeros_like(param))
        grad = step_gradient(param, grad, group)
        step = state["step"] = state["step"] + 1
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
        second = exp_avg_sq
        if group["amsgrad"]:
            second = state["max_exp_avg_sq"]
            second.copy_(maximum(second, exp_avg_sq))
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        denom = (second.sqrt() / math.sqrt(bias_correction2)).add_(group["eps"])
        param.sub_(exp_avg / denom, alpha=lr / bias_correction1)
