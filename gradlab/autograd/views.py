"""In-place changes through a view: keeping the base's history right.

``v = y[0:2]`` shares ``y``'s memory, so ``v.mul_(3)`` changes ``y`` too. The
gradient must follow: afterwards ``y`` is "the old y with its first two
values replaced by 3 · (old values)". gradlab records exactly that as a
``CopySlices`` node on the base (PyTorch's name):

    d(new y)/d(old y)  = 1 outside the view, 0 inside it
    d(new y)/d(new v)  = 1 inside the view

and then remakes the view's own history from the new base, so ``v`` and
``y`` both lead back through the in-place op.

A view records how it was made from its base (``_view_base`` and
``_view_steps``: the view ops and their arguments), so the same steps can
be replayed on the base, on a gradient, or on a mask.
"""

from __future__ import annotations

from .function import _NO_GRAD_CTX, Function
from .grad_mode import state

__all__ = ["rebase_view", "replay_view"]


def replay_view(tensor, steps):
    """Apply a view's recorded steps to another tensor of the base's shape."""
    for fn, args, k in steps:
        tensor = fn.apply(tensor, *args)
        if type(tensor) is tuple:  # split, unbind...: the view is output k
            tensor = tensor[k]
    return tensor


def _replay_raw(array, steps):
    for fn, args, k in steps:
        array = fn.forward(_NO_GRAD_CTX, array, *args)
        if type(array) is tuple:
            array = array[k]
    return array


class CopySlices(Function):
    """The base after one of its views was changed in place.

    It has no tangent rule: rebase_view runs it with forward mode off, and the in-place
    op itself carries the tangents to the view and its base (gradlab/ops/inplace.py).
    """

    name = "copy_slices"

    @staticmethod
    def forward(ctx, base, new_view, steps):
        from ..tensor import Tensor

        ctx.steps = steps
        xp = base._device.backend.xp
        inside = xp.zeros(base._data.shape, dtype=bool)
        _replay_raw(inside, steps)[...] = True
        ctx.outside = ~inside
        # The values are already in the base's memory: the output shares it.
        return Tensor._make(base._data, base._storage, None, 0, False)

    @staticmethod
    def backward(ctx, grad):
        from ..ops.selection import Where  # (ops build on autograd: imported when used)

        # where, not grad * outside: inside the view exactly 0, even for a NaN grad (PyTorch)
        grad_base = Where.apply(ctx.outside, grad, 0.0) if ctx.needs_input_grad[0] else None
        grad_view = replay_view(grad, ctx.steps) if ctx.needs_input_grad[1] else None
        return grad_base, grad_view, None


def rebase_view(view, changed):
    """After ``view`` was changed in place (``changed`` holds its new history), fix histories.

    The base gets a ``CopySlices`` node; the view gets its history remade from
    the new base.
    """
    base = view._view_base
    if base._requires_grad and base.grad_fn is None and state.enabled:
        raise RuntimeError(
            f"a view of a leaf tensor that requires grad (base shape {tuple(base.shape)}, view "
            f"shape {tuple(view.shape)}) is being changed in place: the graph would lose the "
            "leaf's value. Fix: change a clone (w.clone()), or do it under gradlab.no_grad()."
        )
    new_base = CopySlices.apply(base, changed, view._view_steps)
    base.grad_fn = new_base.grad_fn
    base._out_index = 0
    base._requires_grad = True
    fresh = replay_view(base, view._view_steps)
    view.grad_fn = fresh.grad_fn
    view._out_index = fresh._out_index
    view._requires_grad = fresh._requires_grad
