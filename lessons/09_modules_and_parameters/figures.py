"""Lesson 9's pictures: how the scale of activations changes through layers under three
inits, and the graph of a small MLP with its parameters named by the modules."""

from pathlib import Path

import gradlab
import gradlab.nn.functional as F
from gradlab import nn, viz


class MLP(nn.Module):
    """The lesson's MLP, built from nn.Linear (the student writes the Linear)."""

    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])

    def forward(self, x):
        for k, layer in enumerate(self.layers):
            x = layer(x)
            if k < len(self.layers) - 1:
                x = F.relu(x)
        return x


def _activation_scale(path: Path) -> Path:
    """Std of the activations after each of 6 Linear(256, 256) + ReLU layers."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    inits = [
        ("weights ~ N(0, 1)", lambda w: nn.init.normal_(w, 0.0, 1.0)),
        ("nn.Linear's U(±1/√256)", lambda w: None),
        ("Kaiming: N(0, 2/256)", lambda w: nn.init.kaiming_normal_(w, nonlinearity="relu")),
    ]
    gradlab.manual_seed(0)
    x = gradlab.randn(1000, 256)
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    for label, init in inits:
        gradlab.manual_seed(1)
        h, stds = x, [x.std().item()]
        with gradlab.no_grad():
            for _ in range(6):
                layer = nn.Linear(256, 256, bias=False)
                init(layer.weight)
                h = F.relu(layer(h))
                stds.append(h.std().item())
        ax.semilogy(range(7), stds, marker="o", label=label)
    ax.set_xlabel("layer (Linear(256, 256) then ReLU); 0 is the input")
    ax.set_ylabel("std of the activations")
    ax.legend()
    return Path(save_figure(fig, path, dpi=100))


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    folder = Path(folder)
    scale = _activation_scale(folder / "activation_scale.png")

    gradlab.manual_seed(0)
    model = MLP([2, 4, 3])
    loss = F.cross_entropy(model(gradlab.randn(5, 2)), gradlab.tensor([0, 1, 2, 1, 0]))
    loss.name = "loss"
    graph = viz.render(loss, folder / "graph.svg", model=model)
    return [scale, Path(graph)]
