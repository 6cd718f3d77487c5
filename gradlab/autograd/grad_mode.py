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


state = _State()


def is_grad_enabled() -> bool:
    return state.enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _Mode:
    """Base for the mode context managers: set on enter, restore on exit; also a decorator."""

    def _set(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        self._prev = (state.enabled, state.inference)
        self._set()
        return self

    def __exit__(self, *exc) -> None:
        state.enabled, state.inference = self._prev

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return func(*args, **kwargs)
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

    Called bare (``set_grad_enabled(False)``) it takes effect at once, as in PyTorch.
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = (state.enabled, state.inference)
        state.enabled = self.mode

    def __enter__(self):
        return self

    def _set(self) -> None:
        state.enabled = self.mode

    def _args(self) -> tuple:
        return (self.mode,)


class inference_mode(_Mode):  # noqa: N801
    """Like ``no_grad``, and tensors made inside are marked as inference tensors.

    gradlab has no separate inference dispatch, so the saving is the same as
    ``no_grad``; the mode is tracked so code can ask ``is_inference_mode_enabled()``.
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def _set(self) -> None:
        if self.mode:
            state.enabled = False
            state.inference = True

    def _args(self) -> tuple:
        return (self.mode,)
