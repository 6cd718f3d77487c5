"""Lesson 18's pictures: where the backends sit, the memory of three training steps by
category, and why GPU timing needs synchronize (a schematic)."""

from pathlib import Path

import gradlab
import gradlab.nn.functional as F
from gradlab import events, nn


def _box(ax, x, y, w, h, text, color):
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", fc=color, ec="0.25"))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=9)


def _arrow(ax, start, end):
    ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "color": "0.25"})


def _layers(fig) -> None:
    ax = fig.add_subplot()
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 6)
    ax.axis("off")
    _box(ax, 2.5, 4.8, 5, 0.9, "your code: model(x), loss.backward(), opt.step()", "#dbe8f6")
    _box(ax, 2.5, 3.4, 5, 0.9, "gradlab ops: one Function per op\nxp = backend.xp; xp.exp(a) ...",
         "#dbe8f6")
    _box(ax, 0.6, 1.7, 3.6, 1.0, "NumpyBackend\nxp = numpy", "#f6e3c6")
    _box(ax, 5.8, 1.7, 3.6, 1.0, "CupyBackend\nxp = cupy", "#f6e3c6")
    _box(ax, 0.6, 0.2, 3.6, 0.9, "CPU: device('cpu')", "#e3f0d9")
    _box(ax, 5.8, 0.2, 3.6, 0.9, "GPU: device('cuda:0')", "#e3f0d9")
    _arrow(ax, (5, 4.8), (5, 4.32))
    _arrow(ax, (4.2, 3.4), (2.6, 2.72))
    _arrow(ax, (5.8, 3.4), (7.4, 2.72))
    _arrow(ax, (2.4, 1.7), (2.4, 1.12))
    _arrow(ax, (7.6, 1.7), (7.6, 1.12))
    ax.text(5, 2.2, "x.device\npicks one", ha="center", va="center", fontsize=8, color="0.3")


def _memory_events() -> tuple[list, dict]:
    """The events of three training steps of a small MLP on the CPU, and the memory
    figures from before them."""
    gradlab.manual_seed(0)
    images, labels = gradlab.datasets.load_digits()
    x, y = images[:256].flatten(1).clone(), labels[:256].clone()
    del images, labels                        # only the batch stays: a clearer picture
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = gradlab.optim.Adam(model.parameters(), lr=1e-3)
    found = []
    before = gradlab.memory.memory_stats("cpu")
    subscription = events.subscribe(found.append)
    try:
        for _ in range(3):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    finally:
        subscription.remove()
    return found, before


def _timeline(fig) -> None:
    ax = fig.add_subplot()
    launches = [(0.0, "matmul"), (0.4, "add"), (0.8, "relu"), (1.2, "matmul")]
    runs = [(0.3, 2.2), (2.5, 0.6), (3.1, 0.6), (3.7, 2.2)]
    for (t, name), (start, width) in zip(launches, runs):
        ax.broken_barh([(t, 0.3)], (2.1, 0.7), color="#4c78a8")
        ax.text(t + 0.15, 3.0, name, ha="center", fontsize=7, rotation=45)
        ax.broken_barh([(start, width)], (0.6, 0.7), color="#f58518", ec="white")
    ax.axvline(1.6, color="tab:red", ls="--")
    ax.text(1.65, 3.55, "time.perf_counter()\nwithout synchronize", color="tab:red", fontsize=8,
            va="top")
    ax.axvline(5.9, color="tab:green", ls="--")
    ax.text(5.85, 3.55, "after\ngradlab.cuda.synchronize()", color="tab:green", fontsize=8,
            ha="right", va="top")
    ax.set_yticks([0.95, 2.45], ["GPU runs", "Python\nqueues"])
    ax.set_xlabel("time (schematic, not measured)")
    ax.set_ylim(0, 3.9)
    ax.set_xlim(-0.2, 6.4)
    ax.set_xticks([])


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import plot_memory, save_figure

    fig = Figure(figsize=(6, 3.6), layout="constrained")
    _layers(fig)
    layers = save_figure(fig, folder / "backends.png", dpi=100)

    found, before = _memory_events()
    fig = plot_memory(found, device="cpu", initial=before,
                      title="three training steps of a 64-256-10 MLP (Adam), on the CPU")
    fig.set_size_inches(7.2, 3.8)
    memory = save_figure(fig, folder / "memory.png", dpi=100)

    fig = Figure(figsize=(6, 2.8), layout="constrained")
    _timeline(fig)
    timing = save_figure(fig, folder / "synchronize.png", dpi=100)
    return [Path(layers), Path(memory), Path(timing)]
