"""Lesson 7's pictures: a bias copied over the rows in forward and its gradient summed
back in backward, and the graph of x * w + b with each gradient's shape."""

from pathlib import Path

import numpy as np

import gradlab
from gradlab import viz

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])
B = np.array([10.0, 20.0, 30.0])
G = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])  # the gradient arriving at y = x + b


def _grid(ax, left: float, top: float, values, title: str, color: str,
          faded_rows: tuple = ()) -> None:
    """Draw ``values`` as a grid of numbered cells, its top-left corner at (left, top)."""
    from matplotlib.patches import Rectangle

    values = np.atleast_2d(values)
    for i, row in enumerate(values):
        faded = i in faded_rows
        for j, v in enumerate(row):
            ax.add_patch(Rectangle((left + j, top - i - 1), 1, 1, facecolor=color,
                                   edgecolor="#444444", alpha=0.35 if faded else 0.9,
                                   linestyle="--" if faded else "-"))
            ax.text(left + j + 0.5, top - i - 0.5, f"{v:g}", ha="center", va="center",
                    fontsize=10, color="#777777" if faded else "black")
    ax.text(left + values.shape[1] / 2, top + 0.3, title, ha="center", va="bottom",
            fontsize=10)


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    fig = Figure(figsize=(7, 3.8), layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlim(-0.3, 15.3)
    ax.set_ylim(-5.6, 2.2)
    ax.set_axis_off()
    ax.text(-0.2, 1.9, "forward: b (3,) is copied onto both rows of x (2, 3)", fontsize=10,
            fontweight="bold", va="top")
    _grid(ax, 0, 0.6, X, "x  (2, 3)", "#cfe3f5")
    ax.text(3.5, -0.4, "+", fontsize=16, ha="center", va="center")
    _grid(ax, 4, 0.6, np.vstack([B, B]), "b  (3,), copied", "#f9d9a6", faded_rows=(1,))
    ax.text(7.5, -0.4, "=", fontsize=16, ha="center", va="center")
    _grid(ax, 8, 0.6, X + B, "y  (2, 3)", "#d5ecd4")
    ax.text(-0.2, -2.0, "backward: each copy gets its own gradient; b.grad is their sum",
            fontsize=10, fontweight="bold", va="top")
    _grid(ax, 0, -3.4, G, "gradient at y  (2, 3)", "#d5ecd4")
    ax.annotate("", xy=(5.6, -4.4), xytext=(3.3, -4.4),
                arrowprops={"arrowstyle": "->", "lw": 1.5})
    ax.text(4.45, -4.2, "sum over\ndim 0", ha="center", va="bottom", fontsize=9)
    _grid(ax, 6, -3.9, G.sum(axis=0), "b.grad  (3,)", "#f9d9a6")
    ax.text(9.3, -4.4, "= 1 + 4,  2 + 5,  3 + 6", fontsize=9, va="center")
    ax.text(12.2, -2.7, "x.grad is the\ngradient at y\nitself: x was\nnot copied",
            fontsize=9, va="top")
    pictures = save_figure(fig, folder / "copies.png", dpi=100)

    gradlab.manual_seed(0)
    x = gradlab.randn(3, 4, requires_grad=True)
    w = gradlab.randn(4, requires_grad=True)
    b = gradlab.zeros(3, 1, requires_grad=True)
    x.name, w.name, b.name = "x", "w", "b"
    loss = (x * w + b).sum()
    loss.backward()
    graph = viz.render(loss, folder / "graph.svg", show_grads=True)
    return [Path(pictures), Path(graph)]
