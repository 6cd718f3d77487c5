"""Adagrad: each coordinate's step shrinks with the sum of its squared gradients so far.

For each parameter θ with gradient g at step t (γ = lr, η = lr_decay, λ = weight_decay)::

    g ← -g                        if maximize
    g ← g + λθ                    weight decay
    γ̃ ← γ / (1 + (t-1)η)
    s ← s + g²                    s starts at initial_accumulator_value
    θ ← θ - γ̃ g/(√s + ε)

Rarely-updated coordinates (rare words, rare features) keep large steps.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ops.creation import full_like
from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    check_engine_flags,
    check_option,
    state_tensor,
    step_gradient,
    updated_view,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011), with PyTorch's options and defaults."""

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_engine_flags("Adagrad", fused=fused, differentiable=differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:  # as PyTorch: the state exists from the start
            for p in group["params"]:
                self._init_state(updated_view(p), self.state[p], group)

    def _check_group(self, group: dict) -> None:
        for option in ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            check_option("Adagrad", option, group[option])

    @staticmethod
    def _init_state(param: Tensor, state: dict, group: dict) -> None:
        state["step"] = 0
        state["sum"] = state_tensor(full_like(param, group["initial_accumulator_value"]))

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        if not state:  # a parameter added later with add_param_group
            self._init_state(param, state, group)
        step = state["step"] = state["step"] + 1
        grad = step_gradient(param, grad, group)
        lr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        total = state["sum"]
        total.add_(grad * grad)
        param.sub_(grad / total.sqrt().add_(group["eps"]), alpha=lr)
