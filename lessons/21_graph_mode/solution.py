"""Lesson 21: graph mode: a trace, its replay, dead code, and what a trace freezes.

Three tasks, all marked TODO:

1. replay(graph, inputs, constants): run a traced graph yourself, node by node.
2. live_nodes(graph): the nodes whose work matters (the rest is dead code).
3. clip_to_norm(x, max_norm): a norm clip that a trace cannot get wrong.

Check them with `gradlab check 21` (or press k in the app). Press r in the app to run
this file under the debugger: it trains a traced network and prints its graph.
"""

import gradlab
import gradlab.nn.functional as F
from gradlab import jit, nn
from gradlab.jit.graph import bind, fill, leaves


def replay(graph, inputs, constants):
    """Run ``graph`` (a ``gradlab.jit.Graph``) on ``inputs`` (one tensor per
    ``graph.inputs``) and ``constants`` (one tensor per ``graph.constants``), calling each
    node as the trace recorded it; return what the traced function returned. Don't call
    ``graph.run``: this is it."""
    env = {}  # value index -> the tensor it holds in this run
    for value, tensor in zip(graph.inputs, inputs):
        env[value.index] = tensor
    for (value, _, _), tensor in zip(graph.constants, constants):
        env[value.index] = tensor
    for node in graph.nodes:
        args, kwargs = fill(node.args, env), fill(node.kwargs, env)
        if node.kind == "op":
            result = node.target.apply(*args)
        else:
            result = node.target(*args, **kwargs)
        bind(node.outputs, result, env)
    return fill(graph.outputs, env)


def changes_in_place(node) -> bool:
    """Does ``node`` change a tensor in place? Then it is live even if nothing reads its
    result: the change stays (``x.add_(1)``, ``x[i] = v``, and BatchNorm's running
    statistics, which ``batch_norm`` updates in training mode)."""
    if node.op.endswith("_"):
        return True
    return node.op == "batch_norm" and bool(node.args[5])  # (x, w, b, mean, var, training ...)


def live_nodes(graph):
    """The positions (in ``graph.nodes``) of the live nodes, in increasing order: those
    that change a tensor in place, and those whose results a live node or the graph's
    outputs use."""
    needed = {v.index for v in leaves(graph.outputs)}
    live = []
    for position in range(len(graph.nodes) - 1, -1, -1):
        node = graph.nodes[position]
        results = {v.index for v in leaves(node.outputs)}
        if changes_in_place(node) or results & needed:
            live.append(position)
            needed |= {v.index for v in leaves((node.args, node.kwargs))}
    return sorted(live)


def clip_to_norm(x, max_norm):
    """``x`` scaled down so that its norm is ``max_norm`` if its norm is larger; ``x``
    unchanged otherwise. Written in tensor ops only, so that a trace keeps both cases."""
    return x * (max_norm / x.norm()).clamp(max=1.0)


if __name__ == "__main__":
    # What the app runs when you press r: a traced model trains like the eager one, and
    # the Graph panel shows the same ops, in the same module boxes.
    gradlab.manual_seed(0)
    images, labels = gradlab.datasets.load_digits()
    images = images.flatten(1)
    model = nn.Sequential(nn.Linear(64, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 10))
    traced = jit.trace(model, images[:64])
    print(traced.graph)
    optimizer = gradlab.optim.SGD(traced.parameters(), lr=0.1, momentum=0.9)
    for step in range(40):
        rows = gradlab.randint(0, len(labels), (64,))
        optimizer.zero_grad()
        loss = F.cross_entropy(traced(images[rows]), labels[rows])
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(f"step {step:2d}: loss {loss.item():.3f}")

    # Your functions: the graph by hand, its dead code, and a clip that traces well.
    graph = traced.graph
    constants = [t for _, t, _ in graph.constants]
    x = images[:64]
    mine = replay(graph, [x], constants)
    print("replay matches the traced model:", bool((mine - traced(x)).abs().max() < 1e-5))
    print("live nodes:", live_nodes(graph), "of", len(graph.nodes))

    def wasteful(t):
        unused = (t * t).sum()  # noqa: F841 - computed, never used: dead code
        return t.relu() + 1

    dead = jit.trace(wasteful, x)
    print("in wasteful, live:", [dead.graph.nodes[i].op for i in live_nodes(dead.graph)],
          "of", [n.op for n in dead.graph.nodes])
    clip = jit.trace(lambda t: clip_to_norm(t, 1.0), gradlab.randn(5) * 0.01)
    big = gradlab.randn(5) * 100
    print("clip traced on a small input, run on a big one: norm",
          round(clip(big).norm().item(), 4))
