"""The debug session: listens to a training run, records it, and pauses it on request.

A :class:`Session` subscribes to the event bus. Each event is handed to a
:class:`~gradlab.debug.recorder.Recorder` (the live model of the run: graph,
memory, optimizers, losses) under the session's lock, then checked against the
step request and the breakpoints. When the run must pause, the listener waits
on the :class:`~gradlab.debug.stepper.Stepper` *without* the lock, so views can
still take snapshots, and control calls from any thread wake it.

Only the session's own runs (:meth:`Session.run_script`, :meth:`Session.run_function`)
are ever paused. Events from any other thread (a notebook's own loop) are
recorded and checked, but never block: nothing can deadlock a thread the
session did not start.

Cost: running freely with no breakpoint that needs every event, the session
listens only to the light events (phases and metrics) and switches to every
event for one iteration every ``detail_interval`` seconds, so views still get a
fresh full graph about ten times a second while training runs near full speed.
A pause or step asked for then waits for the next iteration recorded in full
from its start (see :mod:`gradlab.debug.stepper`).
"""

from __future__ import annotations

import threading

from .. import events
from .breakpoints import Breakpoint, NonFiniteBreakpoint, OpBreakpoint
from .recorder import Recorder
from .reporting import report
from .runner import ScriptRun, current_run
from .snapshot import Snapshot
from .stepper import STEP_KINDS, DetailSchedule, Stepper, StopRun

__all__ = ["Session", "DETACH_MODES"]

DETACH_MODES = ("continue", "stop")
_STOP_AT = (events.OpForward, events.BackwardNode, events.GradAccumulated, events.OptimizerStep,
            events.Phase)
"""Where a stop request is delivered (never at a Memory event: it may come from a __del__)."""


class Session:
    """Record a training run, pause it, step it; see the module docstring.

    ``with Session() as s:`` attaches for the block. ``s.run_script(path)`` or
    ``s.run_function(train)`` runs code in a worker thread that the session can
    pause; ``s.snapshot()`` gives views an immutable copy of what it knows.
    """

    def __init__(self, *, history: int = 8, detail_interval: float = 0.1,
                 max_graph_nodes: int = 5000, log_lines: int = 1000) -> None:
        if isinstance(detail_interval, bool) or not isinstance(detail_interval, (int, float)) \
                or not detail_interval >= 0:
            raise ValueError(f"Session: detail_interval must be seconds >= 0 (how often to record "
                             f"an iteration in full while running freely), got "
                             f"{detail_interval!r}")
        self.detail_interval = float(detail_interval)
        self._recorder = Recorder(history=history, max_graph_nodes=max_graph_nodes,
                                  log_lines=log_lines)
        self._lock = threading.RLock()
        self._stepper = Stepper()
        self._breakpoints: list[Breakpoint] = []
        self._subscription: events.Subscription | None = None
        self._detached = False  # detach("stop") while a run goes on: stop it, record nothing
        self._version = 0
        self._version_lock = threading.Lock()
        self._run: ScriptRun | None = None
        self._worker: threading.Thread | None = None
        self._local = threading.local()
        self._last_event = None
        self._paused_position = None
        self._paused_event = None
        self._detail = DetailSchedule()  # one iteration in full every detail_interval seconds

    # --- attaching --------------------------------------------------------------------------------
    def attach(self) -> Session:
        """Start listening (idempotent); returns the session."""
        with self._lock:
            if self._subscription is None:
                if self._run is None or self._run.done.is_set():
                    self._stepper.reset()
                self._detached = False
                self._detail.restart()
                full = self._wants_full()
                self._subscription = events.subscribe(self._on_event, light=not full)
                self._recorder.listening(full)
        self._bump()
        return self

    __enter__ = attach

    def __exit__(self, *exc) -> None:
        self.detach()

    def detach(self, mode: str = "continue") -> None:
        """Stop listening. ``"continue"``: a paused or running script runs on, unobserved;
        ``"stop"``: it is stopped at its next event (it ends with status "stopped")."""
        if mode not in DETACH_MODES:
            raise ValueError(f"detach: mode must be 'continue' (let the script run on) or "
                             f"'stop' (stop it at its next event), got {mode!r}")
        with self._lock:
            if mode == "stop" and self._run_alive():
                self._detached = True  # the subscription goes when the run ends (_run_ended)
                self._stepper.stop()
                self._run.request_stop()
                self._set_light(False)  # so the very next op delivers the stop
            else:
                self._stepper.release()
                self._unsubscribe()
        self._bump()

    def _unsubscribe(self) -> None:
        if self._subscription is not None:
            self._subscription.remove()
            self._subscription = None
            self._recorder.listening(False)

    @property
    def attached(self) -> bool:
        return self._subscription is not None and not self._detached

    # --- reading --------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        """Grows with every recorded change: poll it, take a snapshot when it moved."""
        return self._version

    def _bump(self) -> None:
        with self._version_lock:
            self._version += 1

    @property
    def status(self) -> str:
        run = self._run
        if run is None:
            return "idle"
        if self._stepper.paused:
            return "paused"
        return run.status if run.status in ("finished", "failed", "stopped") else "running"

    def snapshot(self) -> Snapshot:
        """A consistent, immutable copy of everything the session knows (any thread)."""
        with self._lock:
            version, status = self._version, self.status
            run, stepper = self._run, self._stepper
            if status == "paused":
                position = self._paused_position
            else:
                last = self._last_event
                position = None if last is None else self._recorder.position(last)
            return self._recorder.snapshot(
                version=version, status=status, position=position,
                pause_reason=stepper.pause_reason if status == "paused" else None,
                output="" if run is None else run.output,
                error=None if run is None else run.traceback,
                breakpoints=tuple(bp.describe() for bp in self._breakpoints))

    @property
    def light(self) -> bool:
        """Whether the session listens to the light events only now (see the module docstring)."""
        sub = self._subscription
        return sub is not None and sub.light

    @property
    def paused_event(self):
        """The event the run is paused at (live: its TensorRefs reach the tensors), or None."""
        return self._paused_event if self._stepper.paused else None

    @property
    def recorder(self) -> Recorder:
        """The live model (read it under no assumptions while a run goes: prefer snapshot())."""
        return self._recorder

    @property
    def run(self) -> ScriptRun | None:
        return self._run

    @property
    def waits_for_next_iteration(self) -> bool:
        """True while a pause or step waits for the next whole iteration (see :meth:`pause`)."""
        return bool(self._stepper.gated) and not self._stepper.paused

    def watch(self, *modules) -> None:
        """Learn parameter names ("fc1.weight") from these nn.Modules."""
        for module in modules:
            if not hasattr(module, "named_parameters"):
                raise TypeError(f"watch: expected nn.Module objects, got {type(module).__name__}")
        with self._lock:
            for module in modules:
                self._recorder.learn_names(module)
        self._bump()

    # --- control: any thread, never waits for the training thread ------------------------------
    def _run_alive(self) -> bool:
        run = self._run
        return run is not None and not run.done.is_set()

    def _gate(self) -> bool:
        """Whether a pause or step must wait for the next iteration recorded in full."""
        stepper = self._stepper  # asked again while gated: go on at once (may never end)
        gate = not (stepper.paused or stepper.gated) and \
            (self.light or not self._recorder.complete)
        if gate:
            self._recorder.log("break", f"iteration {self._recorder.iteration} was not recorded "
                                        "in full: going on to where the next one begins")
        return gate

    def pause(self) -> None:
        """Pause at the next op, backward node or optimizer update (no-op with no run going).

        If the current iteration is not recorded in full (running freely, the session
        listened lightly when it began), it records in full from now on and pauses where
        the next iteration begins; asked again before that, at the next such event.
        """
        with self._lock:
            if self._run_alive():
                self._stepper.pause(next_iteration=self._gate())
                self._set_light(False)

    def resume(self) -> None:
        """Continue until a breakpoint (or the end)."""
        with self._lock:
            self._detail.restart(began=True)  # full until the iteration ends
        self._stepper.resume()

    def step(self, kind: str) -> None:
        """Run to the next op / backward node / update / iteration / epoch (see STEP_KINDS);
        counted from where the next iteration begins if this one is not recorded in full."""
        if kind not in STEP_KINDS:
            raise ValueError(f"step: kind must be one of {STEP_KINDS} (next op, backward node, "
                             f"optimizer update, iteration or epoch), got {kind!r}")
        with self._lock:
            if self._run_alive():
                gate = kind != "epoch" and self._gate()
                self._set_light(False)
                self._stepper.step(kind, next_iteration=gate)

    def stop(self) -> None:
        """Stop the run at its next event (StopRun, which a script's ``except`` can't catch);
        a run busy in its own Python code is stopped between two statements (see
        :meth:`ScriptRun.request_stop`)."""
        with self._lock:
            if self._run_alive():
                self._set_light(False)
                self._stepper.stop()
                self._run.request_stop()

    def wait_paused(self, timeout: float | None = None) -> bool:
        """Wait until the run pauses: True if it is paused, False on timeout or its end."""
        run = self._run
        return self._stepper.wait_paused(timeout, None if run is None else run.done)

    def wait_finished(self, timeout: float | None = None) -> bool:
        """Wait for the run to end: True if it has (or there is none)."""
        run = self._run
        return True if run is None else run.done.wait(timeout)

    # --- breakpoints ------------------------------------------------------------------------------
    def add_breakpoint(self, bp: Breakpoint) -> Breakpoint:
        if not isinstance(bp, Breakpoint):
            raise TypeError(f"add_breakpoint: expected a breakpoint such as OpBreakpoint('relu') "
                            f"or NonFiniteBreakpoint(), got {type(bp).__name__}")
        with self._lock:
            if bp not in self._breakpoints:
                self._breakpoints.append(bp)
            self._update_subscription()
        self._bump()
        return bp

    def remove_breakpoint(self, bp: Breakpoint) -> None:
        with self._lock:
            if bp not in self._breakpoints:
                raise ValueError(f"remove_breakpoint: {bp!r} is not set; session.breakpoints "
                                 "lists the ones that are")
            self._breakpoints.remove(bp)
            self._update_subscription()
        self._bump()

    @property
    def breakpoints(self) -> list[Breakpoint]:
        return list(self._breakpoints)

    def toggle_op_breakpoint(self, op: str) -> bool:
        """Set a breakpoint on op ``op`` (forward and backward), or clear it; True: now set."""
        with self._lock:
            found = [bp for bp in self._breakpoints
                     if isinstance(bp, OpBreakpoint) and bp.op == op]
            for bp in found:
                self.remove_breakpoint(bp)
            if not found:
                self.add_breakpoint(OpBreakpoint(op))
            return not found

    @property
    def break_on_nonfinite(self) -> bool:
        return any(isinstance(bp, NonFiniteBreakpoint) for bp in self._breakpoints)

    @break_on_nonfinite.setter
    def break_on_nonfinite(self, value: bool) -> None:
        with self._lock:
            if value and not self.break_on_nonfinite:
                self.add_breakpoint(NonFiniteBreakpoint())
            elif not value:
                for bp in self.breakpoints:
                    if isinstance(bp, NonFiniteBreakpoint):
                        self.remove_breakpoint(bp)

    # --- running code -----------------------------------------------------------------------------
    def run_script(self, path: str, args=(), *, pause_at_start: bool = False) -> ScriptRun:
        """Run a script as ``python path args`` would, in a worker thread the session can pause."""
        return self._start(ScriptRun.for_script(path, args, **self._run_options()),
                           pause_at_start)

    def run_function(self, fn, *args, pause_at_start: bool = False, **kwargs) -> ScriptRun:
        """Run ``fn(*args, **kwargs)`` in a worker thread the session can pause."""
        return self._start(ScriptRun.for_function(fn, args, kwargs, **self._run_options()),
                           pause_at_start)

    def report(self, **values) -> None:
        """Report numbers by name; see :func:`report`."""
        report(**values)

    def _run_options(self) -> dict:
        return {"on_output": self._on_output, "on_end": self._run_ended}

    def _start(self, run: ScriptRun, pause_at_start: bool) -> ScriptRun:
        with self._lock:
            if self._run_alive():
                raise RuntimeError(f"Session: {self._run.name} is still running (status "
                                   f"{self.status}); stop() it or wait_finished() first")
            self.attach()
            self._stepper.reset()
            if pause_at_start:
                self._stepper.pause("paused at the start")
            self._run, self._worker = run, run.thread
            self._recorder.log("phase", f"run {run.name} started")
            self._update_subscription()
            run.start()
        self._bump()
        return run

    def _run_ended(self, run: ScriptRun) -> None:
        """Called on the worker thread as the run ends."""
        with self._lock:
            if run.status == "failed" and run.traceback:
                self._recorder.log("error", run.traceback.rstrip().splitlines()[-1])
            if run.status == "stopped" and run.interrupted:
                self._recorder.log("phase", f"{run.name} was busy in its own code, with no "
                                            "gradlab op to stop at: stopped between two of its "
                                            "statements")
            self._recorder.log("phase", f"run {run.name} {run.status}")
            if self._worker is run.thread:
                self._worker = None
            if self._detached:
                self._unsubscribe()
                self._detached = False
            self._stepper.reset()  # a stop or pause request ends with its run
            self._update_subscription()
        self._stepper.notify()
        self._bump()

    def _on_output(self, text: str) -> None:
        with self._lock:
            for line in text.splitlines():
                if line.strip():
                    self._recorder.log("output", line)
        self._bump()

    # --- the listener (runs on whichever thread did the work) -------------------------------------
    def _on_event(self, event) -> None:
        if type(event) is events.Memory:  # no place to pause; may come from __del__, mid-event
            if not self._detached:
                with self._lock:
                    self._recorder.handle(event)
                self._bump()
            return
        local = self._local
        if getattr(local, "busy", False):
            return  # an event caused by our own recording
        run = current_run()  # the run this thread belongs to: a stopped one ends here
        if run is not None and run.stopping:
            if type(event) in _STOP_AT:
                raise StopRun
            return
        worker = threading.current_thread() is self._worker
        if self._detached:
            return
        recorder = self._recorder
        sub = self._subscription
        local.busy = True
        try:
            with self._lock:
                recorder.full = sub is None or not sub.light  # light: no graph, memory sampled
                epoch_before = recorder.epoch
                recorder.handle(event)
                self._last_event = event
                self._detail.after(recorder)
                reason = self._stepper.check(event, recorder, self._breakpoints, worker,
                                             epoch_before)
                if type(event) is events.Phase:
                    self._at_boundary(event)
                if reason is not None:
                    self._paused_event = event
                    self._paused_position = recorder.position(event)
                    recorder.log("break", f"paused: {reason}")
        finally:
            local.busy = False
            self._bump()
        if reason is not None:
            self._stepper.hold(reason, self._bump)
            with self._lock:
                self._update_subscription()

    def _at_boundary(self, event) -> None:
        """Phases: end or begin an iteration recorded in full detail."""
        if event.kind in ("backward_end", "step_end"):
            self._detail.phase(event.kind, self.detail_interval)
            self._update_subscription()

    def _wants_full(self) -> bool:
        return (self._detail.wanted or self._stepper.wants_every_event or
                self._stepper.stopping or
                any(bp.wants_full(self._recorder) for bp in self._breakpoints))

    def _update_subscription(self) -> None:
        self._set_light(not self._wants_full())

    def _set_light(self, light: bool) -> None:
        """Switch the subscription (under the lock: the recorder is told)."""
        sub = self._subscription
        if sub is not None and sub.active and sub.light != light:
            sub.light = light
            self._recorder.listening(not light)

    def __repr__(self) -> str:
        return f"<gradlab.debug.Session {self.status}, version {self._version}>"
