"""``Variable``: before PyTorch 0.4 a tensor had to be wrapped in one to get gradients.

Old tutorials (still widely copied) write ``x = Variable(data,
requires_grad=True)``. Since 0.4 every tensor carries ``requires_grad`` itself
and ``Variable`` survives only so that code keeps running: calling it gives
a plain tensor that shares ``data``'s memory but not its history (a
``detach()``), with ``requires_grad`` as asked. gradlab does exactly that and,
like PyTorch, does not warn. ``isinstance(t, Variable)`` is true for every
tensor, as in PyTorch. New code: ``x = gradlab.tensor(data, requires_grad=True)``
or ``x.requires_grad_()``.
"""

from __future__ import annotations

import warnings

from ..tensor import Tensor
from . import engine as _engine

__all__ = ["Variable"]


class _VariableMeta(type):
    """``Variable(...)`` returns a Tensor; every Tensor is an instance of ``Variable``."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)

    def __call__(cls, data: Tensor | None = None, requires_grad: bool = False,
                 volatile: bool = False) -> Tensor:
        if volatile:
            warnings.warn("Variable: volatile was removed and has no effect; use "
                          "`with gradlab.no_grad():` instead", UserWarning, stacklevel=2)
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}. "
                            "Fix: gradlab.tensor(data, requires_grad=...) makes one from "
                            "Python or NumPy values")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)  # explains why integer tensors can't require grad
        return out


class Variable(metaclass=_VariableMeta):
    """Deprecated wrapper: ``Variable(t, requires_grad=False)`` is ``t.detach()`` with
    ``requires_grad`` set (see the module docstring)."""


class _ExecutionEngine:
    """``Variable._execution_engine``: where PyTorch code reaches the backward engine."""

    queue_callback = staticmethod(_engine.queue_callback)


Variable._execution_engine = _ExecutionEngine()
