"""Run a user's script (or a function) in a worker thread and capture what it prints and raises.

A script runs as ``python SCRIPT args`` would run it: through
:func:`runpy.run_path` with ``run_name="__main__"``, ``sys.argv`` set to
``[SCRIPT, *args]`` and the script's folder first on ``sys.path`` (both put
back when it ends). Those are process-wide, so one script runs at a time.

What the worker thread prints is captured by a *thread-routed* stream put on
``sys.stdout`` and ``sys.stderr`` while a run is going: writes from the
worker go to the run's buffer, writes from every other thread (the app,
pytest) go through to the stream that was there before. Threads the script
starts itself are not captured.

The worker thread is not a daemon: a script the user lets run on after
closing the app keeps going, and the interpreter waits for it at exit as it
would for ``python SCRIPT``.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import sys
import threading
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from .stepper import StopRun

__all__ = ["ScriptRun", "script_environment", "script_traceback", "RUN_STATUSES"]

RUN_STATUSES = ("starting", "running", "finished", "failed", "stopped")


@contextlib.contextmanager
def script_environment(path: str, args=()) -> Iterator[None]:
    """Set ``sys.argv = [path, *args]``, put the script folder first on ``sys.path``; undo after."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *map(str, args)]
    sys.path.insert(0, os.path.dirname(path))
    try:
        yield
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def script_traceback(error: BaseException, script: str | None = None,
                     skip: tuple[str, ...] = ()) -> str:
    """The traceback as Python prints it, from the script's first frame on.

    Frames above the script (runpy, this runner) say nothing to its author:
    with ``script`` the text starts at the first frame in that file; else the
    leading frames from the files in ``skip`` are dropped.
    """
    tb = error.__traceback__
    if script is not None:
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
    else:
        while tb is not None and tb.tb_next is not None and \
                tb.tb_frame.f_code.co_filename in skip:
            tb = tb.tb_next
    error = error.with_traceback(tb or error.__traceback__)
    return "".join(traceback.format_exception(error))


class _Output:
    """A bounded text buffer: the last ``limit`` characters written (thread-safe)."""

    def __init__(self, limit: int, on_write: Callable[[str], None] | None) -> None:
        self.limit = limit
        self.on_write = on_write
        self._chunks: deque[str] = deque()
        self._size = 0
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            self._chunks.append(text)
            self._size += len(text)
            while self._size - len(self._chunks[0]) >= self.limit:
                self._size -= len(self._chunks.popleft())
        if self.on_write is not None:
            self.on_write(text)

    def text(self) -> str:
        with self._lock:
            return "".join(self._chunks)[-self.limit:]


class _RoutedStream(io.TextIOBase):
    """Stands in for sys.stdout/sys.stderr: each thread's writes go where it was routed."""

    def __init__(self, original) -> None:
        super().__init__()
        self.original = original
        self.routes: dict[int, _Output] = {}

    def write(self, text: str) -> int:
        target = self.routes.get(threading.get_ident())
        if target is None:
            return self.original.write(text)
        target.write(text)
        return len(text)

    def flush(self) -> None:
        if threading.get_ident() not in self.routes:
            self.original.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False if threading.get_ident() in self.routes else self.original.isatty()

    @property
    def encoding(self) -> str:
        return getattr(self.original, "encoding", "utf-8")

    def fileno(self) -> int:
        return self.original.fileno()


_routes_lock = threading.Lock()
_installed: dict[str, _RoutedStream] = {}  # "stdout"/"stderr" -> the stream this module put there
_every_stream: weakref.WeakSet = weakref.WeakSet()  # older ones may still be wrapped by others


def _route(ident: int, output: _Output) -> None:
    """Send thread ``ident``'s writes on sys.stdout and sys.stderr to ``output``."""
    with _routes_lock:
        for name in ("stdout", "stderr"):
            stream = _installed.get(name)
            if stream is None or getattr(sys, name) is not stream:
                stream = _installed[name] = _RoutedStream(getattr(sys, name))
                _every_stream.add(stream)
                setattr(sys, name, stream)
            stream.routes[ident] = output


def _unroute(ident: int) -> None:
    """Stop routing ``ident``; put the original streams back once nothing is routed."""
    with _routes_lock:
        for stream in list(_every_stream):
            stream.routes.pop(ident, None)
        for name in ("stdout", "stderr"):
            stream = _installed.get(name)
            if stream is None or stream.routes:
                continue
            if getattr(sys, name) is stream:  # else someone replaced it since: leave theirs
                setattr(sys, name, stream.original)
            del _installed[name]


class ScriptRun:
    """One run of a script or function in a worker thread; see the module docstring.

    ``status`` is one of :data:`RUN_STATUSES`. When it ends, ``done`` is set and
    ``exit_code`` (0 for a normal end or ``sys.exit(0)``), ``error`` (the
    exception), ``traceback`` (text, trimmed to the script's frames) and
    ``result`` (a function's return value) tell how.
    """

    def __init__(self, target: Callable[[], Any], *, name: str, script: str | None = None,
                 args: tuple = (), output_limit: int = 200_000,
                 on_output: Callable[[str], None] | None = None,
                 on_end: Callable[[ScriptRun], None] | None = None) -> None:
        self.name = name
        self.script = script
        self.args = tuple(args)
        self.status = "starting"
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.traceback: str | None = None
        self.exit_code: int | None = None
        self.result: Any = None
        self._target = target
        self._output = _Output(output_limit, on_output)
        self._on_end = on_end
        self.thread = threading.Thread(target=self._main, name=f"gradlab run: {name}",
                                       daemon=False)

    @classmethod
    def for_script(cls, path: str, args=(), **options) -> ScriptRun:
        """A run of the script at ``path`` with command-line ``args`` (not started yet)."""
        path = os.path.abspath(os.fspath(path))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"run_script: no such script: {path}. Fix: give the path of "
                                    "a Python file, e.g. gradlab run examples/train.py")
        args = tuple(map(str, args))

        def target() -> None:
            with script_environment(path, args):
                runpy.run_path(path, run_name="__main__")

        return cls(target, name=os.path.basename(path), script=path, args=args, **options)

    @classmethod
    def for_function(cls, fn: Callable, args=(), kwargs=None, **options) -> ScriptRun:
        """A run of ``fn(*args, **kwargs)`` (not started yet)."""
        if not callable(fn):
            raise TypeError(f"run_function: expected a function to run, got "
                            f"{type(fn).__name__}")
        kwargs = dict(kwargs or {})
        return cls(lambda: fn(*args, **kwargs), name=getattr(fn, "__name__", repr(fn)),
                   args=tuple(args), **options)

    # --- the worker thread ------------------------------------------------------------------------
    def start(self) -> ScriptRun:
        self.status = "running"
        self.thread.start()
        return self

    def _main(self) -> None:
        _route(threading.get_ident(), self._output)
        try:
            self.result = self._target()
            self.status, self.exit_code = "finished", 0
        except StopRun:
            self.status = "stopped"
        except SystemExit as exit_:
            self._exit(exit_)
        except BaseException as error:  # the script's own error: shown, never raised here
            self._fail(error, 1)
        finally:
            _unroute(threading.get_ident())
            self._target = None  # drop what the function closed over
            try:
                if self._on_end is not None:
                    self._on_end(self)
            finally:
                self.done.set()

    def _exit(self, exit_: SystemExit) -> None:
        code = exit_.code
        if code is None or code == 0:
            self.status, self.exit_code = "finished", 0
        elif isinstance(code, int):
            self._fail(exit_, code)
        else:  # sys.exit("message"): Python prints the message and exits with 1
            self._output.write(f"{code}\n")
            self._fail(exit_, 1)

    def _fail(self, error: BaseException, code: int) -> None:
        self.error, self.exit_code, self.status = error, code, "failed"
        self.traceback = script_traceback(error, self.script, skip=(__file__,))

    # --- any thread -------------------------------------------------------------------------------
    @property
    def output(self) -> str:
        """What the run printed (stdout and stderr interleaved), the last part."""
        return self._output.text()

    @property
    def running(self) -> bool:
        return self.thread.is_alive() and not self.done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the end; True if it ended within ``timeout`` seconds."""
        return self.done.wait(timeout)

    def __repr__(self) -> str:
        return f"<ScriptRun {self.name!r} {self.status}>"
