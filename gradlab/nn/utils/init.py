"""``skip_init``: build a module without spending time on its initial weights."""

from __future__ import annotations

import inspect

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args, **kwargs) -> Module:
    """``module_cls(*args, **kwargs)`` whose weights you will overwrite anyway (e.g. by
    ``load_state_dict``), so their initial values do not matter.

    PyTorch builds the module on its "meta" device (shapes, no memory) and
    then allocates uninitialized memory. gradlab has no meta device, so the
    module is built directly on ``device`` and its constructor's init runs:
    the values are just as unspecified to the caller, only not faster.
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs)
