"""DataLoader: batches from a dataset, optionally loaded by worker processes.

One epoch is ``for batch in loader``. The loader asks its *index sampler* for
the next batch of indices (a ``BatchSampler`` over a ``SequentialSampler`` or
``RandomSampler``), fetches those samples and collates them. With
``num_workers > 0`` the fetching and collating happen in worker processes:

* index batches go round-robin to the workers, ``prefetch_factor`` per worker
  in flight; results come back through one queue, out of order, and the main
  process hands them out in order, so a loader yields **the same batches**
  with 0 workers or 8;
* each epoch draws a base seed from the loader's ``generator``; worker ``i``
  seeds gradlab's, Python's and NumPy's global generators with
  ``base_seed + i``, so random transforms repeat under ``gradlab.manual_seed``;
* an exception in a worker is re-raised in the main process, naming the
  worker, the batch index and the sample index, with the original traceback;
  a worker that dies (a signal, ``os._exit``) is noticed by polling and
  reported with its exit code: the loader never waits forever on a dead one;
* workers stop at the end of the epoch, when the iterator is deleted or
  abandoned (``break``), and at interpreter exit.

**Start method.** On Linux the default is ``"fork"``: a worker starts in
milliseconds, and it inherits the dataset instead of receiving a pickled copy,
so datasets with lambdas, classes defined in a notebook, and big in-memory
arrays (shared copy-on-write) all just work, as they do with PyTorch on Linux.
Fork copies only the calling thread, so a lock another thread held at that
moment stays locked in the child; workers only run dataset code and NumPy,
but if your process runs threads that matter (a GUI, CUDA/CuPy work in
the dataset) pass ``multiprocessing_context="forkserver"`` or ``"spawn"``,
which start clean processes and need a picklable dataset, collate_fn and
worker_init_fn (module-level definitions, and the loop under ``if __name__ ==
"__main__":``). Elsewhere (macOS, Windows) the default is ``"spawn"``:
fork is unsafe with macOS system libraries and absent on Windows.

Batches cross the process boundary as NumPy arrays (see ``_worker.py``), pickled
through a pipe: simple and portable, though PyTorch's shared memory copies less.
``pin_memory`` is accepted and ignored (gradlab has no pinned host buffers).
"""

from __future__ import annotations

import atexit
import itertools
import math
import multiprocessing as mp
import multiprocessing.util  # noqa: F401 - registers its atexit hook before ours (see below)
import os
import pickle
import queue
import signal
import sys
import time
import weakref

from ... import events
from . import _worker
from ._worker import get_worker_info
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _draw_seed

__all__ = ["DataLoader", "get_worker_info"]

_SHUTDOWN_GRACE_SECONDS = 3.0  # how long a busy worker may finish its batch before terminate()
_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
           "persistent_workers")


def _default_context():
    """``fork`` on Linux, ``spawn`` elsewhere (see the module docstring)."""
    return mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")


class _InfiniteConstantSampler(Sampler):
    """The 'indices' of an iterable dataset: None forever (the dataset decides the order)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over ``dataset`` in batches: ``for x, y in DataLoader(ds, batch_size=32)``.

    Arguments are PyTorch's; see the module docstring for how workers work.
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing. Let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 1:
            raise ValueError(f"prefetch_factor should be at least 1 (batches in flight per "
                             f"worker), got {prefetch_factor}")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} option, "
                        f"but got {name}={value!r}. An iterable dataset decides its own order; "
                        "shuffle inside its __iter__ instead.")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle (the sampler "
                             "decides the order; use RandomSampler to shuffle)")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self.persistent_workers = persistent_workers
        self._dataset_kind = "iterable" if iterable else "map"
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.multiprocessing_context = _check_context(multiprocessing_context, num_workers)
        self._iterator = None
        self._epochs = 0  # passes started: the number on Phase("epoch") events
        self.__initialized = True

    def __setattr__(self, name: str, value) -> None:
        if name in _FROZEN and self.__dict__.get("_DataLoader__initialized"):
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized; make a new DataLoader")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What the iterator draws from: lists of indices, or single indices without batching."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        self._epochs += 1
        if events.listeners or events.light_listeners:
            events.emit(events.Phase(events.next_seq(), "epoch", self._epochs, source=id(self)))
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        if not self.persistent_workers:
            return _MultiProcessingDataLoaderIter(self)
        if self._iterator is None or self._iterator._shutdown:  # first epoch, or after a crash
            self._iterator = _MultiProcessingDataLoaderIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self) -> int:
        """Batches per epoch (for an IterableDataset, computed from its ``__len__``)."""
        if self._dataset_kind == "iterable":
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else \
                    math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


def _check_context(context, num_workers: int):
    if context is None:
        return None
    if num_workers == 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading "
                         f"(num_workers > 0), but got num_workers={num_workers}")
    if isinstance(context, str):
        methods = mp.get_all_start_methods()
        if context not in methods:
            raise ValueError("multiprocessing_context option should specify a valid start "
                             f"method in {methods!r}, but got multiprocessing_context="
                             f"{context!r}")
        return mp.get_context(context)
    if not isinstance(context, mp.context.BaseContext):
        raise TypeError("multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got multiprocessing_context="
                        f"{context!r}")
    return context


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._dataset_kind == "iterable"
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        # Drawn first, as in PyTorch, so a shuffled order depends on the generator alone.
        self._base_seed = _draw_seed(loader.generator)
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader: DataLoader) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """``num_workers=0``: fetch and collate right here, in the main process."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        make = _worker.IterableFetcher if self._iterable else _worker.MapFetcher
        self._fetcher = make(self._dataset, self._auto_collation, self._collate_fn,
                             self._drop_last)

    def _next_data(self):
        index = next(self._sampler_iter)
        try:
            return self._fetcher.fetch(index)
        except StopIteration:
            raise
        except Exception as exc:
            exc.add_note(_worker.describe(self._fetcher, self._num_yielded,
                                  "(DataLoader, in the main process)"))
            raise


_live_iterators: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _shutdown_all() -> None:
    """At interpreter exit, stop the workers of iterators that are still alive.

    atexit runs hooks last-registered-first, so this runs before multiprocessing's
    own hook, which would stop the queues' feeder threads and terminate the workers.
    """
    for it in list(_live_iterators):
        it._shutdown_workers()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """``num_workers > 0``: workers fetch, this process keeps the order and the bookkeeping.

    ``_task_info[i]`` is ``(worker_id,)`` while batch ``i`` is in flight and
    ``(worker_id, data)`` once it arrived early; ``_send_idx`` counts batches
    handed out, ``_rcvd_idx`` the next batch to yield.
    """

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._shutdown = True  # until the workers exist, there is nothing to shut down
        self._owner_pid = os.getpid()
        self._prefetch_factor = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        ctx = loader.multiprocessing_context or _default_context()
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._workers, self._index_queues, self._stopped = [], [], set()
        for wid in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()  # a dead worker must not block our exit
            worker = ctx.Process(
                target=_worker.worker_loop, name=f"DataLoader worker {wid}", daemon=True,
                args=(self._iterable, self._dataset, index_queue, self._result_queue,
                      self._done_event, self._auto_collation, self._collate_fn,
                      self._drop_last, self._base_seed, loader.worker_init_fn, wid,
                      self._num_workers))
            self._index_queues.append(index_queue)
            try:
                worker.start()
            except Exception as exc:
                self._shutdown = False
                self._shutdown_workers()
                raise TypeError(
                    f"DataLoader: can't start worker processes with the "
                    f"'{ctx.get_start_method()}' start method: {exc}. It sends the dataset, "
                    "collate_fn and worker_init_fn to each worker by pickling: define them at "
                    "module level (no lambdas or local classes) and run the loader under "
                    "`if __name__ == '__main__':`, or pass multiprocessing_context='fork' "
                    "(Linux).") from exc
            self._workers.append(worker)
        self._shutdown = False
        _live_iterators.add(self)
        self._start_epoch(first=True)

    def _reset(self, loader: DataLoader) -> None:
        super()._reset(loader)
        self._start_epoch(first=False)

    def _start_epoch(self, first: bool) -> None:
        self._send_idx = self._rcvd_idx = 0
        self._task_info: dict = {}
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first:  # persistent workers: drain the last epoch's leftovers, then go
            for q in self._index_queues:
                q.put(_worker.ResumeIteration())
            waiting = self._num_workers
            while waiting:
                idx, _ = self._get_data()
                waiting -= isinstance(idx, _worker.ResumeIteration)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._active[wid]:
                break
        else:
            return  # every worker's iterable dataset is exhausted
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._send_idx += 1

    def _next_data(self):
        while True:
            # Skip batches promised by workers whose iterable dataset ran out.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._active[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                return self._process(self._task_info.pop(self._rcvd_idx)[1])
            idx, data = self._get_data()
            if isinstance(data, _worker.IterableStop):
                self._active[data.worker_id] = False
                if not self._persistent:
                    self._index_queues[data.worker_id].put(None)
                    self._stopped.add(data.worker_id)
            elif idx != self._rcvd_idx:
                self._task_info[idx] += (data,)  # early: keep it until its turn
            else:
                del self._task_info[idx]
                return self._process(data)

    def _process(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return _worker.from_wire(data)

    def _get_data(self):
        """The next message from any worker; checks for dead workers while it waits."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _worker.POLL_SECONDS if deadline is None else \
                max(0.0, min(_worker.POLL_SECONDS, deadline - time.monotonic()))
            try:
                return pickle.loads(self._result_queue.get(timeout=wait))
            except queue.Empty:
                pass
            self._check_workers_alive()
            if deadline is not None and time.monotonic() >= deadline:
                self._shutdown_workers()
                raise RuntimeError(
                    f"DataLoader timed out after {self._timeout} seconds waiting for batch "
                    f"index {self._rcvd_idx} from the workers. A worker may be stuck in the "
                    "dataset's __getitem__, or loading a batch takes longer: raise timeout= "
                    "or pass timeout=0 to wait as long as it takes.")

    def _check_workers_alive(self) -> None:
        for wid, worker in enumerate(self._workers):
            if wid in self._stopped or worker.is_alive():
                continue
            code = worker.exitcode
            how = f"exit code {code}"
            if code is not None and code < 0:
                try:
                    how = f"signal {signal.Signals(-code).name} (exit code {code})"
                except ValueError:
                    pass
            self._shutdown_workers()
            raise RuntimeError(
                f"DataLoader worker {wid} (pid {worker.pid}) exited unexpectedly with {how} "
                f"while the loader waited for batch index {self._rcvd_idx}. Common causes: the "
                "worker ran out of memory (the OS sends SIGKILL), a crash in a C extension "
                "(SIGSEGV), or dataset code calling os._exit()/sys.exit(). Fix: run with "
                "num_workers=0 to see the failure in the main process.")

    def _shutdown_workers(self) -> None:
        """Stop every worker: ask nicely, wait a little, then terminate. Idempotent."""
        if self._shutdown or os.getpid() != self._owner_pid:
            return  # a forked child must never stop its parent's workers
        self._shutdown = True
        _live_iterators.discard(self)
        # The event reaches every worker at once (each checks it between polls); a None on
        # the index queues would need their feeder threads, which a garbage collection
        # running this __del__ at an unlucky moment, or interpreter exit, may have stopped.
        self._done_event.set()
        deadline = time.monotonic() + _SHUTDOWN_GRACE_SECONDS
        for worker in self._workers:
            worker.join(timeout=max(0.0, deadline - time.monotonic()))
        for worker in self._workers:
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=1.0)
        for q in self._index_queues:
            q.close()
        self._result_queue.cancel_join_thread()
        self._result_queue.close()

    def __del__(self) -> None:
        if hasattr(self, "_shutdown"):
            self._shutdown_workers()
