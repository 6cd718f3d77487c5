"""``gradlab.profiler.profile``: where a training step spends its time, op by op.

Built on the event bus: while a profile records, it listens to every
``OpForward`` (an op and the time its NumPy/CuPy call took), every
``BackwardNode`` (a node's whole backward) and, with ``profile_memory``,
every allocation. ``record_function("name")`` marks a range of your own
code, and ``prof.step()`` cuts a run into ``ProfilerStep#N`` ranges that a
``schedule`` may record only some of. The result reads as PyTorch's::

    with gradlab.profiler.profile(record_shapes=True) as prof:
        with gradlab.profiler.record_function("train_step"):
            loss = model(x).sum(); loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")     # a timeline for ui.perfetto.dev

Two things differ from PyTorch, on purpose, and the table says so:

* An op's time is its array library call alone. What the dispatcher and
  autograd do around it (checks, wrapping, recording the graph) is Python
  time outside every op; the table's last line says how much of the wall
  time that was. In a Python engine this is the number worth watching.
* On CUDA an op's time is the time to *launch* its kernel (kernels run
  asynchronously), so there are no device-time columns; time whole steps
  with ``gradlab.cuda.synchronize()`` around them.

Listening costs time itself (each op builds an event), so a profiled step
runs slower than an unprofiled one: compare rows with each other, not with
a stopwatch. One profile records at a time, across all threads.
"""

from __future__ import annotations

import enum
import functools
import gzip
import os
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterable

from .. import events
from .event_list import EventList, FunctionEvent

__all__ = ["profile", "record_function", "schedule", "ProfilerAction", "ProfilerActivity",
           "tensorboard_trace_handler", "supported_activities"]


class ProfilerActivity(enum.Enum):
    """What to profile. gradlab times every op on the host, so both mean the same."""

    CPU = "cpu"
    CUDA = "cuda"


def supported_activities() -> set:
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA}


class ProfilerAction(enum.Enum):
    """What a ``schedule`` tells the profiler to do during a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0,
             skip_first: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps (the last one saves: ``on_trace_ready``
    runs), ``repeat`` cycles (0: until the profile ends)."""
    for name, value in (("wait", wait), ("warmup", warmup), ("active", active),
                        ("repeat", repeat), ("skip_first", skip_first)):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"schedule: {name} must be an int >= 0, got {value!r}")
    if active < 1:
        raise ValueError("schedule: active must be at least 1 (the steps that are recorded)")
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class _Recording:
    """One window of recording: listens on the bus and collects intervals."""

    active: _Recording | None = None  # the recording under way, if any (one at a time)

    def __init__(self, record_shapes: bool, profile_memory: bool) -> None:
        if _Recording.active is not None:
            raise RuntimeError(
                "profiler: another profile is already recording. Fix: finish it first (one "
                "gradlab.profiler.profile records at a time, and it sees every thread)")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.intervals: list[FunctionEvent] = []
        self.allocated: dict = {}  # thread -> {device type: bytes} since its last interval
        self.t0 = time.perf_counter()
        _Recording.active = self
        self.subscription = events.subscribe(self._on_event)

    def _on_event(self, event) -> None:
        kind = type(event)
        if kind is events.OpForward:
            shapes = [list(r.shape) for r in event.inputs] if self.record_shapes else []
            self._add(event.op, "op", event.start, event.start + event.duration, shapes,
                      event.module)
        elif kind is events.BackwardNode:
            self._add(event.node_name or event.op, "backward", event.start,
                      event.start + event.duration, [], event.module)
        elif kind is events.Memory and event.action == "alloc" and self.profile_memory:
            mine = self.allocated.setdefault(threading.get_ident(), {})
            device = event.device.split(":")[0]
            mine[device] = mine.get(device, 0) + event.nbytes

    def _add(self, name, kind, start, end, shapes=(), module=None) -> None:
        thread = threading.get_ident()
        memory = self.allocated.pop(thread, {}) if self.profile_memory else {}
        self.intervals.append(FunctionEvent(name, kind, thread, (start - self.t0) * 1e6,
                                            (end - self.t0) * 1e6, list(shapes), module,
                                            memory))

    def add_range(self, name: str, start: float, end: float) -> None:
        self._add(name, "range", start, end)

    def finish(self) -> EventList:
        self.subscription.remove()
        _Recording.active = None
        wall = (time.perf_counter() - self.t0) * 1e6
        return EventList(_nested(self.intervals), wall_us=wall,
                         profile_memory=self.profile_memory, with_shapes=False)


def _nested(intervals: list) -> list:
    """Sort by start time and link each interval to the one that encloses it (per thread)."""
    ordered = sorted(intervals, key=lambda e: (e.start_us, -e.end_us))
    open_by_thread: dict = {}
    for e in ordered:
        stack = open_by_thread.setdefault(e.thread, [])
        while stack and stack[-1].end_us < e.end_us - 1e-3:
            stack.pop()  # ended before this one ends: not its parent
        if stack:
            e.parent = stack[-1]
            stack[-1].children.append(e)
        stack.append(e)
    return ordered


class record_function:  # noqa: N801 - PyTorch's name
    """Mark a range of your code (``with record_function("data"):`` or as a decorator);
    it becomes a row of the profile whose ops are its children."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._recording = None
        self._start = 0.0

    def __enter__(self):
        self._recording = _Recording.active
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        recording = self._recording
        if recording is not None and recording is _Recording.active:
            recording.add_range(self.name, self._start, time.perf_counter())

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return func(*args, **kwargs)
        return wrapper


class profile:  # noqa: N801 - PyTorch's name
    """Record ops, backward nodes, ranges and (``profile_memory``) allocations; see the
    module docstring. Use as a context manager, or ``start()``/``stop()``."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], object] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config=None,
                 execution_trace_observer=None, acc_events: bool = False,
                 use_cuda: bool | None = None) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        for a in self.activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile: activities must be ProfilerActivity values, got "
                                f"{a!r}")
        for flag, what in ((with_stack, "with_stack (Python stacks per op)"),
                           (with_flops, "with_flops (a FLOP count per op)")):
            if flag:
                warnings.warn(f"gradlab.profiler: {what} is not recorded; the results have "
                              "no such column", stacklevel=2)
        self.schedule = schedule or _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._recording: _Recording | None = None
        self._step_start = 0.0
        self._step_mark = 0  # how many intervals were recorded when the current step began
        self._finished: EventList | None = None
        self._running = False

    # --- running ------------------------------------------------------------------------
    def start(self) -> None:
        if self._running:
            raise RuntimeError("profile.start(): this profile is already running")
        self._running = True
        self.current_action = self.schedule(self.step_num)
        if self.current_action in _RECORDING:
            self._begin()

    def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        if self._recording is not None:
            self._close_step(last=True)  # the last step, cut short by the end of the profile
            self._end()

    def step(self) -> None:
        """Mark the end of a training step: the schedule decides what the next one does."""
        if not self._running:
            raise RuntimeError("profile.step(): the profile is not running; call it inside "
                               "the `with profile(...)` block, or after start()")
        previous = self.current_action
        self.record_steps = True  # from the first step() on, steps are ranges of their own
        if self._recording is not None:
            self._close_step()
        self.step_num += 1
        self.current_action = now = self.schedule(self.step_num)
        if previous in _RECORDING and (previous is ProfilerAction.RECORD_AND_SAVE or
                                       now not in _RECORDING):
            self._end()
        if now in _RECORDING and self._recording is None:
            self._begin()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _begin(self) -> None:
        self._recording = _Recording(self.record_shapes, self.profile_memory)
        self._step_start = time.perf_counter()
        self._step_mark = 0

    def _close_step(self, last: bool = False) -> None:
        """Record the step that ends now (the last one only if anything ran in it: a loop
        that calls step() after every step leaves an empty one at the end)."""
        recording = self._recording
        if self.record_steps and not (last and len(recording.intervals) == self._step_mark):
            recording.add_range(f"ProfilerStep#{self.step_num}", self._step_start,
                                time.perf_counter())
        self._step_start = time.perf_counter()
        self._step_mark = len(recording.intervals)

    def _end(self) -> None:
        """Finish the window being recorded; its results replace the last window's (or join
        them, with ``acc_events``), and ``on_trace_ready`` gets the profile."""
        recording, self._recording = self._recording, None
        finished = recording.finish()
        finished.with_modules = self.with_modules
        if self.acc_events and self._finished is not None:
            finished = EventList([*self._finished, *finished], wall_us=(
                self._finished.wall_us or 0) + (finished.wall_us or 0),
                profile_memory=self.profile_memory, with_modules=self.with_modules)
        self._finished = finished
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # --- results ------------------------------------------------------------------------
    def events(self) -> EventList:
        """Every recorded interval of the last window, in order of start."""
        if self._finished is None:
            raise RuntimeError(
                "profile.events(): nothing has been recorded yet. Results exist once the "
                "`with profile(...)` block has ended (or stop() was called), or, with a "
                "schedule, after the last active step of a cycle")
        return self._finished

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_module: bool = False) -> EventList:
        if group_by_input_shape and not self.record_shapes:
            raise ValueError("key_averages(group_by_input_shape=True) needs shapes: profile "
                             "with record_shapes=True")
        return self.events().key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_module)

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        self.events().export_chrome_trace(path)


def tensorboard_trace_handler(dir_name: str | os.PathLike, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[profile], None]:
    """An ``on_trace_ready`` that writes each finished window as a Chrome trace file
    ``<worker>.<time>.pt.trace.json[.gz]`` in ``dir_name`` (TensorBoard's profiler plugin
    and ui.perfetto.dev read them)."""
    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns()}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as f:
                data = gzip.compress(f.read())
            from .._atomic_files import write_bytes_atomically

            write_bytes_atomically(path + ".gz", data)
            os.remove(path)
    return handler
