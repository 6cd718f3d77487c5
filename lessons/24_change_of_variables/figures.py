"""Lesson 24's pictures: y = exp(x) squeezing and stretching two equal strips of x, and the
histogram of exp(Normal) samples against the LogNormal density (and against the density
with the Jacobian forgotten); a flow fitted to skewed data, against a Normal fit, with its
held-out log-likelihood step by step."""

import math
from pathlib import Path

import numpy as np

import gradlab
from gradlab import optim
from gradlab.distributions import (
    AffineTransform,
    ExpTransform,
    LogNormal,
    Normal,
    TransformedDistribution,
)

MU, SIGMA = 0.0, 0.6  # change_of_variables.png: x ~ Normal(MU, SIGMA), y = exp(x)
STRIPS = ((-1.2, -0.9, "#4c78a8"), (0.9, 1.2, "#f58518"))  # two strips of x, equally wide


def _f64(values) -> gradlab.Tensor:
    return gradlab.tensor(np.asarray(values, dtype=np.float64), dtype=gradlab.float64)


def _change(fig) -> None:
    left, middle, right = fig.subplots(1, 3, width_ratios=[1, 1, 1.35])
    normal = Normal(_f64(MU), _f64(SIGMA))
    xs = np.linspace(-2.2, 2.2, 400)
    px = normal.log_prob(_f64(xs)).exp().numpy()
    left.plot(xs, px, color="black", linewidth=1.4)
    for lo, hi, color in STRIPS:
        inside = (xs >= lo) & (xs <= hi)
        mass = float(normal.cdf(_f64(hi)).item() - normal.cdf(_f64(lo)).item())
        left.fill_between(xs[inside], px[inside], color=color, alpha=0.55)
        side = -0.55 if lo < 0 else 0.55  # beside the strip, clear of the curve
        left.text((lo + hi) / 2 + side, 0.3, f"P = {mass:.3f}", ha="center", fontsize=8,
                  color=color)
    left.set_xlabel("x")
    left.set_ylabel("density p(x)")
    left.set_title("x ~ Normal(0, 0.6): two strips\n0.3 wide, equally likely", fontsize=9.5)
    left.set_ylim(0, 0.8)

    middle.plot(xs, np.exp(xs), color="black", linewidth=1.4)
    for lo, hi, color in STRIPS:
        middle.axvspan(lo, hi, color=color, alpha=0.25)
        middle.axhspan(math.exp(lo), math.exp(hi), color=color, alpha=0.25)
        middle.text(-2.1, math.exp(hi) + 0.12, f"{math.exp(hi) - math.exp(lo):.2f} wide",
                    fontsize=8, color=color)
    middle.set_xlabel("x")
    middle.set_ylabel("y = eˣ")
    middle.set_title("exp squeezes the left strip,\nstretches the right one", fontsize=9.5)
    middle.set_xlim(-2.2, 2.2)
    middle.set_ylim(0, 5)

    gradlab.manual_seed(0)
    y = normal.sample((20000,)).exp().numpy()
    ys = np.linspace(0.01, 5, 500)
    ys_t = _f64(ys)
    right.hist(y, bins=np.linspace(0, 5, 61), density=True, color="#c9c9c9",
               label="exp of 20 000 Normal samples")
    right.plot(ys, LogNormal(_f64(MU), _f64(SIGMA)).log_prob(ys_t).exp().numpy(),
               color="black", linewidth=1.6, label="log q(y) = log p(log y) − log y")
    right.plot(ys, normal.log_prob(ys_t.log()).exp().numpy(), "--", color="#e45756",
               linewidth=1.4, label="p(log y): the Jacobian forgotten")
    for lo, hi, color in STRIPS:
        right.axvspan(math.exp(lo), math.exp(hi), color=color, alpha=0.3)
    right.set_xlabel("y")
    right.set_ylabel("density")
    right.set_title("The same probability on a longer strip\nis a thinner density", fontsize=9.5)
    right.set_xlim(0, 5)
    right.legend(fontsize=7.5, loc="upper right", framealpha=0.9)


def _flow(fig) -> None:
    """Task 3's flow on skewed data, trained here as the solution trains it."""
    rng = np.random.default_rng(0)
    mu, sigma = 1.0, 0.6
    train, test = _f64(np.exp(rng.normal(mu, sigma, 400))), _f64(np.exp(rng.normal(mu, sigma,
                                                                                 2000)))
    base = Normal(_f64(0.0), _f64(1.0))
    loc = gradlab.zeros((), dtype=gradlab.float64, requires_grad=True)
    u = gradlab.zeros((), dtype=gradlab.float64, requires_grad=True)
    opt = optim.Adam([loc, u], lr=0.05)
    held_out = []
    for _ in range(300):
        flow = TransformedDistribution(base, [AffineTransform(loc, u.exp()), ExpTransform()])
        loss = -flow.log_prob(train).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with gradlab.no_grad():
            held_out.append(flow.log_prob(test).mean().item())
    normal = Normal(train.mean(), train.std())
    truth = LogNormal(_f64(mu), _f64(sigma))

    left, right = fig.subplots(1, 2, width_ratios=[1.3, 1])
    ys = np.linspace(-1.5, 12, 540)
    ys_t = _f64(ys)
    left.hist(train.numpy(), bins=np.linspace(0, 12, 49), density=True, color="#c9c9c9",
              label="400 training points")
    with gradlab.no_grad():
        left.plot(ys, normal.log_prob(ys_t).exp().numpy(), "--", color="#e45756",
                  linewidth=1.4, label="Normal fit (mean, std)")
        inside = ys > 0  # the flow lives on y > 0, as the data do
        left.plot(ys[inside], flow.log_prob(_f64(ys[inside])).exp().numpy(), color="#4c78a8",
                  linewidth=1.8, label="the flow: exp(loc + scale·z)")
    left.axvline(0, color="#9a9a9a", linewidth=0.8)
    left.set_xlim(-1.5, 12)
    left.set_xlabel("y")
    left.set_ylabel("density")
    left.set_title(f"Fitted: loc = {loc.item():.3f}, scale = {u.exp().item():.3f}",
                   fontsize=9.5)
    left.legend(fontsize=7.5, loc="upper right", framealpha=0.9)

    with gradlab.no_grad():
        normal_ll = normal.log_prob(test).mean().item()
        true_ll = truth.log_prob(test).mean().item()
    right.plot(np.arange(1, 301), held_out, color="#4c78a8", linewidth=1.6, label="the flow")
    right.axhline(normal_ll, color="#e45756", linestyle="--", linewidth=1.2,
                  label=f"Normal fit: {normal_ll:.3f}")
    right.axhline(true_ll, color="black", linestyle=":", linewidth=1.2,
                  label=f"the true density: {true_ll:.3f}")
    right.set_ylim(true_ll - 0.8, true_ll + 0.12)
    right.set_xlabel("Adam step (lr = 0.05)")
    right.set_ylabel("mean log q on 2000 held-out points")
    right.set_title("Maximum likelihood, step by step", fontsize=9.5)
    right.legend(fontsize=7.5, loc="lower right", framealpha=0.9)


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    fig = Figure(figsize=(10.0, 3.5), layout="constrained")
    _change(fig)
    change = save_figure(fig, Path(folder) / "change_of_variables.png", dpi=100)

    fig = Figure(figsize=(9.0, 3.5), layout="constrained")
    _flow(fig)
    fit = save_figure(fig, Path(folder) / "flow_fit.png", dpi=100)
    return [Path(change), Path(fit)]
