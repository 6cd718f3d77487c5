"""Tensors over memory that already exists, or laid out by hand: ``asarray``,
``frombuffer``, ``empty_strided`` (and ``Tensor.new_empty_strided``).

``asarray`` and ``frombuffer`` *share* memory where they can: the tensor
and the NumPy array (or ``bytearray``, or other tensor) are two views of one
buffer, so writing through one shows in the other. ``asarray``'s ``copy``
says what is allowed: ``None`` (default) shares when no conversion is needed
and copies otherwise, ``True`` always copies, ``False`` never does and
raises if a conversion (another dtype or device) would need one.

``empty_strided(size, stride)`` lays the elements out with the given
strides (in elements, as ``Tensor.stride()`` reports them) over a fresh
buffer just large enough for the furthest element. PyTorch leaves that
memory uninitialised; gradlab fills it with zeros, as ``empty`` does.

None of these record a graph (``asarray`` of a tensor keeps that tensor's
history, as PyTorch does).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..backends import cpu, default_device
from ..backends import device as as_device
from ..storage import Storage
from ..tensor import Tensor
from ._factory_keywords import factory_keywords
from .creation import _new, _size, from_dlpack, tensor

__all__ = ["asarray", "frombuffer", "empty_strided"]
TENSOR_METHODS = ["new_empty_strided"]


# --- asarray -------------------------------------------------------------------------------

def _cannot_alias(what: str) -> ValueError:
    return ValueError(f"asarray: can't alias {what}, and copy=False forbids a copy. Fix: "
                      "leave copy out (copy=None copies only when it must), or copy=True")


def _set_requires_grad(t: Tensor, requires_grad) -> Tensor:
    if requires_grad is None or t.requires_grad == bool(requires_grad):
        return t
    if requires_grad:
        return t.requires_grad_(True)  # PyTorch marks the tensor itself (a leaf)
    return t.detach()


def _from_tensor(obj: Tensor, dtype, device, copy, requires_grad) -> Tensor:
    dtype = obj.dtype if dtype is None else _dt.to_dtype(dtype)
    dev = obj.device if device is None else as_device(device)
    converts = dtype is not obj.dtype or dev != obj.device
    if converts and copy is False:
        raise _cannot_alias(f"a {obj.dtype.name} tensor on {obj.device} as {dtype.name} on {dev}")
    out = obj.to(dev, dtype) if converts else obj
    if copy and out is obj:
        out = obj.clone()
    return _set_requires_grad(out, requires_grad)


def _from_numpy_array(obj: np.ndarray, dtype, device, copy) -> Tensor:
    shares = _dt.from_numpy_dtype(obj.dtype).np == obj.dtype  # uint16 ... widen: no sharing
    dtype = _dt.from_numpy_dtype(obj.dtype) if dtype is None else _dt.to_dtype(dtype)
    dev = default_device() if device is None else as_device(device)
    if copy is not True and shares and dtype.np == obj.dtype and dev is cpu:
        return _new(obj, cpu)
    if copy is False:
        raise _cannot_alias(f"a NumPy array of dtype {obj.dtype} as {dtype.name} on {dev}")
    return tensor(obj, dtype=dtype, device=dev)


def asarray(obj, *, dtype=None, device=None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """``obj`` (a tensor, NumPy array, DLPack or buffer object, number or nested list) as a
    tensor, sharing its memory where possible (see the module docstring for ``copy``).

    ``requires_grad=None`` keeps a tensor's own flag (PyTorch 2.13's behaviour) and is False
    for other data; ``True`` on a tensor that doesn't require grad marks *that* tensor.
    """
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"asarray: copy must be True, False or None, got {copy!r}")
    if isinstance(obj, Tensor):
        return _from_tensor(obj, dtype, device, copy, requires_grad)
    if isinstance(obj, np.ndarray):
        out = _from_numpy_array(obj, dtype, device, copy)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, np.generic):  # CuPy, PyTorch ...
        shared = from_dlpack(obj)
        out = _from_tensor(shared, dtype, device, copy, None)
    elif _is_buffer(obj):
        if copy is True:
            out = frombuffer(obj, dtype=dtype or _dt.get_default_dtype()).clone()
        else:
            out = frombuffer(obj, dtype=dtype or _dt.get_default_dtype())
        if device is not None:
            out = _from_tensor(out, None, device, copy, None)
    else:
        if copy is False:
            kind = "NumPy scalars" if isinstance(obj, np.generic) else \
                f"arbitrary Python data ({type(obj).__name__})"
            raise _cannot_alias(kind + " into a tensor (only arrays, buffers and tensors "
                                "have memory to share)")
        out = tensor(obj, dtype=dtype, device=device)
    return _set_requires_grad(out, requires_grad)


def _is_buffer(obj) -> bool:
    if isinstance(obj, (str, list, tuple, int, float, bool, np.generic)):
        return False
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


# --- frombuffer ----------------------------------------------------------------------------

def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D CPU tensor over the bytes of ``buffer`` (``bytearray``, ``memoryview``,
    ``array.array`` ...), reading ``count`` elements (-1: all) from byte ``offset`` on. The
    two share memory: writing one changes the other."""
    dtype = _dt.to_dtype(dtype)
    try:
        view = memoryview(buffer)
    except TypeError:
        raise TypeError(f"frombuffer: expected an object with the buffer protocol (bytes, "
                        f"bytearray, memoryview, array.array ...), got "
                        f"{type(buffer).__name__}") from None
    length, size = view.nbytes, dtype.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"frombuffer: both buffer length ({length}) and count ({count}) must "
                         "not be 0: an empty buffer holds no elements to share")
    if not 0 <= offset < length:
        raise ValueError(f"frombuffer: offset ({offset} bytes) must be non-negative and no "
                         f"greater than buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"frombuffer: buffer length ({length - offset} bytes) after offset "
                             f"({offset} bytes) must be a multiple of element size ({size}) "
                             f"for {dtype}. Fix: pass count=, or a buffer that fits")
        count = (length - offset) // size
    elif count * size > length - offset:
        raise ValueError(f"frombuffer: requested buffer length ({count} * {size} bytes) after "
                         f"offset ({offset} bytes) must not be greater than actual buffer "
                         f"length ({length} bytes)")
    if view.readonly:
        import warnings

        warnings.warn("frombuffer: the given buffer is not writable, so the tensor is read-only "
                      "too: in-place changes to it will fail. Copy it first (bytearray(buf)) "
                      "to get a writable tensor.", UserWarning, stacklevel=2)
    array = np.frombuffer(view, dtype=dtype.np, count=count, offset=offset)
    return _new(array, cpu, requires_grad)


# --- empty_strided -------------------------------------------------------------------------

def _strided(op: str, size, stride, dtype, device, requires_grad) -> Tensor:
    size = _size((size,))
    try:
        stride = tuple(int(s) for s in stride)
    except TypeError:
        raise TypeError(f"{op}: stride must be a sequence of ints, got {stride!r}") from None
    if len(size) != len(stride):
        raise RuntimeError(f"{op}: dimensionality of sizes ({len(size)}) must match "
                           f"dimensionality of strides ({len(stride)}): size {size}, stride "
                           f"{stride}; give one stride per dim")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{op}: strides must be >= 0, got {stride} for size {size} "
                           "(a negative stride would step before the buffer's start)")
    dtype = _dt.to_dtype(dtype or _dt.get_default_dtype())
    dev = as_device(device if device is not None else default_device())
    # The furthest element sits at sum((n - 1) * s): the buffer holds one past it.
    needed = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    backend = dev.get_backend()
    xp = backend.xp
    with backend.use_device(dev.index):
        buffer = xp.zeros(needed, dtype=dtype.np)
        array = xp.lib.stride_tricks.as_strided(
            buffer, shape=size, strides=tuple(s * dtype.itemsize for s in stride))
    t = Tensor._make(array, Storage(buffer.nbytes, dev), None, 0, False)  # the whole buffer
    if requires_grad:
        t.requires_grad = True  # the setter explains why integer tensors can't
    return t


@factory_keywords(out=False)
def empty_strided(size, stride, *, dtype=None, device=None,
                  requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` whose element ``[i, j, ...]`` sits ``i·stride[0] +
    j·stride[1] + ...`` elements into a fresh buffer (zeros in gradlab)."""
    return _strided("empty_strided", size, stride, dtype, device, requires_grad)


def new_empty_strided(self: Tensor, size, stride, *, dtype=None, device=None,
                      requires_grad: bool = False) -> Tensor:
    """``empty_strided`` with this tensor's dtype and device unless given."""
    return _strided("new_empty_strided", size, stride, self.dtype if dtype is None else dtype,
                    self.device if device is None else device, requires_grad)
