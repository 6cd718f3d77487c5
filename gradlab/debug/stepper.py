"""Pause and resume a training thread from another thread.

The training thread pauses *inside an event listener*: the engine called the
session's listener to report an op, and the listener simply does not return
until the user says so. Control calls (``pause``, ``step``, ``resume``,
``stop``, ``release``) come from any thread (the app, a notebook), only flip a
few flags under a :class:`threading.Condition` and wake the waiter: they never
wait themselves.

A request made while the current iteration is not recorded in full (the
session listened lightly when it began) waits for the next iteration that is:
it is *gated*, so the graph the user steps through is always whole.

Never deadlock: the paused thread waits with a timeout and re-checks whether
it was released (the session detached) or asked to stop, so even a lost
wake-up costs at most a fraction of a second.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .. import events

__all__ = ["Stepper", "StopRun", "STEP_KINDS", "DetailSchedule"]

STEP_KINDS = ("op", "backward", "update", "iteration", "epoch")
"""Step granularities: the next forward op (outside an optimizer step), backward node,
optimizer update (one parameter's), iteration begun, epoch begun."""

_STEP_REASONS = {
    "op": "step: next op", "backward": "step: next backward node",
    "update": "step: next optimizer update", "iteration": "step: next iteration",
    "epoch": "step: next epoch",
}
_WAKE_EVERY = 0.25  # seconds: how often a paused thread re-checks its flags anyway


class StopRun(BaseException):
    """Raised on the training thread to stop a run the user stopped.

    A ``BaseException`` (not an ``Exception``) so that the event bus lets it
    through and a script's own ``except Exception:`` cannot swallow it.
    """


def program_op(event, recorder, in_backward: bool) -> bool:
    """An op of the program itself: not one a backward node or an optimizer step runs inside."""
    return isinstance(event, events.OpForward) and not in_backward and \
        not recorder.in_optimizer_step


def pausable(event, recorder, in_backward: bool) -> bool:
    """Where ``pause()`` may stop: a program op, a backward node, an optimizer update."""
    return program_op(event, recorder, in_backward) or \
        isinstance(event, (events.BackwardNode, events.OptimizerStep))


class Stepper:
    """What the user asked for (pause, a step, run, stop) and whether the run is paused now.

    ``request`` is None (run freely), ``"pause"`` (stop at the next pausable
    event) or one of :data:`STEP_KINDS`; ``gated``: it only counts from the
    next iteration recorded in full on (see the module docstring). The training
    thread calls :meth:`reason_to_pause` for each event and :meth:`hold` to wait there.
    """

    def __init__(self) -> None:
        self.condition = threading.Condition()
        self.request: str | None = None
        self.request_reason: str | None = None
        self.gated = False
        self.paused = False
        self.pause_reason: str | None = None
        self.stopping = False
        self.released = False  # the session detached: nobody will resume a paused run
        self.backward_depth = 0  # backward passes going on the run's thread

    @property
    def wants_every_event(self) -> bool:
        """Stepping or paused: the session must see every event."""
        return self.request is not None or self.paused

    # --- control: any thread, never waits -------------------------------------------------------
    def pause(self, reason: str = "paused", *, next_iteration: bool = False) -> None:
        """Pause at the next pausable event, or (``next_iteration``) where the next iteration
        recorded in full begins. Asked again while gated: at the next pausable event anyway
        (an iteration may never end)."""
        with self.condition:
            if not self.paused and not self.released:
                again = self.request is not None and self.gated
                self.request, self.request_reason = "pause", reason
                self.gated = next_iteration and not again

    def step(self, kind: str, *, next_iteration: bool = False) -> None:
        """Run to the next event of ``kind``; ``next_iteration``: counting from where the next
        iteration recorded in full begins (epochs begin between iterations: never gated)."""
        if kind not in STEP_KINDS:
            raise ValueError(f"step: kind must be one of {STEP_KINDS} (next op, backward node, "
                             f"optimizer update, iteration or epoch), got {kind!r}")
        with self.condition:
            if self.released:
                return
            self.request, self.request_reason = kind, _STEP_REASONS[kind]
            self.gated = next_iteration and kind != "epoch"
            self.paused = False
            self.condition.notify_all()

    def _go(self) -> None:
        """Drop any request and wake a paused run (call holding ``condition``)."""
        self.request = self.request_reason = None
        self.paused = self.gated = False
        self.condition.notify_all()

    def resume(self) -> None:
        with self.condition:
            self._go()

    def stop(self) -> None:
        with self.condition:
            self.stopping = True
            self._go()

    def release(self) -> None:
        """Let a paused run go on unobserved (the session detached)."""
        with self.condition:
            self.released = True
            self._go()

    def reset(self) -> None:
        """Back to running freely, for a new run or a new attach."""
        with self.condition:
            self.request = self.request_reason = self.pause_reason = None
            self.paused = self.stopping = self.released = self.gated = False
            self.backward_depth = 0
            self.condition.notify_all()

    def notify(self) -> None:
        """Wake whoever waits on the condition (a run ended)."""
        with self.condition:
            self.condition.notify_all()

    # --- the training thread ----------------------------------------------------------------------
    def check(self, event, recorder, breakpoints, worker: bool, epoch_before: int) -> str | None:
        """The reason to pause at ``event``, if any (every breakpoint sees every event).

        ``worker``: the event came from the session's run; others never pause.
        """
        reason = None
        for bp in breakpoints:
            found = bp.check(event, recorder)
            if found is not None and reason is None:
                reason = found
        if not worker:
            if reason is not None:
                recorder.log("break", f"{reason} (not paused: the event came from thread "
                                      f"{threading.current_thread().name!r}; only the "
                                      "session's run pauses, in its main thread)")
            return None
        step_reason = self.reason_to_pause(event, recorder, epoch_before)
        return None if self.released else reason or step_reason

    def reason_to_pause(self, event, recorder, epoch_before: int) -> str | None:
        """Whether the pending request is met by ``event`` (already handled by the recorder).

        Called for every event of the run's thread, so it also counts backward passes.
        """
        if type(event) is events.Phase:
            if event.kind == "backward_begin":
                self.backward_depth += 1
            elif event.kind == "backward_end":
                self.backward_depth = max(0, self.backward_depth - 1)
        request = self.request
        if request is None or self.released:
            return None
        if self.gated:
            if not (recorder.started_iteration and recorder.complete):
                return None
            self.gated = False  # this event counts: the iteration is recorded from its start
        in_backward = self.backward_depth > 0
        if request == "pause":
            hit = pausable(event, recorder, in_backward)
        elif request == "op":
            hit = program_op(event, recorder, in_backward)
        elif request == "backward":
            hit = isinstance(event, events.BackwardNode)
        elif request == "update":
            hit = isinstance(event, events.OptimizerStep)
        elif request == "iteration":
            hit = recorder.started_iteration
        else:  # epoch
            hit = recorder.epoch > epoch_before
        return self.request_reason if hit else None

    def hold(self, reason: str, on_change: Callable[[], None] | None = None) -> None:
        """Pause here (the training thread) until resumed, stepped, released or stopped.

        ``on_change`` runs when the thread pauses and when it goes on (the session
        bumps its version there). Raises :class:`StopRun` if the run was stopped.
        """
        with self.condition:
            if self.stopping:
                raise StopRun
            if self.released:
                return
            self.request = self.request_reason = None
            self.gated = False
            self.paused, self.pause_reason = True, reason
            self.condition.notify_all()
            if on_change is not None:
                on_change()
            while self.paused and not self.released and not self.stopping:
                self.condition.wait(_WAKE_EVERY)
            self.paused, self.pause_reason = False, None
            if on_change is not None:
                on_change()
            if self.stopping:
                raise StopRun

    def wait_paused(self, timeout: float | None, done: threading.Event | None) -> bool:
        """Wait until paused (True), or the run is done or ``timeout`` passes (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.condition:
            while not self.paused:
                if done is None or done.is_set() or self.released:
                    return False
                left = _WAKE_EVERY if deadline is None else deadline - time.monotonic()
                if left <= 0:
                    return False
                self.condition.wait(min(left, _WAKE_EVERY))
            return True


class DetailSchedule:
    """When a session running freely records an iteration in full (its cost rule).

    ``wanted``: record the current iteration in full, from one boundary (an
    optimizer's ``step_end``, or ``backward_end`` in loops with no optimizer)
    to the next one after an iteration began; then again ``interval`` seconds
    after the last time.
    """

    def __init__(self) -> None:
        self.wanted = True
        self.began = False  # an iteration began while wanted
        self.last = time.perf_counter()
        self._saw_step_end = False

    def restart(self, began: bool = False) -> None:
        """In full until the next boundary after an iteration began (``began``: it has)."""
        self.wanted, self.began = True, began

    def after(self, recorder) -> None:
        """Called after the recorder handled an event."""
        if self.wanted and recorder.started_iteration:
            self.began = True

    def phase(self, kind: str, interval: float) -> None:
        """A ``backward_end`` or ``step_end`` phase: maybe a boundary."""
        if kind == "step_end":
            self._saw_step_end = True
        if kind != ("step_end" if self._saw_step_end else "backward_end"):
            return
        now = time.perf_counter()
        if self.wanted and self.began:
            self.wanted = False
        if not self.wanted and now - self.last >= interval:
            self.wanted, self.began, self.last = True, False, now
