"""The keywords PyTorch's tensor factories take besides dtype and device.

``zeros``, ``ones``, ``empty``, ``full``, ``arange``, ``linspace``, ``logspace``,
``eye``, ``rand``, ``randn``, ``randint``, ``randperm``, ``normal`` and the
``*_like`` forms accept them, so code written for PyTorch passes them unchanged:

* ``layout``: only ``gradlab.strided``; gradlab has no sparse tensors
  (``gradlab/layouts.py``).
* ``pin_memory``: accepted and ignored (``ops/host_methods.py`` says why).
* ``memory_format`` (``empty`` and the ``*_like`` forms): the result laid out
  so; ``preserve_format``, the ``*_like`` default, follows the input's layout
  (``memory_layouts.py``).
* ``out``: the result is written into that tensor, which is returned. Its
  dtype and device are the result's unless ``dtype=``/``device=`` say
  otherwise, as in PyTorch; its shape must already be the result's (PyTorch
  resizes it, gradlab doesn't: a tensor's shape never changes behind the
  views and nodes that know it).

One decorator handles them all, so each factory is written as if they did
not exist.
"""

from __future__ import annotations

import functools
import inspect

from ..autograd.grad_mode import state
from ..layouts import check_layout
from ..memory_layouts import (
    check_memory_format,
    preserve_format,
    suggest_format,
    to_memory_format,
)
from ..tensor import Tensor

__all__: list[str] = []


def factory_keywords(*, like: bool = False, memory_format: bool = False, out: bool = True):
    """Give a factory PyTorch's ``layout``, ``pin_memory`` and, where named here,
    ``memory_format`` and ``out`` keywords (module docstring). ``like``: the factory's
    first argument is the tensor it copies the shape of (``zeros_like``)."""
    def decorate(factory):
        name = factory.__name__

        @functools.wraps(factory)
        def make(*args, layout=None, pin_memory: bool = False, **kwargs):
            # (kept lean: ops call zeros_like and friends inside their own code)
            if layout is not None:
                check_layout(name, layout)
            fmt = kwargs.pop("memory_format", None) if memory_format or like else None
            target = kwargs.pop("out", None) if out else None
            if target is not None:
                _check_out(name, target)
                kwargs.setdefault("dtype", target.dtype)
                kwargs.setdefault("device", target.device)
            result = factory(*args, **kwargs)
            if fmt is not None or (like and _maybe_channels_last(args)):
                result = _laid_out(name, result, fmt, args[0] if like and args else None)
            return result if target is None else _written_into(name, target, result)

        extra = [("out", None)] if out else []
        extra += [("layout", None), ("pin_memory", False)]
        extra += [("memory_format", None)] if memory_format or like else []
        make.__signature__ = _with_keywords(factory, extra)
        return make
    return decorate


def _with_keywords(factory, extra) -> inspect.Signature:
    """``factory``'s signature with the ``extra`` (name, default) keywords added, so that
    ``help()`` shows what the factory takes."""
    signature = inspect.signature(factory)
    params = list(signature.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    known = {p.name for p in params}
    added = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d)
             for n, d in extra if n not in known]
    return signature.replace(parameters=params[:at] + added + params[at:])


def _maybe_channels_last(args) -> bool:
    """Could the tensor a ``*_like`` copies be laid out channels-last? (4-D or 5-D and not
    row-major: anything else keeps the default layout, with nothing to check.)"""
    source = args[0] if args else None
    return isinstance(source, Tensor) and source._data.ndim in (4, 5) and \
        not source._data.flags.c_contiguous


def _laid_out(op: str, result: Tensor, fmt, source) -> Tensor:
    """``result`` in memory format ``fmt``; preserve_format (or None, for a ``*_like``)
    takes the format of ``source``, the tensor a ``*_like`` copies."""
    fmt = preserve_format if fmt is None else check_memory_format(op, fmt)
    if fmt is preserve_format:
        if not isinstance(source, Tensor):
            return result
        fmt = suggest_format(source)
    laid = to_memory_format(result, fmt)
    if laid is not result and result.requires_grad and result.is_leaf:  # stays a leaf
        laid = laid.detach().requires_grad_()
    return laid


def _check_out(op: str, target) -> None:
    if not isinstance(target, Tensor):
        raise TypeError(f"{op}: out must be a Tensor, got {type(target).__name__}")
    if target.requires_grad and state.enabled:
        raise RuntimeError(
            f"{op}: functions with out=... arguments don't support automatic "
            f"differentiation, but out (shape {tuple(target.shape)}) requires grad. Fix: "
            f"drop out= and use the result, or pass out.detach()")


def _written_into(op: str, target: Tensor, result: Tensor) -> Tensor:
    if tuple(target.shape) != tuple(result.shape):
        raise RuntimeError(
            f"{op}: out has shape {tuple(target.shape)} but the result has shape "
            f"{tuple(result.shape)}; gradlab doesn't resize out tensors (PyTorch does). "
            f"Fix: pass an out of shape {tuple(result.shape)}, or use the returned tensor")
    return target.copy_(result)
