"""Changing dtype or device, and copying: ``to``, ``clone``, ``contiguous`` (and ``new_*``).

These are differentiable: the gradient of a cast is the gradient cast back,
the gradient of a device move is the gradient moved back. In forward mode
each is linear: the tangent is cast, moved or copied the same way.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backends import device as as_device
from ..storage import Storage
from ..tensor import Tensor
from .complex_parts import refuse_complex_to_real

__all__ = ["clone"]
# new_zeros ... are methods only in PyTorch too (there is no torch.new_zeros).
TENSOR_METHODS = ["clone", "contiguous", "new_zeros", "new_ones", "new_empty", "new_full",
                  "new_tensor"]


class ToDtype(Function):
    """Cast to another dtype.   Backward: cast the gradient back to the input's dtype."""

    raw = True
    supports_complex = True
    name, node_name = "to", "ToCopyBackward0"  # PyTorch's: .to() is _to_copy underneath
    tangent_rule = "linear"  # the tangent is cast too (an integer target has no tangent)

    @staticmethod
    def forward(ctx, a, np_dtype):
        if a.dtype.kind == "c" and np_dtype.kind != "c":
            refuse_complex_to_real(a, np_dtype)
        return a.astype(np_dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad, None  # the engine casts it to the input's dtype


class ToDevice(Function):
    """Copy to another device.   Backward: copy the gradient back."""

    name, node_name = "to", "ToCopyBackward0"
    tangent_rule = "linear"  # the tangent moves along

    @staticmethod
    def forward(ctx, t, dev, np_dtype):
        ctx.source = t._device
        backend = dev.get_backend()
        data = t._data
        if dev.type != t._device.type:  # crossing host <-> device goes through the host
            data = t._device.backend.to_numpy(data)
        arr = backend.asarray(data, np_dtype, dev.index, copy=True)
        return Tensor._make(arr, Storage(arr.nbytes, dev), None, 0, False)

    @staticmethod
    def backward(ctx, grad):
        return to(grad, ctx.source), None, None


def parse_to_args(args, kwargs, op: str = "to()"):
    """``(device, dtype)`` asked for by ``to``'s arguments (None where not given).

    Shared by ``Tensor.to`` and ``Module.to``: a tensor argument means its
    device and dtype, a dtype (or its name) the dtype, anything else the device.
    """
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    for accepted in ("non_blocking", "copy", "memory_format"):
        kwargs.pop(accepted, None)
    if kwargs:
        raise TypeError(f"{op}: unexpected arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dev, dtype = a.device, a.dtype
        elif isinstance(a, (_dt.dtype, type, np.dtype)) or (isinstance(a, str) and
                                                            a in _dt._BY_NAME):
            dtype = a
        elif a is not None:
            dev = a
    return dev, dtype


def _parse_to(tensor, args, kwargs):
    dev, dtype = parse_to_args(args, kwargs)
    return (as_device(dev) if dev is not None else tensor.device,
            _dt.to_dtype(dtype) if dtype is not None else tensor.dtype)


def to(input, *args, **kwargs) -> Tensor:
    """``x.to(device)``, ``x.to(dtype)``, ``x.to(device, dtype)``, ``x.to(other)``.

    Returns ``x`` itself when nothing changes, as PyTorch does.
    """
    copy = kwargs.get("copy", False)
    layout = kwargs.get("memory_format")
    dev, dtype = _parse_to(input, args, kwargs)
    if dev is not input.device:
        out = ToDevice.apply(input, dev, dtype.np)
    elif dtype is not input.dtype:
        out = ToDtype.apply(input, dtype.np)
    else:
        out = clone(input) if copy else input
    return out if layout is None else _in_layout(out, layout)


def _in_layout(t: Tensor, layout) -> Tensor:
    """``t`` laid out as ``layout`` (gradlab.channels_last ...): see gradlab/memory_format.py."""
    from ..memory_layouts import to_memory_format

    return to_memory_format(t, layout)


class Clone(Function):
    """A copy with its own memory.   Backward: the gradient passes through."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a):
        return a.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad


def clone(input, *, memory_format=None) -> Tensor:
    """A copy with its own memory, in ``memory_format`` (by default the input's own layout,
    PyTorch's ``preserve_format``: a channels-last tensor's clone is channels-last too)."""
    from ..memory_layouts import preserve_format, suggest_format

    out = Clone.apply(input)
    if memory_format is None or memory_format is preserve_format:
        memory_format = suggest_format(input)
    return _in_layout(out, memory_format)


def contiguous(input, memory_format=None) -> Tensor:
    """``input`` itself if its memory is in row-major order (or in ``memory_format``, e.g.
    ``gradlab.channels_last``), else a copy in that order."""
    if memory_format is not None:
        return _in_layout(input, memory_format)
    if input._data.flags.c_contiguous:
        return input
    return Clone.apply(input)


# --- new tensors "like this one": x.new_zeros(...) ---------------------------------------------
#
# Code that must work for any dtype and device (a model run in float64, or on the GPU)
# allocates with ``x.new_zeros(batch, hidden)`` instead of ``gradlab.zeros(...)``: the new
# tensor takes x's dtype and device unless told otherwise. Only those two are taken from
# x: the shape is the one given, and the result never requires grad unless asked.

def _like_self(self: Tensor, dtype, device) -> dict:
    return {"dtype": self.dtype if dtype is None else dtype,
            "device": self.device if device is None else device}


def new_zeros(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros of shape ``size`` (``x.new_zeros(2, 3)`` or ``x.new_zeros((2, 3))``), x's dtype
    and device."""
    from .creation import zeros

    return zeros(*size, **_like_self(self, dtype, device), requires_grad=requires_grad)


def new_ones(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones of shape ``size``, with x's dtype and device."""
    from .creation import ones

    return ones(*size, **_like_self(self, dtype, device), requires_grad=requires_grad)


def new_empty(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` with x's dtype and device (zeros: gradlab never hands out
    uninitialised memory)."""
    from .creation import empty

    return empty(*size, **_like_self(self, dtype, device), requires_grad=requires_grad)


def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``fill_value`` everywhere, shape ``size``, x's dtype (not the fill value's) and device."""
    from .creation import full

    if isinstance(size, int):
        raise TypeError(f"new_full: size must be a tuple of ints like (2, 3), got {size!r}; "
                        f"write x.new_full(({size},), {fill_value!r})")
    return full(size, fill_value, **_like_self(self, dtype, device), requires_grad=requires_grad)


def new_tensor(self: Tensor, data, *, dtype=None, device=None,
               requires_grad: bool = False) -> Tensor:
    """A copy of ``data`` as a tensor with x's dtype and device (``data``'s own dtype is not
    kept: ``x.new_tensor([1, 2])`` is float when x is)."""
    from .creation import tensor

    if isinstance(data, Tensor):
        warnings.warn("new_tensor: to copy a tensor, data.clone().detach() is clearer (and "
                      "data.clone().detach().requires_grad_(True) for a new leaf)",
                      UserWarning, stacklevel=2)
    return tensor(data, **_like_self(self, dtype, device), requires_grad=requires_grad)
