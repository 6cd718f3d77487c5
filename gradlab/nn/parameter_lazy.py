"""UninitializedParameter and UninitializedBuffer: tensors whose shape is not known yet.

A lazy layer (``nn.LazyLinear(10)``) can't make its weight before it has
seen an input: ``in_features`` comes from the first batch. Until then it
holds an ``UninitializedParameter``, a Parameter with a dtype and a device
but no values. Any op on one, or asking its ``shape``, raises an error that
says to run a forward pass first. ``materialize(shape)`` gives it values in
place and turns it into a plain ``Parameter`` (a buffer into a plain
Tensor): the object stays the same, so an optimizer or a dict that holds it
keeps working.

(PyTorch has these at ``torch.nn.parameter`` and ``torch.nn``; importing
this module files them under ``gradlab.nn.parameter`` too.)
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..backends import device as as_device
from ..ops.conversion import parse_to_args
from ..ops.creation import empty
from ..tensor import Tensor
from . import parameter as _parameter
from .parameter import Parameter

__all__ = ["UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer",
           "is_lazy"]

_values = Tensor._data  # the slot that holds a tensor's array, read and written directly


def _not_yet(what: str) -> RuntimeError:
    return RuntimeError(
        f"Can't {what} of an uninitialized parameter or buffer: its shape is decided by the "
        f"first input. This error usually happens in `load_state_dict` when trying to load "
        f"an uninitialized parameter into an initialized one, or when a lazy module is used "
        f"before its dry run. Fix: call the module (`forward`) on a batch first")


class UninitializedTensorMixin:
    """What an uninitialized parameter and buffer share: no values until ``materialize``.

    Its array is a 0-element placeholder that only carries the dtype and the
    device; reading it (which every op does) raises, so it can't be used by
    mistake as an empty tensor.
    """

    __slots__ = ()
    cls_to_become: type = Tensor

    @property
    def _data(self):
        raise ValueError(
            f"Attempted to use an uninitialized parameter ({type(self).__name__}). This "
            f"happens when you use a lazy module (nn.LazyLinear, ...) or an "
            f"{type(self).__name__} before the first forward pass gave it a shape. Fix: call "
            f"the module on a dummy batch first to initialize its parameters")

    @_data.setter
    def _data(self, array) -> None:
        _values.__set__(self, array)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give it values of ``shape`` (uninitialized memory, on its device, in its dtype,
        unless given) and turn it into a ``cls_to_become`` in place."""
        device = self._device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        shape = tuple(shape)
        self.__class__ = self.cls_to_become
        self.data = empty(shape, device=device, dtype=dtype)

    @property
    def shape(self):
        raise _not_yet("access the shape")

    def size(self, dim=None):
        raise _not_yet("access the size")

    @property
    def data(self):
        raise _not_yet("access the data")

    @data.setter
    def data(self, value: Tensor) -> None:
        """Module.to/.double() swap the placeholder for one of another dtype or device."""
        self._data = _values.__get__(value) if is_lazy(value) else value._data
        self._storage = value._storage
        self._device = value._device
        self.dtype = value.dtype

    def share_memory_(self):
        raise _not_yet("share the memory")

    def _placeholder(self, device, dtype):
        """The same kind of uninitialized tensor, moved to ``device`` or cast to ``dtype``
        (self when nothing changes, as ``Tensor.to``)."""
        device = self._device if device is None else as_device(device)
        dtype = self.dtype if dtype is None else _dt.to_dtype(dtype)
        if device is self._device and dtype is self.dtype:
            return self
        return self._remade(device, dtype)

    def to(self, *args, **kwargs):
        device, dtype = parse_to_args(args, kwargs, f"{type(self).__name__}.to()")
        return self._placeholder(device, dtype)

    def cpu(self):
        return self._placeholder("cpu", None)

    def cuda(self, device=None):
        return self._placeholder("cuda" if device is None else device, None)

    def float(self):
        return self._placeholder(None, _dt.float32)

    def double(self):
        return self._placeholder(None, _dt.float64)

    def half(self):
        return self._placeholder(None, _dt.float16)

    def bfloat16(self):
        return self._placeholder(None, _dt.bfloat16)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self._remade(self._device, self.dtype)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (type(self), (self._requires_grad,))


def is_lazy(param) -> bool:
    """Is ``param`` an UninitializedParameter or UninitializedBuffer?"""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's weight before its first
    forward). ``materialize(shape)`` turns it into a plain ``Parameter``, in place."""

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        super().__init__(empty(0, device=device, dtype=dtype), requires_grad)

    def _remade(self, device, dtype):
        return UninitializedParameter(self._requires_grad, device, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy BatchNorm's running_mean).
    ``materialize(shape)`` turns it into a plain Tensor, in place."""

    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True) -> None:
        placeholder = empty(0, device=device, dtype=dtype)
        self._init(_values.__get__(placeholder), placeholder._storage, None, 0, False)
        self._is_buffer = True
        self.persistent = persistent
        if requires_grad:
            self.requires_grad = True

    def _remade(self, device, dtype):
        return UninitializedBuffer(self._requires_grad, device, dtype, self.persistent)


# Where PyTorch has them: torch.nn.parameter.UninitializedParameter (and torch.nn.X, which
# gradlab/nn/__init__.py exports).
for _name in __all__:
    setattr(_parameter, _name, globals()[_name])
del _name
