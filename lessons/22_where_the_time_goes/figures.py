"""Lesson 22's picture: for one MLP at batch sizes from 1 to 1024, how a training step's time
splits into the ops' array calls and the Python around them (measured with the profiler
when the figure is drawn, so it shows this machine)."""

from pathlib import Path

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.profiler import profile

BATCHES = (1, 4, 16, 64, 256, 1024)


def _split(batch: int) -> tuple[float, float]:
    """(ms in the ops' array calls, ms elsewhere) per step, the best of a few steps."""
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    x, y = gradlab.randn(batch, 256), gradlab.randint(0, 10, (batch,))
    best = None
    for _ in range(4):
        with profile() as prof:
            F.cross_entropy(model(x), y).backward()
        events = prof.events()
        inside = sum(e.self_cpu_time_total for e in events if e.kind == "op") / 1e3
        split = (inside, events.wall_us / 1e3 - inside)
        if best is None or sum(split) < sum(best):
            best = split
    return best


def _bars(fig) -> None:
    splits = [_split(b) for b in BATCHES]
    ax = fig.subplots()
    labels = [str(b) for b in BATCHES]
    inside = [s[0] for s in splits]
    around = [s[1] for s in splits]
    ax.bar(labels, inside, color="#4c78a8", label="inside the ops (NumPy)")
    ax.bar(labels, around, bottom=inside, color="#f58518",
           label="around them (Python: dispatch, graph, events)")
    for k, (i, a) in enumerate(splits):
        ax.text(k, i + a, f"{100 * i / (i + a):.0f}% in ops", ha="center", va="bottom",
                fontsize=8)
    ax.set_xlabel("batch size")
    ax.set_ylabel("ms per forward + backward (profiled)")
    ax.set_title("The share of a step spent computing grows with the batch", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")


def make(folder: Path) -> list[Path]:
    """Draw the picture into ``folder``; its path."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    fig = Figure(figsize=(7.2, 3.6), layout="constrained")
    _bars(fig)
    return [Path(save_figure(fig, Path(folder) / "time_split.png", dpi=100))]
