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

from collections.abc import Sequence

import numpy as np

from . import dtypes as _dt
from .backends import device as as_device
from .tensor import Size, Tensor

__all__: list[str] = []  # filled below: one name per dtype gradlab has


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
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            if any(a < 0 for a in args):
                raise RuntimeError(f"{name}: a size can't be negative, got {list(args)}")
            from .ops.creation import zeros

            return zeros(*args, dtype=cls.dtype) if args else zeros(0, dtype=cls.dtype)
        if len(args) != 1:
            raise TypeError(f"{name}: expected integer sizes like {name}(2, 3) or one sequence "
                            f"of values like {name}([1, 2]), got {args!r}")
        data = args[0]
        if isinstance(data, Tensor):
            if isinstance(data, cls):
                return data
            raise TypeError(
                f"{name}: expected a tensor of dtype {cls.dtype} on the CPU, got {data.dtype} "
                f"on {data.device}. Fix: convert it, x.to(gradlab.{cls.dtype})")
        if not isinstance(data, (Sequence, np.ndarray)) or isinstance(data, str):
            raise TypeError(f"{name}: data must be a sequence of numbers (got "
                            f"{type(data).__name__}); for one value write {name}([v])")
        from .ops.creation import tensor

        return tensor(data, dtype=cls.dtype)

    def __repr__(cls) -> str:
        return f"<class 'gradlab.{cls.__name__}'>"


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
