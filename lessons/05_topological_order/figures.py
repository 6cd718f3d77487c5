"""Lesson 5's pictures: the backward graph of the lesson's example, and how many node
visits a backward that follows every path needs, against one visit per node."""

from pathlib import Path

import gradlab
from gradlab import viz


def _path_visits(k: int) -> int:
    """Node visits of a backward that pushes each gradient down every path at once, on
    k repeated squarings (a = x·x, then a = a·a, k ops in all): counted, not computed."""
    # One record per node: the nodes the squaring uses (the same node twice).
    inputs = {0: ()}
    for node in range(1, k + 1):
        inputs[node] = (node - 1, node - 1)
    visits, stack = 0, [k]
    while stack:
        node = stack.pop()
        visits += 1
        stack.extend(inputs[node])
    return visits


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    # The example: a = x·x has two users, b = 3a and y = a + b.
    x = gradlab.tensor(2.0, dtype=gradlab.float64, requires_grad=True)
    x.name = "x"
    a = x * x
    b = a * 3
    y = a + b
    graph = viz.render(y, folder / "graph.svg", view="backward")

    # Following every path against visiting each node once.
    ks = list(range(1, 17))
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ax.semilogy(ks, [_path_visits(k) for k in ks], "o-",
                label="push down every path: 2^(k+1) − 1 visits")
    ax.semilogy(ks, [k + 1 for k in ks], "s-", label="topological order: k + 1 visits")
    ax.set_xlabel("k, the number of squarings (a = a·a)")
    ax.set_ylabel("backward node visits")
    ax.set_xticks(ks[1::2])
    ax.legend()
    paths = save_figure(fig, folder / "paths.png", dpi=100)
    return [Path(graph), Path(paths)]
