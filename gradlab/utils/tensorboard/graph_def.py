"""A traced model as TensorBoard's ``GraphDef``: what ``SummaryWriter.add_graph`` writes.

``gradlab.jit.trace`` records the model on an example input. Each graph
input becomes an ``IO Node`` under ``input/``, each parameter and buffer a
node under its module's path (``fc1/weight``), each op a node named
``<module path>/<op>_<k>`` (dots as slashes: TensorBoard draws every
``/``-scope as a box you can open), and the results ``IO Node``s under
``output/``. Edges carry the shapes.
"""

from __future__ import annotations

from ...jit import trace
from ...jit.graph import leaves
from ...nn.modules.module import Module
from . import event_file as ef

__all__ = ["graph_def"]


def graph_def(model, example) -> bytes:
    """The serialized ``GraphDef`` of ``model`` traced on ``example``."""
    was_training = isinstance(model, Module) and model.training
    try:
        graph = trace(model, example, check_trace=False).graph
    finally:
        if was_training:
            model.train()
    made_by: dict[int, str] = {}  # Value index -> the TensorBoard name that holds it
    nodes = []
    for value in graph.inputs:
        made_by[value.index] = name = f"input/{value.name}"
        nodes.append(ef.node_def(name, "IO Node", [], [value.shape]))
    for value, _, kind in graph.constants:
        made_by[value.index] = name = value.name.replace(".", "/")
        nodes.append(ef.node_def(name, kind.capitalize(), [], [value.shape]))
    for k, node in enumerate(graph.nodes):
        scope = f"{node.module.replace('.', '/')}/" if node.module else ""
        name = f"{scope}{node.op}_{k}"
        inputs = [made_by[v.index] for v in leaves((node.args, node.kwargs))
                  if v.index in made_by]
        outputs = leaves(node.outputs)
        for nr, value in enumerate(outputs):
            made_by[value.index] = name if nr == 0 else f"{name}:{nr}"
        nodes.append(ef.node_def(name, node.op, inputs, [v.shape for v in outputs]))
    for k, value in enumerate(leaves(graph.outputs)):
        nodes.append(ef.node_def(f"output/output.{k}", "IO Node", [made_by[value.index]],
                                 [value.shape]))
    return ef.graph_def_bytes(nodes)
