"""The legacy tensor types: ``gradlab.FloatTensor``, ``LongTensor`` ... (PyTorch before 0.4).

Old tutorials make tensors with ``torch.LongTensor(idxs)`` or
``torch.FloatTensor(2, 3)`` and test them with ``isinstance(x,
torch.FloatTensor)``. In PyTorch these are not classes of their own any more:
every tensor is a ``torch.Tensor`` and the "type" is its dtype on the CPU.
gradlab does the same: each legacy type is a tiny class whose call makes an
ordinary ``gradlab.Tensor`` of its dtype, and whose ``isinstance`` check
(``_LegacyType.__instancecheck__``) asks "is this a CPU tensor of my dtype?".

Prefer the modern spellings: ``gradlab.tensor(idxs)`` (keeps the data's
dtype) and ``gradlab.zeros(2, 3)``; ``x.dtype == gradlab.float32``.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence

import numpy as np

from . import dtypes as _dt
from .backends import device as as_device
from .tensor import Size, Tensor

__all__: list[str] = ["set_default_tensor_type"]  # and one type per dtype gradlab has


class _LegacyType(type):
    """The metaclass: calling the class makes a Tensor; isinstance checks the dtype and device."""

    dtype: _dt.dtype
    is_cuda = False

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args, device=None) -> Tensor:
        """``T()`` empty, ``T(2, 3)`` or ``T(Size)`` a new tensor of that shape (zeros: gradlab
        never hands out uninitialised memory), ``T(data)`` the data converted to T's dtype,
        ``T(tensor)`` that very tensor when it already is of type T."""
        name = cls.__name__
        if device is not None and as_device(device).type != "cpu":
            raise RuntimeError(
                f"{name}: the legacy types make CPU tensors, but device='{device}' was passed. "
                f"Fix: gradlab.tensor(data, dtype=gradlab.{cls.dtype}, device='{device}')")
        return legacy_new(name, cls.dtype, as_device("cpu"), args)

    def __repr__(cls) -> str:
        return f"<class 'gradlab.{cls.__name__}'>"


def legacy_new(name: str, dtype, device, args: tuple) -> Tensor:
    """The legacy constructor, ``gradlab.FloatTensor(...)`` and ``x.new(...)``, for ``dtype``
    on ``device``: no arguments an empty tensor, integer sizes (or a Size) a tensor of
    zeros of that shape, a sequence of values those values, and a tensor of that very
    dtype and device the tensor itself."""
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        if any(a < 0 for a in args):
            raise RuntimeError(f"{name}: a size can't be negative, got {list(args)}")
        from .ops.creation import zeros

        return zeros(*(args or (0,)), dtype=dtype, device=device)
    if len(args) != 1:
        raise TypeError(f"{name}: expected integer sizes like {name}(2, 3) or one sequence "
                        f"of values like {name}([1, 2]), got {args!r}")
    data = args[0]
    if isinstance(data, Tensor):
        if data.dtype is dtype and data.device == device:
            return data
        raise TypeError(
            f"{name}: expected a tensor of dtype {dtype} on {_where(device)}, got "
            f"{data.dtype} on {_where(data.device)}. Fix: convert it, x.to(gradlab.{dtype})")
    if not isinstance(data, (Sequence, np.ndarray)) or isinstance(data, str):
        raise TypeError(f"{name}: data must be a sequence of numbers (got "
                        f"{type(data).__name__}); for one value write {name}([v])")
    from .ops.creation import tensor

    return tensor(data, dtype=dtype, device=device)


def _where(device) -> str:
    return "the CPU" if device.type == "cpu" else str(device)


def set_default_tensor_type(t) -> None:
    """PyTorch's deprecated way to set the default dtype (and, for a cuda type, device):
    ``set_default_tensor_type(torch.DoubleTensor)`` or ``('torch.cuda.FloatTensor')``."""
    warnings.warn("set_default_tensor_type() is deprecated in PyTorch; use "
                  "gradlab.set_default_dtype() and gradlab.set_default_device() instead",
                  UserWarning, stacklevel=2)
    text = t if isinstance(t, str) else f"gradlab.{getattr(t, '__name__', t)}"
    kind = text.rsplit(".", 1)[-1]
    found = getattr(sys.modules[__name__], kind, None)
    if not isinstance(found, _LegacyType):
        raise TypeError(f"set_default_tensor_type: expected a tensor type such as "
                        f"gradlab.FloatTensor or 'torch.cuda.DoubleTensor', got {t!r}")
    if not found.dtype.is_floating_point:
        raise TypeError(f"set_default_tensor_type: only floating point types can be the "
                        f"default, got {kind}")
    from .settings import set_default_device

    _dt.set_default_dtype(found.dtype)
    set_default_device("cuda" if ".cuda." in text else "cpu")


TYPE_NAMES = {  # each dtype's legacy type name (also Tensor.type()'s answer)
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
    "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}

for _dtype_name, _class_name in TYPE_NAMES.items():
    _dtype = _dt._BY_NAME.get(_dtype_name)
    if _dtype is None:  # a dtype gradlab doesn't have (yet) gets no legacy type
        continue
    globals()[_class_name] = _LegacyType(_class_name, (), {
        "dtype": _dtype, "__module__": __name__,
        "__doc__": f"Legacy constructor and isinstance test for CPU tensors of {_dtype}."})
    __all__.append(_class_name)
del _dtype_name, _class_name, _dtype
