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

__all__ = ["rebase_view", "refresh_view_history", "replay_view", "steps_from_base"]


def steps_from_base(view):
    """The steps that make ``view`` from its base as the base is *now*.

    Usually the view's own steps. If the base changed shape in place after
    the view was made (``y.t_()``), the steps that undo those changes come
    first: the view's steps start from the layout the base had then.
    """
    changes = view._view_base._layout_changes
    if len(changes) == view._view_layout:
        return view._view_steps
    undo = tuple(step for change in reversed(changes[view._view_layout:]) for step in change)
    return undo + view._view_steps


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


def refresh_view_history(view, strict: bool = True) -> None:
    """Remake ``view``'s history from its base's, after the memory changed in place.

    ``v = y[0]; y.mul_(2)``: ``v`` shows the doubled values, so its
    gradient must pass through the ``mul_`` too, but its ``grad_fn`` was
    made before. As in PyTorch, a view remembers the memory's version when
    its history was made; when the version moved on (the base, or another
    view of it, was changed in place), the view's steps are replayed on the
    base to make a current history. The replay emits no events of its own.
    Only with grad mode on (the history is only needed to record).

    A view made under ``no_grad`` has no history to remake. If its base has
    one now, using the view to record is ambiguous, and raises as in
    PyTorch (``strict``; a property read just leaves it as it is).
    """
    if not state.enabled:
        return
    base = view._view_base
    if view._view_no_grad:
        if strict and base._requires_grad:
            raise RuntimeError(
                f"a view (shape {tuple(view.shape)}) was made under no_grad, and its base "
                f"(shape {tuple(base.shape)}) or another view of it was changed in place since; "
                "whether the view should now carry that history is ambiguous, so gradlab "
                "refuses, as PyTorch does. Fix: make the view and the in-place change both "
                "inside no_grad, or both outside it (or make the view again after the change)")
        if strict:  # (a property read leaves it stale, so the next op still checks)
            view._history_version = view._storage.version
        return
    if base._requires_grad or view._requires_grad:
        quiet, level = state.in_tangent_rule, state.dual
        state.in_tangent_rule, state.dual = True, None
        try:
            fresh = replay_view(base, steps_from_base(view))
        finally:
            state.in_tangent_rule, state.dual = quiet, level
        view.grad_fn = fresh.grad_fn
        view._out_index = fresh._out_index
        view._requires_grad = fresh._requires_grad
    view._history_version = view._storage.version


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
    steps = steps_from_base(view)
    new_base = CopySlices.apply(base, changed, steps)
    base.grad_fn = new_base.grad_fn
    base._out_index = 0
    base._requires_grad = True
    fresh = replay_view(base, steps)
    view.grad_fn = fresh.grad_fn
    view._out_index = fresh._out_index
    view._requires_grad = fresh._requires_grad
    view._history_version = view._storage.version
