"""Questions about a tensor: ``is_floating_point``, ``is_signed``, ``is_nonzero``,
``is_same_size``, ``storage_offset``, ``typename`` ...

They read metadata (dtype, shape, device, where the view starts) and never
compute or record anything. ``is_inference`` always answers False in
gradlab (``inference_mode`` works like ``no_grad`` and doesn't mark the
tensors made inside it).
"""

from __future__ import annotations

from ..tensor import Tensor

__all__ = ["is_floating_point", "is_signed", "is_complex", "is_nonzero", "is_same_size",
           "is_inference", "typename"]
TENSOR_METHODS = ["is_signed", "is_complex", "is_nonzero", "is_same_size", "is_inference",
                  "ndimension", "storage_offset", ("is_cpu", "_is_cpu")]
# (Tensor.is_floating_point is defined on Tensor itself.)


def _tensor(op: str, input, position: int = 1, name: str = "input") -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(input).__name__}")
    return input


def is_floating_point(input: Tensor) -> bool:
    """True for float16, bfloat16, float32 and float64 tensors."""
    return _tensor("is_floating_point", input).dtype.is_floating_point


def is_signed(input: Tensor) -> bool:
    """True where the dtype holds negative numbers: every dtype but uint8 and bool."""
    return _tensor("is_signed", input).dtype.is_signed


def is_complex(input: Tensor) -> bool:
    """True for complex64 and complex128 tensors."""
    return _tensor("is_complex", input).dtype.is_complex


def is_inference(input: Tensor) -> bool:
    """Always False: gradlab's ``inference_mode`` doesn't mark tensors (see the module
    docstring); they behave as ones made under ``no_grad``."""
    _tensor("is_inference", input)
    return False


def is_nonzero(input: Tensor) -> bool:
    """``bool(input)`` for a one-element tensor (any shape): is its value not 0?"""
    n = _tensor("is_nonzero", input).numel()
    if n != 1:
        which = "no values" if n == 0 else f"more than one value ({n})"
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {which} is ambiguous. "
                           "Fix: use (x != 0).any() or .all() for a tensor of many values")
    return bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Do the two shapes match exactly (no broadcasting)?"""
    _tensor("is_same_size", input)
    _tensor("is_same_size", other, 2, "other")
    return tuple(input.shape) == tuple(other.shape)


def ndimension(input: Tensor) -> int:
    """The number of dims (``dim()``'s older name)."""
    return input.dim()


def storage_offset(input: Tensor) -> int:
    """How many elements into its base's memory this tensor's first element sits: 0 for a
    tensor that owns its memory, ``3`` for ``x[3:]``, ``5`` for ``x.view(2, 5)[1]``."""
    base = input._view_base
    if base is None:
        return 0
    return (input.data_ptr() - base.data_ptr()) // input.dtype.itemsize


_is_cpu = property(lambda self: self._device.type == "cpu",
                   doc="True for a tensor in the computer's main memory (device 'cpu').")


def typename(obj) -> str:
    """A tensor's type name (``'gradlab.FloatTensor'``, as ``x.type()``), or any other
    object's ``module.QualifiedName`` (``'int'`` for builtins)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not isinstance(qualname, str):
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
