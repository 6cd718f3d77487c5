"""Lesson 12's pictures: SGD, momentum and Nesterov down a ravine (paths and losses),
and what the momentum buffer does along and across the valley."""

from pathlib import Path

import numpy as np

import gradlab
from gradlab.viz.plots import Surface, optimizer_trajectories, plot_curves, plot_optimizer_paths


def _ravine(x, y):
    return 0.5 * x**2 + 25.0 * y**2


RAVINE = Surface("ravine (x² + 50y²)/2", _ravine, (-5.0, 5.0), (-2.0, 2.0), (-4.5, 1.5),
                 ((0.0, 0.0),), steps=100)
OPTIMIZERS = ("sgd", "momentum", "nesterov")


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    fig = plot_optimizer_paths(RAVINE, OPTIMIZERS, lr=0.02, steps=40,
                               title="40 steps at lr = 0.02 (momentum 0.9)")
    fig.set_size_inches(7.0, 3.8)
    paths = save_figure(fig, folder / "ravine_paths.png", dpi=90)

    runs = optimizer_trajectories(RAVINE, OPTIMIZERS, lr=0.02, steps=100)
    names = {"SGD": "SGD", "SGD+momentum": "momentum 0.9", "SGD+Nesterov": "Nesterov 0.9"}
    fig = plot_curves({names[k]: list(v.losses) for k, v in runs.items()}, log_scale=True,
                      ylabel="loss",
                      title="the same three optimizers: loss per step, 100 steps (lr = 0.02)")
    fig.set_size_inches(6.0, 3.6)
    losses = save_figure(fig, folder / "ravine_losses.png", dpi=100)

    # The buffer along the valley (x) and across it (y), 30 steps of momentum 0.9.
    p = gradlab.tensor([-4.5, 1.5], dtype=gradlab.float64, requires_grad=True)
    opt = gradlab.optim.SGD([p], lr=0.02, momentum=0.9)
    grads, bufs = [], []
    for _ in range(30):
        opt.zero_grad()
        _ravine(p[0], p[1]).backward()
        grads.append(p.grad.numpy().copy())
        opt.step()
        bufs.append(opt.state[p]["momentum_buffer"].numpy().copy())
    grads, bufs = np.array(grads), np.array(bufs)
    fig = Figure(figsize=(7.5, 3.2), layout="constrained")
    for k, title in enumerate(("along the valley (x): g keeps its sign, buf grows to 8 g",
                               "across it (y): g keeps changing sign, buf swings no wider")):
        ax = fig.add_subplot(1, 2, k + 1)
        steps = np.arange(1, 31)
        ax.plot(steps, grads[:, k], marker="o", markersize=3, label="gradient g")
        ax.plot(steps, bufs[:, k], marker="s", markersize=3, label="buffer buf")
        ax.axhline(0, color="0.6", linewidth=0.8)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("step")
        ax.legend(fontsize=8)
    buffer = save_figure(fig, folder / "momentum_buffer.png", dpi=100)
    return [Path(paths), Path(losses), Path(buffer)]
