"""Lesson 10's pictures: where a naive cross-entropy breaks in float32, loss curves for
three learning rates and a forgotten zero_grad, and the graph of one training step."""

from pathlib import Path

import numpy as np

import gradlab
import gradlab.nn.functional as F
from gradlab import nn, viz
from gradlab.datasets import make_blobs

CENTERS = [[-2.0, 0.0], [2.0, 0.0], [0.0, 2.5]]


def _overflow(path: Path) -> Path:
    """Two classes, logits (m, 0), target class 0: the loss log(1 + exp(-m)) in float32."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    m = np.linspace(-120, 120, 481).astype(np.float32)
    zero = np.float32(0)
    with np.errstate(all="ignore"):
        naive = -np.log(np.exp(m) / (np.exp(m) + np.exp(zero)))
        top = np.maximum(m, zero)
        stable = -(m - top - np.log(np.exp(m - top) + np.exp(zero - top)))
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ax.plot(m, stable, lw=4, alpha=0.4, label="with the max trick")
    shown = np.where(np.isfinite(naive), naive, np.nan)
    ax.plot(m, shown, lw=1.5, label="naive: -log(exp(m) / (exp(m) + exp(0)))")
    bad_inf = m[np.isinf(naive)]
    bad_nan = m[np.isnan(naive)]
    if bad_inf.size:
        ax.axvspan(bad_inf.min(), bad_inf.max(), color="tab:red", alpha=0.12,
                   label=f"naive gives inf (m < {bad_inf.max():.0f})")
    if bad_nan.size:
        ax.axvspan(bad_nan.min(), bad_nan.max(), color="tab:purple", alpha=0.12,
                   label=f"naive gives NaN (m > {bad_nan.min():.0f})")
    ax.set_xlabel("margin m = correct logit − other logit (float32)")
    ax.set_ylabel("cross-entropy")
    ax.legend(fontsize=8, loc="upper center")
    return Path(save_figure(fig, path, dpi=100))


def _model():
    gradlab.manual_seed(1)
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))


def _losses(X, y, lr, zero_grad=True, steps=60):
    model = _model()
    optimizer = gradlab.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        if zero_grad:
            optimizer.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from gradlab.viz.plots import plot_curves

    folder = Path(folder)
    overflow = _overflow(folder / "overflow.png")

    gradlab.manual_seed(0)
    X, y = make_blobs(150, centers=CENTERS, cluster_std=0.8)
    curves = {f"lr {lr}": _losses(X, y, lr) for lr in (0.02, 0.2, 5.0)}
    curves["lr 0.2, no zero_grad"] = _losses(X, y, 0.2, zero_grad=False)
    plot_curves(curves, log_scale=True, title="Linear(2, 16), ReLU, Linear(16, 3) on 3 blobs",
                path=folder / "loss_curves.png")

    model = _model()
    loss = F.cross_entropy(model(X), y)
    loss.name = "loss"
    graph = viz.render(loss, folder / "graph.svg", model=model)
    return [overflow, folder / "loss_curves.png", Path(graph)]
