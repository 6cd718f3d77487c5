"""AdamW: Adam with weight decay decoupled from the gradient (Loshchilov & Hutter, 2017).

Adam's L2 penalty λθ is added to the gradient and then divided by √v, so
weights with large gradients are barely decayed. AdamW shrinks every
weight by the same factor instead, before the Adam step::

    θ ← θ - γλθ        then the Adam update of θ with the raw gradient

That is why its default ``weight_decay`` is 1e-2 rather than 0.
"""

from __future__ import annotations

from collections.abc import Iterable

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay, with PyTorch's options and defaults."""

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
