"""Hooks on a tensor's gradient: ``register_hook`` and ``register_post_accumulate_grad_hook``.

Bound onto ``Tensor`` as methods (gradlab/tensor.py). A hook on a leaf lives
on the tensor (the engine runs it before accumulating); a hook on a non-leaf
lives on its ``grad_fn`` node, keyed by which output the tensor is, and runs
when that gradient arrives. Post-accumulate hooks run after ``.grad`` is
written (engine ``_accumulate``). Each registration returns a handle whose
``remove()`` takes the hook out again.
"""

from __future__ import annotations

__all__ = ["register_hook", "register_post_accumulate_grad_hook"]


def _require_grad(tensor) -> None:
    if not tensor._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")


def register_hook(self, hook):
    """Call ``hook(grad)`` when this tensor's gradient is computed.

    The hook may return a new gradient to use instead. Returns a handle
    whose ``remove()`` unregisters it.
    """
    from ..utils.hooks import RemovableHandle

    _require_grad(self)
    node = self.grad_fn
    if node is None:
        if self._hooks is None:
            self._hooks = {}
        return RemovableHandle(self._hooks, hook)
    if node._pre_hooks is None:
        node._pre_hooks = {}
    return RemovableHandle(node._pre_hooks.setdefault(self._out_index, {}), hook)


def register_post_accumulate_grad_hook(self, hook):
    """Call ``hook(tensor)`` after backward has added into this leaf's ``.grad``.

    For work that wants the finished gradient, e.g. an optimizer step per
    parameter as soon as its gradient is ready. The hook returns None.
    Returns a handle whose ``remove()`` unregisters it.
    """
    from ..utils.hooks import RemovableHandle

    _require_grad(self)
    if self.grad_fn is not None:
        raise RuntimeError(
            f"post accumulate grad hooks cannot be registered on non-leaf tensors (this one "
            f"was made by '{self.grad_fn.op}'). Fix: register it on the parameter, or use "
            "register_hook for the gradient flowing through this tensor")
    if self._post_accumulate_hooks is None:
        self._post_accumulate_hooks = {}
    return RemovableHandle(self._post_accumulate_hooks, hook)
