"""Profile a user's training script: what ``gradlab profile SCRIPT`` runs.

The script runs in this process as ``python SCRIPT args`` would (its
``sys.argv``, its folder first on ``sys.path``). Training steps are counted
by backward passes (every step has one, whether the script uses an
optimizer or updates weights by hand): the first ``skip`` steps run
unrecorded (they pay for first-call costs: BLAS start-up, caches), the next
``steps`` are recorded, one ``ProfilerStep#N`` range each, and then the
script is stopped, so a long training run need not finish.
"""

from __future__ import annotations

import os
import runpy
from dataclasses import dataclass

from .. import events
from ..debug.runner import script_environment, script_traceback
from .profiler import profile

__all__ = ["profile_script", "ScriptProfile"]


class _Enough(BaseException):
    """Raised from a listener to stop the script once its steps are recorded (a
    BaseException, so neither the event bus nor the script's ``except Exception`` keeps it)."""


@dataclass
class ScriptProfile:
    """What ``profile_script`` found: the profile (None if recording never began), how many
    whole steps it holds (a script that ends early adds its unfinished last one), and the
    error the script raised, if any."""

    profile: profile | None
    steps: int
    error: BaseException | None = None

    def script_traceback(self, script: str) -> str:
        return script_traceback(self.error, script)


class _StepCounter:
    """Counts backward passes and starts, steps and stops the profile at the right ones."""

    def __init__(self, prof: profile, skip: int, steps: int) -> None:
        self.prof, self.skip, self.steps = prof, skip, steps
        self.seen = 0
        self.recorded = 0

    def __call__(self, event) -> None:
        if type(event) is not events.Phase or event.kind != "backward_end":
            return
        self.seen += 1
        if self.seen == self.skip:
            self.prof.start()
        elif self.seen > self.skip:
            self.recorded += 1
            if self.recorded == self.steps:
                self.prof.stop()
                raise _Enough
            self.prof.step()


def profile_script(path: str, args=(), *, skip: int = 1, steps: int = 3,
                   **options) -> ScriptProfile:
    """Run the script at ``path`` and profile ``steps`` training steps after ``skip``;
    ``options`` go to :class:`~gradlab.profiler.profile` (record_shapes, profile_memory)."""
    if skip < 0 or steps < 1:
        raise ValueError(f"profile: need skip >= 0 and steps >= 1, got skip={skip}, "
                         f"steps={steps}")
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"profile: no script at {path}")
    prof = profile(**options)
    counter = _StepCounter(prof, skip, steps)
    error = None
    if skip == 0:
        prof.start()
    with events.subscribe(counter, light=True), script_environment(path, args):
        try:
            runpy.run_path(path, run_name="__main__")
        except _Enough:
            pass
        except BaseException as raised:  # noqa: BLE001 - the script's own error, reported
            error = raised
        finally:
            prof.stop()  # the script ended (or failed) before its last step: keep what ran
    try:
        prof.events()
    except RuntimeError:  # the script ended (or failed) before the first recorded step
        prof = None
    return ScriptProfile(prof, counter.recorded, error)
