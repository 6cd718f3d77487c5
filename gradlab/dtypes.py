"""Data types and PyTorch's type-promotion rules.

A gradlab ``dtype`` is a thin, interned wrapper around a NumPy dtype. The
wrapper exists for two reasons: it prints like PyTorch (``gradlab.float32``)
and it carries the facts promotion needs (its *category*: bool < integer <
floating).

Promotion follows PyTorch, not NumPy. The two differ in ways students trip
over: ``int32_tensor * 2.5`` is float32 in PyTorch (float64 in NumPy), and a
0-d float64 tensor does not upgrade a float32 tensor. The rule
(``torch.result_type``) ranks operands in three priority groups, dimensioned
tensors, 0-d tensors and Python scalars; a lower group only matters when its
category is higher than everything above it.
"""

from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "bool", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
    "from_numpy_dtype", "to_dtype",
]

_BOOL, _INT, _FLOAT = 0, 1, 2


class dtype:  # noqa: N801 - PyTorch's spelling: gradlab.dtype
    """A tensor element type, e.g. ``gradlab.float32``."""

    __slots__ = ("name", "np", "category", "itemsize", "is_floating_point", "is_signed")

    def __init__(self, name: str, np_dtype, category: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == _FLOAT
        self.is_signed = category != _BOOL

    def __repr__(self) -> str:
        return f"gradlab.{self.name}"

    def __reduce__(self):  # pickling (e.g. DataLoader workers) keeps dtypes interned
        return (to_dtype, (self.name,))

    @property
    def is_complex(self) -> bool:
        return False


bool = dtype("bool", np.bool_, _BOOL)  # noqa: A001 - PyTorch's name
int32 = dtype("int32", np.int32, _INT)
int64 = dtype("int64", np.int64, _INT)
float16 = dtype("float16", np.float16, _FLOAT)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT)
float64 = dtype("float64", np.float64, _FLOAT)

ALL_DTYPES = (bool, int32, int64, float16, bfloat16, float32, float64)

_BY_NUMPY = {d.np: d for d in ALL_DTYPES}
# NumPy types gradlab has no dtype for map to the nearest one PyTorch would use.
_BY_NUMPY.update({
    np.dtype(np.int8): int32, np.dtype(np.int16): int32, np.dtype(np.uint8): int64,
    np.dtype(np.uint16): int32, np.dtype(np.uint32): int64, np.dtype(np.uint64): int64,
})
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64,
                 "int": int32})

_default_float = float32


def get_default_dtype() -> dtype:
    """The dtype of tensors made from Python floats (float32 unless changed)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Make ``d`` (float32 or float64, usually) the dtype of new float tensors."""
    global _default_float
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating dtypes can be the default, got {d}")
    _default_float = d


def from_numpy_dtype(np_dtype) -> dtype:
    """The gradlab dtype that stores NumPy's ``np_dtype`` (lossless where possible)."""
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        pass
    np_dtype = np.dtype(np_dtype)
    if np_dtype in _BY_NUMPY:
        return _BY_NUMPY[np_dtype]
    raise TypeError(
        f"gradlab has no dtype for NumPy's {np_dtype}; supported: "
        + ", ".join(d.name for d in ALL_DTYPES)
    )


_py_bool = builtins.bool  # the module's own name `bool` is gradlab.bool


def to_dtype(d) -> dtype:
    """Accept a gradlab dtype, a NumPy dtype/type, a Python type or a name."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return _default_float
    if d is int:
        return int64
    if d is _py_bool:
        return bool
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    return from_numpy_dtype(d)


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to (``torch.promote_types``).

    Categories first (bool < int < float); within floats, float16 and bfloat16
    meet at float32 because neither holds the other.
    """
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == _FLOAT and {a, b} == {float16, bfloat16}:
        return float32
    return a if a.itemsize >= b.itemsize else b


def _scalar_dtype(value) -> dtype:
    if isinstance(value, _py_bool):
        return bool
    if isinstance(value, int):
        return int64
    return _default_float


def result_type(*operands) -> dtype:
    """The dtype of an op on ``operands`` (Tensors and Python numbers), as PyTorch picks it."""
    dims = zero_dims = scalars = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if d is None:
            d = _scalar_dtype(x)
            scalars = d if scalars is None else promote_types(scalars, d)
        elif x.ndim:
            dims = d if dims is None else promote_types(dims, d)
        else:
            zero_dims = d if zero_dims is None else promote_types(zero_dims, d)
    result = dims
    if zero_dims is not None and (result is None or zero_dims.category > result.category):
        result = zero_dims
    if scalars is not None and (result is None or scalars.category > result.category):
        result = scalars
    return result
