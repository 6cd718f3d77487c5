"""The Recorder: every event of a run turned into the model a debugger shows.

It runs on the training thread (inside the event listener, under the
session's lock) and keeps, all bounded:

* the graph of the current iteration (:class:`~gradlab.debug.graph.IterationGraph`)
  and the frozen graphs of the last ``history`` iterations;
* iteration and epoch counters, where the run is (:meth:`Recorder.position`);
* memory per device and category over time, each optimizer's state;
* the losses (a scalar root of ``backward()``, or reported) and reported metrics;
* a log of the event stream, one short line per event.

One rule makes iterations, whatever the loop looks like: an iteration begins
at the first op that records a graph node after a backward pass ended (or
at the very first such op). Its backward, the optimizer step, ``no_grad``
updates and ``zero_grad`` belong to it until the next one begins. While the
debugger listens lightly (phases and metrics only) there are no op events:
then ``backward_begin`` with no iteration begun marks the new iteration.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from numbers import Real

from .. import events
from .graph import IterationGraph, shape_label
from .positions import describe, short
from .snapshot import LogLine, Position, Snapshot
from .tracking import MemoryTracker, OptimizerTracker

__all__ = ["Recorder"]

BIG_ALLOCATION = 8 << 20
"""Memory events of at least this many bytes go to the log (the others are too many)."""


def _scalar_of(ref) -> float | None:
    """The value of a one-element root tensor (a loss), read from its raw array."""
    t = None if ref is None else ref.tensor
    if t is None or t._data.size != 1:
        return None
    try:
        return float(t._data.reshape(-1)[0].item())
    except (TypeError, ValueError):
        return None


def _is_parameter(tensor) -> bool:
    from ..nn.parameter import Parameter

    return isinstance(tensor, Parameter)


class Recorder:
    """Turns events into the live model a session shows (see the module docstring).

    Call :meth:`handle` with every event (subscribe it to the bus). ``full``
    says whether the caller listens to every event (True) or lightly; tell it
    with :meth:`listening` when switching: while light, memory is sampled at
    phases and no graph is built.

    What the stepper and breakpoints read: ``iteration``, ``epoch``,
    ``last_loss``; ``started_iteration`` (the last event began an iteration);
    ``in_optimizer_step`` (between an optimizer's ``step`` and ``step_end``
    phases); ``in_backward`` (between ``backward_begin`` and ``backward_end``:
    ops then run inside backward nodes, not in the program); ``complete`` (the
    current iteration is recorded in full, from its first op); and
    :meth:`key_for_node`, :meth:`position`.
    """

    def __init__(self, *, history: int = 8, max_graph_nodes: int = 5000, log_lines: int = 1000,
                 memory_points: int = 600, loss_points: int = 10_000, summaries: bool = True,
                 clock=time.perf_counter, memory_interval: float = 0.05,
                 rate_window: int = 20, metric_names: int = 64) -> None:
        self.clock = clock
        self.max_graph_nodes = max_graph_nodes
        self.summaries = summaries
        self.full = True
        self.start = clock()
        # what the stepper and breakpoints read
        self.iteration = 0
        self.epoch = 0
        self.in_optimizer_step = False
        self.in_backward = False
        self.last_loss: float | None = None
        self.started_iteration = False
        self.current: str | None = None  # graph key of the node the run is at
        # the model
        self.graph: IterationGraph | None = None
        self.history: deque = deque(maxlen=history)
        self.names: dict[int, str] = {}  # id(parameter) -> "fc1.weight"
        self.losses: deque = deque(maxlen=loss_points)
        self.metrics: dict[str, deque] = {}
        self.log_lines: deque = deque(maxlen=log_lines)
        self.memory = MemoryTracker(points=memory_points, interval=memory_interval,
                                    start=self.start)
        self.optimizers = OptimizerTracker()
        self._loss_points = loss_points
        self._metric_names = metric_names
        self._awaiting = True  # no iteration begun since the last backward ended
        self._epoch_source: int | None = None
        self._epoch_reported = False
        self._loss_reported = False
        self._iteration_times: deque = deque(maxlen=rate_window)
        self._scanned = -1  # the iteration whose frames were searched for modules
        self._seq = 0
        self._busy = False  # handling an event (a Memory event now is a nested one)
        self._handlers = {
            events.OpForward: self._on_op, events.BackwardNode: self._on_backward,
            events.GradAccumulated: self._on_grad,
            events.Phase: self._on_phase, events.OptimizerStep: self._on_update,
            events.Metric: self._on_metric,
        }

    # --- the listener ----------------------------------------------------------------------
    def handle(self, event) -> None:
        """Record ``event`` (any event, full or light).

        ``Memory`` events can arrive in the middle of another event's handling
        (a tensor freed by the garbage collector): such a nested event leaves
        ``started_iteration`` alone, so it still describes the outer event.
        """
        kind = type(event)
        if kind is events.Memory:
            if not self._busy:
                self.started_iteration = False
            self._on_memory(event)
            return
        self.started_iteration = False
        self._seq = event.seq
        handler = self._handlers.get(kind)
        if handler is not None:
            self._busy = True
            try:
                handler(event)
            finally:
                self._busy = False

    def log(self, kind: str, text: str) -> None:
        """Add a line to the log (``kind`` as in :class:`~gradlab.debug.snapshot.LogLine`)."""
        self.log_lines.append(LogLine(self._seq, kind, text))

    def listening(self, full: bool) -> None:
        """The caller now listens to every event (True), or lightly or not at all (False):
        going light before the iteration's backward ended leaves its graph partial."""
        graph = self.graph
        if not full and not self._awaiting and graph is not None and \
                graph.iteration == self.iteration:
            graph.partial = True
        self.full = full

    @property
    def complete(self) -> bool:
        """Whether the current iteration is recorded in full: listening to every event, and
        its graph holds every op it ran (none ran before the recording began)."""
        if not self.full:
            return False
        graph = self.graph
        if graph is None:
            return self.iteration == 0
        return graph.iteration == self.iteration and not graph.partial

    def sample_memory(self) -> None:
        """Read the memory totals of every device now (for light listening)."""
        self.memory.sample(self.clock())

    # --- names -----------------------------------------------------------------------------
    def learn_names(self, module) -> None:
        """Name the parameters of ``module`` by their paths in it (``"0.weight"``)."""
        for name, p in module.named_parameters():
            self.names[id(p)] = name

    def _scan_frames(self) -> None:
        """Find the nn.Modules the training thread's frames hold; learn names, biggest first."""
        from ..nn import Module

        found: dict[int, object] = {}
        frame = sys._getframe(1)
        while frame is not None:
            try:
                values = list(frame.f_locals.values())
            except Exception:  # an exotic frame: nothing to learn there
                values = ()
            for value in values:
                if isinstance(value, Module):
                    found.setdefault(id(value), value)
            frame = frame.f_back
        for module in sorted(found.values(), key=lambda m: -sum(1 for _ in m.modules())):
            for name, p in module.named_parameters():
                self.names.setdefault(id(p), name)

    def name_of(self, tensor) -> str | None:
        """A parameter's name, if a module names it (frames are searched once per iteration)."""
        name = self.names.get(id(tensor))
        if name is None and self._scanned != self.iteration and _is_parameter(tensor):
            self._scanned = self.iteration
            self._scan_frames()
            name = self.names.get(id(tensor))
        return name

    def label(self, ref) -> str:
        """What to call the tensor behind a TensorRef: its parameter name, its name, its shape."""
        t = ref.tensor
        name = self.name_of(t) if t is not None else None
        return name or ref.name or "param " + shape_label(ref.shape)

    # --- iterations ------------------------------------------------------------------------
    def _begin_iteration(self, with_graph: bool) -> None:
        self.iteration += 1
        self.started_iteration = True
        self._awaiting = False
        self._iteration_times.append(self.clock())
        if with_graph:
            self._new_graph()
        self.log("phase", f"iteration {self.iteration} begins")

    def _new_graph(self) -> IterationGraph:
        old = self.graph
        if old is not None and len(old):
            self.history.append(old.freeze(self.current))
        self.current = None
        self.graph = IterationGraph(self.iteration, max_nodes=self.max_graph_nodes,
                                    summaries=self.summaries, name_of=self.name_of)
        return self.graph

    def _graph_now(self) -> IterationGraph:
        """The current iteration's graph (an event came without the op that starts one)."""
        if self._awaiting:
            self._begin_iteration(True)
        graph = self.graph
        if graph is None or graph.iteration != self.iteration:
            graph = self._new_graph()
        return graph

    def key_for_node(self, node_id: int) -> str | None:
        """The graph key (``"op3"``) of an autograd node of the current iteration."""
        graph = self.graph
        return None if graph is None else graph.by_node_id.get(node_id)

    @property
    def steps_per_second(self) -> float | None:
        times = self._iteration_times
        if len(times) < 2 or times[-1] <= times[0]:
            return None
        return (len(times) - 1) / (times[-1] - times[0])

    # --- one method per event type ---------------------------------------------------------
    def _on_op(self, event) -> None:
        op = event.op
        if event.node_id is None and (self.in_optimizer_step or not _carries_tangent(event)):
            where = " (optimizer step)" if self.in_optimizer_step else " (no graph)"
            self.log_lines.append(LogLine(event.seq, "op", op + where))
            return
        if self._awaiting:
            self._begin_iteration(True)
        graph = self.graph
        if graph is None or graph.iteration != self.iteration:
            graph = self._new_graph()
        key = graph.add_op(event)
        self.current = key
        text = f"forward {op} ({key})"
        if event.module:
            text += f" in {event.module}"
        if event.outputs:
            text += " -> " + shape_label(event.outputs[0].shape)
        self.log_lines.append(LogLine(event.seq, "op", text))

    def _on_backward(self, event) -> None:
        key = self._graph_now().mark_backward(event)
        self.current = key
        self.log_lines.append(LogLine(event.seq, "backward", f"backward {event.op} ({key})"))

    def _on_grad(self, event) -> None:
        key = self._graph_now().grad_accumulated(event)
        self.current = key
        label = self.label(event.tensor)
        self.log_lines.append(LogLine(event.seq, "grad", f"grad of {label} "
                                      f"{shape_label(event.grad.shape)}"))

    def _on_memory(self, event) -> None:
        self.memory.on_event(event, self.clock())
        if event.nbytes >= BIG_ALLOCATION:
            self.log_lines.append(LogLine(
                event.seq, "memory", f"{event.action} {event.nbytes / 2**20:.1f} MiB on "
                                     f"{event.device} ({event.category})"))

    def _on_update(self, event) -> None:
        name = self.label(event.param)
        state = self.optimizers.on_update(event, name)
        graph = self.graph
        param = event.param.tensor
        if graph is not None and param is not None:
            self.current = graph.key_for_tensor(param) or self.current
        text = f"{event.optimizer} update of {name}"
        if state.grad_norm is not None:
            text += f": |grad| {short(state.grad_norm)}"
        if state.update_norm is not None:
            text += f", |update| {short(state.update_norm)}"
        self.log_lines.append(LogLine(event.seq, "update", text))

    def _on_phase(self, event) -> None:
        kind = event.kind
        if not self.full:
            self.sample_memory()
        if kind == "backward_begin":
            self.in_backward = True
            if self._awaiting:
                self._begin_iteration(self.full)
            loss = _scalar_of(event.roots[0]) if len(event.roots) == 1 else None
            if self.full:
                graph = self._graph_now()
                graph.add_roots(event.roots)
            if loss is not None and not self._loss_reported:
                self._record_loss(loss)
            self.log("phase", "backward begins" + (f" (loss {short(loss)})"
                                                   if loss is not None else ""))
        elif kind == "backward_end":
            self.in_backward = False
            self._awaiting = True
            self.log("phase", "backward done")
        elif kind == "step":
            self.in_optimizer_step = True
            self.optimizers.on_step(event)
            self.log("phase", f"{self.optimizer_name(event)} step {event.iteration} begins")
        elif kind == "step_end":
            self.in_optimizer_step = False
            self.log("phase", f"{self.optimizer_name(event)} step {event.iteration} done")
        elif kind == "epoch":
            if self._epoch_source is None:
                self._epoch_source = event.source
            if event.source == self._epoch_source and not self._epoch_reported:
                self.epoch += 1
            self.log("phase", f"epoch {event.iteration} of loader {event.source} begins")
        else:
            self.log("phase", kind)

    def optimizer_name(self, event) -> str:
        """The class name of the optimizer that emitted ``event`` ("Adam")."""
        return self.optimizers.name_of(event.source) or "optimizer"

    def _on_metric(self, event) -> None:
        parts = []
        for name, value in event.values.items():
            if isinstance(value, bool) or not isinstance(value, Real):
                continue
            value = float(value)
            parts.append(f"{name}={short(value)}")
            if name == "loss":
                self._loss_reported = True
                self._record_loss(value)
            elif name == "epoch":
                self._epoch_reported = True
                self.epoch = int(value)
            series = self.metrics.get(name)
            if series is None:
                if len(self.metrics) >= self._metric_names:
                    continue
                series = self.metrics[name] = deque(maxlen=self._loss_points)
            series.append((self.iteration, value))
        self.log("metric", "reported " + ", ".join(parts) if parts else "reported nothing")

    def _record_loss(self, value: float) -> None:
        self.last_loss = value
        losses = self.losses
        if losses and losses[-1][0] == self.iteration:
            losses[-1] = (self.iteration, value)
        else:
            losses.append((self.iteration, value))
        graph = self.graph
        if graph is not None and graph.iteration == self.iteration:
            graph.loss = value

    # --- where the run is ------------------------------------------------------------------
    def position(self, event) -> Position | None:
        """Where ``event`` is, in words (None for events that are not places: memory)."""
        return describe(event, self)

    # --- the frozen view -------------------------------------------------------------------
    def snapshot(self, *, version: int, status: str, position, pause_reason, output: str,
                 error: str | None, breakpoints: tuple[str, ...]) -> Snapshot:
        """Everything recorded, frozen (no live tensors), with what the session adds."""
        graph = self.graph
        return Snapshot(
            version, status, self.iteration, self.epoch, position, pause_reason,
            None if graph is None else graph.freeze(self.current), tuple(self.history),
            self.memory.snapshot(), self.optimizers.snapshot(), tuple(self.losses),
            {name: tuple(series) for name, series in list(self.metrics.items())},
            self.steps_per_second, tuple(self.log_lines), output, error, tuple(breakpoints))


def _carries_tangent(event) -> bool:
    """Forward mode: does an op without a backward node give its outputs tangents? Such
    ops join the graph, so the app shows the tangents travelling through them."""
    for ref in event.outputs:
        live = ref.tensor
        if live is not None and live.__dict__.get("_tangent") is not None:
            return True
    return False
