"""``gradlab.compile``: accepted, and nothing is compiled — gradlab runs every op eagerly.

PyTorch 2's ``torch.compile(model)`` traces the Python code into graphs and
generates fused kernels; the result computes the same values, faster. gradlab
is an eager engine by design: every op runs as it is called, so the debugger
and ``gradlab.events`` can show each one. ``compile`` therefore returns the
model or function unchanged, which keeps ``model = torch.compile(model)`` and
``@torch.compile`` working with the same results and gradlab's usual speed.
The signature is PyTorch's. For a graph of a model (to print, replay or save),
use :func:`gradlab.jit.trace`: unlike ``compile``, a trace freezes the
Python control flow it saw, so it is a deliberate choice rather than a
drop-in that could silently change what a script computes.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["compile", "is_compiling", "reset", "disable"]


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend="inductor", mode: str | None = None,
            options: dict | None = None, disable: bool = False):
    """Return ``model`` unchanged (gradlab runs eagerly); usable as ``@compile`` or
    ``@compile(mode=...)``.

    The arguments are PyTorch's and are checked the way PyTorch checks them,
    so a typo still fails here rather than on a real PyTorch run.
    """
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be specified, not both")
    known_modes = (None, "default", "reduce-overhead", "max-autotune",
                   "max-autotune-no-cudagraphs")
    if mode not in known_modes:
        raise RuntimeError(f"compile: unrecognized mode={mode!r}; PyTorch knows "
                           f"{', '.join(repr(m) for m in known_modes[1:])}")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, disable=disable)
    if not callable(model):
        raise RuntimeError(f"compile: expected a function or an nn.Module to compile, got "
                           f"{type(model).__name__}")
    return model


def is_compiling() -> bool:
    """False: nothing in gradlab is ever being traced by a compiler."""
    return False


def reset() -> None:
    """Clear compiled code caches: gradlab keeps none, so this does nothing."""


def disable(fn: Callable | None = None, recursive: bool = True):
    """Keep ``fn`` out of compilation: everything already is, so ``fn`` comes back as it is."""
    if fn is None:
        return lambda f: f
    return fn
