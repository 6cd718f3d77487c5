"""Rprop: move each coordinate by its own step size, grown or shrunk by the gradient's sign.

For each parameter θ with gradient g (η₋, η₊ = etas, [s_min, s_max] = step_sizes)::

    g ← -g                                  if maximize
    f ← η₊ where g·g_prev > 0               same sign as last step: speed up
        η₋ where g·g_prev < 0               the sign flipped: we jumped over a minimum, slow down
        1  elsewhere
    s ← clamp(s·f, s_min, s_max)            per-coordinate step size, starting at lr
    g ← 0 where the sign flipped            (and remember 0, so the next step is neutral)
    θ ← θ - sign(g)·s
    g_prev ← g

Only the *sign* of the gradient is used, never its size, which makes
Rprop robust to badly scaled losses; it is meant for full-batch training
(noisy mini-batch signs keep shrinking the steps).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ops.creation import full_like, zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, check_engine_flags, check_option, state_tensor

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller & Braun, 1993), with PyTorch's options and
    defaults."""

    def __init__(self, params: Iterable, lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_engine_flags("Rprop", capturable=capturable, differentiable=differentiable)
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_option("Rprop", "lr", group["lr"])
        for option, usual in (("etas", "(0.5, 1.2)"), ("step_sizes", "(1e-6, 50)")):
            value = group[option]
            if not isinstance(value, (tuple, list)) or len(value) != 2:
                raise ValueError(f"Rprop: {option} must be a pair, got {value!r}. Fix: e.g. "
                                 f"{option}={usual}.")
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(
                f"Rprop: etas must satisfy 0 < etas[0] < 1 < etas[1], got {etaminus}, "
                f"{etaplus}: etas[0] shrinks a step when the gradient's sign flips, etas[1] "
                "grows it when the sign stays. Fix: e.g. etas=(0.5, 1.2).")

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        if not state:
            state["step"] = 0
            state["prev"] = state_tensor(zeros_like(param))
            state["step_size"] = state_tensor(full_like(grad, group["lr"]))
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        prev, step_size = state["prev"], state["step_size"]
        agreement = grad * prev
        flipped = agreement < 0
        factor = full_like(grad, 1.0)  # in grad's dtype: etas multiply exactly as given
        factor.masked_fill_(agreement > 0, etaplus)
        factor.masked_fill_(flipped, etaminus)
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        grad = grad.masked_fill(flipped, 0)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
