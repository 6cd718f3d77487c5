"""Lesson 13's pictures: gradient descent below and above the stability limit, the shrink
factor |1 − lr·λ| of each direction against lr, steps against the condition number, and
learning-rate schedules."""

import math
from pathlib import Path

import numpy as np

from gradlab.optim import SGD, lr_scheduler
from gradlab.viz.plots import Surface, plot_lr_schedule, plot_optimizer_paths


def _bowl(x, y):
    return 0.5 * x**2 + 5.0 * y**2


BOWL = Surface("½(x² + 10y²)", _bowl, (-5.0, 5.0), (-3.0, 3.0), (-4.0, 2.0), ((0.0, 0.0),),
               steps=20)


def _steps(kappa: float, tol: float = 1e-6) -> int:
    """Gradient descent steps on ½(x² + κy²) from (1, 1) at lr = 2/(1 + κ)."""
    lams, x = np.array([1.0, kappa]), np.array([1.0, 1.0])
    lr, target = 2 / (1 + kappa), tol * 0.5 * (1 + kappa)
    for step in range(100_000):
        if 0.5 * np.sum(lams * x * x) <= target:
            return step
        x = x - lr * lams * x
    raise RuntimeError("did not converge")


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    runs = {f"{name}": (lambda ps, lr=lr: SGD(ps, lr=lr)) for name, lr in
            (("small steps", 0.05), ("near the limit", 0.18), ("over the limit", 0.21))}
    fig = plot_optimizer_paths(BOWL, runs, steps=20, title="20 steps of SGD; the limit is 0.2")
    fig.set_size_inches(7.0, 4.4)
    paths = save_figure(fig, folder / "paths.png", dpi=80)

    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    lrs = np.linspace(0, 0.25, 501)
    for lam, style in ((1.0, "--"), (10.0, ":")):
        ax.plot(lrs, np.abs(1 - lrs * lam), style, label=f"|1 − lr·λ|, λ = {lam:g}")
    ax.plot(lrs, np.maximum(np.abs(1 - lrs), np.abs(1 - 10 * lrs)), color="black",
            linewidth=2, label="rate: the larger of the two")
    ax.axhline(1.0, color="0.5", linewidth=0.8)
    ax.axvline(0.2, color="tab:red", linewidth=0.8)
    ax.text(0.204, 0.3, "2/λmax = 0.2", color="tab:red")
    best = 2 / 11
    ax.plot([best], [9 / 11], "o", color="black")
    ax.annotate("best: lr = 2/11, rate 9/11", (best, 9 / 11), xytext=(0.06, 0.45),
                arrowprops={"arrowstyle": "->"})
    ax.set_xlabel("learning rate")
    ax.set_ylabel("shrink factor per step")
    ax.set_ylim(0, 1.6)
    ax.legend(loc="lower left", fontsize=8)
    rates = save_figure(fig, folder / "rates.png", dpi=100)

    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    kappas = np.unique(np.round(np.logspace(0.3, 3, 19)))
    ax.loglog(kappas, [_steps(k) for k in kappas], "o",
              label="gradient descent, lr = 2/(λmin + λmax)")
    ax.loglog(kappas, kappas / 4 * math.log(1e6), "-", color="0.4",
              label="κ/4 · ln(10⁶)")
    ax.set_xlabel("condition number κ = λmax/λmin")
    ax.set_ylabel("steps until f ≤ 10⁻⁶ f(x₀)")
    ax.legend()
    kappa = save_figure(fig, folder / "steps_vs_kappa.png", dpi=100)

    def warmup_cosine(opt):
        return lr_scheduler.SequentialLR(
            opt, [lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=9),
                  lr_scheduler.CosineAnnealingLR(opt, T_max=90)], milestones=[10])

    fig = plot_lr_schedule({
        "warmup 10 + cosine": warmup_cosine,
        "cosine": lambda opt: lr_scheduler.CosineAnnealingLR(opt, T_max=100),
        "step: ×0.1 every 40": lambda opt: lr_scheduler.StepLR(opt, step_size=40, gamma=0.1),
    }, steps=100, lr=0.1, title="three schedules over 100 steps, base lr 0.1")
    fig.set_size_inches(6.0, 3.6)
    schedules = save_figure(fig, folder / "schedules.png", dpi=100)
    return [Path(paths), Path(rates), Path(kappa), Path(schedules)]
