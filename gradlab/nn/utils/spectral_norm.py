"""Spectral normalization, the hook version (``torch.nn.utils.spectral_norm``).

Dividing a weight by its largest singular value σ makes the layer
1-Lipschitz along that weight, which steadies GAN discriminators (Miyato
et al., 2018). σ is estimated by power iteration: vectors ``u`` and ``v``
are kept as buffers and refined a little on each training forward
(v ← Wᵀu/‖Wᵀu‖, u ← Wv/‖Wv‖), then σ ≈ uᵀWv. u and v are treated as
constants by backward (they are computed under no_grad), so the gradient
is that of W/σ with σ = uᵀWv: dσ/dW = uvᵀ.

The module learns ``weight_orig``; ``weight`` is recomputed by a forward
pre-hook before each call; ``weight_u`` and ``weight_v`` are saved.
"""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...ops.normalization import normalize
from ...tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter
from .weight_norm import remove_hook_form

__all__ = ["spectral_norm", "remove_spectral_norm"]


def reshape_to_matrix(weight: Tensor, dim: int) -> Tensor:
    """The weight as a (size of ``dim``) x (everything else) matrix."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.ndim) if d != dim))
    return weight.reshape(weight.shape[0], -1)


def _is_conv_transpose(module: Module) -> bool:
    # ConvTranspose keeps out_channels in dim 1 of its weight (in, out, *kernel)
    from ..modules import conv

    kinds = tuple(getattr(conv, n) for n in ("ConvTranspose1d", "ConvTranspose2d",
                                             "ConvTranspose3d") if hasattr(conv, n))
    return isinstance(module, kinds)


class SpectralNorm:
    """The forward pre-hook: ``module.<name> = <name>_orig / σ`` before each call."""

    _version: int = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        return reshape_to_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():  # refine the buffers in place; backward treats them as constants
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(normalize(weight_mat.mv(v), dim=0, eps=self.eps))
                u = u.clone()  # the buffers change again next step; the graph keeps these
                v = v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():  # random unit starting vectors for the power iteration
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # code that reads module.weight (init, repr) still finds a tensor: a plain attribute
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm before each forward; returns ``module``.

    ``dim``: the dim of output units (default 0, or 1 for ConvTranspose).
    ``n_power_iterations``: power-iteration steps per training forward (in
    eval mode u and v stay as they are).
    """
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``<name>`` is one Parameter again, with the current W/σ."""
    return remove_hook_form(module, SpectralNorm, name, "spectral_norm")
