"""The Tensor: an array, where it lives, and where its gradient comes from.

A Tensor holds

* ``_data``: a NumPy (cpu) or CuPy (cuda) array with the values;
* ``_storage``: the :class:`~gradlab.storage.Storage` its views share
  (version counter for in-place checks, memory accounting);
* ``grad_fn``: the backward :class:`~gradlab.autograd.node.Node` that
  made it (``None`` for leaves), and ``grad`` for leaves that require grad.

The math lives in :mod:`gradlab.ops`; this class only forwards to it (the
methods are attached in :mod:`gradlab.ops.methods`), so ``x.sum(0)`` and
``gradlab.sum(x, 0)`` are one function.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from .autograd import function as _function_module
from .autograd import graph as _graph_module
from .autograd import node as _node_module
from .autograd import tensor_hooks as _tensor_hooks
from .autograd.node import gradient_edge
from .autograd.tracing import note_read as _note_read
from .autograd.tracing import recorded as _recorded
from .backends import cpu
from .backends import device as _device
from .layouts import strided as _strided
from .size import Size
from .storage import Storage

__all__ = ["Tensor", "Size"]

_from_np = _dt.from_numpy_dtype
_BY_NUMPY = {d.np: d for d in _dt.ALL_DTYPES}


class Tensor:
    """An n-dimensional array that remembers how it was computed."""

    __slots__ = ("_data", "_storage", "_device", "dtype", "_requires_grad", "grad_fn",
                 "_out_index", "__weakref__", "__dict__")
    __array_priority__ = 1000  # make NumPy defer: ndarray * tensor -> Tensor.__rmul__

    # Rarely set: class-level defaults keep tensor creation (every op output) cheap.
    _grad = None
    name = None  # optional display name, shown by repr, the debugger and graph images
    _retains_grad = False
    _hooks = None  # hooks on a leaf: {handle id: hook}
    _post_accumulate_hooks = None  # hooks run after backward wrote this leaf's .grad
    _accumulator = None  # this leaf's AccumulateGrad node, made when a graph first uses it
    _view_base = None  # for views: the tensor whose memory this one shows
    _view_steps = ()  # for views: the (op, args) that make it from _view_base
    _view_layout = 0  # for views: how many of the base's _layout_changes _view_steps follow
    _history_version = 0  # for views: the storage version their grad_fn is up to date with
    _view_no_grad = False  # for views: made under no_grad, so they never take on a history
    _layout_changes = ()  # for bases: a step undoing each in-place shape change (t_ ...)

    def __init__(self, *args, dtype=None, device=None, requires_grad=False,
                 name=None) -> None:
        """As PyTorch's legacy constructor: ``Tensor(data)`` or ``Tensor(2, 3)`` (zeros).

        Values become the default float dtype (``Tensor([1, 2])`` is float32), as in
        PyTorch; prefer ``gradlab.tensor(data)``, which keeps integer data integer.
        """
        from .ops.creation import _array_from

        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
        elif all(isinstance(a, int) for a in args):
            data = np.zeros(args or (0,))  # Tensor(2, 3); Tensor() is an empty 1-D tensor
        else:
            raise TypeError(f"Tensor(): expected data or integer sizes, got {args!r}")
        data, dev = _array_from(data, dtype or _dt.get_default_dtype(), device)
        self._init(data, Storage(data.nbytes, dev), None, 0, False)
        self.name = name
        if requires_grad:
            self.requires_grad = True

    def _init(self, data, storage, grad_fn, out_index, requires_grad) -> None:
        self._data = data
        self._storage = storage
        self._device = storage.stats.device
        try:
            self.dtype = _BY_NUMPY[data.dtype]
        except KeyError:
            self.dtype = _from_np(data.dtype)
        self._requires_grad = requires_grad
        self.grad_fn = grad_fn
        self._out_index = out_index

    @staticmethod
    def _make(data, storage, grad_fn, out_index, requires_grad) -> Tensor:
        """The fast constructor the engine uses (no argument checking)."""
        t = _new_tensor(Tensor)
        if storage is None:
            from .backends import backend_for_array
            storage = Storage(data.nbytes, backend_for_array(data)[0])
        t._init(data, storage, grad_fn, out_index, requires_grad)
        return t

    # --- metadata -------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape, or the length of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim, "size")]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    @property
    def device(self):
        return self._device

    # Kinds of tensor gradlab has none of: every gradlab tensor is dense (layout strided), on
    # the CPU or a CUDA GPU. Code written for PyTorch asks (an optimizer's "if
    # grad.is_sparse: raise ..."), so the answers exist, and are False.
    is_sparse = is_sparse_csr = is_quantized = is_meta = is_nested = is_mkldnn = False
    is_xpu = is_mps = is_ipu = is_xla = is_vulkan = is_mtia = is_maia = False

    @property
    def layout(self):
        """``gradlab.strided``, the layout of every gradlab tensor (``gradlab/layouts.py``)."""
        return _strided

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    def get_device(self) -> int:
        """The GPU index for a cuda tensor, -1 for a cpu one (PyTorch's convention)."""
        return (self._device.index or 0) if self._device.type == "cuda" else -1

    @property
    def is_leaf(self) -> bool:
        """True for tensors not made by a recorded op (user-created, or made without grad)."""
        self._catch_up()
        return self.grad_fn is None

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_contiguous(self, memory_format=None) -> bool:
        """Row-major memory (or, given ``memory_format``, that layout: channels_last ...)."""
        if memory_format is None:
            return bool(self._data.flags.c_contiguous)
        from .memory_layouts import is_contiguous_in

        return is_contiguous_in(self, memory_format)

    def stride(self, dim: int | None = None):
        strides = tuple(s // self.dtype.itemsize for s in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self.ndim, "stride")]

    def data_ptr(self) -> int:
        iface = getattr(self._data, "__array_interface__", None) or \
            self._data.__cuda_array_interface__
        return int(iface["data"][0])

    @property
    def _version(self) -> int:
        """How many in-place changes this tensor's storage has seen."""
        return self._storage.version

    # --- autograd attributes --------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        self._catch_up()
        return self._requires_grad

    def _catch_up(self) -> None:
        """A view whose base changed in place since its history was made remakes it now
        (autograd/views.py ``refresh_view_history``), so what it reports is current."""
        if self._view_base is not None and self._storage.version != self._history_version:
            from .autograd.views import refresh_view_history

            refresh_view_history(self, strict=False)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad of leaf tensors; this one was made by "
                    f"'{self.grad_fn.op}'. Fix: use y = x.detach() for a copy outside the graph."
                )
            return
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                f"only tensors of floating point or complex dtype can require gradients, "
                f"this one is "
                f"{self.dtype} with shape {tuple(self.shape)}. Fix: convert first, "
                f"e.g. x = x.float().requires_grad_()"
            )
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self):
        """The gradient accumulated by backward (leaves, and tensors that ``retain_grad``)."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"grad must be a Tensor or None, got {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"assigned grad has shape {tuple(value.shape)} but the tensor has shape "
                    f"{tuple(self.shape)}; a gradient always has its tensor's shape"
                )
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"assigned grad has dtype {value.dtype} but the tensor has {self.dtype}")
            if value._device is not self._device:
                raise RuntimeError(
                    f"assigned grad is on {value.device} but the tensor is on {self.device}")
            value._storage.set_category("gradient")
        old = self._grad
        if old is not None and old is not value and old._storage.category == "gradient":
            old._storage.set_category("other")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward (leaves always keep it)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on a tensor that doesn't require grad")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        node = self.grad_fn
        if node._retain_hooks is None:
            node._retain_hooks = {}
        node._retain_hooks[self._out_index] = _weakref(self)

    # (gradient hooks: gradlab/autograd/tensor_hooks.py)
    register_hook = _tensor_hooks.register_hook
    register_post_accumulate_grad_hook = _tensor_hooks.register_post_accumulate_grad_hook

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor w.r.t. the graph's leaves into their ``.grad``."""
        _engine.backward([self], None if gradient is None else [gradient], retain_graph,
                         create_graph, inputs=inputs)

    @_recorded  # a trace writes detach down (it makes a tensor without an op)
    def detach(self) -> Tensor:
        """The same values (shared memory), cut from the graph."""
        out = Tensor._make(self._data, self._storage, None, 0, False)
        if self.name is not None:
            out.name = self.name
        return out

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """A detached view of the values; assigning replaces the values in place of history."""
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data
        self._storage = value._storage
        self._device = value._device
        self.dtype = value.dtype

    def _gradient_edge(self):
        return gradient_edge(self)

    # --- conversion to Python / NumPy -----------------------------------------------------
    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"item(): a tensor with {self._data.size} elements (shape {tuple(self.shape)}) "
                "cannot be converted to a Python number; only one-element tensors can. "
                "Fix: reduce it first (x.sum(), x.mean()) or index one element (x[0])."
            )
        _note_read(self, "item()")
        return self._host().reshape(()).item()

    def tolist(self):
        _note_read(self, "tolist()")
        return self._host().tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a NumPy array sharing memory (CPU tensors that don't require grad)."""
        if self._requires_grad and not force:
            raise RuntimeError(
                "can't call numpy() on a tensor that requires grad. "
                "Fix: use tensor.detach().numpy()."
            )
        _note_read(self, "numpy()")
        if self._device is not cpu:
            if not force:
                raise TypeError(
                    f"can't convert a {self.device} tensor to NumPy. Fix: copy it to the host "
                    "first with tensor.cpu().numpy()."
                )
            return self._host()
        return self._data

    def _host(self) -> np.ndarray:
        return self._device.backend.to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        _note_read(self, "a NumPy conversion")
        arr = self._host()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def __dlpack__(self, *args, **kwargs):
        if self._requires_grad:
            raise RuntimeError("can't export a tensor that requires grad through DLPack. "
                               "Fix: use tensor.detach().__dlpack__().")
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                f"the truth value of a tensor with {self._data.size} elements is ambiguous. "
                "Fix: use (x == y).all() or .any()."
            )
        _note_read(self, "bool() (an if or while on a tensor)")
        return bool(self._host().reshape(()).item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        from ._formatting import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return repr(self) if not spec else format(str(self), spec)

    def __reduce__(self):
        from ._formatting import rebuild_tensor

        return (rebuild_tensor, (self._host(), self.dtype.name, str(self._device),
                                 self._requires_grad if self.grad_fn is None else False,
                                 self.name))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError(
                "only leaf tensors support deepcopy; this one was made by "
                f"'{self.grad_fn.op}'. Fix: deepcopy x.detach() instead."
            )
        out = Tensor._make(self._data.copy(), None, None, 0, self._requires_grad)
        out.name = self.name
        if self._grad is not None:
            out.grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out

    # --- moving between devices and dtypes --------------------------------------------------
    def to(self, *args, **kwargs) -> Tensor:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(other_tensor)``."""
        from .ops.conversion import to

        return to(self, *args, **kwargs)

    def cpu(self) -> Tensor:
        return self.to(cpu)

    def cuda(self, device=None) -> Tensor:
        return self.to(_device("cuda", device) if isinstance(device, int) or device is None
                       else _device(device))

    def float(self) -> Tensor:
        return self.to(_dt.float32)

    def double(self) -> Tensor:
        return self.to(_dt.float64)

    def half(self) -> Tensor:
        return self.to(_dt.float16)

    def bfloat16(self) -> Tensor:
        return self.to(_dt.bfloat16)

    def long(self) -> Tensor:
        return self.to(_dt.int64)

    def int(self) -> Tensor:
        return self.to(_dt.int32)

    def short(self) -> Tensor:
        return self.to(_dt.int16)

    def char(self) -> Tensor:
        return self.to(_dt.int8)

    def byte(self) -> Tensor:
        return self.to(_dt.uint8)

    def bool(self) -> Tensor:
        return self.to(_dt.bool)

    def type(self, dtype=None):
        """With no argument, the type name (``'gradlab.FloatTensor'``); else ``to(dtype)``."""
        if dtype is None:
            from .legacy_types import TYPE_NAMES

            prefix = "gradlab.cuda." if self._device.type == "cuda" else "gradlab."
            return prefix + TYPE_NAMES[self.dtype.name]
        if isinstance(dtype, str) and dtype.endswith("Tensor"):  # x.type("torch.LongTensor")
            from . import legacy_types

            name = dtype.rsplit(".", 1)[-1]
            if name not in legacy_types.__all__ or ".cuda." in dtype:
                raise ValueError(f"type(): unknown CPU tensor type {dtype!r}; expected a name "
                                 "like 'torch.FloatTensor' or a dtype like gradlab.float32")
            dtype = getattr(legacy_types, name)
        # A legacy type (gradlab.LongTensor) stands for its dtype, as in PyTorch.
        return self.to(_dt.to_dtype(getattr(dtype, "dtype", dtype)))

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    def new(self, *args) -> Tensor:
        """The legacy constructor with this tensor's dtype and device: ``x.new(2, 3)`` zeros
        of that shape, ``x.new([1, 2])`` those values (prefer ``new_zeros``/``new_tensor``)."""
        from .legacy_types import legacy_new

        return legacy_new("new", self.dtype, self._device, args)


_new_tensor = object.__new__
_engine = None  # gradlab.autograd.engine, bound by that module (it imports this one)
_function_module.Tensor = Tensor  # the dispatcher checks isinstance(arg, Tensor)
_node_module.Tensor = Tensor  # saved tensors unpack into Tensors
_graph_module.Tensor = Tensor  # and so do tensors saved through saved_tensors_hooks


def _weakref(obj):
    import weakref

    return weakref.ref(obj)


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    """A dimension index in range, with negative dims counted from the end."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"{op}: dimension {dim} is out of range for a tensor with {ndim} dimension(s) "
            f"(expected a dim in [{-n}, {n - 1}])"
        )
    return dim % n
