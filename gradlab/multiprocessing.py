"""``gradlab.multiprocessing``: Python's multiprocessing, plus PyTorch's ``spawn``.

PyTorch's module wraps the standard library's so that tensors cross process
boundaries through shared memory. gradlab's CPU tensors are NumPy arrays that
cross by pickling (a copy), so this module is the standard library's, under
PyTorch's name, so that ``import torch.multiprocessing as mp`` code runs:
``mp.Process``, ``mp.Queue``, ``mp.set_start_method('spawn')`` ...

What it adds is ``spawn``, the usual way to start data-parallel workers::

    def main(rank, world_size):
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
        ...

    if __name__ == "__main__":
        mp.spawn(main, args=(2,), nprocs=2)

It starts ``nprocs`` processes running ``fn(i, *args)`` and waits for them. If
one raises, the others are stopped and ``ProcessRaisedException`` carries the
worker's traceback to the parent, so a crash is never silent and never hangs.
(``python -m gradlab.distributed.run`` is the other launcher.)
"""

from __future__ import annotations

import multiprocessing as _mp
import time
import traceback
from multiprocessing import *  # noqa: F403 - the standard library's API, under PyTorch's name

__all__ = list(_mp.__all__) + [  # noqa: PLE0605
    "spawn", "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
    "ProcessExitedException"]


class ProcessException(Exception):
    """A worker started by ``spawn`` failed; ``error_index`` is its number, ``pid`` its id."""

    def __init__(self, msg: str, error_index: int, pid: int | None) -> None:
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A worker raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A worker ended without raising, but with a nonzero exit code (killed, os._exit ...)."""

    def __init__(self, msg: str, error_index: int, error_pid: int | None, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _run(fn, index: int, args: tuple, errors) -> None:
    """A worker's body: ``fn(index, *args)``, its traceback sent to the parent if it raises."""
    try:
        fn(index, *args)
    except KeyboardInterrupt:
        pass  # the parent stops the workers itself
    except BaseException:
        errors.put((index, traceback.format_exc()))
        raise SystemExit(1) from None


class ProcessContext:
    """The workers ``spawn`` started; ``join()`` waits for them (``spawn(join=False)``)."""

    def __init__(self, processes: list, errors) -> None:
        self.processes, self._errors = processes, errors

    def pids(self) -> list:
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: until done); True once every worker ended
        well. The first failure stops the others and raises here."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            failed = next((i for i, p in enumerate(self.processes)
                           if p.exitcode not in (None, 0)), None)
            if failed is not None:
                self._stop_all()
                self._raise(failed)
            if all(p.exitcode == 0 for p in self.processes):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            _mp.connection.wait([p.sentinel for p in self.processes if p.exitcode is None],
                                timeout=0.1)

    def _stop_all(self) -> None:
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        for p in self.processes:
            p.join()

    def _raise(self, failed: int) -> None:
        reports = {}
        while not self._errors.empty():
            index, text = self._errors.get()
            reports[index] = text
        if reports:
            index = min(reports)
            raise ProcessRaisedException(
                f"\n\n-- Process {index} terminated with the following error:\n{reports[index]}",
                index, self.processes[index].pid)
        process = self.processes[failed]
        code = process.exitcode
        signal_name = None
        if code < 0:
            import signal

            try:
                signal_name = signal.Signals(-code).name
            except ValueError:
                signal_name = str(-code)
        what = f"was killed by signal {signal_name}" if signal_name else \
            f"exited with exit code {code}"
        raise ProcessExitedException(f"process {failed} {what}", failed, process.pid,
                                     code, signal_name)


def start_processes(fn, args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)`` for i = 0 .. nprocs-1, with
    ``start_method`` ('spawn', 'fork' or 'forkserver'); wait for them if ``join``, else
    return their ``ProcessContext``."""
    if not callable(fn):
        raise TypeError(f"spawn: fn must be callable, got {type(fn).__name__}")
    if not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"spawn: nprocs must be a positive int, got {nprocs!r}")
    context = _mp.get_context(start_method)
    errors = context.SimpleQueue()
    processes = []
    for index in range(nprocs):
        process = context.Process(target=_run, args=(fn, index, tuple(args), errors),
                                  daemon=daemon)
        process.start()
        processes.append(process)
    workers = ProcessContext(processes, errors)
    if not join:
        return workers
    while not workers.join():
        pass
    return None


def spawn(fn, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """``start_processes`` with the 'spawn' start method: each worker is a fresh Python
    that imports your script's module (so guard the entry with ``if __name__ ==
    "__main__":``) and calls ``fn(i, *args)``."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
