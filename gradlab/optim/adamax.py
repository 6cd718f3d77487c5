"""Adamax: Adam with the infinity norm in place of the root mean square.

For each parameter θ with gradient g at step t (γ = lr, λ = weight_decay)::

    g ← -g                          if maximize
    g ← g + λθ                      weight decay (an L2 penalty)
    m ← β₁m + (1-β₁)g               first moment, as in Adam
    u ← max(β₂u, |g| + ε)           a decaying maximum of |g|: the ∞-norm limit of Adam's v
    θ ← θ - γ/(1-β₁ᵗ) · m/u

``u`` needs no bias correction: a maximum is not pulled toward its zero
start the way an average is. ε sits inside the max, so ``u`` is never 0.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ops.creation import zeros_like
from ..ops.selection import maximum
from ..tensor import Tensor
from .adam import Adam
from .optimizer import Optimizer, check_engine_flags, state_tensor, step_gradient

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, 2014, section 7), with PyTorch's options and defaults."""

    def __init__(self, params: Iterable, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_engine_flags("Adamax", differentiable=differentiable, capturable=capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    _check_group = Adam._check_group  # lr, eps, weight_decay >= 0 and betas in [0, 1)

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = state_tensor(zeros_like(param))
            state["exp_inf"] = state_tensor(zeros_like(param))
        step = state["step"] = state["step"] + 1
        grad = step_gradient(param, grad, group)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"])))
        param.sub_(exp_avg / exp_inf, alpha=group["lr"] / (1 - beta1 ** step))
