"""Adafactor: Adam-like steps with a second moment stored as a row and a column factor.

For a matrix parameter θ (n×m, or a batch of them: the last two dims) with gradient g at step t
(γ = lr, λ = weight_decay, τ = beta2_decay, ε₁, ε₂ = eps, d = clipping threshold)::

    g ← -g                                  if maximize
    β̂ ← t^τ                                 the averages' weight on the new value (1 at t=1)
    ρ ← min(γ, 1/√t);   α ← max(ε₂, RMS(θ)) · ρ        a step relative to θ's own size
    θ ← θ(1 - γλ)                           decoupled weight decay
    R ← R + β̂(mean_cols(g²) - R)            n×1: each row's mean square
    C ← C + β̂(mean_rows(g²) - C)            1×m: each column's mean square
    V̂ ← R·C / max(mean(R), ε₁)              a rank-1 estimate of the n×m second moment
    U ← g / √max(V̂, ε₁²)
    θ ← θ - α · U / max(1, RMS(U)/d)        clip the update's RMS to d

Vectors (and scalars) keep a full ``variance`` V ← V + β̂(g² - V) instead of R and C.
Storing n + m numbers instead of n·m is the point: Adafactor trains large
models whose Adam state would not fit. ε₁=None means the dtype's machine epsilon.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..ops.creation import zeros_like
from ..tensor import Tensor
from ..type_info import finfo
from .optimizer import Optimizer, check_option, state_tensor

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern, 2018), as PyTorch's ``torch.optim.Adafactor``: its options,
    defaults and update (which uses a step-dependent β₂ and relative step sizes)."""

    complex_params = False  # its second moment factors each matrix into row and column sums

    def __init__(self, params: Iterable, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_option("Adafactor", "lr", group["lr"])
        beta2_decay = group["beta2_decay"]
        check_option("Adafactor", "beta2_decay", beta2_decay, -math.inf)
        if beta2_decay > 0:
            raise ValueError(
                f"Adafactor: beta2_decay must be <= 0, got {beta2_decay}: the averages weigh "
                "the new value by t**beta2_decay, which must not grow with t. Fix: e.g. "
                "beta2_decay=-0.8.")
        eps = group["eps"]
        if not isinstance(eps, (tuple, list)) or len(eps) != 2:
            raise ValueError(f"Adafactor: eps must be a pair (eps1, eps2), got {eps!r}. Fix: "
                             "e.g. eps=(None, 1e-3); eps1=None means the dtype's epsilon.")
        if eps[0] is not None:
            check_option("Adafactor", "eps[0]", eps[0],
                         hint="the floor of the second-moment estimate")
        check_option("Adafactor", "eps[1]", eps[1], hint="the smallest relative step size")
        check_option("Adafactor", "d", group["d"], 1.0,
                     hint="the update's RMS is clipped to d")
        check_option("Adafactor", "weight_decay", group["weight_decay"])

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr, weight_decay = group["lr"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = finfo(param.dtype).eps
        if not state:
            state["step"] = 0
            if grad.ndim > 1:
                state["row_var"] = state_tensor(grad.new_zeros([*grad.shape[:-1], 1]))
                state["col_var"] = state_tensor(
                    grad.new_zeros([*grad.shape[:-2], 1, grad.shape[-1]]))
            else:
                state["variance"] = state_tensor(zeros_like(grad))
        step = state["step"] = state["step"] + 1
        if group["maximize"]:
            grad = -grad
        new_weight = float(step) ** group["beta2_decay"]
        rho = min(lr, 1 / step ** 0.5)
        alpha = max(eps2, param.norm(2).item() / param.numel() ** 0.5) * rho
        if weight_decay:
            param.mul_(1 - lr * weight_decay)
        if grad.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.shape[-1]),
                          new_weight)
            col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.shape[-2]),
                          new_weight)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, new_weight)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * group["d"]))
        param.add_(update, alpha=-alpha / denom)
