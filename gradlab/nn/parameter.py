"""Parameter and Buffer: the tensors a Module owns.

A ``Parameter`` is a Tensor that a Module learns: assigning one as a module
attribute (``self.weight = nn.Parameter(...)``) registers it, so that
``module.parameters()`` hands it to an optimizer. It is a leaf that
requires grad, shares the memory of the tensor it was made from, and its
bytes count as ``parameter`` in :func:`gradlab.memory_stats`.

A ``Buffer`` marks state that is saved with the model but not learned
(BatchNorm's running mean): assigned as an attribute, it is registered with
``register_buffer``.
"""

from __future__ import annotations

from ..tensor import Tensor

__all__ = ["Parameter", "Buffer"]


def _tensor_of(data, what: str) -> Tensor:
    if data is None:
        from ..ops.creation import empty

        return empty(0)
    if not isinstance(data, Tensor):
        raise TypeError(
            f"{what}: expected a Tensor, got {type(data).__name__}. Fix: wrap the values "
            f"first, e.g. nn.{what}(gradlab.tensor(values))")
    return data


class Parameter(Tensor):
    """A tensor that is a module's learnable weight: a leaf that requires grad.

    ``Parameter(data)`` shares ``data``'s memory (no copy), as in PyTorch;
    its history, if any, is cut off: a parameter is always a leaf.
    """

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        data = _tensor_of(data, "Parameter")
        self._init(data._data, data._storage, None, 0, False)
        self.name = data.name
        self._storage.set_category("parameter")
        if requires_grad:
            self.requires_grad = True  # the setter explains why integer data can't

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def _set_data(self, value: Tensor) -> None:
        Tensor.data.fset(self, value)
        self._storage.set_category("parameter")

    data = property(Tensor.data.fget, _set_data,
                    doc="The values without history; assigning (``p.data = t``) keeps ``p``.")

    def __deepcopy__(self, memo) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(Tensor._make(self._data.copy(), None, None, 0, False),
                        self._requires_grad)
        out.name = self.name
        if self._grad is not None:
            out.grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out

    def __reduce__(self):
        return (_rebuild_parameter, (self.detach(), self._requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for tensors that ``Buffer(...)`` marked."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and getattr(obj, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a buffer: assigned to a module attribute, it is registered as one.

    ``Buffer(t, persistent=False)`` keeps it out of the ``state_dict``. As in
    PyTorch, the result is a plain Tensor (sharing ``t``'s memory) with a mark.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:
        data = _tensor_of(data, "Buffer")
        t = data.detach().requires_grad_(data.requires_grad)
        t._is_buffer = True
        t.persistent = persistent
        return t
