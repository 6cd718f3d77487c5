"""Lesson 8's pictures: the shapes of matmul's gradients, the gradients of sum, mean and
max over a row, and the graph of a small computation with them."""

from pathlib import Path

import numpy as np

import gradlab
from gradlab import viz


def _block(ax, x, y, rows, cols, label, color):
    """A rows x cols matrix drawn as a grid of unit cells with its top-left corner at (x, y)."""
    from matplotlib.patches import Rectangle

    for r in range(rows):
        for c in range(cols):
            ax.add_patch(Rectangle((x + c, y - r - 1), 1, 1, facecolor=color, edgecolor="white",
                                   linewidth=1.5))
    ax.text(x + cols / 2, y + 0.4, label, ha="center", va="bottom", fontsize=11)
    ax.text(x + cols / 2, y - rows - 0.35, f"({rows}, {cols})", ha="center", va="top",
            fontsize=9, color="0.3")
    return x + cols


def _shapes(path: Path) -> Path:
    """dA = G @ B.T and dB = A.T @ G as blocks for n, k, m = 3, 4, 2."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    n, k, m = 3, 4, 2
    colors = {"G": "#e8a33d", "B": "#4c8bd6", "A": "#59a96a", "dA": "#9b6fc4", "dB": "#9b6fc4"}
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    rows = [  # (y of the top edge, [(rows, cols, label, colour key) or an operator])
        (5.5, [(n, m, "G", "G"), "@", (m, k, "B.T", "B"), "=", (n, k, "dL/dA", "dA")]),
        (0.0, [(k, n, "A.T", "A"), "@", (n, m, "G", "G"), "=", (k, m, "dL/dB", "dB")]),
    ]
    for top, items in rows:
        x = 0.0
        for item in items:
            if isinstance(item, str):
                ax.text(x + 0.6, top - 1.5, item, ha="center", va="center", fontsize=16)
                x += 1.2
            else:
                r, c, label, key = item
                x = _block(ax, x, top, r, c, label, colors[key]) + 0.0
    ax.set_xlim(-0.3, 13)
    ax.set_ylim(-5.2, 6.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("A (3, 4) @ B (4, 2) = y (3, 2); G = dL/dy has y's shape", fontsize=10)
    return Path(save_figure(fig, path, dpi=100))


def _reduction_grads(path: Path) -> Path:
    """The gradient that x.sum(1), x.mean(1) and x.max(1) send back to a 3 x 4 x."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    x = gradlab.tensor([[1.0, 5.0, 2.0, 0.5], [7.0, 0.0, 3.0, 4.0], [2.0, 2.5, 6.0, 1.0]])
    fig = Figure(figsize=(6, 2.4), layout="constrained")
    axes = fig.subplots(1, 3)
    ops = [("x.sum(dim=1)", lambda t: t.sum(1)), ("x.mean(dim=1)", lambda t: t.mean(1)),
           ("x.max(dim=1).values", lambda t: t.max(1).values)]
    for ax, (title, op) in zip(axes, ops):
        leaf = x.clone().requires_grad_()
        op(leaf).sum().backward()  # upstream gradient 1 for every row
        grad = leaf.grad.numpy()
        ax.imshow(grad, cmap="Purples", vmin=0, vmax=1.3)
        for (r, c), g in np.ndenumerate(grad):
            ax.text(c, r, f"{g:g}", ha="center", va="center", fontsize=9,
                    color="white" if g > 0.6 else "black")
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("dL/dx for L = op(x).sum(), x = [[1, 5, 2, .5], [7, 0, 3, 4], [2, 2.5, 6, 1]]",
                 fontsize=9)
    return Path(save_figure(fig, path, dpi=100))


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    folder = Path(folder)
    shapes = _shapes(folder / "shapes.png")
    grads = _reduction_grads(folder / "reduction_grads.png")

    gradlab.manual_seed(1)
    A = gradlab.randn(3, 4, requires_grad=True)
    B = gradlab.randn(4, 2, requires_grad=True)
    A.name, B.name = "A", "B"
    y = A @ B
    loss = (y.sum(1) + y.amax(1)).mean()
    loss.name = "loss"
    graph = viz.render(loss, folder / "graph.svg", view="backward")
    return [shapes, grads, Path(graph)]
