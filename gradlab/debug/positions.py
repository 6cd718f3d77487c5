"""Where a run is, in words: the line a debugger shows for the event it stopped at.

"forward of relu (op1) in module 1", "backward of linear (op2)", "Adam update of
fc1.weight", "iteration 3: backward begins from loss 0.6931". The words come
from the event and from what the :class:`~gradlab.debug.recorder.Recorder`
knows once it has handled it (graph keys, parameter names, counters).
"""

from __future__ import annotations

from numbers import Real

from .. import events
from .snapshot import Position

__all__ = ["describe", "short"]


def short(value: float) -> str:
    """A number as the log and the status line write it: four significant digits."""
    return f"{value:.4g}"


def _forward_mode_key(event, graph) -> str | None:
    """The graph box of an op that ran without a backward node because only forward-mode
    tangents flowed through it (the recorder adds those ops to the graph)."""
    if graph is None or not event.outputs:
        return None
    live = event.outputs[0].tensor
    return None if live is None else graph.key_for_tensor(live)


def describe(event, recorder) -> Position | None:
    """Where ``event`` is (None for events that are not places: memory)."""
    kind = type(event)
    graph = recorder.graph
    if kind is events.OpForward:
        if event.node_id is None:
            if recorder.in_optimizer_step:
                text = f"{event.op} inside the optimizer step"
            elif recorder.in_backward:
                text = f"{event.op} while computing gradients (no graph recorded)"
            else:
                key = _forward_mode_key(event, graph)
                if key is not None:  # a box of the graph all the same: it carries a tangent
                    text = _op_text("forward", event.op, key, event.module)
                    return Position("op", f"{text}, forward mode (a tangent, no backward "
                                    "graph)", key, event.seq)
                text = f"{event.op} without a graph (no_grad, or no input needs grad)"
            return Position("op", text, None, event.seq)
        key = None if graph is None else graph.by_node_id.get(event.node_id)
        text = _op_text("forward", event.op, key, event.module)
        if recorder.started_iteration:
            return Position("iteration", f"iteration {recorder.iteration} begins: {text}", key,
                            event.seq)
        return Position("op", text, key, event.seq)
    if kind is events.BackwardNode:
        key = None if graph is None else graph.by_node_id.get(event.node_id)
        return Position("backward", _op_text("backward", event.op, key, event.module),
                        key, event.seq)
    if kind is events.GradAccumulated:
        t = event.tensor.tensor
        key = None if graph is None or t is None else graph.key_for_tensor(t)
        return Position("grad", f"gradient accumulated into {recorder.label(event.tensor)}",
                        key, event.seq)
    if kind is events.OptimizerStep:
        t = event.param.tensor
        key = None if graph is None or t is None else graph.key_for_tensor(t)
        return Position("update", f"{event.optimizer} update of {recorder.label(event.param)}",
                        key, event.seq)
    if kind is events.Phase:
        return _phase_position(event, recorder)
    if kind is events.Metric:
        values = ", ".join(f"{k}={short(v) if isinstance(v, Real) else v}"
                           for k, v in event.values.items())
        which = "loss" if "loss" in event.values else (
            "epoch" if "epoch" in event.values else "phase")
        return Position(which, f"reported {values}", None, event.seq)
    return None


def _op_text(direction: str, op: str, key: str | None, module: str | None) -> str:
    text = f"{direction} of {op}" + (f" ({key})" if key else "")
    return text + (f" in module {module}" if module else "")


def _phase_position(event, recorder) -> Position:
    kind = event.kind
    if kind == "epoch":
        return Position("epoch", f"epoch {recorder.epoch} begins", None, event.seq)
    if kind == "backward_begin":
        loss = recorder.last_loss if len(event.roots) == 1 else None
        text = "backward begins" + (f" from loss {short(loss)}" if loss is not None else "")
    elif kind == "backward_end":
        text = "backward done"
    elif kind in ("step", "step_end"):
        what = "begins" if kind == "step" else "done"
        text = f"{recorder.optimizer_name(event)} step {event.iteration} {what}"
    else:
        text = kind
    return Position("phase", f"iteration {recorder.iteration}: {text}", None, event.seq)
