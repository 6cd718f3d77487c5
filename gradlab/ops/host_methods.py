"""Methods about where a tensor's memory lives on the host, and Python callables per element.

``pin_memory``, ``is_pinned``, ``share_memory_``, ``is_shared``: in PyTorch, pinned
(page-locked) host memory speeds up copies to a GPU, and shared memory lets
DataLoader worker processes hand tensors over without a copy. gradlab's CPU
tensors are NumPy arrays in ordinary process memory, so these are no-ops that
keep code written for PyTorch running (``DataLoader(pin_memory=True)``,
``model.share_memory()`` before ``multiprocessing``):

* ``x.pin_memory()`` returns ``x`` itself and ``x.is_pinned()`` stays False (the
  memory is not page-locked, and saying otherwise would mislead a timing).
* ``x.share_memory_()`` returns ``x`` and remembers the call, so ``x.is_shared()``
  (and any view's) is True afterwards, as in PyTorch; the memory is still
  private to the process: a forked worker gets a copy-on-write copy.

``map_`` and ``apply_`` call a Python function on every element (slow: one call
per value; for tests and small tables). They write into the tensor's memory
outside the graph, so, as PyTorch, they refuse tensors that require grad
(use ``x.detach().apply_(f)``), and work on CPU tensors only.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..tensor import Tensor

__all__: list = []  # methods only, as in PyTorch
TENSOR_METHODS = ["pin_memory", "is_pinned", "share_memory_", "is_shared", "map_", "apply_"]

_shared_storages: weakref.WeakSet = weakref.WeakSet()


def pin_memory(self: Tensor, device=None) -> Tensor:
    """No-op on gradlab: returns the tensor itself (its memory is not page-locked; see the
    module docstring). PyTorch returns a pinned copy."""
    return self


def is_pinned(self: Tensor, device=None) -> bool:
    """Always False in gradlab: no tensor lives in page-locked memory."""
    return False


def share_memory_(self: Tensor) -> Tensor:
    """No-op on gradlab that returns the tensor and marks its storage shared (``is_shared()``
    is True after it, as in PyTorch); the memory itself stays private to the process."""
    _shared_storages.add(self._storage)
    return self


def is_shared(self: Tensor) -> bool:
    """True once ``share_memory_()`` was called on this tensor or on one sharing its memory."""
    return self._storage in _shared_storages


def _check_plain(name: str, tensor: Tensor, role: str = "") -> None:
    if tensor.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.{role} ({name} calls a Python "
                           f"function per element, outside the graph, so no gradient could "
                           f"flow through it)")
    if tensor.device.type != "cpu":
        raise RuntimeError(f"{name} is only implemented on CPU tensors (got one on "
                           f"{tensor.device}). Fix: x.cpu().{name}(...), then move it back")


def _write_back(self: Tensor, values: np.ndarray) -> Tensor:
    self._data[...] = values.astype(self._data.dtype, copy=False)
    self._storage.version += 1
    return self


def apply_(self: Tensor, callable) -> Tensor:
    """Replace each element x by ``callable(x)`` (x as a Python number), in place. CPU only;
    not differentiable."""
    _check_plain("apply_", self)
    values = np.array([callable(v) for v in self._data.ravel().tolist()])
    return _write_back(self, values.reshape(self._data.shape))


def map_(self: Tensor, tensor: Tensor, callable) -> Tensor:
    """Replace each element x by ``callable(x, y)``, y the matching element of ``tensor``
    (broadcast to this tensor's shape), in place. CPU only; not differentiable."""
    _check_plain("map_", self)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"map_: 'tensor' must be a Tensor, got {type(tensor).__name__}")
    _check_plain("map_", tensor, " (here the other tensor requires grad)")
    if tensor.dtype is not self.dtype:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {tensor.type()}). "
                        f"Fix: convert it first, other.to({self.dtype})")
    try:
        other = np.broadcast_to(tensor._data, self._data.shape)
    except ValueError:
        raise RuntimeError(f"map_: the other tensor's shape {tuple(tensor.shape)} can't be "
                           f"broadcast to this tensor's shape {tuple(self.shape)}") from None
    values = np.array([callable(a, b) for a, b in zip(self._data.ravel().tolist(),
                                                      other.ravel().tolist())])
    return _write_back(self, values.reshape(self._data.shape))
