"""Anomaly detection: find the line of forward code behind a bad backward.

A NaN gradient, or an error raised inside some node's backward, shows up far
from its cause: the engine runs the graph in reverse, in code you did not
write. Inside ``detect_anomaly()``:

* every op the forward pass records remembers where in *your* code it ran:
  the innermost few frames outside gradlab (file, line, function), kept as
  a :class:`ForwardTrace` on its node;
* the backward engine checks each node's gradients for NaN (``check_nan``)
  and raises an error that names the node and shows that place; any other
  error raised while a node runs its backward gets the place as a note.

Both cost time (a walk up the call stack per op, a scan of every gradient),
so the mode is off by default and the dispatcher pays one attribute check
for it. The switch is per thread, like grad mode.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import threading
import warnings

__all__ = [
    "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
]

STACK_DEPTH = 8  # frames kept per op: the innermost ones outside gradlab, where the op was called

_GRADLAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class _AnomalyState(threading.local):
    """Per-thread switches, read by the dispatcher (``enabled``) and the engine."""

    enabled = False
    check_nan = True
    running = None  # (name, ForwardTrace) of the node whose backward is running, if any


anomaly = _AnomalyState()


def is_anomaly_enabled() -> bool:
    return anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return anomaly.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for this thread (``torch.set_anomaly_enabled``)."""
    anomaly.enabled = bool(enabled)
    anomaly.check_nan = bool(check_nan)


def _warn_slow(stacklevel: int) -> None:
    # Python shows a warning once per line of code that triggers it, so a decorated
    # training step warns once, not on every call.
    warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                  "and should only be enabled for debugging.", UserWarning,
                  stacklevel=stacklevel + 1)


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """Turn on anomaly detection inside a ``with`` block, or for a decorated function.

    Forward ops record where they ran; backward raises on NaN gradients (if
    ``check_nan``) and notes that place on any error raised inside a node.
    ``@detect_anomaly()`` and bare ``@detect_anomaly`` both decorate.
    """

    def __new__(cls, check_nan=True):
        self = super().__new__(cls)
        if callable(check_nan):  # used as a bare decorator: @detect_anomaly
            self._setup(True)
            return self(check_nan)
        return self

    def __init__(self, check_nan: bool = True) -> None:
        self._setup(check_nan)

    def _setup(self, check_nan) -> None:
        self.check_nan = bool(check_nan)
        self._outer = []  # the (enabled, check_nan) to restore, innermost last
        _warn_slow(stacklevel=3)  # at the user's line: above here is __init__ or __new__

    def __enter__(self) -> None:
        self._outer.append((anomaly.enabled, anomaly.check_nan))
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(*self._outer.pop())

    def __call__(self, func):
        check_nan = self.check_nan

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            # The outer setting is kept per call, not on the shared instance, so threads
            # and recursion each restore their own.
            outer = (anomaly.enabled, anomaly.check_nan)
            set_anomaly_enabled(True, check_nan)
            try:
                return func(*args, **kwargs)
            finally:
                set_anomaly_enabled(*outer)
        return wrapper


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Switch anomaly detection on or off: at once as a call, or for a ``with`` block
    (the previous setting comes back on exit)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._outer = (anomaly.enabled, anomaly.check_nan)
        if mode and not anomaly.enabled:
            _warn_slow(stacklevel=2)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(*self._outer)


# --- what the dispatcher records ---------------------------------------------------------

class ForwardTrace:
    """Where one node's forward ran, in the user's code.

    ``frames``: (filename, line, function) of the innermost frames outside
    gradlab, innermost first; the source text is read only when an error is
    shown. ``parent``: for a node recorded while another node ran its
    backward (``create_graph=True``), that node's (name, ForwardTrace).
    """

    __slots__ = ("frames", "parent")

    def __init__(self, frames: tuple, parent) -> None:
        self.frames = frames
        self.parent = parent

    def format(self) -> str:
        """The frames as a traceback: outermost first, with each line's code."""
        if not self.frames:
            return "  (every frame was inside gradlab)"
        lines = []
        for filename, lineno, function in reversed(self.frames):
            lines.append(f'  File "{filename}", line {lineno}, in {function}')
            code = linecache.getline(filename, lineno).strip()
            if code:
                lines.append(f"    {code}")
        return "\n".join(lines)


def record_forward_trace() -> ForwardTrace:
    """The caller's place in the user's code, for the node being recorded (a cheap walk
    up the frames: no source is read here)."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_GRADLAB_DIR):
            frames.append((code.co_filename, frame.f_lineno, code.co_name))
            if len(frames) == STACK_DEPTH:
                break
        frame = frame.f_back
    return ForwardTrace(tuple(frames), anomaly.running)


def forward_trace_of(node) -> ForwardTrace | None:
    """The trace recorded for ``node``, or None if its forward ran with detection off."""
    return getattr(node, "_forward_trace", None)


# --- what the engine checks --------------------------------------------------------------

def describe_forward(node) -> str:
    """Where ``node``'s op ran (and, for a node made by a backward, which one), for errors."""
    trace = forward_trace_of(node)
    if trace is None:
        return ("No forward trace was recorded for it: its forward ran while anomaly "
                "detection was off. Fix: run the forward pass inside detect_anomaly() too.")
    parts = ["The op was created here (most recent call last):", trace.format()]
    parent = trace.parent
    while parent is not None:  # a chain of create_graph backwards, walked without recursion
        name, trace = parent
        if trace is None:
            parts.append(f"It was recorded by the backward of {name}, whose forward ran "
                         "while anomaly detection was off.")
            break
        parts += [f"It was recorded by the backward of {name}, whose op was created here:",
                  trace.format()]
        parent = trace.parent
    return "\n".join(parts)


NAN_FIX = (
    "Fix: a NaN or Inf gradient starts where a derivative is infinite or undefined: sqrt, "
    "log or pow at 0, x/0 or 0/0, inf - inf, 0 * inf, or a NaN already in the forward values. Keep "
    "the op's input away from that point (x.clamp(min=1e-12) before sqrt or log, + eps in a "
    "denominator). where(mask, f(x), 0) alone does not help: f's gradient is still computed "
    "everywhere and 0 * nan is nan, so clamp f's input as well."
)


def check_nan(node, grads) -> None:
    """Raise if a gradient ``node``'s backward returned holds a NaN, or else an Inf.

    Outputs are counted as PyTorch counts them: over the op's tensor arguments.
    PyTorch checks for NaN only, and a NaN anywhere in the node is named first, as
    there; an infinite gradient (sqrt or log at 0) is as sure a sign of trouble and
    turns into NaN a step later, so gradlab names it too.
    """
    found = []  # (output number, gradient) of the floating-point gradients
    output = -1
    mask = node.no_grad_tensors
    for i, (edge, g) in enumerate(zip(node.edges, grads)):
        if edge is None and not mask >> i & 1:
            continue  # not a tensor argument: PyTorch's node has no output for it
        output += 1
        if g is not None and g.is_floating_point():
            found.append((output, g))
    for kind in ("nan", "inf"):
        for output, g in found:
            if _holds(g, kind):
                raise RuntimeError(
                    f"Function '{node.name()}' returned {kind} values in its {output}th "
                    f"output (the gradient for tensor argument {output} of '{node.op}', node "
                    f"{node.id}, shape {tuple(g.shape)}).\n{describe_forward(node)}\n{NAN_FIX}")


def _holds(g, kind: str) -> bool:
    """Does gradient ``g`` hold a NaN (kind "nan") or an infinity ("inf")?"""
    # On the raw array, not with tensor ops: those would show up as ops run during backward.
    device = g._device
    test = getattr(device.backend.xp, "isnan" if kind == "nan" else "isinf")
    if device.index is None:
        return bool(test(g._data).any())
    with device.backend.use_device(device.index):
        return bool(test(g._data).any())


def note_forward(error: BaseException, node) -> None:
    """Add to an error raised inside ``node``'s backward where the node's op ran; the
    error keeps its type, message and traceback (the note prints below them)."""
    error.add_note(f"Error detected in {node.name()} (op '{node.op}', node {node.id}) "
                   f"during backward.\n{describe_forward(node)}")
