"""Making tensors: from data, filled, ranges. None of these record a graph.

(Random tensors, ``rand``, ``randn``, ``multinomial`` ..., are in :mod:`.sampling`.)

dtype rules follow PyTorch: Python floats give the default dtype (float32),
complex numbers its complex dtype (complex64), ints give int64, bools give bool;
NumPy arrays keep their dtype (but uint16/32/64, which gradlab lacks, widen to
int32/int64/int64). Python numbers
must fit an integer dtype: ``tensor([300], dtype=uint8)`` is an error, as in PyTorch.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.tracing import recorded
from ..backends import cpu, default_device
from ..backends import device as as_device
from ..storage import Storage
from ..tensor import Tensor
from ._factory_keywords import factory_keywords

__all__ = [
    "tensor", "as_tensor", "from_numpy", "from_dlpack", "zeros", "ones", "full", "empty",
    "arange", "linspace", "eye", "zeros_like", "ones_like", "full_like", "empty_like",
    "zeros_from_meta",
]
TENSOR_METHODS: list = []


def _infer_numpy(data, dtype_given: bool = False) -> np.ndarray:
    """NumPy array for ``data`` with PyTorch's dtype inference for Python values.

    Python floats become the default dtype, unless a ``dtype`` was asked for:
    then they stay float64 until converted to it, so ``tensor([0.3],
    dtype=float64)`` holds exactly 0.3, not 0.3 rounded through float32.
    """
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, np.generic):
        return np.asarray(data)
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [x._host() if isinstance(x, Tensor) else x for x in data]
    try:
        arr = np.asarray(data)
    except ValueError:  # NumPy refuses ragged nesting
        raise ValueError(
            "tensor: nested lists must be rectangular (every row of one length, like "
            f"[[1, 2], [3, 4]]), got rows of different lengths in {_preview(data)}"
        ) from None
    if arr.dtype == object:
        raise TypeError(
            f"tensor: can't make a tensor from {_preview(data)}: the data must be numbers "
            "(bool, int within int64, float) in rectangular nested lists"
        )
    if _has_numpy_values(data):  # NumPy scalars and arrays keep their dtype
        return arr.astype(_sequence_dtype(data, dtype_given).np, copy=False)
    kind = arr.dtype.kind
    if kind == "u":  # NumPy's choice for Python ints of 2**63 and above
        raise RuntimeError(
            f"tensor: the integer {int(arr.max())} is out of range for int64 (the dtype of "
            "Python ints). Fix: pass dtype=gradlab.float64, or smaller values."
        )
    if kind == "f" and not dtype_given:
        return arr.astype(_dt.get_default_dtype().np, copy=False)
    if kind == "c" and not dtype_given:  # Python complex numbers: complex64 by default
        return arr.astype(_dt.get_default_complex_dtype().np, copy=False)
    if kind == "i" and arr.dtype != np.int64:
        return arr.astype(np.int64)
    return arr


def _sequence_dtype(data, dtype_given: bool):
    """PyTorch's dtype for a list holding NumPy values: each element's own (a NumPy scalar
    or array its dtype, a Python float the default dtype, an int int64), promoted. NumPy
    would make ``[np.float32(1), 2]`` float64; PyTorch makes it float32."""
    if isinstance(data, (np.ndarray, np.generic)):
        return _dt.from_numpy_dtype(data.dtype)
    if isinstance(data, (list, tuple)):
        result = None
        for item in data:
            kind = _sequence_dtype(item, dtype_given)
            result = kind if result is None else _dt.promote_types(result, kind)
        return result if result is not None else _dt.get_default_dtype()
    if isinstance(data, bool):
        return _dt.bool
    if isinstance(data, int):
        return _dt.int64
    if isinstance(data, complex):
        return _dt.complex128 if dtype_given else _dt.get_default_complex_dtype()
    return _dt.float64 if dtype_given else _dt.get_default_dtype()


def _has_numpy_values(data) -> bool:
    return isinstance(data, (list, tuple)) and any(
        isinstance(x, (np.ndarray, np.generic)) for x in data)


def _preview(data) -> str:
    text = repr(data)
    return text if len(text) <= 60 else text[:57] + "..."


def _array_from(data, dtype=None, device=None, copy=True):
    """``(array, device)`` holding ``data`` as ``dtype`` on ``device``."""
    if device is None:
        device = data.device if isinstance(data, Tensor) else default_device()
    dev = as_device(device)
    backend = dev.get_backend()
    if isinstance(data, Tensor) and data._device is not cpu:
        src = data._data
    elif not isinstance(data, np.ndarray) and dev is not cpu and \
            hasattr(data, "__cuda_array_interface__"):
        src = data
    else:
        src = _infer_numpy(data, dtype is not None)
    dtype = _dt.to_dtype(dtype) if dtype is not None else _dt.from_numpy_dtype(src.dtype)
    if dtype.category == 1 and src is not data and not _has_numpy_values(data) and \
            not isinstance(data, (Tensor, np.generic)):
        _dt.check_integer_fits("tensor", src, dtype)  # Python numbers: refuse, don't wrap, overflow
    arr = backend.asarray(src, dtype.np, dev.index, copy=copy)
    return arr, dev


def _new(array, dev, requires_grad=False) -> Tensor:
    t = Tensor._make(array, Storage(array.nbytes, dev), None, 0, False)
    if requires_grad:
        t.requires_grad = True  # the setter explains why integer tensors can't
    return t


@recorded
@factory_keywords(out=False)
def tensor(data, *, dtype=None, device=None, requires_grad=False,
           name: str | None = None) -> Tensor:
    """A new tensor with a copy of ``data`` (a number, nested list, array or tensor).

    ``name`` is gradlab's optional display name, shown by ``repr``, the
    debugger and graph images: ``tensor([1., 2.], name='w')``.
    """
    arr, dev = _array_from(data, dtype, device, copy=True)
    t = _new(arr, dev, requires_grad)
    if name is not None:
        t.name = name
    return t


@recorded
def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor``, but shares memory with ``data`` when no conversion is needed."""
    if isinstance(data, Tensor):
        return data.to(device if device is not None else data.device,
                       dtype if dtype is not None else data.dtype)
    arr, dev = _array_from(data, dtype, device, copy=False)
    return _new(arr, dev)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with a NumPy array: changing one changes the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    if _dt.from_numpy_dtype(array.dtype).np != array.dtype:
        raise TypeError(
            f"from_numpy: NumPy dtype {array.dtype} has no gradlab equivalent to share memory "
            "with. Fix: convert first, e.g. from_numpy(a.astype(np.int64)), or use tensor(a)."
        )
    return _new(array, cpu)


def from_dlpack(obj) -> Tensor:
    """A tensor sharing memory with any DLPack-capable object (NumPy, CuPy, PyTorch, ...)."""
    dev_type, dev_id = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (1, 0)
    if int(dev_type) == 1:  # kDLCPU
        return _new(np.from_dlpack(obj), cpu)
    dev = as_device("cuda", int(dev_id))
    return _new(dev.get_backend().from_dlpack(obj), dev)


def _size(size) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    try:
        out = tuple(int(s) for s in size)
    except TypeError:
        raise TypeError(f"size must be integers, got {size!r}") from None
    if any(s < 0 for s in out):
        raise RuntimeError(f"negative dimension in size {out}; sizes must be >= 0")
    return out


def _filled(shape, value, dtype, device, requires_grad) -> Tensor:
    dev = as_device(device if device is not None else default_device())
    xp = dev.get_backend().xp
    with dev.backend.use_device(dev.index):
        arr = xp.full(shape, value, dtype=dtype.np)
    return _new(arr, dev, requires_grad)


@recorded
@factory_keywords()
def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(_size(size), 0, _dt.to_dtype(dtype or _dt.get_default_dtype()), device,
                   requires_grad)


@recorded
@factory_keywords()
def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(_size(size), 1, _dt.to_dtype(dtype or _dt.get_default_dtype()), device,
                   requires_grad)


@recorded
@factory_keywords(memory_format=True)
def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uninitialised in PyTorch; gradlab fills with zeros so results never depend on garbage."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


@recorded
@factory_keywords()
def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = _dt.result_type(fill_value)
    dtype = _dt.to_dtype(dtype)
    fill_value = _number(fill_value)
    if dtype.category == 1 and not isinstance(fill_value, (bool, np.bool_)):
        _dt.check_integer_fits("full", np.asarray(fill_value), dtype)
        if isinstance(fill_value, (int, np.integer)):  # -1 in uint8: 255, as a C cast
            fill_value = _dt.wrap_integer(int(fill_value), dtype)
    return _filled(_size((size,)), fill_value, dtype, device, requires_grad)


@recorded
@factory_keywords()
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``[start, end)`` in steps of ``step``; int64 for integer arguments, else float."""
    if end is None:
        start, end = 0, start
    values = [_number(v) for v in (start, end, step)]
    if values[2] == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (values[1] - values[0]) * values[2] < 0:
        raise RuntimeError(
            f"arange: counting from {values[0]} to {values[1]} in steps of {values[2]} never "
            "gets there; the step's sign must match the direction. Fix: "
            f"arange({values[0]}, {values[1]}, {-values[2]})."
        )
    if dtype is None:
        dtype = _dt.int64 if all(isinstance(v, int) for v in values) else \
            _dt.get_default_dtype()
    dtype = _dt.to_dtype(dtype)
    n = max(0, math.ceil((values[1] - values[0]) / values[2]))
    arr = values[0] + np.arange(n, dtype=np.float64 if dtype.is_floating_point
                                else np.int64) * values[2]
    return _on_device(arr.astype(dtype.np), device, requires_grad)


def _number(v):
    return v.item() if isinstance(v, Tensor) else v


def _on_device(host_array, device, requires_grad=False) -> Tensor:
    dev = as_device(device if device is not None else default_device())
    arr = dev.get_backend().asarray(host_array, host_array.dtype, dev.index)
    return _new(arr, dev, requires_grad)


@recorded
@factory_keywords()
def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    start, end = _number(start), _number(end)
    if dtype is None:
        complex_ends = isinstance(start, complex) or isinstance(end, complex)
        dtype = _dt.get_default_complex_dtype() if complex_ends else _dt.get_default_dtype()
    dtype = _dt.to_dtype(dtype)
    arr = np.linspace(start, end, int(steps), dtype=np.complex128 if dtype.is_complex
                      else np.float64)
    return _on_device(arr.astype(dtype.np), device, requires_grad)


@recorded
@factory_keywords()
def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad=False) -> Tensor:
    dtype = _dt.to_dtype(dtype or _dt.get_default_dtype())
    return _on_device(np.eye(n, m, dtype=dtype.np), device, requires_grad)


def _like(fn, t: Tensor, dtype, device, requires_grad, **kw) -> Tensor:
    return fn(*t.shape, dtype=dtype or t.dtype, device=device or t.device,
              requires_grad=requires_grad, **kw)


@recorded
@factory_keywords(like=True, out=False)
def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(zeros, input, dtype, device, requires_grad)


@recorded
@factory_keywords(like=True, out=False)
def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(ones, input, dtype, device, requires_grad)


@recorded
@factory_keywords(like=True, out=False)
def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(empty, input, dtype, device, requires_grad)


@recorded
@factory_keywords(like=True, out=False)
def full_like(input: Tensor, fill_value, *, dtype=None, device=None,
              requires_grad=False) -> Tensor:
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype,
                device=device or input.device, requires_grad=requires_grad)


def zeros_from_meta(meta) -> Tensor:
    """Zeros of a recorded ``(shape, dtype, device)``: gradients of unused outputs."""
    shape, dtype, device = meta
    return _filled(shape, 0, dtype, device, False)
