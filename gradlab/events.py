"""The event bus: everything the debugger, the images and the app can see.

The engine emits one event at each of a few fixed places (the op dispatcher,
the backward engine, gradient accumulation, storage allocation, optimizer
updates). Listeners run synchronously on the thread that did the work, so a
listener may block it: that is how the debugger pauses a training run.

With nobody listening, emitting costs the caller one check of ``listeners``:

    if events.listeners:
        events.emit(OpForward(...))

Events are frozen dataclasses numbered by a global, increasing ``seq``.
Tensors appear as :class:`TensorRef`: shape, dtype, device and name copied at
emit time, plus a weak reference to the live tensor (``ref.tensor``), so an
event never keeps memory alive.
"""

from __future__ import annotations

import itertools
import sys
import threading
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "subscribe", "emit", "listeners", "Subscription", "TensorRef", "Event", "OpForward",
    "BackwardNode", "GradAccumulated", "Memory", "Phase", "OptimizerStep", "Metric",
    "tensor_ref", "light_listeners", "LIGHT_EVENTS",
]

listeners: list[Callable[[Event], Any]] = []
"""Listeners to every event. Emitters test this list's truth before building an event."""

light_listeners: list[Callable[[Event], Any]] = []
"""Listeners to the light events only (:data:`LIGHT_EVENTS`: a handful per iteration).

A debugger running freely listens here and keeps ops, backward nodes and
allocations at full speed; emitters of light events test
``listeners or light_listeners``.
"""

_seq = itertools.count(1)
_lock = threading.Lock()


def next_seq() -> int:
    return next(_seq)


@dataclass(frozen=True, slots=True)
class TensorRef:
    """What an event says about a tensor: its metadata now, and a weak handle to it."""

    id: int
    shape: tuple[int, ...]
    dtype: Any
    device: Any
    name: str | None
    requires_grad: bool
    _ref: Any = field(repr=False, compare=False)

    @property
    def tensor(self):
        """The live tensor, or None once it has been freed."""
        return self._ref()


def tensor_ref(t) -> TensorRef | None:
    """A :class:`TensorRef` for tensor ``t`` (None stays None)."""
    if t is None:
        return None
    return TensorRef(id(t), t.shape, t.dtype, t.device, t.name, t.requires_grad,
                     weakref.ref(t))


@dataclass(frozen=True, slots=True)
class Event:
    seq: int


@dataclass(frozen=True, slots=True)
class OpForward(Event):
    """An op computed its outputs (exactly one per op call, graph or no graph)."""

    op: str
    node_id: int | None  # None when no backward node was recorded (no_grad, no grad inputs)
    inputs: tuple[TensorRef, ...]
    outputs: tuple[TensorRef, ...]
    module: str | None  # path of the nn.Module whose forward ran the op ("encoder.0.fc1")
    duration: float  # seconds spent computing, bookkeeping excluded
    start: float = 0.0  # time.perf_counter() when computing began (profiler timelines)


@dataclass(frozen=True, slots=True)
class BackwardNode(Event):
    """A backward node ran: gradients w.r.t. its outputs came in, w.r.t. its inputs went out."""

    op: str
    node_id: int
    grad_outputs: tuple[TensorRef | None, ...]
    grad_inputs: tuple[TensorRef | None, ...]
    module: str | None
    start: float = 0.0  # time.perf_counter() when the node's backward began
    duration: float = 0.0  # seconds in the node's backward, the ops it ran included
    node_name: str | None = None  # PyTorch's name for the node: "MulBackward0"


@dataclass(frozen=True, slots=True)
class GradAccumulated(Event):
    """A leaf's ``.grad`` changed (set or added to)."""

    tensor: TensorRef
    grad: TensorRef


@dataclass(frozen=True, slots=True)
class Memory(Event):
    """A storage was allocated or freed, or moved to another category."""

    action: str  # "alloc", "free" or "retag"
    device: str
    nbytes: int
    category: str  # parameter, gradient, activation, optimizer, other
    live_bytes: int  # the device's total after this change
    peak_bytes: int
    previous_category: str | None = None  # for "retag": where the bytes were before


@dataclass(frozen=True, slots=True)
class Phase(Event):
    """A boundary of a training step.

    ``kind`` is one of:

    ``backward_begin`` / ``backward_end``   around ``backward()`` and ``autograd.grad``;
                    ``roots`` names the tensors backward starts from, so a
                    listener can read the whole graph (``roots[i].tensor.grad_fn``)
                    before backward runs and frees what the nodes saved
    ``step`` / ``step_end``   around ``optimizer.step()``; ``iteration`` counts
                    that optimizer's steps from 1
    ``epoch``       a ``DataLoader`` starts a pass over its data; ``iteration``
                    counts that loader's passes from 1, ``source`` tells loaders apart
    """

    kind: str
    iteration: int | None = None
    roots: tuple[TensorRef, ...] = ()
    source: int | None = None  # id() of the optimizer or loader that emitted it


@dataclass(frozen=True, slots=True)
class OptimizerStep(Event):
    """One parameter update by an optimizer."""

    optimizer: str
    group: int
    param: TensorRef
    lr: float
    state_before: dict
    state_after: dict
    options: dict = field(default_factory=dict)  # the group's hyperparameters ("params" left out)
    grad_norm: float | None = None  # 2-norm of the gradient the update used
    update_norm: float | None = None  # 2-norm of the change to the parameter
    source: int | None = None  # id() of the optimizer: two Adams stay apart


@dataclass(frozen=True, slots=True)
class Metric(Event):
    """Numbers a script reported itself (``gradlab.debug.report(accuracy=0.93)``)."""

    values: dict


LIGHT_EVENTS = (Phase, Metric)
"""Events that mark boundaries rather than work: what a ``light`` subscription receives."""


class Subscription:
    """A live subscription; ``remove()`` it, or use it as a context manager.

    ``light`` tells whether it receives only :data:`LIGHT_EVENTS`; assign to
    switch, e.g. to watch one iteration in full and the next ones lightly.
    """

    __slots__ = ("callback", "active", "_light")

    def __init__(self, callback: Callable[[Event], Any], light: bool) -> None:
        self.callback = callback
        self.active = True
        self._light = light

    @property
    def light(self) -> bool:
        return self._light

    @light.setter
    def light(self, value: bool) -> None:
        with _lock:
            if self.active and value != self._light:
                (light_listeners if self._light else listeners).remove(self.callback)
                (light_listeners if value else listeners).append(self.callback)
            self._light = bool(value)

    def remove(self) -> None:
        with _lock:
            if self.active:
                self.active = False
                (light_listeners if self._light else listeners).remove(self.callback)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def subscribe(callback: Callable[[Event], Any], *, light: bool = False) -> Subscription:
    """Call ``callback(event)`` for every event from now on, on the emitting thread.

    With ``light=True`` only for :data:`LIGHT_EVENTS` (phases and reported
    metrics), which leaves the hot paths as fast as with nobody listening.
    """
    if not callable(callback):
        raise TypeError(f"events.subscribe: expected a callable, got {type(callback).__name__}")
    with _lock:
        (light_listeners if light else listeners).append(callback)
    return Subscription(callback, light)


def emit(event: Event) -> None:
    """Hand ``event`` to every listener.

    A listener that raises an ``Exception`` is reported on stderr and the
    engine carries on: a broken view must not corrupt a training run. Only
    ``BaseException``s that are not ``Exception``s (KeyboardInterrupt,
    SystemExit, the debugger's stop request) travel on to the caller.
    """
    targets = tuple(listeners)
    if light_listeners and type(event) in LIGHT_EVENTS:
        targets += tuple(light_listeners)
    for callback in targets:
        try:
            callback(event)
        except Exception:
            print(f"gradlab.events: listener {callback!r} failed on {type(event).__name__}; "
                  "the engine carries on:", file=sys.stderr)
            traceback.print_exc()
