"""Lesson 4's pictures: softplus's backward graph with what each node saved, and the
curves softplus, sigmoid and the sigmoid's slope (each the slope of the one before)."""

from pathlib import Path

import numpy as np

import gradlab
from gradlab import viz


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    # softplus(x) = ln(1 + e^x) with gradlab's own ops: exp saves its output, log its input.
    x = gradlab.tensor([-1.0, 0.0, 2.0], dtype=gradlab.float64, requires_grad=True)
    x.name = "x"
    e = x.exp()
    e.name = "e^x"
    u = 1 + e
    u.name = "1 + e^x"
    y = u.log()
    y.name = "softplus"
    graph = viz.render(y, folder / "softplus_backward.svg", view="backward")

    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    xs = np.linspace(-5, 5, 401)
    s = 1 / (1 + np.exp(-xs))
    ax.plot(xs, np.logaddexp(0, xs), label="softplus(x) = ln(1 + eˣ)")
    ax.plot(xs, s, "--", label="σ(x): the slope of softplus")
    ax.plot(xs, s * (1 - s), ":", linewidth=2, label="σ(x)(1 − σ(x)): the slope of σ")
    ax.axhline(0, color="0.7", linewidth=0.8)
    ax.set_ylim(-0.2, 3)
    ax.set_xlabel("x")
    ax.legend(loc="upper left")
    curves = save_figure(fig, folder / "slopes.png", dpi=100)
    del e, u
    return [Path(graph), Path(curves)]
