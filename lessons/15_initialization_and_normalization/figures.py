"""Lesson 15's pictures: the activations' std through 20 ReLU layers for five inits, their
histograms per layer (nn.Linear's default init against Kaiming's), and the graph a layer
norm written from gradlab ops records."""

from pathlib import Path

import gradlab
from gradlab import nn, viz

DEPTH, WIDTH, BATCH = 20, 256, 512

INITS = {
    "N(0, 0.01²)": lambda w: nn.init.normal_(w, std=0.01),
    "nn.Linear's default": lambda w: w,
    "Xavier (normal)": nn.init.xavier_normal_,
    "Kaiming (normal, relu)": lambda w: nn.init.kaiming_normal_(w, nonlinearity="relu"),
    "N(0, 0.1²)": lambda w: nn.init.normal_(w, std=0.1),
}


def deep_relu_net(init):
    """DEPTH blocks of Linear(WIDTH, WIDTH, bias=False) + ReLU, weights set by init."""
    layers = []
    for _ in range(DEPTH):
        linear = nn.Linear(WIDTH, WIDTH, bias=False)
        init(linear.weight)
        layers += [linear, nn.ReLU()]
    return nn.Sequential(*layers)


def layer_norm(x, weight, bias, eps=1e-5):
    """The lesson's layer norm, from gradlab ops (as in solution.py)."""
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / (var + eps).sqrt() * weight + bias


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import capture_activations, plot_histograms, save_figure

    folder = Path(folder)
    gradlab.manual_seed(0)
    x = gradlab.randn(BATCH, WIDTH)

    # The std after each ReLU, for each init: one real forward pass per line.
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    layers = range(1, DEPTH + 1)
    outputs = {}
    for name, init in INITS.items():
        gradlab.manual_seed(1)
        captured = capture_activations(deep_relu_net(init), x)
        outputs[name] = captured
        stds = [captured[str(2 * i + 1)].std().item() for i in range(DEPTH)]
        ax.semilogy(layers, stds, marker="o", markersize=3, label=name)
    ax.set_xlabel(f"layer (Linear {WIDTH}→{WIDTH} + ReLU)")
    ax.set_ylabel("std of the activations")
    ax.set_xticks([1, 5, 10, 15, 20])
    ax.legend(fontsize=8)
    depth = save_figure(fig, folder / "depth_std.png", dpi=100)

    # Histograms of the Linear outputs (before the ReLU) at a few depths, two inits.
    chosen = {}
    for name, short in (("nn.Linear's default", "default"), ("Kaiming (normal, relu)", "Kaiming")):
        for layer in (1, 5, 10, 20):
            chosen[f"{short}: layer {layer}"] = outputs[name][str(2 * (layer - 1))]
    fig = plot_histograms(chosen, ncols=4, bins=40,
                          title="Linear outputs per layer: nn.Linear's default init (top), "
                                "Kaiming (bottom)")
    hist = save_figure(fig, folder / "histograms.png", dpi=70)

    # The graph of layer norm written from ops.
    h = gradlab.tensor([[1.0, 2.0, 4.0, 9.0], [0.5, -0.5, 1.5, 2.5]], requires_grad=True)
    weight = gradlab.ones(4, requires_grad=True)
    bias = gradlab.zeros(4, requires_grad=True)
    h.name, weight.name, bias.name = "x", "weight", "bias"
    graph = viz.render(layer_norm(h, weight, bias), folder / "graph.svg")
    return [Path(depth), Path(hist), Path(graph)]
