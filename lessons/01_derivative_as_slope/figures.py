"""Lesson 1's pictures: the tangent at x = 1.5, the error of a difference against h,
and the graph gradlab records for f."""

from pathlib import Path

import numpy as np

import gradlab
from gradlab import viz


def f(x):
    return x**3 - 2 * x


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    # The tangent line at 1.5 over the curve.
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    xs = np.linspace(-2, 2.5, 200)
    x0, slope = 1.5, 3 * 1.5**2 - 2
    ax.plot(xs, f(xs), label="f(x) = x³ − 2x")
    ax.plot(xs, f(x0) + slope * (xs - x0), "--", label=f"tangent at 1.5, slope {slope}")
    ax.scatter([x0], [f(x0)], zorder=3)
    ax.set_ylim(-6, 12)
    ax.set_xlabel("x")
    ax.legend()
    tangent = save_figure(fig, folder / "tangent.png", dpi=100)

    # The error of both differences against the step h: a valley, not a slope.
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    hs = np.logspace(-15, -1, 57)
    one_sided = [abs((f(x0 + h) - f(x0)) / h - slope) for h in hs]
    central = [abs((f(x0 + h) - f(x0 - h)) / (2 * h) - slope) for h in hs]
    ax.loglog(hs, one_sided, label="one-sided (f(x+h) − f(x)) / h")
    ax.loglog(hs, central, label="central (f(x+h) − f(x−h)) / 2h")
    ax.set_xlabel("step h")
    ax.set_ylabel("error of the slope at x = 1.5")
    ax.legend()
    step_size = save_figure(fig, folder / "step_size.png", dpi=100)

    x = gradlab.tensor(1.5, dtype=gradlab.float64, requires_grad=True)
    x.name = "x"
    graph = viz.render(f(x), folder / "graph.svg", show_values=True)
    return [Path(tangent), Path(step_size), Path(graph)]
