"""ASGD: SGD with a decaying step size, plus a running average of the iterates.

For each parameter θ with gradient g at step t (γ = lr, λ = weight_decay, η = the current step
size, μ = the averaging weight, ā = the average ``ax``)::

    g ← -g                              if maximize
    g ← g + λθ                          weight decay (an L2 penalty)
    θ ← θ(1 - lambd·η) - ηg             an SGD step (with its own small decay lambd)
    ā ← ā + μ(θ - ā)                    the average of the iterates (ā ← θ while μ = 1)
    η ← γ / (1 + lambd·γ·t)^alpha       the next step size
    μ ← 1 / max(1, t - t0)              averaging starts after step t0

Polyak-Ruppert averaging: the noisy iterates θ wander around the optimum,
and their average ``ā`` (in ``state["ax"]``) is much closer to it. The
parameters themselves follow plain (decaying) SGD; use ``ax`` for evaluation.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ops.creation import zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, check_engine_flags, check_option, state_tensor, step_gradient

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky, 1992), with PyTorch's options and defaults.

    ``eta`` and ``mu`` are kept as Python floats (PyTorch: float32 0-d tensors).
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_engine_flags("ASGD", differentiable=differentiable, capturable=capturable)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_option("ASGD", "lr", group["lr"])
        check_option("ASGD", "weight_decay", group["weight_decay"])

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        for state in self.state.values():  # PyTorch saves eta and mu as 0-d tensors
            for key in ("eta", "mu"):
                if key in state:
                    state[key] = float(state[key])

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state["step"] = 0
            state["eta"] = float(lr)
            state["mu"] = 1.0
            state["ax"] = state_tensor(zeros_like(param))
        step = state["step"] = state["step"] + 1
        grad = step_gradient(param, grad, group)
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        param.mul_(1 - lambd * eta)
        param.add_(grad, alpha=-eta)
        if mu != 1:
            ax.add_((param - ax).mul_(mu))
        else:
            ax.copy_(param)
        state["eta"] = lr / (1 + lambd * lr * step) ** group["alpha"]
        state["mu"] = 1 / max(1, step - group["t0"])
