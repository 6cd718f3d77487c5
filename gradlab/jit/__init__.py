"""Graph mode: trace a function or module into a graph, replay it, save and load it.

``gradlab.jit.trace(model, example)`` runs ``model`` once and writes down
every op it calls (and every in-place change and factory such as ``zeros``
or ``randn``) as a :class:`Graph`; the result replays that graph on new
inputs, without the Python in between, and ``print(traced.graph)`` shows
it. ``gradlab.jit.save``/``load`` export it to a file and back, without
pickle: a loaded graph runs with no Python code of the model at all.

- :mod:`.graph`: the graph (values, nodes) and its replay
- :mod:`.tracer`: the recording, and what it refuses to freeze
- :mod:`.traced`: ``trace``, ``TracedFunction``, ``TracedModule``
- :mod:`.archive`: ``save`` and ``load``
- :mod:`.compat`: the rest of ``torch.jit`` that model code touches (``ignore``,
  ``is_scripting`` ...), and ``script``, which points at ``trace``
"""

from ..autograd.tracing import is_tracing
from .archive import LoadedGraph, load, save
from .compat import (
    Final,
    annotate,
    export,
    freeze,
    ignore,
    is_scripting,
    optimize_for_inference,
    script,
    unused,
)
from .graph import Graph, Node, Value
from .traced import TracedFunction, TracedModule, TracingCheckError, trace
from .tracer import TracerWarning, TracingError

__all__ = ["trace", "TracedFunction", "TracedModule", "Graph", "Node", "Value", "TracerWarning",
           "TracingError", "TracingCheckError", "is_tracing", "save", "load", "LoadedGraph",
           "script", "is_scripting", "ignore", "unused", "export", "annotate", "Final",
           "freeze", "optimize_for_inference"]
