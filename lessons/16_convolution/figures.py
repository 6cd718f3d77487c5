"""Lesson 16's pictures: a kernel sliding over a digit, im2col's columns, and the graph
of a convolution written as im2col + matmul."""

from pathlib import Path

import numpy as np

import gradlab
import gradlab.nn.functional as F
from gradlab import viz
from lessons.loading import load_module

EDGE = np.array([[-1.0, 0.0, 1.0]] * 3)  # "brighter on the right than on the left?"


def _grid(ax, values, title, cmap, *, numbers=False, vmax=None):
    vmax = np.abs(values).max() if vmax is None else vmax
    low = -vmax if cmap == "RdBu_r" else 0
    ax.imshow(values, cmap=cmap, vmin=low, vmax=vmax)
    ax.set_title(title, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    if numbers:
        for (r, q), v in np.ndenumerate(values):
            ax.text(q, r, f"{v:g}", ha="center", va="center", fontsize=8,
                    color="white" if abs(v) > 0.6 * vmax else "black")


def _box(ax, top, left, size, color):
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((left - 0.5, top - 0.5), size, size, fill=False, lw=2.2, ec=color))


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    # A digit from the 8x8 set, the edge kernel, and the feature map it makes.
    images, labels = gradlab.datasets.load_digits()
    index = int((labels == 0).nonzero()[0, 0])
    digit = images[index:index + 1]                                   # (1, 1, 8, 8)
    kernel = gradlab.tensor(EDGE, dtype=gradlab.float32).reshape(1, 1, 3, 3)
    fmap = F.conv2d(digit, kernel)[0, 0].numpy()
    fig = Figure(figsize=(7.2, 2.9), layout="constrained")
    axes = fig.subplots(1, 3, width_ratios=[8, 3.6, 6])
    _grid(axes[0], digit[0, 0].numpy(), "input 8x8 (a digit 0)", "gray_r")
    _grid(axes[1], EDGE, "kernel 3x3", "RdBu_r", numbers=True)
    _grid(axes[2], fmap, "feature map 6x6\n(red: more ink to the right)", "RdBu_r")
    top, left = 2, 0
    _box(axes[0], top, left, 3, "tab:orange")
    _box(axes[2], top, left, 1, "tab:orange")
    axes[2].text(left, top, f"{fmap[top, left]:.2f}", ha="center", va="center", fontsize=7,
                 color="white")
    feature_map = save_figure(fig, folder / "feature_map.png", dpi=100)

    # im2col of a 4x4 input with a 3x3 kernel: four windows become four columns.
    solution = load_module(Path(__file__).with_name("solution.py"), "gradlab_lesson_16_figures")
    x = gradlab.arange(1.0, 17.0).reshape(1, 1, 4, 4)
    cols = solution.im2col(x, (3, 3))[0].numpy()                      # (9, 4)
    fig = Figure(figsize=(6, 3.2), layout="constrained")
    axes = fig.subplots(1, 2, width_ratios=[4, 4])
    _grid(axes[0], x[0, 0].numpy(), "input 4x4", "Blues", numbers=True, vmax=30)
    _box(axes[0], 1, 1, 3, "tab:orange")
    _grid(axes[1], cols, "columns 9x4: one per window", "Blues", numbers=True, vmax=30)
    from matplotlib.patches import Rectangle

    axes[1].add_patch(Rectangle((3 - 0.5, -0.5), 1, 9, fill=False, lw=2.2, ec="tab:orange"))
    axes[1].set_xlabel("output position (0,0) (0,1) (1,0) (1,1)", fontsize=8)
    axes[1].set_ylabel("kernel offset (i, j)", fontsize=8)
    im2col = save_figure(fig, folder / "im2col.png", dpi=100)

    # The graph of conv2d_im2col on a 1x1x3x3 input with a 2x2 kernel.
    gradlab.manual_seed(0)
    x = gradlab.randn(1, 1, 3, 3, requires_grad=True)
    x.name = "x"
    weight = gradlab.randn(1, 1, 2, 2, requires_grad=True)
    weight.name = "weight"
    bias = gradlab.zeros(1, requires_grad=True)
    bias.name = "bias"
    y = solution.conv2d_im2col(x, weight, bias)
    graph = viz.render(y, folder / "graph.svg", params={"x": x, "weight": weight, "bias": bias})
    return [Path(feature_map), Path(im2col), Path(graph)]
