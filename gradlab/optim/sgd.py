"""SGD: step against the gradient, optionally with momentum (heavy ball or Nesterov).

For each parameter θ with gradient g (γ = lr, λ = weight_decay, μ = momentum,
τ = dampening)::

    g ← -g                       if maximize (climb instead of descend)
    g ← g + λθ                   weight decay (an L2 penalty λ/2·|θ|² in the loss)
    b ← g  (first step),  b ← μb + (1-τ)g  (later)      if μ ≠ 0
    g ← g + μb  (nesterov)   or   g ← b                 if μ ≠ 0
    θ ← θ - γg
"""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import Optimizer, check_engine_flags, check_option, state_tensor

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, with PyTorch's options and defaults."""

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_engine_flags("SGD", fused=fused, differentiable=differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_option("SGD", "lr", group["lr"])
        check_option("SGD", "momentum", group["momentum"])
        check_option("SGD", "weight_decay", group["weight_decay"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(
                f"SGD: nesterov=True needs momentum > 0 and dampening = 0, got momentum="
                f"{group['momentum']} and dampening={group['dampening']}. Fix: e.g. "
                "SGD(params, lr, momentum=0.9, nesterov=True).")

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr = group["lr"]
        momentum = group["momentum"]
        weight_decay = group["weight_decay"]
        if not momentum and not weight_decay:  # plain SGD, the common case: one op
            param.add_(grad, alpha=lr if group["maximize"] else -lr)
            return
        if group["maximize"]:
            grad = -grad
        if weight_decay:
            grad = grad.add(param, alpha=weight_decay)
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = state_tensor(grad.clone())
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        param.add_(grad, alpha=-lr)
