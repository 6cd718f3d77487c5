"""Lesson 6's pictures: training with and without zero_grad(), and the graph of two
losses that share one part."""

from pathlib import Path

import gradlab
from gradlab import nn, optim, viz

STEPS, LR = 40, 0.1


def fit(zero_grad: bool) -> list[float]:
    """Fit y = 2x + 1 (plus noise) with one Linear(1, 1); the loss at every step."""
    gradlab.manual_seed(0)
    x = gradlab.linspace(-1, 1, 32).reshape(32, 1)
    y = 2 * x + 1 + 0.1 * gradlab.randn(32, 1)
    model = nn.Linear(1, 1)
    optimizer = optim.SGD(model.parameters(), lr=LR)
    losses = []
    for _ in range(STEPS):
        if zero_grad:
            optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from gradlab.viz.plots import plot_curves, save_figure

    fig = plot_curves({"with optimizer.zero_grad()": fit(True),
                       "without: .grad keeps every old gradient": fit(False)},
                      title=f"fitting y = 2x + 1 with SGD(lr={LR})")
    fig.set_size_inches(6, 3.6)
    curves = save_figure(fig, folder / "zero_grad.png", dpi=100)

    gradlab.manual_seed(0)
    w = gradlab.randn(3, 2, requires_grad=True)
    w.name = "w"
    x = gradlab.randn(4, 3)
    h = (x @ w).tanh()
    loss_a, loss_b = (h**2).mean(), h.sum()
    graph = viz.render([loss_a, loss_b], folder / "shared.svg", view="backward")
    return [Path(curves), Path(graph)]
