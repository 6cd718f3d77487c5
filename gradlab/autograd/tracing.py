"""Where ``gradlab.jit.trace`` listens: the few entry points that make or change tensors.

A trace runs the user's function once and writes down every call that
produces a tensor, so that the graph can run again on new inputs without
the Python around it. Three kinds of entry point produce tensors:

* **ops**, all of which pass the dispatcher (``Function.apply``): it checks
  ``state.tracer`` once per op, as it checks autocast;
* **in-place changes** (``x.add_(1)``, ``x[i] = v``, ``t_()``): one
  mechanism, :func:`gradlab.ops.inplace.apply_inplace` and friends;
* **factories** (``zeros``, ``randn``, ``arange``, ``*_like``, ``tensor``)
  and ``detach``, which make tensors without an op.

The last two are wrapped by :func:`recorded`. While a trace runs, each
outermost call is handed to the tracer, which runs it with tracing off (so
the ops inside an op or a factory are not written down twice) and records
it; otherwise the wrapper costs one attribute check.
"""

from __future__ import annotations

import functools

from .grad_mode import state

__all__ = ["recorded", "is_tracing", "note_read"]


def recorded(entry):
    """Let a running trace record calls of ``entry`` (a factory or an in-place entry point).

    The wrapper is what gets recorded and what a replay calls, so a traced
    graph makes fresh zeros and draws fresh random numbers on every run
    instead of reusing the tensors the trace saw.
    """
    @functools.wraps(entry)
    def call(*args, **kwargs):
        tracer = state.tracer
        if tracer is None:
            return entry(*args, **kwargs)
        return tracer.record("call", call, args, kwargs)

    call.__gradlab_recorded__ = True  # what gradlab.jit.load accepts as a graph's callable
    return call


def note_read(tensor, how: str) -> None:
    """``tensor``'s values are being read into Python or into an op's fixed arguments
    (``item()``, an ``if``, an index array): a running trace warns if it computed them."""
    tracer = state.tracer
    if tracer is not None:
        tracer.note_read(tensor, how)


def is_tracing() -> bool:
    """True while ``gradlab.jit.trace`` records this thread's ops (``torch.jit.is_tracing``)."""
    return state.tracer is not None
