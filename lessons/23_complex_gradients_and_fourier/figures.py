"""Lesson 23's pictures: gradient descent in the complex plane, with z.grad and with the
chain rule's conjugate forgotten, over the contour lines of the loss; and a filter learned
one complex gain per frequency, against the true one."""

import math
from pathlib import Path

import numpy as np

import gradlab
from gradlab import fft

TARGET = complex(0.6, 1.4)  # descent.png's loss is |z³ − TARGET|²


def _descend(z0: complex, lr: float, steps: int, conjugate: bool = True) -> np.ndarray:
    """The points of gradient descent on |z³ − TARGET|² from z0. With ``conjugate``, the
    steps follow gradlab's z.grad; without, the chain rule's conj(3z²) is replaced by 3z²."""
    z = gradlab.tensor(z0, dtype=gradlab.complex128, requires_grad=True)
    path = [z0]
    for _ in range(steps):
        if conjugate:
            loss = (z ** 3 - TARGET).abs() ** 2
            loss.backward()
            grad = z.grad
        else:  # the backward formula of z³ without its conj: grad_w · f′(z)
            with gradlab.no_grad():
                grad = 2 * (z ** 3 - TARGET) * 3 * z ** 2
        with gradlab.no_grad():
            z -= lr * grad
        z.grad = None
        path.append(complex(z.item()))
    return np.array(path)


def _plane(ax) -> None:
    re, im = np.meshgrid(np.linspace(-1.6, 1.6, 301), np.linspace(-1.6, 1.6, 301))
    z = re + 1j * im
    loss = np.abs(z ** 3 - TARGET) ** 2
    ax.contour(re, im, np.log10(loss + 1e-3), levels=14, colors="#b0b0b0", linewidths=0.7)
    roots = [abs(TARGET) ** (1 / 3) * np.exp(1j * (np.angle(TARGET) + 2 * math.pi * k) / 3)
             for k in range(3)]
    ax.scatter([r.real for r in roots], [r.imag for r in roots], marker="*", s=110,
               color="black", zorder=4, label="the minima: z³ = 0.6 + 1.4i")
    starts = [complex(0.9, -0.2), complex(-0.5, -0.3), complex(0.3, 0.2), complex(-1.3, 0.7),
              complex(0.2, 1.45)]
    for k, z0 in enumerate(starts):
        path = _descend(z0, lr=0.004, steps=400)
        ax.plot(path.real, path.imag, "-", color="#4c78a8", linewidth=1.4,
                label="z −= lr·z.grad: to a minimum" if k == 0 else None)
        ax.plot([z0.real], [z0.imag], "o", color="#4c78a8", markersize=4)
    for k, z0 in enumerate((complex(0.9, -0.2), complex(-1.3, 0.7))):
        wrong = _descend(z0, lr=0.004, steps=400, conjugate=False)
        ax.plot(wrong.real, wrong.imag, "--", color="#e45756", linewidth=1.4,
                label="conj(f′) forgotten: stuck at 0, L = 2.32" if k == 0 else None)
    ax.set_xlim(-1.6, 1.6)
    ax.set_ylim(-1.6, 1.6)
    ax.set_aspect("equal")
    ax.set_xlabel("x = Re z")
    ax.set_ylabel("y = Im z")
    ax.set_title("Descending |z³ − (0.6 + 1.4i)|² in the plane", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1,
              frameon=False)


def _filter(fig) -> None:
    """Learn the frequency response of an echo from 16 noisy examples, as in task 3."""
    n, batch = 64, 16
    rng = np.random.default_rng(0)
    h = np.zeros(n)
    h[[0, 1, 2, 5]] = [0.5, 0.3, 0.15, 0.4]  # a short blur and an echo 5 samples later
    x = rng.normal(size=(batch, n))
    y = sum(h[k] * np.roll(x, k, axis=-1) for k in range(n)) + 0.1 * rng.normal(size=(batch, n))
    xt, yt = gradlab.tensor(x), gradlab.tensor(y)
    w = gradlab.zeros(n // 2 + 1, dtype=gradlab.complex128, requires_grad=True)
    for _ in range(300):
        loss = ((fft.irfft(w * fft.rfft(xt), n=n) - yt) ** 2).sum(dim=-1).mean()
        loss.backward()
        with gradlab.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    freq = fft.rfftfreq(n).numpy()  # cycles per sample, 0 to 0.5
    true = np.fft.rfft(h)
    learned = w.detach().numpy()

    left, right = fig.subfigures(1, 2, width_ratios=[1, 1.25])
    ax = left.subplots()
    t = np.arange(n)
    ax.plot(t, x[0], color="#9a9a9a", linewidth=1.2, label="x, an input")
    ax.plot(t, y[0], color="#f58518", linewidth=1.4, label="y, the filter's output")
    ax.set_xlabel("sample t")
    ax.set_title("Blur + echo, 5 samples later", fontsize=10)
    top_value = float(max(x[0].max(), y[0].max()))
    ax.set_ylim(float(min(x[0].min(), y[0].min())) - 0.2, top_value + 1.0)
    ax.legend(fontsize=7.5, loc="upper center", ncol=2, framealpha=0.9)

    top, bottom = right.subplots(2, 1, sharex=True)
    top.plot(freq, np.abs(true), color="#4c78a8", linewidth=1.5, label="true filter H")
    top.plot(freq, np.abs(learned), "o", color="#f58518", markersize=3,
             label="learned w (16 noisy examples)")
    top.set_ylabel("gain |w|")
    top.set_title("One complex gain per rfft bin", fontsize=10)
    top.legend(fontsize=7.5, loc="upper right", framealpha=0.9)
    wrapped = np.angle(true)
    jumps = np.abs(np.diff(wrapped)) > math.pi  # break the line where the angle wraps
    line_f = np.insert(freq, np.flatnonzero(jumps) + 1, np.nan)
    line_p = np.insert(wrapped, np.flatnonzero(jumps) + 1, np.nan)
    bottom.plot(line_f, line_p, color="#4c78a8", linewidth=1.5)
    bottom.plot(freq, np.angle(learned), "o", color="#f58518", markersize=3)
    bottom.set_ylim(-math.pi * 1.1, math.pi * 1.1)
    bottom.set_yticks([-math.pi, 0, math.pi], ["−π", "0", "π"])
    bottom.set_ylabel("phase angle(w)")
    bottom.set_xlabel("frequency, cycles per sample (rfftfreq)")


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    fig = Figure(figsize=(4.6, 5.2), layout="constrained")
    _plane(fig.subplots())
    plane = save_figure(fig, Path(folder) / "descent.png", dpi=100)

    fig = Figure(figsize=(8.4, 3.8), layout="constrained")
    _filter(fig)
    spectrum = save_figure(fig, Path(folder) / "filter.png", dpi=100)
    return [Path(plane), Path(spectrum)]
