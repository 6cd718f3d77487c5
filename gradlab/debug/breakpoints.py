"""Breakpoints: conditions on events that pause a training run.

A breakpoint looks at each event after the session's recorder has handled it
and answers with a pause reason ("NaN in the output of log (op2)") or None.
It may read the recorder's counters (``iteration``, ``started_iteration``,
``in_optimizer_step``, ``last_loss``) and ``key_for_node``, but never changes
anything: the session does the pausing.

``needs_full_events`` says whether the breakpoint must see every op, backward
node and gradient. While none does, a session running freely listens only to
the light events (phases and metrics), which keeps training at full speed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .. import events
from ..ops._util import array_norm

__all__ = [
    "Breakpoint", "OpBreakpoint", "ModuleBreakpoint", "TensorBreakpoint",
    "NonFiniteBreakpoint", "GradNormBreakpoint", "IterationBreakpoint", "LossBreakpoint",
]

OP_PHASES = ("both", "forward", "backward")


class Breakpoint:
    """Base class: ``check(event, recorder)`` returns the pause reason, or None.

    ``check`` sees every event the session receives, phases included.
    """

    needs_full_events: bool = True

    def describe(self) -> str:
        raise NotImplementedError

    def check(self, event, recorder) -> str | None:
        raise NotImplementedError

    def wants_full(self, recorder) -> bool:
        """Whether the session should listen to every event right now (checked at boundaries)."""
        return self.needs_full_events

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"


def _program_op(event, recorder) -> bool:
    """An op of the program itself, not one that backward() or an optimizer step runs inside
    (those are looked at as backward nodes and updates)."""
    return isinstance(event, events.OpForward) and not recorder.in_backward and \
        not recorder.in_optimizer_step


def _op_label(event, recorder) -> str:
    """'relu (op3)': the event's op and its graph node key, when it has one."""
    key = recorder.key_for_node(event.node_id) if event.node_id is not None else None
    return f"{event.op} ({key})" if key else event.op


def _where(event, recorder) -> str:
    """'forward of relu (op3)' / 'backward of mul (op4)': the event's op, in words."""
    part = "forward" if isinstance(event, events.OpForward) else "backward"
    return f"{part} of {_op_label(event, recorder)}"


def _label(ref) -> str:
    return ref.name if ref.name else f"tensor {tuple(ref.shape)}"


class OpBreakpoint(Breakpoint):
    """Pause each time an op with this name runs forward, backward, or both."""

    def __init__(self, op: str, phase: str = "both") -> None:
        if not isinstance(op, str) or not op:
            raise TypeError(f"OpBreakpoint: op must be an op name such as 'relu' or 'matmul', "
                            f"got {op!r}")
        if phase not in OP_PHASES:
            raise ValueError(f"OpBreakpoint: phase must be one of {OP_PHASES}, got {phase!r}")
        self.op = op
        self.phase = phase

    def describe(self) -> str:
        phase = "forward and backward" if self.phase == "both" else self.phase
        return f"op {self.op} ({phase})"

    def check(self, event, recorder) -> str | None:
        if _program_op(event, recorder):
            if self.phase == "backward":
                return None
        elif isinstance(event, events.BackwardNode):
            if self.phase == "forward":
                return None
        else:
            return None
        if event.op != self.op:
            return None
        return f"breakpoint: op {self.op}, at the {_where(event, recorder)}"


class ModuleBreakpoint(Breakpoint):
    """Pause when the run enters a module (or a module below it), forward or backward.

    It fires at the first op of each stretch of ops inside the module, not at
    every op in it: stepping with ``n`` goes through the rest.
    """

    def __init__(self, path: str) -> None:
        if not isinstance(path, str) or not path:
            raise TypeError(f"ModuleBreakpoint: path must be a module path such as 'fc1' or "
                            f"'encoder.0', as named by model.named_modules(), got {path!r}")
        self.path = path
        self._inside = False

    def describe(self) -> str:
        return f"module {self.path}"

    def _matches(self, module: str | None) -> bool:
        return module is not None and (module == self.path or
                                       module.startswith(self.path + "."))

    def check(self, event, recorder) -> str | None:
        if not _program_op(event, recorder) and not isinstance(event, events.BackwardNode):
            return None
        inside, was_inside = self._matches(event.module), self._inside
        self._inside = inside
        if inside and not was_inside:
            return f"breakpoint: module {self.path}, at the {_where(event, recorder)}"
        return None


class TensorBreakpoint(Breakpoint):
    """Pause when an op reads or writes a tensor with this ``.name``, or its grad accumulates."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"TensorBreakpoint: name must be a tensor's name (set it with "
                            f"t.name = 'x'), got {name!r}")
        self.name = name

    def describe(self) -> str:
        return f"tensor {self.name!r}"

    def check(self, event, recorder) -> str | None:
        if _program_op(event, recorder):
            if any(ref.name == self.name for ref in event.inputs):
                return f"breakpoint: tensor {self.name!r} read by the {_where(event, recorder)}"
            if any(ref.name == self.name for ref in event.outputs):
                return (f"breakpoint: tensor {self.name!r} written by the "
                        f"{_where(event, recorder)}")
        elif isinstance(event, events.GradAccumulated) and event.tensor.name == self.name:
            return f"breakpoint: gradient of tensor {self.name!r} accumulated"
        return None


def _array(ref):
    """The raw array behind a TensorRef, or None (freed, or not floating point)."""
    if ref is None:
        return None
    tensor = ref.tensor
    if tensor is None:
        return None
    data = tensor._data
    return data if data.dtype.kind in "fc" else None


def _all_finite(data) -> bool:
    from ..ops._util import xp_for

    return bool(xp_for(data).isfinite(data).all())


def _what_bad(data) -> str:
    """'NaN' / 'Inf' / 'NaN and Inf', with counts: read only when something is wrong."""
    from ..ops._util import xp_for

    xp = xp_for(data)
    nan, inf = int(xp.isnan(data).sum()), int(xp.isinf(data).sum())
    if nan and inf:
        return f"NaN and Inf ({nan} NaN, {inf} Inf of {data.size} values)"
    return f"{'NaN' if nan else 'Inf'} ({nan or inf} of {data.size} values)"


class NonFiniteBreakpoint(Breakpoint):
    """Pause where NaN or Inf first appears: in an op's output, a backward gradient or a .grad.

    It pauses at the op that *produced* the bad values, not at every op they
    flow through afterwards: an output counts only when no input was already
    seen to be bad (inputs are read only when an output is bad, so a healthy
    run pays one ``isfinite`` pass per value). The set of bad tensors is
    forgotten when a new iteration begins, so a parameter that went NaN in an
    update is reported again at its first use.
    """

    def __init__(self) -> None:
        self._bad: set[int] = set()  # ids of tensors seen holding NaN/Inf this iteration
        self._bad_in_backward = False

    def describe(self) -> str:
        return "NaN/Inf in any value or gradient"

    def _first_bad(self, refs: Iterable) -> tuple[int, object] | None:
        for k, ref in enumerate(refs):
            data = _array(ref)
            if data is not None and not _all_finite(data):
                return k, data
        return None

    def _mark(self, refs: Iterable) -> None:
        if len(self._bad) > 10_000:
            self._bad.clear()
        self._bad.update(ref.id for ref in refs if ref is not None)

    def check(self, event, recorder) -> str | None:
        if recorder.started_iteration:
            self._bad.clear()
        if isinstance(event, events.OpForward) and not recorder.in_backward:  # optimizer's too
            found = self._first_bad(event.outputs)
            if found is None:
                return None
            inherited = any(ref.id in self._bad for ref in event.inputs)
            self._mark(event.outputs)
            if inherited:
                return None
            k, data = found
            which = "output" if len(event.outputs) == 1 else f"output {k}"
            text = f"{_what_bad(data)} in the {which} of {_op_label(event, recorder)}"
            bad_input = self._first_bad(event.inputs)
            if bad_input is not None:
                ref = event.inputs[bad_input[0]]
                text += f"; its input {_label(ref)} already held {_what_bad(bad_input[1])}"
            return text
        if isinstance(event, events.OpForward):  # inside backward(): follow the bad values
            if self._bad and any(ref.id in self._bad for ref in event.inputs):
                self._mark(event.outputs)
            return None
        if isinstance(event, events.BackwardNode):
            found = self._first_bad(event.grad_inputs)
            if found is None:
                return None
            self._bad_in_backward = True
            inherited = any(ref is not None and ref.id in self._bad for ref in event.grad_outputs)
            self._mark(event.grad_inputs)
            if inherited:
                return None
            k, data = found
            text = (f"{_what_bad(data)} in the gradient that the {_where(event, recorder)} "
                    f"sends to its input {k}")
            bad_in = self._first_bad(event.grad_outputs)
            if bad_in is not None:
                text += f"; the gradient coming in already held {_what_bad(bad_in[1])}"
            return text
        if isinstance(event, events.GradAccumulated):
            data = _array(event.grad)
            if data is None or _all_finite(data) or self._bad_in_backward:
                return None
            return f"{_what_bad(data)} in the .grad of {_label(event.tensor)}"
        if isinstance(event, events.Phase) and event.kind == "backward_begin":
            self._bad_in_backward = False
        return None


class GradNormBreakpoint(Breakpoint):
    """Pause when a gradient's 2-norm goes above ``threshold`` (once per backward pass)."""

    def __init__(self, threshold: float) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or \
                not threshold >= 0:
            raise ValueError(f"GradNormBreakpoint: threshold must be a number >= 0 (the largest "
                             f"gradient 2-norm you expect), got {threshold!r}")
        self.threshold = float(threshold)
        self._fired = False

    def describe(self) -> str:
        return f"gradient norm > {self.threshold:g}"

    def check(self, event, recorder) -> str | None:
        if isinstance(event, events.Phase) and event.kind == "backward_begin":
            self._fired = False
        if self._fired:
            return None
        if isinstance(event, events.BackwardNode):
            for k, ref in enumerate(event.grad_inputs):
                data = _array(ref)
                if data is not None and (norm := array_norm(data)) > self.threshold:
                    self._fired = True
                    return (f"breakpoint: gradient norm {norm:.4g} > {self.threshold:g}, sent "
                            f"by the {_where(event, recorder)} to its input {k}")
        elif isinstance(event, events.GradAccumulated):
            data = _array(event.grad)
            if data is not None and (norm := array_norm(data)) > self.threshold:
                self._fired = True
                return (f"breakpoint: gradient norm {norm:.4g} > {self.threshold:g} in the "
                        f".grad of {_label(event.tensor)}")
        return None


class IterationBreakpoint(Breakpoint):
    """Pause when iteration ``n`` begins (at its first graph op, already recorded)."""

    needs_full_events = False  # the session listens in full only around iteration n

    def __init__(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"IterationBreakpoint: n must be an iteration number >= 1 "
                             f"(iterations count from 1), got {n!r}")
        self.n = n

    def describe(self) -> str:
        return f"iteration {self.n}"

    def wants_full(self, recorder) -> bool:
        return self.n - 1 <= recorder.iteration < self.n

    def check(self, event, recorder) -> str | None:
        if recorder.started_iteration and recorder.iteration == self.n:
            return f"breakpoint: iteration {self.n} begins"
        return None


class LossBreakpoint(Breakpoint):
    """Pause when the loss (from ``backward()``'s root or a reported "loss") is above a value.

    A NaN loss counts as above any value.
    """

    needs_full_events = False  # losses come with the light events

    def __init__(self, above: float) -> None:
        if isinstance(above, bool) or not isinstance(above, (int, float)) or math.isnan(above):
            raise ValueError(f"LossBreakpoint: above must be a number (pause when the loss "
                             f"goes above it), got {above!r}")
        self.above = float(above)

    def describe(self) -> str:
        return f"loss > {self.above:g}"

    def check(self, event, recorder) -> str | None:
        if isinstance(event, events.Phase):
            if event.kind != "backward_begin":
                return None
        elif not (isinstance(event, events.Metric) and "loss" in event.values):
            return None
        loss = recorder.last_loss
        if loss is None or not (loss > self.above or math.isnan(loss)):
            return None
        return f"breakpoint: loss {loss:.6g} > {self.above:g} (iteration {recorder.iteration})"
