"""Lesson 3's pictures: the neuron's graph with values and gradients, and tanh beside
its derivative (where the gradient fades)."""

from pathlib import Path

import numpy as np

import gradlab
from gradlab import viz


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    # The lesson's neuron, recorded with its values and, after backward, its gradients.
    with viz.trace() as tape:
        w = gradlab.tensor([0.5, 0.4], dtype=gradlab.float64, requires_grad=True)
        x = gradlab.tensor([2.0, -1.0], dtype=gradlab.float64, requires_grad=True)
        b = gradlab.tensor(0.1, dtype=gradlab.float64, requires_grad=True)
        w.name, x.name, b.name = "w", "x", "b"
        wx = w @ x
        wx.name = "w·x"
        z = wx + b
        z.name = "z"
        y = z.tanh()
        y.name = "y"
        error = y - 1.0
        error.name = "y − t"
        loss = error ** 2
        loss.name = "loss"
        loss.backward()
    graph = viz.render(loss, folder / "neuron.svg", show_values=True, show_grads=True,
                       trace=tape, rankdir="TB")

    # tanh and its slope: the slope is 1 at 0 and nearly 0 once |z| > 3.
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    zs = np.linspace(-4, 4, 321)
    ax.plot(zs, np.tanh(zs), label="tanh(z)")
    ax.plot(zs, 1 - np.tanh(zs) ** 2, "--", label="slope: 1 − tanh(z)²")
    ax.scatter([0.7], [1 - np.tanh(0.7) ** 2], zorder=3, color="C1")
    ax.annotate("z = 0.7: slope 0.635", (0.7, 1 - np.tanh(0.7) ** 2), (1.3, 0.78),
                arrowprops={"arrowstyle": "->"})
    ax.axhline(0, color="0.7", linewidth=0.8)
    ax.set_xlabel("z")
    ax.legend(loc="lower right")
    curve = save_figure(fig, folder / "tanh.png", dpi=100)
    del wx, z, y, error  # kept alive until drawn, so the picture shows their names
    return [Path(graph), Path(curve)]
