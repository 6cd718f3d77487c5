"""Whether ops record a graph: ``no_grad``, ``enable_grad``, ``inference_mode``.

The switch is thread-local, as in PyTorch: a ``no_grad`` block in a data
loading thread does not turn off recording in the training thread. Each
context manager also works as a decorator.
"""

from __future__ import annotations

import functools
import threading

__all__ = [
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled", "state",
]


class _State(threading.local):
    """Per-thread recording state read by the op dispatcher on every op."""

    enabled = True  # record a backward graph for ops on tensors that require grad
    inference = False  # inside inference_mode
    module = None  # path of the nn.Module whose forward is running, for graph and events
    running_module = None  # that nn.Module itself (its children's paths are found from it)
    dual = None  # the forward-mode level (forward_ad.dual_level) when one is active
    in_tangent_rule = False  # computing an op's tangent: its ops emit no events of their own
    autocast = None  # {device type: dtype} while autocast is on (gradlab.amp), else None
    backward_inputs = False  # the running backward was given inputs (autograd.grad ...)
    tracer = None  # the gradlab.jit tracer recording this thread's calls, else None
    saved_hooks = None  # (pack, unpack) of the innermost autograd.graph.saved_tensors_hooks
    backward_callbacks = None  # during a backward: what engine.queue_callback queued
    saved_hooks_disabled = None  # inside disable_saved_tensors_hooks: its error message


state = _State()


def is_grad_enabled() -> bool:
    return state.enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _Mode:
    """Base for the mode context managers: set on enter, restore on exit; also a decorator.

    ``@no_grad()`` and bare ``@no_grad`` both decorate a function, as in PyTorch.
    """

    def __new__(cls, *args):
        if args and callable(args[0]):  # used as a bare decorator: @no_grad
            return cls()(args[0])
        return super().__new__(cls)

    _outer = None  # the modes to restore on exit, innermost last (one instance may nest)

    def _set(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        if self._outer is None:
            self._outer = []
        self._outer.append((state.enabled, state.inference))
        self._set()
        return self

    def __exit__(self, *exc) -> None:
        state.enabled, state.inference = self._outer.pop()

    def __call__(self, func):
        args = self._args()

        @functools.wraps(func)
        def wrapper(*a, **kw):
            with self.__class__(*args):
                return func(*a, **kw)
        return wrapper

    def _args(self) -> tuple:
        return ()


class no_grad(_Mode):  # noqa: N801 - PyTorch's name
    """Ops inside run without recording a graph (evaluation, weight updates)."""

    def _set(self) -> None:
        state.enabled = False


class enable_grad(_Mode):  # noqa: N801
    """Turn recording back on inside a ``no_grad`` block."""

    def _set(self) -> None:
        state.enabled = True


class set_grad_enabled(_Mode):  # noqa: N801
    """``set_grad_enabled(False)`` is ``no_grad()``; usable as a call or a context manager.

    Called bare (``set_grad_enabled(False)``) it takes effect at once, as in
    PyTorch; as a decorator it applies only while the function runs.
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = state.enabled
        state.enabled = self.mode

    def __enter__(self):
        return self  # __init__ already switched the mode

    def __exit__(self, *exc) -> None:
        state.enabled = self._prev

    def __call__(self, func):
        state.enabled = self._prev  # decorating must not change the mode of the caller
        return super().__call__(func)

    def _args(self) -> tuple:
        return (self.mode,)


class inference_mode(_Mode):  # noqa: N801
    """Like ``no_grad``: nothing inside records a graph.

    PyTorch also marks the tensors made inside as inference tensors (cheaper
    to make, refused later by autograd). gradlab has no separate inference
    dispatch, so the saving is the same as ``no_grad`` and no tensor is marked
    (``Tensor.is_inference()`` is always False); the mode is tracked so code
    can ask ``is_inference_mode_enabled()``.
    ``inference_mode(False)`` turns both off again (recording on), as in PyTorch.
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def _set(self) -> None:
        state.enabled = not self.mode
        state.inference = self.mode

    def _args(self) -> tuple:
        return (self.mode,)
