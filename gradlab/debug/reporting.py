"""``gradlab.debug.report``: a script's own numbers (accuracy, a loss it computes) for the debugger.

They travel as :class:`~gradlab.events.Metric` events, light ones, so a session
running freely still sees every report.
"""

from __future__ import annotations

import numbers

from .. import events

__all__ = ["report"]


def _number(name: str, value):
    """A reported value as a plain Python number, or an error that says how to make one."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        kind = type(value).__name__
        fix = (f"pass {name}.item() for a one-element tensor" if hasattr(value, "item")
               else f"pass float({name}) or leave it out")
        raise TypeError(f"report: {name} must be a number (int or float), got {kind}; {fix}")
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def report(**values) -> None:
    """Report numbers by name (``report(accuracy=0.93, epoch=2)``) to whoever listens.

    They reach a debug session as an :class:`~gradlab.events.Metric` event and show
    up in its training view; ``loss`` counts as the loss and ``epoch`` as the epoch.
    With nobody listening this only checks the values.
    """
    if not values:
        raise TypeError("report: nothing to report; pass numbers by name, e.g. "
                        "report(accuracy=0.93)")
    clean = {name: _number(name, value) for name, value in values.items()}
    if events.listeners or events.light_listeners:
        events.emit(events.Metric(events.next_seq(), clean))
