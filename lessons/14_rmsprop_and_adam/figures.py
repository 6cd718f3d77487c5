"""Lesson 14's pictures: the optimizers' paths on a bowl, the size of the first steps with
and without bias correction, and the loss of a badly scaled regression under SGD, RMSprop
and Adam. Every curve comes from a real run of gradlab.optim."""

from pathlib import Path

import numpy as np

import gradlab
from gradlab import nn


def make_data(n=64):
    """The lesson's regression: inputs of scale 10 and 0.1 (as in starter.py)."""
    gen = gradlab.Generator().manual_seed(14)
    x = gradlab.randn(n, 2, generator=gen) * gradlab.tensor([10.0, 0.1])
    y = x @ gradlab.tensor([[0.3], [20.0]]) + 1.0
    return x, y


def step_sizes(make_optimizer, steps, grad=1.0):
    """|change of the parameter| / lr at each step, the gradient the same every time."""
    p = gradlab.zeros(1, dtype=gradlab.float64, requires_grad=True)
    optimizer = make_optimizer([p])
    lr = optimizer.param_groups[0]["lr"]
    sizes = []
    for _ in range(steps):
        before = p.item()
        p.grad = gradlab.full((1,), grad, dtype=gradlab.float64)
        optimizer.step()
        sizes.append(abs(p.item() - before) / lr)
    return np.array(sizes)


def losses(make_optimizer, steps=100):
    """The regression's loss at each step under one optimizer."""
    x, y = make_data()
    gradlab.manual_seed(0)
    model = nn.Linear(2, 1)
    optimizer = make_optimizer(model.parameters())
    found = []
    for _ in range(steps):
        loss = nn.functional.mse_loss(model(x), y)
        found.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return found


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import plot_curves, plot_optimizer_paths, save_figure

    folder = Path(folder)
    paths = plot_optimizer_paths(
        "quadratic", ["sgd", "momentum", "rmsprop", "adam"], steps=60,
        title="0.5 x² + 10 y²: 60 steps from (-4.5, 2)")
    paths = save_figure(paths, folder / "paths.png", dpi=80)

    # Step size over the first steps, a constant gradient: what bias correction is for.
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    t = np.arange(1, 301)
    adam = step_sizes(lambda ps: gradlab.optim.Adam(ps, lr=1e-3), len(t))
    rms = step_sizes(lambda ps: gradlab.optim.RMSprop(ps, lr=1e-3), len(t))
    raw = (1 - 0.9**t) / np.sqrt(1 - 0.999**t)  # Adam's averages, not corrected
    ax.plot(t, raw, label="Adam without bias correction")
    ax.plot(t, rms, "--", label="RMSprop (alpha=0.99, no correction)")
    ax.plot(t, adam, label="Adam (corrected)", linewidth=2.2)
    ax.set_xscale("log")
    ax.set_xlabel("step t (same gradient every step)")
    ax.set_ylabel("step size / lr")
    ax.set_ylim(0, 10.5)
    ax.legend()
    bias = save_figure(fig, folder / "bias_correction.png", dpi=100)

    curves = {"SGD lr=0.008": losses(lambda ps: gradlab.optim.SGD(ps, lr=0.008)),
              "RMSprop lr=0.1": losses(lambda ps: gradlab.optim.RMSprop(ps, lr=0.1)),
              "Adam lr=0.5": losses(lambda ps: gradlab.optim.Adam(ps, lr=0.5))}
    fig = plot_curves(curves, log_scale=True, title="inputs of scale 10 and 0.1: mse loss")
    training = save_figure(fig, folder / "training.png", dpi=80)
    return [Path(paths), Path(bias), Path(training)]
