"""Small helpers every op family shares: dims, operand promotion, un-broadcasting."""

from __future__ import annotations

import functools
import warnings
from numbers import Number

import numpy as np

from .. import dtypes as _dt
from ..autograd import function as _function
from ..autograd.function import _dispatch
from ..autograd.grad_mode import state as _grad_state
from ..tensor import Tensor

__all__ = ["wrap_dim", "wrap_dims", "as_operand", "promote", "unbroadcast", "tangent_sum",
           "xp_of", "xp_for", "check_float", "add_at", "array_norm"]


def wrap_dim(dim: int, ndim: int, op: str) -> int:
    """``dim`` as an index in ``range(ndim)``; negative dims count from the end.

    A 0-d tensor accepts dims 0 and -1, as in PyTorch.
    """
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"{op}: dimension {dim} is out of range for a tensor with {ndim} dimension(s) "
            f"(expected a dim in [{-n}, {n - 1}])"
        )
    return dim % n


def wrap_dims(dim, ndim: int, op: str) -> tuple[int, ...] | None:
    """Normalise ``dim`` (None, an int, or a sequence of ints) to a sorted tuple, or None."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        return (wrap_dim(int(dim), ndim, op),) if ndim else ()
    dims = tuple(sorted(wrap_dim(int(d), ndim, op) for d in dim)) if ndim else ()
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dim {tuple(dim)} names a dimension twice")
    return dims


def xp_of(t: Tensor):
    """The array module (NumPy or CuPy) of a tensor's device."""
    return t._device.backend.xp


def xp_for(array):
    """The array module for a raw array inside a forward: NumPy, or CuPy for GPU arrays."""
    if type(array) is np.ndarray or isinstance(array, (int, float, complex, bool, np.generic)):
        return np
    from ..backends import backend_for_array

    return backend_for_array(array)[1].xp


def array_norm(array) -> float:
    """The 2-norm of a raw array (NumPy or CuPy) as a Python float, summed in float64.

    For what the debugger and events report (update sizes, gradient norms), not
    for differentiable code: one number crosses from the device. Complex values
    count by magnitude.
    """
    xp = xp_for(array)
    flat = array.reshape(-1)
    if flat.dtype.kind == "c":
        flat = xp.abs(flat)
    flat = flat.astype(xp.float64, copy=False)
    return float(xp.sqrt(xp.dot(flat, flat))) if flat.size else 0.0


def as_operand(x, like: Tensor | None = None):
    """Python numbers stay numbers (weak scalars); anything else becomes a Tensor."""
    if isinstance(x, Tensor) or isinstance(x, Number):
        return x
    if isinstance(x, np.generic):
        return x.item()
    from .creation import tensor

    return tensor(x, device=None if like is None else like.device)


def promote(a, b):
    """Cast two operands to the dtype PyTorch's promotion gives their op.

    Fast path first: two tensors of one dtype, or a float tensor and a Python
    number, need nothing (NumPy keeps the tensor's dtype for a weak scalar).
    Casting goes through ``to``, which is differentiable, so gradients flow
    back to the original dtype. A Python int that an integer tensor's dtype
    can't hold wraps around into it, as PyTorch converts it (``uint8 + 300``
    adds 44; NumPy would refuse).
    """
    ta = isinstance(a, Tensor)
    tb = isinstance(b, Tensor)
    if ta and tb:
        da, db = a.dtype, b.dtype
        if da is db:
            return a, b
        # A bool mask times a float tensor: NumPy already gives PyTorch's dtype.
        if (db is _dt.bool and da.is_floating_point and a.ndim >= b.ndim) or \
                (da is _dt.bool and db.is_floating_point and b.ndim >= a.ndim):
            return a, b
    elif ta:
        if not isinstance(b, Number):
            b = as_operand(b, a)
            return promote(a, b)
        if _scalar_fits(a.dtype, b):
            return a, b
    elif tb:
        if not isinstance(a, Number):
            return promote(as_operand(a, b), b)
        if _scalar_fits(b.dtype, a):
            return a, b
    else:
        from .creation import tensor

        return promote(tensor(a), b)
    dtype = _dt.result_type(a, b)
    if ta and a.dtype is not dtype:
        a = a.to(dtype)
    if tb and b.dtype is not dtype:
        b = b.to(dtype)
    if not ta:
        a = _cast_scalar(a, dtype)
    if not tb:
        b = _cast_scalar(b, dtype)
    return a, b


def _scalar_fits(dtype, value) -> bool:
    """Does a Python scalar leave ``dtype`` unchanged under promotion?"""
    if dtype.category == 3:  # complex tensors absorb any Python number
        return True
    if isinstance(value, complex):  # a complex number makes the result complex
        return False
    if dtype.category == 2:  # float tensors absorb any other Python number ...
        # ... except bfloat16: ml_dtypes computes bfloat16 * 2.5 in float32.
        return dtype is not _dt.bfloat16 or not isinstance(value, float)
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        if dtype.category != 1:
            return False
        low, high = dtype._int_range
        return low <= value <= high  # else _cast_scalar wraps it
    return False


def _cast_scalar(value, dtype):
    if dtype is _dt.bfloat16:
        return dtype.np.type(value)  # a bfloat16 scalar keeps NumPy in bfloat16
    if dtype.is_floating_point:
        return float(value)
    if dtype.is_complex:
        return complex(value)
    if dtype is _dt.bool:
        return bool(value)
    return _dt.wrap_integer(int(value), dtype)


def unbroadcast(grad: Tensor, shape) -> Tensor | None:
    """Sum ``grad`` down to ``shape``: the backward of broadcasting.

    Broadcasting copies a value along new or size-1 dims, so in backward the
    copies' gradients add up: sum over the leading dims that broadcasting
    added, and over dims where ``shape`` has size 1 (keeping them).
    ``shape=None`` (an input that needs no gradient) gives None.
    """
    if shape is None:
        return None
    gshape = grad._data.shape
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    if lead:
        grad = grad.sum(tuple(range(lead)))
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and grad._data.shape[i] != 1)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad


def autocast_inputs(op: str, *args) -> tuple:
    """``args`` as autocast wants them for ``op``; as given when autocast is off.

    The dispatcher casts every op's inputs (see :mod:`gradlab.amp`), but a
    public function that checks or promotes dtypes before it dispatches
    (``linear``, ``matmul``, the convolutions ...) calls this first, so that
    ``bfloat16 @ float32`` under autocast is two bfloat16 inputs, not an error
    or a float32 product cast down again.
    """
    if _grad_state.autocast is None:
        return args
    return _function._autocast_by_name(op, args)


def autocast_once(op: str, body, *args):
    """``body(*args)`` for a public op built from other ops (``mv`` is a matmul,
    ``tensordot`` an einsum): autocast casts ``args`` by *this* op's rule, and the ops
    inside run as given, so ``dot`` under CPU autocast stays float32 as PyTorch's does
    while ``matmul`` becomes bfloat16."""
    if _grad_state.autocast is None:
        return body(*args)
    args = _function._autocast_by_name(op, args)
    saved, _grad_state.autocast = _grad_state.autocast, None
    try:
        return body(*args)
    finally:
        _grad_state.autocast = saved


def binary_op(fn, a, b):
    """Dispatch a two-input op after PyTorch's type promotion of its operands."""
    if type(a) is Tensor and type(b) is Tensor and a.dtype is b.dtype:
        return _dispatch(fn, (a, b))  # promote()'s first case, without the call
    return _dispatch(fn, promote(a, b))


def check_float(op: str, t: Tensor) -> None:
    """Ops defined only on floats (exp, softmax, ...) say so for integer input."""
    if t.dtype.is_complex:
        raise TypeError(
            f"{op}: complex tensors are not supported by this op yet (got {t.dtype} with "
            f"shape {tuple(t.shape)}). Fix: work on a real part you mean: x.real, x.imag, "
            "x.abs() or x.angle()")
    if not t.dtype.is_floating_point:
        raise RuntimeError(
            f"{op}: expected a floating point tensor, got {t.dtype} with shape "
            f"{tuple(t.shape)}. Fix: convert first with .float()"
        )


def check_ordered(op: str, *values) -> None:
    """Ops that compare or round values (argmax, sort, floor ...) refuse complex numbers,
    which have no order: NumPy would quietly compare real parts first."""
    for x in values:
        if isinstance(x, complex) or (isinstance(x, Tensor) and x.dtype.is_complex):
            raise TypeError(
                f"{op}: complex numbers have no order, so {op} is not defined for them (got "
                f"{x.dtype if isinstance(x, Tensor) else 'a complex number'}; PyTorch refuses "
                "too). Fix: apply it to what you mean: x.abs(), x.real or x.angle()")


def widened(a):
    """A float16 or bfloat16 array as float32 (other arrays as they are), to add up in.

    NumPy sums half floats in their own precision (only a contiguous float16 axis gets
    float32 partial sums, bfloat16 never): 3,000 bfloat16 ones would sum to 256, since
    256 + 1 rounds back to 256. PyTorch accumulates them in float32, and so do the
    reductions here, which round their result back to the input's dtype.
    """
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":
        return a.astype(xp_for(a).float32)
    return a


def as_bits(a):
    """The same memory seen as integers of the same width (float32 as int32, ...)."""
    return a.view(f"i{a.dtype.itemsize}")


def keep_where(xp, values, mask):
    """``values`` where ``mask`` (bool, same shape) is True, +0.0 elsewhere: PyTorch's
    ``where(mask, values, 0)``.

    Done on the bits: ``bits & -1`` keeps a value exactly and ``bits & 0``
    is +0.0. A product with the mask costs the same but is wrong where the
    dropped value is NaN or inf (inf·0 is NaN); NumPy's ``where`` is several
    times slower. The result is a fresh array, not a view, so the dispatcher
    adopts it as an op's output without a copy.
    """
    out = xp.empty(values.shape, dtype=values.dtype)
    xp.bitwise_and(as_bits(values), -mask.view(xp.int8), out=as_bits(out))
    return out


def add_at(target, index, values) -> None:
    """``target[index] += values`` on raw arrays, adding once per occurrence of a repeated index.

    A plain ``target[index] += values`` counts a repeated index once (the
    last write wins); the backward of reading ``x[[0, 0]]`` must add both.
    """
    xp = xp_for(target)
    if xp is np and type(index) is np.ndarray and target.ndim > 1 and \
            target.flags.c_contiguous and index.dtype.kind in "iu":
        # Whole rows (an embedding's backward): NumPy's add.at is ~3-4x faster adding
        # single elements at flat positions than rows at row numbers.
        row = int(np.prod(target.shape[1:]))
        flat = (index.reshape(-1, 1) * row + np.arange(row)).reshape(-1)
        rows = np.broadcast_to(values, index.shape + target.shape[1:])
        np.add.at(target.reshape(-1), flat, rows.reshape(-1))
        return
    ufunc_at = getattr(xp.add, "at", None)
    if ufunc_at is not None:
        ufunc_at(target, index, values)
    else:  # CuPy before ufunc.at: cupyx has the same operation
        import cupyx

        cupyx.scatter_add(target, index, values)


def numpy_keywords(fn):
    """Let ``fn`` take NumPy's ``axis=``/``keepdims=`` for ``dim=``/``keepdim=``, as PyTorch does.

    (``x.sum(axis=0)`` is common in code ported from NumPy.) Only calls with
    keyword arguments pay for the check.
    """
    @functools.wraps(fn)
    def accepting_numpy_keywords(*args, **kwargs):
        if kwargs:
            if "axis" in kwargs:
                kwargs["dim"] = kwargs.pop("axis")
            if "keepdims" in kwargs:
                kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)
    return accepting_numpy_keywords


def scale_first(op: str, args: tuple, tensors: int, keyword: str, value):
    """PyTorch's deprecated argument order, ``op(Number scale, Tensor ...)``.

    Code copied from older optimizers writes ``exp_avg.add_(1 - beta1, grad)`` and
    ``addcmul_(1 - beta2, grad, grad)``; PyTorch still runs it, with a warning.
    ``args`` are the positional arguments after the input; returns the ``tensors``
    operands and the scale (``value``, the keyword's, unless the old order gave one).
    """
    if len(args) == tensors:
        return args, value
    if len(args) != tensors + 1 or not isinstance(args[0], Number) or \
            isinstance(args[0], Tensor):
        raise TypeError(f"{op}: expected {tensors} tensor argument(s) after the input and "
                        f"{keyword}= as a keyword, got {len(args)} positional arguments")
    warnings.warn(f"{op}(Number {keyword}, Tensor ...) is PyTorch's deprecated argument "
                  f"order; write {op}(tensor..., {keyword}=number) instead", UserWarning,
                  stacklevel=3)  # (one text per op: Python shows it once per line of code)
    return args[1:], args[0]


def tangent_sum(shape, *terms):
    """Forward mode: the sum of the tangent terms that exist (None ones are zero), expanded
    to the output's ``shape``; None when every term is None."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    if total is not None and tuple(total.shape) != tuple(shape):
        total = total.expand(*shape)
    return total
