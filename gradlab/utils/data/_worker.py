"""What a DataLoader worker process does, and what it sends back.

A worker loops: take ``(batch index, sample indices)`` from its index queue,
fetch the samples, collate them, send ``(batch index, batch)`` to the shared
result queue. The main process puts batches back in order.

Three things cross the process boundary, and each has a rule here:

* **batches** travel as NumPy arrays: ``to_wire`` swaps every Tensor for a
  small ``WireTensor`` holding its array (a Tensor's Storage belongs to one
  process's memory accounting), ``from_wire`` makes tensors again in the main
  process. The worker pickles the batch itself, so a batch that can't be
  pickled becomes an error the main process sees, not a batch lost forever;
* **errors** travel as an ``ExceptionWrapper``: the type, the text and the
  formatted traceback, plus where it happened (worker id, batch index and the
  sample index being loaded), re-raised in the main process;
* **the end of an iterable dataset** travels as ``IterableStop``.
"""

from __future__ import annotations

import collections.abc
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

__all__ = ["get_worker_info", "WorkerInfo"]

POLL_SECONDS = 0.1  # how often a waiting worker checks whether it should stop


@dataclass(frozen=True)
class WorkerInfo:
    """About the current worker: ``id`` (0 .. num_workers-1), ``num_workers``,
    ``seed`` (``base_seed + id``) and its own copy of ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's ``WorkerInfo`` inside a DataLoader worker process; None in the main one.

    An ``IterableDataset`` uses it to shard its stream, e.g. worker ``id`` yields
    items ``id, id + num_workers, id + 2 * num_workers, ...``.
    """
    return _worker_info


# --- fetching samples (shared by the main process and the workers) ----------------------------
class MapFetcher:
    """Loads one batch of a map-style dataset; remembers which sample it was loading."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.current = None  # the sample index being loaded, named by error messages

    def fetch(self, index):
        if not self.auto_collation:
            self.current = index
            sample = self.dataset[index]
            self.current = None
            return self.collate_fn(sample)
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            self.current = index
            samples = getitems(index)
        else:
            samples = []
            for i in index:
                self.current = i
                samples.append(self.dataset[i])
        self.current = None
        return self.collate_fn(samples)


class IterableFetcher:
    """Pulls one batch (``len(index)`` items) from an iterable dataset's iterator."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.current = None
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        samples = []
        for _ in index:
            try:
                samples.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not samples or (self.drop_last and len(samples) < len(index)):
            raise StopIteration
        return self.collate_fn(samples)


def describe(fetcher, batch_idx: int, where: str) -> str:
    """'in DataLoader worker process 1 while loading sample index 7 (batch index 3)'."""
    if fetcher is not None and fetcher.current is not None:
        what = "samples" if isinstance(fetcher.current, list) else "sample index"
        return f"{where} while loading {what} {fetcher.current} (batch index {batch_idx})"
    return f"{where} while making batch index {batch_idx}"


class ExceptionWrapper:
    """An exception caught in a worker, as text that survives pickling."""

    def __init__(self, where: str, exc_info=None) -> None:
        exc_type, exc, tb = exc_info or sys.exc_info()
        self.exc_type = exc_type
        self.where = where
        self.text = "".join(traceback.format_exception(exc_type, exc, tb))

    def reraise(self):
        """Raise it again in the main process, as the same type where possible."""
        msg = (f"Caught {self.exc_type.__name__} {self.where}.\n"
               f"Original {self.text}")
        if self.exc_type is KeyError:  # KeyError's str() would show the message as a repr
            msg = _PlainMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


class _PlainMessage(str):
    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class IterableStop:
    """Sent by a worker whose iterable dataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class ResumeIteration:
    """Persistent workers: start a new epoch (an iterable dataset restarts its iterator)."""


# --- batches across the process boundary -------------------------------------------------------
class WireTensor:
    """A Tensor on its way to the main process: just its NumPy array."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __reduce__(self):
        return (WireTensor, (self.array,))


def to_wire(data):
    """The same structure with every Tensor replaced by a ``WireTensor``."""
    from ...tensor import Tensor

    if isinstance(data, Tensor):
        return WireTensor(data._host())  # pickling copies only the values a view shows
    return _walk(data, to_wire)


def from_wire(data):
    """The inverse of ``to_wire``: ``WireTensor`` back to a Tensor (sharing its array)."""
    if isinstance(data, WireTensor):
        from ...ops.creation import from_numpy

        return from_numpy(data.array)
    return _walk(data, from_wire)


def _walk(data, fn):
    """Apply ``fn`` to the members of dicts, namedtuples, tuples and lists, keeping types."""
    if isinstance(data, (str, bytes, np.ndarray)):
        return data
    if isinstance(data, collections.abc.Mapping):
        fields = {k: fn(v) for k, v in data.items()}
        try:
            return type(data)(fields)
        except TypeError:
            return fields
    if isinstance(data, tuple):
        items = [fn(d) for d in data]
        return type(data)(*items) if hasattr(data, "_fields") else tuple(items)
    if isinstance(data, list):
        return [fn(d) for d in data]
    return data


# --- the worker process ----------------------------------------------------------------------
def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed gradlab's, Python's and NumPy's global generators for this worker; returns the seed.

    ``seed = base_seed + worker_id`` as in PyTorch. NumPy's legacy global state
    takes 32-bit words, so its seed is mixed from both numbers by a SeedSequence.
    """
    from ... import random as grandom

    seed = base_seed + worker_id
    grandom.manual_seed(seed)
    random.seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def worker_loop(iterable: bool, dataset, index_queue, result_queue, done_event,
                auto_collation: bool, collate_fn, drop_last: bool, base_seed: int,
                init_fn, worker_id: int, num_workers: int) -> None:
    """The body of worker process ``worker_id`` (see the module docstring)."""
    global _worker_info
    where = f"in DataLoader worker process {worker_id}"
    try:
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        init_error = None
        fetcher = None
        make = IterableFetcher if iterable else MapFetcher
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make(dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(f"{where} while starting (worker_init_fn or "
                                          "iter(dataset))")
        ended = False
        # Stop when told (done_event), or when our parent died and we were re-parented: the
        # main process, or with "forkserver" the server, which dies with the main process.
        parent_pid = os.getppid()
        while not done_event.is_set() and os.getppid() == parent_pid:
            try:
                task = index_queue.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if task is None:
                break
            if isinstance(task, ResumeIteration):
                ended = False
                if iterable and init_error is None:
                    fetcher = make(dataset, auto_collation, collate_fn, drop_last)
                result_queue.put(pickle.dumps((task, None)))
                continue
            if ended:
                continue
            batch_idx, index = task
            if init_error is not None:
                data = init_error
            else:
                try:
                    data = to_wire(fetcher.fetch(index))
                except StopIteration:
                    data, ended = IterableStop(worker_id), True
                except Exception:
                    data = ExceptionWrapper(describe(fetcher, batch_idx, where))
            result_queue.put(_pickled(batch_idx, data, where))
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches every process; the main process reports it
    if done_event.is_set():
        # The main process is shutting down and reads nothing more: results still in the
        # pipe must not keep this worker alive.
        result_queue.cancel_join_thread()
    # Otherwise (told to stop with None, its iterable dataset ended) the main process is
    # still reading from the queue that all workers share. Exiting before our feeder
    # thread has finished its last write could leave the queue's cross-process write lock
    # held forever, and every other worker blocked behind it: close and wait instead.
    result_queue.close()
    result_queue.join_thread()


def _pickled(batch_idx: int, data, where: str) -> bytes:
    """The message for the main process, pickled here so that a failure is reported."""
    try:
        return pickle.dumps((batch_idx, data), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        if not isinstance(data, ExceptionWrapper):
            data = ExceptionWrapper(
                f"{where} while sending batch index {batch_idx} to the main process (the batch "
                "can't be pickled: return tensors, arrays, numbers, strings, dicts or lists "
                "from collate_fn)")
    try:
        return pickle.dumps((batch_idx, data))
    except Exception:  # the exception's class itself can't be pickled (a local class?)
        data.exc_type = RuntimeError
        return pickle.dumps((batch_idx, data))
