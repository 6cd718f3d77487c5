"""Run a user's script (or a function) in a worker thread and capture what it prints and raises.

A script runs as ``python SCRIPT args`` would run it: through
:func:`runpy.run_path` with ``run_name="__main__"``, ``sys.argv`` set to
``[SCRIPT, *args]`` and the script's folder first on ``sys.path`` (both put
back when it ends). Those are process-wide, so one script runs at a time.

What the worker thread prints is captured by a *thread-routed* stream put on
``sys.stdout`` and ``sys.stderr`` while a run is going: writes from the
worker go to the run's buffer, writes from every other thread (the app,
pytest) go through to the stream that was there before. A thread the
script starts (``threading.Thread``, a thread pool) belongs to its run:
while runs are going, ``Thread.start`` is wrapped so that the new thread
writes to the run's output too, and a stop stops it as well.

The worker thread is not a daemon: a script the user lets run on after
closing the app keeps going, and the interpreter waits for it at exit as it
would for ``python SCRIPT``.

**Stopping.** A stop is cooperative first: the session raises
:class:`~gradlab.debug.stepper.StopRun` at the run's next gradlab event. A
script busy elsewhere (a pure-Python loop, a long NumPy call) emits none,
so :meth:`ScriptRun.request_stop` also starts a watchdog: each ``grace``
seconds it raises ``StopRun`` asynchronously in every thread of the run
that is running its own code, not gradlab's (CPython delivers it between
two bytecodes; a thread blocked in a C call such as ``time.sleep`` gets it
when the call returns). Threads inside gradlab's code are left to the
cooperative stop, so an engine update is never cut in half.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import runpy
import sys
import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from .stepper import StopRun

__all__ = ["ScriptRun", "script_environment", "script_traceback", "current_run", "live_runs",
           "RUN_STATUSES", "STOP_GRACE"]

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
_runs: dict[int, ScriptRun] = {}  # thread ident -> the run it belongs to (worker or started by it)
_thread_start = threading.Thread.start  # the original: put back when no run is going
_GRADLAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB = os.path.dirname(os.__file__) + os.sep  # the interpreter's own, not a venv's
STOP_GRACE = 0.5
"""Seconds a stopped run has to reach its next gradlab event before the watchdog steps in."""


def _route(ident: int, run: ScriptRun) -> None:
    """Send thread ``ident``'s writes on sys.stdout and sys.stderr to ``run``'s output, and
    let the threads it starts join ``run`` (see ``_start_in_run``)."""
    with _routes_lock:
        for name in ("stdout", "stderr"):
            stream = _installed.get(name)
            if stream is None or getattr(sys, name) is not stream:
                stream = _installed[name] = _RoutedStream(getattr(sys, name))
                _every_stream.add(stream)
                setattr(sys, name, stream)
            stream.routes[ident] = run._output
        _runs[ident] = run
        threading.Thread.start = _start_in_run


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
        _runs.pop(ident, None)
        if not _runs and threading.Thread.start is _start_in_run:
            threading.Thread.start = _thread_start


def _start_in_run(thread: threading.Thread) -> None:
    """``Thread.start`` while runs are going: a thread that a run's thread starts joins
    that run (its prints go to the run's output, a stop stops it too)."""
    run = _runs.get(threading.get_ident())
    if run is not None:
        run._adopt(thread)
    _thread_start(thread)


def current_run() -> ScriptRun | None:
    """The run the calling thread belongs to (its worker or a thread it started), if any."""
    return _runs.get(threading.get_ident())


def live_runs() -> list[ScriptRun]:
    """Runs with a thread still going (the command line waits for stopped ones at exit)."""
    with _routes_lock:
        return list(dict.fromkeys(_runs.values()))


def _raise_in_thread(ident: int, exc_type: type[BaseException]) -> bool:
    """Have CPython raise ``exc_type`` in thread ``ident`` at its next bytecode."""
    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    changed = set_async_exc(ctypes.c_ulong(ident), ctypes.py_object(exc_type))
    if changed > 1:  # cannot happen for a live ident; undo rather than hit several threads
        set_async_exc(ctypes.c_ulong(ident), None)
    return changed == 1


def _busy_in_gradlab(ident: int) -> bool:
    """Whether thread ``ident`` is running gradlab's own code: its innermost frame that is
    not the standard library's (``no_grad``'s contextlib, a Condition.wait) is gradlab's."""
    frame = sys._current_frames().get(ident)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_GRADLAB_DIR):
            return True
        if not filename.startswith(_STDLIB):
            return False  # the script's code, or a library it calls
        frame = frame.f_back
    return False


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
        self.stopping = False  # set by request_stop(); the session stops the run's threads
        self.interrupted = 0  # how many times the watchdog raised StopRun outside gradlab
        self._threads = [self.thread]  # the worker, then the threads it (transitively) started
        self._threads_lock = threading.Lock()

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
        _route(threading.get_ident(), self)
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

    def _adopt(self, thread: threading.Thread) -> None:
        """Make ``thread`` (being started by one of this run's threads) part of this run."""
        body = thread.run

        def run_in_script_run() -> None:
            ident = threading.get_ident()
            _route(ident, self)
            try:
                body()
            except StopRun:  # stopped with its run: ends quietly, like the worker
                pass
            finally:
                _unroute(ident)

        thread.run = run_in_script_run
        with self._threads_lock:
            self._threads = [t for t in self._threads if t.is_alive() or t is self.thread]
            self._threads.append(thread)

    # --- any thread -------------------------------------------------------------------------------
    @property
    def threads(self) -> list[threading.Thread]:
        """The run's threads still alive: its worker and the threads it started."""
        with self._threads_lock:
            return [t for t in self._threads if t.is_alive()]

    def request_stop(self, grace: float = STOP_GRACE) -> None:
        """Mark the run stopping and start the watchdog (see the module docstring).

        The session raises StopRun at the next gradlab event of any of the run's
        threads; a thread that reaches none within ``grace`` seconds (busy in its own
        Python code) gets StopRun raised asynchronously, each ``grace`` seconds until
        it ends.
        """
        with self._threads_lock:
            if self.stopping:
                return
            self.stopping = True
        watchdog = threading.Thread(target=self._enforce_stop, args=(grace,), daemon=True,
                                    name=f"gradlab stop: {self.name}")
        _thread_start(watchdog)  # never adopted: it must outlive the run's threads

    def _enforce_stop(self, grace: float) -> None:
        while True:
            time.sleep(grace)
            threads = self.threads
            if not threads:
                return
            for thread in threads:
                if thread.ident is None or _busy_in_gradlab(thread.ident):
                    continue
                self.interrupted += 1  # counted first: the thread may end before we go on
                if not _raise_in_thread(thread.ident, StopRun):
                    self.interrupted -= 1

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
