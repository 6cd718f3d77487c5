"""``gradlab.testing.assert_close``: are two results equal up to floating-point error?

Floating-point results are rarely bit-identical (summation order, fused
kernels, float32 rounding), so tests compare with a tolerance: ``actual`` is
close to ``expected`` where

    |actual - expected| <= atol + rtol · |expected|

elementwise (and equal infinities are close; NaNs only with
``equal_nan=True``). The default tolerances are PyTorch's, chosen per dtype
from its precision: a float32 result has ~7 significant digits, so
rtol=1.3e-6; integers and bools must be exactly equal. The failure message
is PyTorch's too: how many elements mismatch, and the greatest absolute and
relative difference and where.

Tensors, NumPy arrays, Python numbers, and sequences or mappings of them
(compared item by item) are accepted, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .tensor import Size, Tensor

__all__ = ["assert_close"]

# (rtol, atol) by dtype: PyTorch's defaults. Anything not listed (ints, bool) must be equal.
DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


class _Mismatch(AssertionError):
    """A difference found somewhere inside the inputs; ``path`` says where."""

    def __init__(self, message: str, path=()) -> None:
        super().__init__(message)
        self.message, self.path = message, path


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close (see the module).

    ``rtol`` and ``atol`` go together (give both or neither); omitted, they
    are the defaults of the inputs' dtypes (the looser of the two).
    ``check_dtype=False`` compares values of different dtypes in their
    common dtype. ``msg`` replaces the message, or, if callable, edits it.
    """
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {missing}.")
    options = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan,
               "check_device": check_device, "check_dtype": check_dtype}
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as failure:
        message = failure.message
        if failure.path:
            where = "".join(f"[{key!r}]" for key in failure.path)
            message += f"\n\nThe failure occurred for item {where}"
        if callable(msg):
            message = msg(message)
        elif msg is not None:
            message = msg
        raise AssertionError(message) from None


def _compare(actual, expected, path: tuple, options: dict) -> None:
    """Walk sequences and mappings in step; compare the leaves."""
    if _is_array(actual) or _is_array(expected) or _is_number(actual):
        return _compare_leaves(actual, expected, path, options)
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing or extra:
            raise _Mismatch("The keys of the mappings do not match:\n"
                            + (f"Missing keys in the actual mapping: {sorted(missing)}\n"
                               if missing else "")
                            + (f"Additional keys in the actual mapping: {sorted(extra)}"
                               if extra else "").rstrip("\n"), path)
        for key in expected:
            _compare(actual[key], expected[key], path + (key,), options)
        return None
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(f"The length of the sequences mismatch: {len(actual)} != "
                            f"{len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _compare(a, e, path + (i,), options)
        return None
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.")


def _is_array(x) -> bool:
    return isinstance(x, (Tensor, np.ndarray))


def _is_number(x) -> bool:
    return isinstance(x, (bool, int, float, np.generic))


def _is_sequence(x) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, (str, bytes))


def _compare_leaves(actual, expected, path: tuple, options: dict) -> None:
    kinds = (Tensor, np.ndarray, (bool, int, float, np.generic))
    if not any(isinstance(actual, k) and isinstance(expected, k) for k in kinds):
        raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} "
                        f"and {type(expected)}.")
    if isinstance(actual, Tensor):
        _check_attributes(actual, expected, path, options)
        a, e = actual._host(), expected._host()
        dtypes = (actual.dtype.name, expected.dtype.name)
        scalar = actual.ndim == 0
    elif isinstance(actual, np.ndarray):
        if actual.shape != expected.shape:
            raise _Mismatch(f"The values for attribute 'shape' do not match: {actual.shape} != "
                            f"{expected.shape}.", path)
        if options["check_dtype"] and actual.dtype != expected.dtype:
            raise _Mismatch(f"The values for attribute 'dtype' do not match: {actual.dtype} != "
                            f"{expected.dtype}.", path)
        a, e, scalar = actual, expected, actual.ndim == 0
        dtypes = (a.dtype.name, e.dtype.name)
    else:
        if options["check_dtype"] and type(actual) is not type(expected):
            raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.",
                            path)
        a, e, scalar = np.asarray(actual), np.asarray(expected), True
        dtypes = tuple("float64" if v.dtype.kind == "f" else "int64" for v in (a, e))
    rtol, atol = options["rtol"], options["atol"]
    if rtol is None:
        rtol = max(DEFAULT_TOLERANCES.get(d, (0.0, 0.0))[0] for d in dtypes)
        atol = max(DEFAULT_TOLERANCES.get(d, (0.0, 0.0))[1] for d in dtypes)
    _compare_values(a, e, rtol, atol, options["equal_nan"], scalar, path)


def _check_attributes(actual: Tensor, expected: Tensor, path: tuple, options: dict) -> None:
    if actual.shape != expected.shape:
        raise _Mismatch(f"The values for attribute 'shape' do not match: {Size(actual.shape)!r}"
                        f" != {Size(expected.shape)!r}.", path)
    if options["check_device"] and actual.device != expected.device:
        raise _Mismatch(f"The values for attribute 'device' do not match: {actual.device} != "
                        f"{expected.device}.", path)
    if options["check_dtype"] and actual.dtype is not expected.dtype:
        raise _Mismatch(f"The values for attribute 'dtype' do not match: {actual.dtype} != "
                        f"{expected.dtype}.", path)


def _compare_values(a: np.ndarray, e: np.ndarray, rtol, atol, equal_nan: bool, scalar: bool,
                    path: tuple) -> None:
    common = np.result_type(a.dtype, e.dtype)
    if common.kind == "b":
        common = np.dtype(np.int64)  # True - False needs numbers
    a, e = a.astype(common), e.astype(common)
    floating = common.kind == "f" or str(common) == "bfloat16"
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: equal, caught by a == e
        abs_diff = np.abs(a - e)
    if floating:
        close = (a == e) | (abs_diff <= atol + rtol * np.abs(e))
        if equal_nan:
            close |= np.isnan(a) & np.isnan(e)
    else:
        close = a == e
    if close.all():
        return
    rel_type = common if floating else np.float32  # PyTorch divides integers in float32
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_diff = abs_diff.astype(rel_type) / np.abs(e).astype(rel_type)
    allowed = (lambda tol: f" (up to {tol} allowed)") if floating else (lambda tol: "")
    closeness = "close" if floating else "equal"
    if scalar:
        raise _Mismatch(
            f"Scalars are not {closeness}!\n\nExpected {e.item()} but got {a.item()}.\n"
            f"Absolute difference: {abs_diff.item()}{allowed(atol)}\n"
            f"Relative difference: {float(rel_diff)}{allowed(rtol)}", path)
    mismatched = ~close
    count, total = int(mismatched.sum()), close.size
    # Only mismatched elements compete for "greatest" (NaN counts as the greatest).
    abs_diff = np.where(mismatched, abs_diff, 0)
    rel_diff = np.where(mismatched, rel_diff, 0)
    i_abs = np.unravel_index(int(np.argmax(abs_diff)), a.shape)
    i_rel = np.unravel_index(int(np.argmax(rel_diff)), a.shape)
    raise _Mismatch(
        f"Tensor-likes are not {closeness}!\n\n"
        f"Mismatched elements: {count} / {total} ({count / total:.1%})\n"
        f"Greatest absolute difference: {abs_diff[i_abs].item()} at index "
        f"{tuple(int(i) for i in i_abs)}{allowed(atol)}\n"
        f"Greatest relative difference: {float(rel_diff[i_rel])} at index "
        f"{tuple(int(i) for i in i_rel)}{allowed(rtol)}", path)

