"""Data types and PyTorch's type-promotion rules.

A gradlab ``dtype`` is a thin, interned wrapper around a NumPy dtype. The
wrapper exists for two reasons: it prints like PyTorch (``gradlab.float32``)
and it carries the facts promotion needs (its *category*: bool < integer <
floating < complex, and for integers whether they are signed).

The integers are PyTorch's: uint8 (images: pixels 0..255), int8, int16,
int32 and int64. Integer arithmetic wraps around on overflow, as in C,
NumPy and PyTorch: ``uint8 200 + 100`` is 44.

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
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "cfloat", "cdouble",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
    "from_numpy_dtype", "to_dtype", "get_default_complex_dtype",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:  # noqa: N801 - PyTorch's spelling: gradlab.dtype
    """A tensor element type, e.g. ``gradlab.float32``."""

    __slots__ = ("name", "np", "category", "itemsize", "is_floating_point", "is_complex",
                 "is_signed", "_int_range")

    def __init__(self, name: str, np_dtype, category: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX  # an attribute, not a property: backward reads it
        self.is_signed = category != _BOOL and self.np.kind != "u"  # uint8 and bool aren't
        # (lowest, highest) value of an integer type, where arithmetic wraps; None otherwise.
        info = np.iinfo(self.np) if category == _INT else None
        self._int_range = None if info is None else (int(info.min), int(info.max))

    def __repr__(self) -> str:
        return f"gradlab.{self.name}"

    def __reduce__(self):  # pickling (e.g. DataLoader workers) keeps dtypes interned
        return (to_dtype, (self.name,))

    def to_real(self) -> dtype:
        """The real dtype of this one's parts: complex64 -> float32 (reals: itself)."""
        return _REAL_OF.get(self, self)

    def to_complex(self) -> dtype:
        """The complex dtype with parts of this float dtype (PyTorch: float64 ->
        complex128; float32, float16 and bfloat16 -> complex64, as gradlab has no
        complex32)."""
        if self.category == _COMPLEX:
            return self
        if self.category != _FLOAT:
            raise TypeError(f"to_complex: {self} is not a floating point dtype")
        return complex128 if self is float64 else complex64


bool = dtype("bool", np.bool_, _BOOL)  # noqa: A001 - PyTorch's name
uint8 = dtype("uint8", np.uint8, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT)
int32 = dtype("int32", np.int32, _INT)
int64 = dtype("int64", np.int64, _INT)
float16 = dtype("float16", np.float16, _FLOAT)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT)
float64 = dtype("float64", np.float64, _FLOAT)
complex64 = cfloat = dtype("complex64", np.complex64, _COMPLEX)
complex128 = cdouble = dtype("complex128", np.complex128, _COMPLEX)

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
_REAL_OF = {complex64: float32, complex128: float64}

_BY_NUMPY = {d.np: d for d in ALL_DTYPES}
# NumPy's wider unsigned types map to the next wider signed type, which holds every value
# (uint64 to int64, the widest there is: values of 2**63 and above wrap). PyTorch 2.x has
# uint16/32/64 too, but few of its ops accept them; gradlab leaves them out.
_BY_NUMPY.update({np.dtype(np.uint16): int32, np.dtype(np.uint32): int64,
                  np.dtype(np.uint64): int64})
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64,
                 "int": int32, "short": int16, "cfloat": complex64, "cdouble": complex128})

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
    """Accept a gradlab dtype, a NumPy dtype/type, a Python type or a name. The Python types
    mean what PyTorch makes them: ``float`` is float64 and ``complex`` complex128 (whatever the
    default dtype), ``int`` int64."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is complex:
        return complex128
    if d is int:
        return int64
    if d is _py_bool:
        return bool
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    return from_numpy_dtype(d)


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to (``torch.promote_types``).

    Categories first (bool < int < float < complex). Within a category the
    wider type wins, except where neither holds the other: float16 and bfloat16
    meet at float32, and uint8 (0..255) with int8 (-128..127) at int16. A float
    meeting a complex keeps its precision: float64 and complex64 give complex128.
    """
    if a is b:
        return a
    if a.category != b.category:
        high, low = (a, b) if a.category > b.category else (b, a)
        if high.category == _COMPLEX and low is float64:
            return complex128
        return high
    if a.category == _FLOAT and {a, b} == {float16, bfloat16}:
        return float32
    if a.is_signed != b.is_signed and a.itemsize == b.itemsize:  # uint8 and int8
        return int16
    return a if a.itemsize >= b.itemsize else b


def wrap_integer(value: int, d: dtype) -> int:
    """The Python int ``value`` wrapped around into integer dtype ``d``'s range, as a C cast.

    What PyTorch does to a Python int operand of an integer tensor: in uint8
    (0..255), 300 is 300 - 256 = 44 and -1 is 255; in-range values are unchanged.
    """
    low, high = d._int_range
    if low <= value <= high:
        return value
    return (value - low) % (high - low + 1) + low


def check_integer_fits(op: str, values: np.ndarray, d: dtype) -> None:
    """Python numbers going into integer dtype ``d`` must fit it (PyTorch's overflow check).

    As in PyTorch, an unsigned dtype also takes negative ints down to ``-max``
    (they wrap: -1 is 255 in uint8); floats must lie in the dtype's range.
    """
    if values.size == 0 or values.dtype.kind == "b":
        return
    low, high = d._int_range
    if not d.is_signed and values.dtype.kind in "iu":
        low = -high
    lo, hi = values.min(), values.max()
    if lo >= low and hi <= high:  # NaN compares False: reported below
        return
    raise RuntimeError(
        f"{op}: value cannot be converted to type {d.name} without overflow: "
        f"{lo if not lo >= low else hi} is outside {d}'s range {d._int_range[0]}.."
        f"{d._int_range[1]}. Fix: use a wider dtype (e.g. gradlab.int64 or float32), or wrap "
        f"on purpose with tensor(values).to({d})")


def get_default_complex_dtype() -> dtype:
    """The dtype of tensors made from Python complex numbers: the complex dtype of the
    default float dtype (complex64, or complex128 after ``set_default_dtype(float64)``)."""
    return _default_float.to_complex()


def _scalar_dtype(value) -> dtype:
    if isinstance(value, _py_bool):
        return bool
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return get_default_complex_dtype()
    return _default_float


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Merge a lower-priority group's dtype into a higher one's (PyTorch's rule): the
    lower one only counts where its category is higher, and a complex winning over a
    float takes that float's precision (float64 tensor * 1j is complex128)."""
    if higher is None:
        return lower
    if lower is None or lower.category <= higher.category:
        return higher
    if lower.category == _COMPLEX and higher.category == _FLOAT:
        return higher.to_complex()
    return lower


def result_type(*operands) -> dtype:
    """The dtype of an op on ``operands`` (Tensors and Python numbers), as PyTorch picks it."""
    dims = zero_dims = scalars = None
    for x in operands:
        d = None if isinstance(x, np.generic) else getattr(x, "dtype", None)
        if d is None:  # a number; a NumPy scalar counts as one, as in PyTorch
            d = _scalar_dtype(x.item() if isinstance(x, np.generic) else x)
            scalars = d if scalars is None else promote_types(scalars, d)
        elif x.ndim:
            dims = d if dims is None else promote_types(dims, d)
        else:
            zero_dims = d if zero_dims is None else promote_types(zero_dims, d)
    return _combine(dims, _combine(zero_dims, scalars))
