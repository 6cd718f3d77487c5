"""Weight normalization, the hook version (``torch.nn.utils.weight_norm``).

Weight norm splits a weight into a length and a direction, w = g · v / ‖v‖
(Salimans & Kingma, 2016), and learns ``weight_g`` (g) and ``weight_v``
(v) instead of ``weight``: gradient descent can then change a filter's
scale without touching its direction. The norm is taken over every dim but
``dim`` (for a Linear, dim=0: one g per output row).

This older form is a forward pre-hook that recomputes ``module.weight``
(a plain tensor attribute) before every call. PyTorch deprecates it in
favour of :func:`gradlab.nn.utils.parametrizations.weight_norm`, which
saves ``parametrizations.weight.original0`` / ``original1`` instead.
"""

from __future__ import annotations

import warnings

from ...linalg import vector_norm
from ...tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["weight_norm", "remove_weight_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """‖v‖ over every dim but ``dim``, kept as size-1 dims (one norm per slice along ``dim``);
    ``dim=-1`` means the norm of the whole tensor (a 0-d tensor), as in PyTorch."""
    if dim == -1:
        return vector_norm(v, pow)
    dim = dim % v.ndim
    others = [d for d in range(v.ndim) if d != dim]
    if not others:  # a vector normalised entry by entry: the norm of one number
        return v.abs()
    return vector_norm(v, pow, dim=others, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """w = v · g / ‖v‖ (norm over the dims but ``dim``). Composed of norm, div and mul, so the
    gradient is theirs: dw/dg = v/‖v‖, and dv sees the norm's (I - v̂v̂ᵀ)/‖v‖ too."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook: ``module.<name> = g · v / ‖v‖`` before each call."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2,
                                                                          fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))  # a plain attribute, not a parameter
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``<name>_g · <name>_v / ‖<name>_v‖``; returns ``module``.

    ``dim``: the dim that keeps one g per slice (0: per output unit);
    ``dim=None``: one g for the whole tensor.
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``<name>`` is one Parameter again, with the current value."""
    return remove_hook_form(module, WeightNorm, name, "weight_norm")


def remove_hook_form(module: Module, kind: type, name: str, what: str) -> Module:
    """Take off the forward pre-hook of class ``kind`` that reparametrizes ``<name>``
    (weight_norm's or spectral_norm's), leaving ``<name>`` one Parameter again."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")
