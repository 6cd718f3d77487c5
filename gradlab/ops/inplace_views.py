"""In-place shape changes: ``t_``, ``transpose_``/``swapaxes_``/``swapdims_``, ``squeeze_``,
``unsqueeze_``, and ``resize_``/``resize_as_``.

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
from ..memory_layouts import contiguous_format
from ..storage import Storage
from ..tensor import Tensor
from ._util import wrap_dim
from .creation import _size
from .inplace import _check_target
from .shape import Squeeze, Transpose, Unsqueeze, squeeze, t, transpose, unsqueeze
from .strided_views import array_address

__all__: list = []  # methods only, as in PyTorch
TENSOR_METHODS = ["t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_",
                  "resize_", "resize_as_"]


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


# --- resize_: a new shape, and a new number of values ------------------------------------------

@recorded
def resize_(input: Tensor, *sizes, memory_format=None) -> Tensor:
    """Give the tensor a new shape in place, keeping its first values in row-major order
    (older code grows buffers so: ``buf.resize_(n).zero_()``).

    As PyTorch, it works on the tensor's memory block, which never shrinks: while the new
    shape fits in it, the tensor becomes a view of its values from where it starts (views
    made before still share them, and shrinking then growing back finds the old values).
    Beyond the block: new memory holding the old values first, then zeros (PyTorch
    leaves the rest uninitialised; gradlab never hands out leftover memory).
    Not for tensors that require grad, as in PyTorch: the graph knows their shape. A view
    stops being one: it keeps sharing its base's memory (or not, if it grew) but no longer
    replays onto the base's history, which only gradients need.
    """
    shape = _size(sizes)
    _check_resizable("resize_", input, memory_format)
    data = input._data
    count = int(np.prod(shape))
    block, start = _memory_block(data)
    if block is not None and start + count <= block.size:
        data = block.reshape(-1)[start:start + count].reshape(shape)
    else:
        xp = input._device.backend.xp
        grown = xp.zeros(shape, dtype=data.dtype)
        kept = min(count, data.size)
        grown.reshape(-1)[:kept] = xp.ascontiguousarray(data).reshape(-1)[:kept]
        input._storage = Storage(grown.nbytes, input._device, input._storage.category)
        data = grown
    input._data = data
    input._storage.version += 1
    for attribute in ("_view_base", "_view_steps", "_view_layout", "_history_version",
                      "_view_no_grad", "_layout_changes"):
        input.__dict__.pop(attribute, None)  # back to the class defaults: not a view
    return input


def _memory_block(data):
    """The contiguous array that owns ``data``'s memory and where ``data`` starts in it
    (in values), or (None, 0) if ``data`` is not one contiguous run of that block."""
    block = data if data.base is None else data.base
    if not (data.flags.c_contiguous and block.flags.c_contiguous and block.dtype == data.dtype):
        return None, 0
    start, rest = divmod(array_address(data) - array_address(block), data.itemsize)
    return (block, start) if rest == 0 and 0 <= start <= block.size else (None, 0)


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """``resize_`` to the shape of ``the_template``."""
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_: expected a Tensor to copy the shape of, got "
                        f"{type(the_template).__name__}")
    return resize_(input, tuple(the_template.shape), memory_format=memory_format)


def _check_resizable(name: str, target, memory_format) -> None:
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(target).__name__}")
    shape = tuple(target.shape)
    if target.requires_grad:
        raise RuntimeError(
            f"{name}: cannot resize a tensor that requires grad (shape {shape}): the graph "
            f"knows its shape. Fix: resize a copy, y = x.detach().clone().{name}(...), or "
            f"build the new tensor with gradlab.zeros / gradlab.cat")
    if memory_format not in (None, contiguous_format):
        raise NotImplementedError(f"{name}: memory_format={memory_format!r} is not supported; "
                                  f"resize, then call .contiguous(memory_format=...)")

