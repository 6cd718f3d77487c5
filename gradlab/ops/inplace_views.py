"""In-place shape changes: ``t_``, ``transpose_``/``swapaxes_``/``swapdims_``, ``squeeze_``,
``unsqueeze_``.

They change how a tensor looks at its memory, not the values in it:
``x.unsqueeze_(0)`` is ``x = x.unsqueeze(0)`` without a new tensor object.
So each one is its out-of-place view op, whose result the tensor then
becomes: its array, its ``grad_fn`` (``TBackward0``, ``UnsqueezeBackward0``
... on top of the old history) and, for a view, the steps that make it from
its base. The version counter goes up, as in PyTorch: a node that saved the
tensor would otherwise unpack it in a shape it never saw.

One subtlety is the views made *earlier* from a tensor whose shape then
changes: their recorded steps start from the base's old layout. So a base
keeps, for each such change, the steps that undo it (``_layout_changes``),
and a view remembers how many changes it has seen (``_view_layout``);
``autograd.views.steps_from_base`` puts the two together when an in-place
change of such a view is replayed onto its base.
"""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import state
from ..autograd.tracing import recorded
from ..tensor import Tensor
from ._util import wrap_dim
from .inplace import _check_target
from .shape import Squeeze, Transpose, Unsqueeze, squeeze, t, transpose, unsqueeze

__all__: list = []  # methods only, as in PyTorch
TENSOR_METHODS = ["t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_"]


@recorded
def t_(input: Tensor) -> Tensor:
    """Transpose a matrix in place (a 1-D or 0-D tensor stays as it is)."""
    out = _reshape_in_place("t_", input, t)
    undo = ((Transpose, (0, 1), 0),) if input.ndim == 2 else ()
    return _finish(input, out, undo)


@recorded
def transpose_(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap dims ``dim0`` and ``dim1`` in place."""
    d0 = wrap_dim(dim0, input.ndim, "transpose_")
    d1 = wrap_dim(dim1, input.ndim, "transpose_")
    out = _reshape_in_place("transpose_", input, lambda x: transpose(x, d0, d1))
    return _finish(input, out, ((Transpose, (d0, d1), 0),))


def swapaxes_(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """NumPy's name for ``transpose_``."""
    return transpose_(input, axis0, axis1)


def swapdims_(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return transpose_(input, dim0, dim1)


@recorded
def unsqueeze_(input: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim at ``dim``, in place."""
    d = wrap_dim(dim, input.ndim + 1, "unsqueeze_")
    out = _reshape_in_place("unsqueeze_", input, lambda x: unsqueeze(x, d))
    return _finish(input, out, ((Squeeze, ((d,),), 0),))


@recorded
def squeeze_(input: Tensor, dim=None) -> Tensor:
    """Remove size-1 dims (all, or those in ``dim`` that have size 1), in place."""
    shape = input._data.shape
    if dim is None:
        asked = range(len(shape))
    else:
        asked = [wrap_dim(d, input.ndim, "squeeze_") for d in
                 ((dim,) if isinstance(dim, (int, np.integer)) else dim)]
    removed = sorted({d for d in asked if shape and shape[d] == 1})
    out = _reshape_in_place("squeeze_", input, lambda x: squeeze(x, dim))
    # Undo: put the dims back, lowest first, each at its old position.
    return _finish(input, out, tuple((Unsqueeze, (d,), 0) for d in removed))


def _reshape_in_place(name: str, target: Tensor, view):
    """``view(target)``, the out-of-place op, after the checks every in-place op makes."""
    _check_target(name, target)
    return view(target)


def _finish(target: Tensor, out: Tensor, undo: tuple) -> Tensor:
    """Make ``target`` the view ``out``: its array, history and place in its base."""
    target._data = out._data
    if out.grad_fn is not None:
        target.grad_fn = out.grad_fn
        target._out_index = out._out_index
    if target._view_base is not None:  # out is a view of the same base, one step further
        target._view_steps = out._view_steps
        target._history_version = target._storage.version + 1
    elif undo:
        target._layout_changes = target._layout_changes + (undo,)
    if state.dual is not None and "_tangent" in out.__dict__:
        state.dual.set(target, out.__dict__["_tangent"])
    target._storage.version += 1
    return target

