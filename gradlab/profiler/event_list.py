"""What a profile recorded, and its summaries: PyTorch's ``FunctionEvent``/``EventList``.

A profile is a list of timed intervals on threads: one per op (its kernel
time), per backward node (its whole backward, the ops it ran inside), per
``record_function`` range and per ``ProfilerStep#N``. They nest: an op run
by a node's backward lies inside the node's interval, which may lie inside
a range. An interval's *self* time is its time minus its children's, so
the self times of all intervals add up to the time they cover, counting
nothing twice.

``key_averages()`` groups intervals by name (and input shapes, or module)
and ``table()`` prints them as PyTorch's profiler does.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from .._atomic_files import write_bytes_atomically

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList"]

# Columns the table may be sorted by: PyTorch's names for what gradlab measures.
SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count",
             "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage",
             "self_device_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage")
_DEVICE_TIME_KEYS = ("cuda_time_total", "self_cuda_time_total", "cuda_time",
                     "device_time_total", "self_device_time_total", "device_time")


@dataclass(eq=False)
class FunctionEvent:
    """One recorded interval. Times are microseconds from the start of the profile.

    ``kind``: ``"op"`` (an op's kernel: the time its NumPy/CuPy call took),
    ``"backward"`` (a node's backward, its ops included), ``"range"``
    (``record_function`` or ``ProfilerStep#N``).
    """

    name: str
    kind: str
    thread: int
    start_us: float
    end_us: float
    input_shapes: list = field(default_factory=list)
    module: str | None = None
    memory: dict = field(default_factory=dict)  # device type -> bytes this interval allocated
    parent: FunctionEvent | None = field(default=None, repr=False)
    children: list = field(default_factory=list, repr=False)

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.children)

    @property
    def cpu_children(self) -> list:
        return self.children

    @property
    def cpu_parent(self):
        return self.parent

    @property
    def key(self) -> str:
        return self.name

    @property
    def device_type(self) -> str:
        return next(iter(self.memory), "cpu")

    def memory_usage(self, device: str, own: bool) -> int:
        """Bytes allocated by this interval on ``device`` (``own``: without its children's)."""
        mine = self.memory.get(device, 0)
        return mine if own else mine + sum(c.memory_usage(device, False) for c in self.children)

    @property
    def cpu_memory_usage(self) -> int:
        return self.memory_usage("cpu", own=False)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.memory_usage("cpu", own=True)

    @property
    def device_memory_usage(self) -> int:
        return self.memory_usage("cuda", own=False)

    @property
    def self_device_memory_usage(self) -> int:
        return self.memory_usage("cuda", own=True)

    cuda_memory_usage = device_memory_usage
    self_cuda_memory_usage = self_device_memory_usage


@dataclass(eq=False)
class FunctionEventAvg:
    """The intervals that share a key, summed (``key_averages()``'s rows)."""

    key: str
    input_shapes: list | None = None
    module: str | None = None
    count: int = 0
    cpu_time_total: float = 0.0
    self_cpu_time_total: float = 0.0
    cpu_memory_usage: int = 0
    self_cpu_memory_usage: int = 0
    device_memory_usage: int = 0
    self_device_memory_usage: int = 0

    def add(self, event: FunctionEvent) -> None:
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        self.device_memory_usage += event.device_memory_usage
        self.self_device_memory_usage += event.self_device_memory_usage

    @property
    def cpu_time(self) -> float:
        """Average microseconds per call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def cuda_memory_usage(self) -> int:
        return self.device_memory_usage

    @property
    def self_cuda_memory_usage(self) -> int:
        return self.self_device_memory_usage


class EventList(list):
    """A list of events (or of averages) with PyTorch's summaries on top."""

    def __init__(self, items=(), *, wall_us: float | None = None, profile_memory: bool = False,
                 with_shapes: bool = False, with_modules: bool = False) -> None:
        super().__init__(items)
        self.wall_us = wall_us  # how long the profile recorded, for the table's last line
        self.profile_memory = profile_memory
        self.with_shapes = with_shapes
        self.with_modules = with_modules

    def _like(self, items, **changes) -> EventList:
        options = dict(wall_us=self.wall_us, profile_memory=self.profile_memory,
                       with_shapes=self.with_shapes, with_modules=self.with_modules)
        options.update(changes)
        return EventList(items, **options)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_module: bool = False) -> EventList:
        """One row per name (and per input shapes with ``group_by_input_shape``, per module
        path with ``group_by_module``, a gradlab addition), in order of first appearance."""
        if group_by_stack_n:
            raise ValueError("key_averages: gradlab records no Python stacks, so "
                             "group_by_stack_n can't group; leave it at 0")
        rows: dict = {}
        for event in self:
            shapes = event.input_shapes if group_by_input_shape else None
            module = event.module if group_by_module else None
            key = (event.name, repr(shapes), module)
            row = rows.get(key)
            if row is None:
                row = rows[key] = FunctionEventAvg(event.name, shapes, module)
            row.add(event)
        return self._like(rows.values(), with_shapes=group_by_input_shape,
                          with_modules=group_by_module)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for event in self:
            total.add(event)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80,
              header: str | None = None, top_level_events_only: bool = False) -> str:
        """The rows as a text table, as ``torch.profiler``'s ``table()`` prints it."""
        from .table import format_table

        rows = list(self)
        if top_level_events_only:
            rows = [r for r in rows if getattr(r, "parent", None) is None]
        if sort_by is not None:
            rows.sort(key=lambda r: getattr(r, _checked_sort_key(sort_by)), reverse=True)
        return format_table(self, rows[:row_limit] if row_limit > 0 else rows,
                            name_width=max_name_column_width,
                            shapes_width=max_shapes_column_width, header=header)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write the intervals as a Chrome trace (JSON): open it in https://ui.perfetto.dev
        or chrome://tracing to see every op on a timeline, nested in its backward node
        and ranges."""
        pid = os.getpid()
        threads = {t: k for k, t in enumerate(dict.fromkeys(e.thread for e in self))}
        trace = []
        for e in self:
            args = {}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            if e.module:
                args["module"] = e.module
            for device, nbytes in e.memory.items():
                args[f"{device} bytes allocated"] = nbytes
            trace.append({"ph": "X", "cat": _CATEGORY[e.kind], "name": e.name, "pid": pid,
                          "tid": threads[e.thread], "ts": round(e.start_us, 3),
                          "dur": round(e.cpu_time_total, 3), "args": args})
        document = {"traceEvents": trace, "displayTimeUnit": "ms",
                    "otherData": {"producer": "gradlab.profiler"}}
        write_bytes_atomically(path, json.dumps(document).encode("utf-8"))


_CATEGORY = {"op": "cpu_op", "backward": "autograd", "range": "user_annotation"}


def _checked_sort_key(sort_by: str) -> str:
    if sort_by in SORT_KEYS:
        return sort_by
    if sort_by in _DEVICE_TIME_KEYS:
        raise ValueError(
            f"table: sort_by={sort_by!r} needs times measured on the GPU, and gradlab times "
            "ops on the host (on CUDA that is the time to launch a kernel, which then runs "
            "asynchronously). Fix: sort_by='cpu_time_total' or 'self_cpu_time_total'.")
    raise ValueError(f"table: unknown sort_by {sort_by!r}; choose one of {', '.join(SORT_KEYS)}")
