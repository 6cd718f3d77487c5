"""gradlab.debug: record, pause and step a training run (no UI code here).

    from gradlab.debug import Session, NonFiniteBreakpoint

    with Session() as session:
        session.add_breakpoint(NonFiniteBreakpoint())
        run = session.run_script("train.py", pause_at_start=True)
        session.wait_paused(5)
        session.step("op")                      # one op forward
        print(session.snapshot().pause_reason)
        session.resume()
        session.wait_finished()

A :class:`Session` records what the engine does (events) into a live model and
hands views immutable :class:`Snapshot` objects (see :mod:`gradlab.debug.snapshot`);
the terminal app (``gradlab run SCRIPT``) is one such view, a notebook another.
"""

from .breakpoints import (
    Breakpoint,
    GradNormBreakpoint,
    IterationBreakpoint,
    LossBreakpoint,
    ModuleBreakpoint,
    NonFiniteBreakpoint,
    OpBreakpoint,
    TensorBreakpoint,
)
from .reporting import report
from .runner import ScriptRun
from .session import Session
from .snapshot import *  # noqa: F403
from .snapshot import __all__ as _snapshot_names
from .stepper import STEP_KINDS, StopRun
from .summary import summarize

__all__ = [
    "Session", "ScriptRun", "StopRun", "STEP_KINDS", "report", "summarize",
    "Breakpoint", "OpBreakpoint", "ModuleBreakpoint", "TensorBreakpoint", "NonFiniteBreakpoint",
    "GradNormBreakpoint", "IterationBreakpoint", "LossBreakpoint", *_snapshot_names,
]
