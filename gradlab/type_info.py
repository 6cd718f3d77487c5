"""What a dtype can hold: ``finfo`` (floats), ``iinfo`` (integers) and ``can_cast``.

``gradlab.finfo(gradlab.float32).eps`` is the gap between 1 and the next
float32 (2^-23), the yardstick for "equal up to rounding"; ``tiny`` (also
called ``smallest_normal``) is the smallest positive normal number, ``max``
the largest finite one. bfloat16 (float32's range, 8 bits of precision) is
described through ml_dtypes, which stores it for gradlab.

``can_cast(from_, to)`` is PyTorch's rule for in-place ops and ``out=``:
a value may move to a dtype of the same or a higher category (bool <
integer < floating), never down (3.7 into an int would lose the .7).
"""

from __future__ import annotations

import ml_dtypes

from . import dtypes as _dt

__all__ = ["finfo", "iinfo", "can_cast"]


def _dtype(op: str, type_) -> _dt.dtype:
    try:
        return _dt.to_dtype(type_)
    except TypeError:
        raise TypeError(f"{op}: expected a gradlab dtype such as gradlab.float32, got "
                        f"{type_!r}") from None


class finfo:  # noqa: N801 - PyTorch's spelling
    """Facts about a floating dtype: ``bits``, ``eps``, ``max``, ``min``, ``tiny`` (=
    ``smallest_normal``), ``resolution`` (10^-decimal digits) and ``dtype`` (its name).
    ``finfo()`` describes the default dtype; a complex dtype is described by its parts'
    (complex64 by float32's), as in PyTorch."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None) -> None:  # noqa: A002 - PyTorch's parameter name
        d = _dt.get_default_dtype() if type is None else _dtype("finfo", type).to_real()
        if not d.is_floating_point:
            raise TypeError(f"finfo: requires a floating point dtype, got {d}. Use "
                            f"gradlab.iinfo({d}) for integer types")
        info = ml_dtypes.finfo(d.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # 0.001, not float16(0.001)
        self.dtype = d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - PyTorch's spelling
    """Facts about an integer dtype: ``bits``, ``min``, ``max`` and ``dtype`` (its name)."""

    __slots__ = ("bits", "min", "max", "dtype")

    def __init__(self, type) -> None:  # noqa: A002 - PyTorch's parameter name
        d = _dtype("iinfo", type)
        if d.category != 1:
            hint = f" Use gradlab.finfo({d}) for floating types." if d.is_floating_point else \
                " (bool holds only False and True.)"
            raise TypeError(f"iinfo: {d} is not an integer dtype.{hint}")
        self.bits = d.itemsize * 8
        self.min, self.max = d._int_range
        self.dtype = d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


def can_cast(from_, to) -> bool:
    """May a value of dtype ``from_`` be written into dtype ``to``? Yes unless it would go
    down a category (float to integer or bool, integer to bool)."""
    return _dtype("can_cast", from_).category <= _dtype("can_cast", to).category
