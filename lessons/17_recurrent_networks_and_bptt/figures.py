"""Lesson 17's pictures: how the gradient's size changes back through time for three
sizes of W_h, and the graph of three unrolled steps (in full and truncated)."""

from pathlib import Path

import numpy as np

import gradlab
from gradlab import viz
from lessons.loading import load_module

HIDDEN, INPUTS, STEPS = 16, 4, 40
SCALES = (0.5, 1.0, 3.0)


def gradient_norms(scale: float) -> list[float]:
    """||dL/dh_t|| for t = 0..STEPS-1, L = sum(h_T), W_h = scale · (a random rotation)."""
    rng = np.random.default_rng(0)
    rotation, _ = np.linalg.qr(rng.standard_normal((HIDDEN, HIDDEN)))
    w_x = gradlab.tensor(rng.standard_normal((HIDDEN, INPUTS)) * 0.5)
    w_h = gradlab.tensor(scale * rotation, requires_grad=True)
    x = gradlab.tensor(rng.standard_normal((STEPS, 1, INPUTS)))
    h = gradlab.zeros(1, HIDDEN, dtype=gradlab.float64)
    states = []
    for t in range(STEPS):
        h = gradlab.tanh(x[t] @ w_x.T + h @ w_h.T)
        h.retain_grad()
        states.append(h)
    h.sum().backward()
    return [s.grad.norm().item() for s in states]


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    for scale in SCALES:
        found = gradient_norms(scale)
        ax.semilogy(range(STEPS), found, marker=".", label=f"W_h = {scale} × rotation")
    ax.set_xlabel("time step t (the loss is at t = 39)")
    ax.set_ylabel("‖∂L/∂h_t‖")
    ax.set_title("The gradient going back through time", fontsize=10)
    ax.legend(fontsize=8)
    norms = save_figure(fig, folder / "grad_norms.png", dpi=100)

    solution = load_module(Path(__file__).with_name("solution.py"), "gradlab_lesson_17_figures")
    gradlab.manual_seed(0)
    w_x, w_h, b = solution.init_params(2, 3)
    x = gradlab.randn(3, 1, 2)
    h0 = gradlab.zeros(1, 3)
    names = {"W_x": w_x, "W_h": w_h, "b": b}
    _, h3 = solution.rnn_forward(x, h0, (w_x, w_h, b))
    graph = viz.render(h3, folder / "graph.svg", params=names)
    x4 = gradlab.randn(4, 1, 2)
    outputs, _ = solution.rnn_forward_truncated(x4, h0, (w_x, w_h, b), 2)
    truncated = viz.render(outputs, folder / "graph_truncated.svg", params=names)
    return [Path(norms), Path(graph), Path(truncated)]
