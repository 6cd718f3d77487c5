"""Run a user's training script and capture the graph of its K-th backward.

This is what ``gradlab render SCRIPT`` does. The script runs in this process
(``runpy``), with ``sys.argv`` set to its own arguments and its folder first
on ``sys.path``, as ``python SCRIPT args`` would run it. A listener on the
event bus counts backward passes: when the K-th begins, the graph is
captured from the tensors backward starts from (the ``roots`` of the
``backward_begin`` event) while every saved tensor is still there; when it
ends, the gradients are read and the script is stopped, so a long training
run does not have to finish.
"""

from __future__ import annotations

import os
import runpy
import sys

from .. import events
from ..debug.runner import script_environment, script_traceback
from .capture import Capture, Trace, capture

__all__ = ["capture_script", "NoBackward", "ScriptFailed"]


class NoBackward(RuntimeError):
    """The script finished without reaching the requested backward pass."""


class ScriptFailed(Exception):
    """The script raised (or called ``sys.exit``): ``error`` is what it raised."""

    def __init__(self, error: BaseException, script: str) -> None:
        super().__init__(f"{os.path.basename(script)} raised {type(error).__name__}")
        self.error = error
        self.script = script

    def script_traceback(self) -> str:
        """The traceback as Python would print it, from the script's own first frame on."""
        return script_traceback(self.error, self.script)


class _Captured(BaseException):
    """Raised from the listener to stop the script once the graph is captured.

    A ``BaseException`` (not an ``Exception``), so the event bus lets it through
    and a script's own ``except Exception`` does not swallow it.
    """


class _Watcher:
    def __init__(self, step: int, script_path: str) -> None:
        self.step = step
        self.script_path = script_path
        self.seen = 0
        self.trace = Trace()
        self.capture: Capture | None = None

    def __call__(self, event) -> None:
        self.trace.record(event)
        if not isinstance(event, events.Phase):
            return
        if event.kind == "backward_begin":
            self.seen += 1
            if self.seen == self.step:
                roots = [ref.tensor for ref in getattr(event, "roots", ())]
                roots = [t for t in roots if t is not None]
                if not roots and self.trace.last_output is not None:
                    last = self.trace.last_output.tensor  # the loss: the last op's output
                    roots = [last] if last is not None else []
                if roots:
                    params, buffers, types = self._modules()
                    self.capture = capture(roots, params=params, buffers=buffers,
                                           trace=self.trace)
                    self.capture.module_types = types
        elif event.kind == "backward_end":
            if self.capture is not None:
                self.capture.update_grads()
                raise _Captured
            if self.seen < self.step:
                self.trace.clear()  # only the forward of the wanted step matters

    def _modules(self) -> tuple[dict, dict, dict]:
        """Parameter names and module classes, from the biggest nn.Module the script holds."""
        from ..nn import Module

        best = None
        frame = sys._getframe()
        while frame is not None:  # the script's own frames: its globals, main()'s locals
            if frame.f_code.co_filename == self.script_path:
                for value in list(frame.f_locals.values()):
                    if isinstance(value, Module):
                        size = sum(1 for _ in value.modules())
                        if best is None or size > best[0]:
                            best = (size, value)
            frame = frame.f_back
        if best is None:
            return {}, {}, {}
        model = best[1]
        return (dict(model.named_parameters()), dict(model.named_buffers()),
                {path: type(m).__name__ for path, m in model.named_modules()})


def capture_script(path: str, args: list[str], *, step: int = 1) -> Capture:
    """Run the script at ``path`` with ``args``; return the graph of its ``step``-th backward.

    What the script raises comes out as :class:`ScriptFailed`; :class:`NoBackward`
    if it ends before that backward.
    """
    if step < 1:
        raise ValueError(f"render: --step must be 1 or more, got {step}")
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"render: no such script: {path}")
    watcher = _Watcher(step, path)
    subscription = events.subscribe(watcher)
    try:
        with script_environment(path, args):
            runpy.run_path(path, run_name="__main__")
    except _Captured:
        pass
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # the script's own error, SystemExit included
        raise ScriptFailed(error, path) from None
    finally:
        subscription.remove()
    if watcher.capture is None:
        if watcher.seen == 0:
            raise NoBackward(f"render: {os.path.basename(path)} never called backward(), so "
                             "there is no graph to draw. Fix: make sure the script computes a "
                             "loss and calls loss.backward().")
        raise NoBackward(f"render: {os.path.basename(path)} ran {watcher.seen} backward "
                         f"pass(es), fewer than --step {step}")
    return watcher.capture
