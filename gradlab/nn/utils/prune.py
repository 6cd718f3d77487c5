"""Pruning: zero out a layer's smallest or chosen weights with a mask (``torch.nn.utils.prune``).

``prune.l1_unstructured(layer, "weight", amount=0.3)`` keeps the layer
trainable but makes 30 % of its weights zero, the ones of smallest |w|:

* the Parameter moves to ``weight_orig`` (still what the optimizer trains);
* a buffer ``weight_mask`` holds ones and zeros (saved in the state_dict);
* ``weight`` becomes a plain tensor, ``weight_orig * weight_mask``,
  recomputed by a forward pre-hook before every call, so the gradient that
  reaches ``weight_orig`` is zero where the mask is (pruned weights stay
  pruned while the rest trains).

Pruning the same tensor again prunes among what is left
(:class:`PruningContainer` combines the masks): 30 % then 30 % leaves 49 %.
``prune.remove(layer, "weight")`` makes it permanent: ``weight`` is one
Parameter again, with the zeros in it. ``global_unstructured`` ranks the
weights of several layers together, so the layers that matter least lose
the most.

Methods: :class:`Identity`, :class:`RandomUnstructured`,
:class:`L1Unstructured` (smallest |w|), :class:`RandomStructured` and
:class:`LnStructured` (whole channels along ``dim``, the smallest by their
Lₙ norm), :class:`CustomFromMask`. The same selection rules as PyTorch, so
the same weights go (random ones use gradlab's generator).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way to choose a mask; also the forward pre-hook that applies it (PyTorch's API).

    Subclasses set ``PRUNING_TYPE`` ("unstructured", "structured" or "global") and
    implement ``compute_mask(t, default_mask)``: the new mask, given the importance of
    each entry of ``t`` and the mask already in place.
    """

    PRUNING_TYPE: str = "unstructured"
    _tensor_name: str

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t`` (same shape), on top of ``default_mask``."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_orig * <name>_mask``: the pruned tensor (differentiable in ``_orig``)."""
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (see the module docstring)."""
        if not isinstance(getattr(module, name, None), Tensor):
            raise AttributeError(f"prune: {type(module).__name__} has no tensor '{name}' to "
                                 "prune (parameters: "
                                 f"{', '.join(n for n, _ in module.named_parameters()) or 'none'})")
        previous = _pruning_hook(module, name, take=True)
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if previous is not None:  # pruning again: the new mask is chosen among what is left
            container = previous if isinstance(previous, PruningContainer) else \
                PruningContainer(previous)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        scores = orig if importance_scores is None else importance_scores
        if scores.shape != orig.shape:
            raise ValueError(f"prune: importance_scores has shape {tuple(scores.shape)} but "
                             f"'{name}' has shape {tuple(orig.shape)}; they must match")
        with no_grad():
            if previous is None:
                default_mask = _ones_like(orig)
            else:
                default_mask = getattr(module, name + "_mask").detach().clone()
            mask = method.compute_mask(scores.detach(), default_mask=default_mask)
        if previous is None:  # the Parameter itself moves to <name>_orig
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` with this method's mask applied (no module involved)."""
        scores = t if importance_scores is None else importance_scores
        with no_grad():
            mask = self.compute_mask(scores.detach(), default_mask if default_mask is not None
                                     else _ones_like(t))
        return t * mask.to(dtype=t.dtype)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` is a Parameter again, zeros included."""
        name = self._tensor_name
        weight = self.apply_mask(module)
        delattr(module, name)
        orig = module._parameters.pop(name + "_orig")
        del module._buffers[name + "_mask"]
        with no_grad():
            orig.copy_(weight)
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """Several prunings of one tensor in a row: each chooses among what the earlier left."""

    def __init__(self, *methods: BasePruningMethod) -> None:
        self._pruning_methods: tuple = ()
        if len(methods) == 1 and not isinstance(methods[0], BasePruningMethod):
            methods = tuple(methods[0])  # PruningContainer([m1, m2])
        for method in methods:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod):
            raise TypeError(f"PruningContainer: {type(method).__name__} is not a pruning "
                            "method")
        name = getattr(method, "_tensor_name", None)
        if self._pruning_methods and name != self._tensor_name:
            raise ValueError(f"PruningContainer: can only add methods pruning "
                             f"'{self._tensor_name}', got one pruning '{name}'")
        self._tensor_name = name
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, index):
        return self._pruning_methods[index]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, chosen among the entries (or channels) still unpruned."""
        method = self._pruning_methods[-1]
        mask = default_mask.clone()
        if method.PRUNING_TYPE == "unstructured":
            where = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            dim = method.dim % t.ndim
            others = [d for d in range(t.ndim) if d != dim]
            alive = default_mask.sum(others) != 0 if others else default_mask != 0
            where = [slice(None)] * t.ndim
            where[dim] = alive
            where = tuple(where)
        elif method.PRUNING_TYPE == "global":
            where = (slice(None),) * t.ndim
        else:
            raise ValueError(f"PruningContainer: unknown PRUNING_TYPE "
                             f"{method.PRUNING_TYPE!r}")
        mask[where] = method.compute_mask(t[where], default_mask=default_mask[where]).to(
            dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (a place to hang a mask buffer)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` single entries (a number, or a fraction of them): the ones
    ``_doomed`` picks among the entries still unpruned."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _how_many(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            mask.view(-1)[self._doomed(t, k)] = 0
        return mask

    @staticmethod
    def _doomed(t: Tensor, k: int) -> Tensor:
        raise NotImplementedError


class RandomUnstructured(_Unstructured):
    """``amount`` entries chosen at random."""

    @staticmethod
    def _doomed(t, k):
        from ...ops.sampling import rand_like

        return rand_like(t).view(-1).topk(k).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """The ``amount`` entries of smallest absolute value."""

    @staticmethod
    def _doomed(t, k):
        return t.abs().reshape(-1).topk(k, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _Structured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim`` (a number, or a fraction of them):
    every channel but the ones ``_alive`` keeps."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        channels = t.shape[self.dim]
        k = _how_many(self.amount, channels)
        if not k:
            return default_mask
        alive = self._alive(t, k, channels)
        return _channel_mask(t, self.dim, alive) * default_mask.to(dtype=t.dtype)

    def _alive(self, t: Tensor, k: int, channels: int) -> Tensor:
        raise NotImplementedError


class RandomStructured(_Structured):
    """``amount`` whole channels along ``dim`` chosen at random."""

    def _alive(self, t, k, channels):
        from ...ops.sampling import rand

        score = rand(channels)
        return score > score.kthvalue(k).values

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """The ``amount`` channels along ``dim`` of smallest Lₙ norm (``n``: 1, 2, inf ...)."""

    def __init__(self, amount, n, dim: int = -1) -> None:
        super().__init__(amount, dim)
        self.n = n

    def _alive(self, t, k, channels):
        from ...linalg import vector_norm

        dim = self.dim % t.ndim
        norms = vector_norm(t, self.n, dim=[d for d in range(t.ndim) if d != dim])
        alive = norms < 0  # all False, then the kept channels True
        alive[norms.topk(channels - k, largest=True).indices] = True
        return alive

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """A mask you give (ones keep, zeros prune), on top of any mask already there."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise ValueError(f"custom_from_mask: the mask has shape {tuple(self.mask.shape)} "
                             f"but the tensor has shape {tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# --- the functions ---------------------------------------------------------------------------

def identity(module: Module, name: str) -> Module:
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores=None) -> Module:
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int,
                  importance_scores=None) -> Module:
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable, pruning_method: type, importance_scores=None,
                        **kwargs) -> None:
    """Rank the entries of every ``(module, name)`` in ``parameters`` together and prune the
    ``amount`` (kwargs) lowest overall with ``pruning_method`` (an unstructured method)."""
    from ...ops.joining import cat

    parameters = list(parameters)
    if not parameters:
        raise ValueError("global_unstructured: parameters is empty; give (module, name) pairs")
    importance_scores = importance_scores or {}
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f"global_unstructured: {pruning_method.__name__} is "
                        f"{method.PRUNING_TYPE}; only unstructured methods rank entries "
                        "across tensors")
    method._tensor_name = "global"
    with no_grad():
        scores = cat([importance_scores.get((m, n), getattr(m, n)).detach().reshape(-1)
                      for m, n in parameters])
        masks = cat([_existing_mask(m, n).reshape(-1) for m, n in parameters])
        final = PruningContainer(method).compute_mask(scores, default_mask=masks)
    start = 0
    for module, name in parameters:
        size = getattr(module, name).numel()
        custom_from_mask(module, name, final[start:start + size].view_as(getattr(module, name)))
        start += size


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent and drop its mask and hook."""
    method = _pruning_hook(module, name, take=True)
    if method is None:
        raise ValueError(f"prune.remove: parameter '{name}' of module {module} has to be "
                         "pruned before the pruning can be removed")
    method.remove(module)
    return module


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any module inside it has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for m in module.modules() for hook in m._forward_pre_hooks.values())


# --- helpers ---------------------------------------------------------------------------------

def _pruning_hook(module: Module, name: str, take: bool):
    """The pruning hook of ``module.<name>`` (None if not pruned), taken off with ``take``."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            if take:
                del module._forward_pre_hooks[key]
            return hook
    return None


def _existing_mask(module: Module, name: str) -> Tensor:
    mask = getattr(module, name + "_mask", None)
    return mask if mask is not None else _ones_like(getattr(module, name))


def _ones_like(t: Tensor) -> Tensor:
    from ...ops.creation import ones_like

    return ones_like(t).detach()


def _channel_mask(t: Tensor, dim: int, alive: Tensor) -> Tensor:
    """Ones in the channels along ``dim`` where ``alive`` is True, zeros elsewhere."""
    from ...ops.creation import zeros_like

    mask = zeros_like(t).detach()
    where = [slice(None)] * t.ndim
    where[dim] = alive
    mask[tuple(where)] = 1
    return mask


def _check_amount(amount) -> None:
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount < 0 or (
            isinstance(amount, float) and amount > 1):
        raise ValueError(f"prune: amount={amount!r} should either be a float in the range "
                         "[0, 1] (a fraction) or a non-negative integer (a count)")


def _how_many(amount, size: int) -> int:
    """How many entries (or channels) ``amount`` prunes out of ``size``."""
    if isinstance(amount, int):
        if amount > size:
            raise ValueError(f"prune: amount={amount} should be smaller than the number of "
                             f"parameters to prune={size}")
        return amount
    return round(amount * size)


def _check_structured(t: Tensor) -> None:
    if t.ndim <= 1:
        raise ValueError(f"prune: structured pruning can only be applied to multidimensional "
                         f"tensors; found a tensor of shape {tuple(t.shape)} with {t.ndim} "
                         "dims. Fix: prune a weight, not a bias, or use an unstructured method")
