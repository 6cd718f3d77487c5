"""Lesson 21's pictures: the graph of a traced residual block's replay (the same ops, in the
same module boxes, as the eager run), and what a trace freezes: a norm clip written with an
`if`, traced on a small input, against the same clip in tensor ops."""

import warnings
from pathlib import Path

import numpy as np

import gradlab
from gradlab import jit, nn, viz


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.bn = nn.Linear(4, 4), nn.BatchNorm1d(4)

    def forward(self, x):
        out = self.bn(self.fc(x))
        out += x
        return out.relu()


def _graph(folder: Path) -> str:
    gradlab.manual_seed(0)
    block = Block()
    traced = jit.trace(block, gradlab.randn(8, 4))
    out = traced(gradlab.randn(8, 4)).sum()
    return viz.render(out, folder / "graph.svg", model=block)


def _clip_with_if(x, max_norm=1.0):
    if x.norm() > max_norm:  # read into Python: a trace keeps the branch it saw
        return x * (max_norm / x.norm())
    return x


def _clip_in_tensor_ops(x, max_norm=1.0):
    return x * (max_norm / x.norm()).clamp(max=1.0)


def _frozen(fig) -> None:
    direction = gradlab.tensor([0.6, 0.8])  # norm 1
    scales = np.linspace(0.05, 3.0, 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jit.TracerWarning)
        frozen = jit.trace(_clip_with_if, direction * 0.1, check_trace=False)
    safe = jit.trace(_clip_in_tensor_ops, direction * 0.1, check_trace=False)
    ax = fig.subplots()
    for fn, label, style in ((_clip_with_if, "Python, run eagerly", dict(color="0.6", lw=6)),
                             (frozen, "the `if` version, traced on a small x", dict(
                                 color="#e45756", lw=2)),
                             (safe, "the tensor-op version, traced on a small x", dict(
                                 color="#4c78a8", lw=2, linestyle="--"))):
        norms = [float(fn(direction * float(s)).norm()) for s in scales]
        ax.plot(scales, norms, label=label, **style)
    ax.axvline(0.1, color="0.4", linestyle=":", linewidth=1)
    ax.text(0.13, 2.75, "traced here", fontsize=8, color="0.3")
    ax.set_xlabel("norm of the input x")
    ax.set_ylabel("norm of clip_to_norm(x, 1)")
    ax.set_title("A trace keeps the branch it saw: the traced `if` never clips", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    folder = Path(folder)
    graph = _graph(folder)
    fig = Figure(figsize=(7.2, 3.4), layout="constrained")
    _frozen(fig)
    frozen = save_figure(fig, folder / "frozen.png", dpi=100)
    return [Path(graph), Path(frozen)]
