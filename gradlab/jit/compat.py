"""The rest of ``torch.jit``'s surface that model code touches, so it runs under gradlab.

Models written for TorchScript mark methods (``@torch.jit.ignore``,
``@torch.jit.unused``, ``@torch.jit.export``), annotate types
(``torch.jit.annotate``, ``torch.jit.Final``) and ask ``torch.jit.is_scripting()``.
gradlab has tracing, not a TorchScript compiler, so these are what they are
outside a script in PyTorch: the decorators return the function, ``annotate``
its value, ``is_scripting()`` False. ``script`` itself cannot be faked: it
raises and points at ``trace``.
"""

from __future__ import annotations

from typing import Final  # noqa: F401 - torch.jit.Final is typing.Final's spelling there

__all__ = ["script", "is_scripting", "ignore", "unused", "export", "annotate", "Final",
           "freeze", "optimize_for_inference"]


def script(obj=None, *args, **kwargs):
    """TorchScript compiles Python source; gradlab records graphs by tracing instead."""
    raise NotImplementedError(
        "jit.script: gradlab has no TorchScript compiler. Fix: record the model with "
        "gradlab.jit.trace(model, example_input), which gives a graph you can print, replay, "
        "save with jit.save and export with gradlab.onnx.export (control flow is frozen to "
        "the path the example takes)")


def is_scripting() -> bool:
    """False: gradlab never compiles TorchScript (``torch.jit.is_scripting`` outside a script)."""
    return False


def _unchanged_decorator(fn=None, **options):
    """``@ignore``, ``@ignore(drop=True)``: the function itself, as outside a script."""
    if fn is None:
        return lambda f: f
    return fn


ignore = _unchanged_decorator
unused = _unchanged_decorator


def export(fn):
    """``@torch.jit.export`` marks a method for the compiler; without one it is the method."""
    return fn


def annotate(the_type, the_value):
    """A type hint for TorchScript; outside a script, the value."""
    return the_value


def freeze(module, preserved_attrs=None, optimize_numerics: bool = True):
    """TorchScript's freezing inlines parameters for its compiler; a gradlab graph is already
    what it replays, so this returns ``module`` (a traced module) as it is."""
    return module


def optimize_for_inference(module, other_methods=None):
    """As :func:`freeze`: nothing to compile, ``module`` as it is."""
    return module
