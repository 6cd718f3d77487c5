"""Regenerate the graph images of the README: ``python assets/images/make_images.py``.

Each picture is drawn from a tiny program below, with a fixed random seed, so
running this again gives the same files (the same DOT text, byte for byte).
Needs Graphviz's ``dot`` program.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # run from a source checkout

import gradlab  # noqa: E402
import gradlab.nn as nn  # noqa: E402
import gradlab.nn.functional as F  # noqa: E402
from gradlab import viz  # noqa: E402
from gradlab.examples.digits_cnn import DigitsCNN  # noqa: E402


def scalar_expression() -> None:
    """The backprop lecture's diagram: L = (a*b + c) * f, every value with its data and grad."""
    a = gradlab.tensor(2.0, requires_grad=True, name="a")
    b = gradlab.tensor(-3.0, requires_grad=True, name="b")
    c = gradlab.tensor(10.0, requires_grad=True, name="c")
    f = gradlab.tensor(-2.0, requires_grad=True, name="f")
    with viz.trace() as tape:  # remembers intermediate values and the gradients they got
        e = a * b
        e.name = "e"
        d = e + c
        d.name = "d"
        L = d * f
        L.name = "L"
        L.backward()
    viz.render(L, os.path.join(HERE, "scalar_data_grad.svg"), trace=tape, show_values=True,
               show_grads=True)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(2, 16)
        self.act = nn.Tanh()
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        return self.out(self.act(self.hidden(x)))


def mlp() -> None:
    """A small MLP: the forward view with its module clusters, then the backward view."""
    gradlab.manual_seed(0)
    model = MLP()
    x = gradlab.randn(8, 2)
    x.name = "x"
    target = gradlab.randn(8, 2)
    target.name = "target"
    with viz.trace() as tape:
        loss = F.mse_loss(model(x), target)
        loss.name = "loss"
        # Captured before backward, while the saved tensors are still there.
        graph = viz.capture(loss, params=dict(model.named_parameters()), trace=tape)
        loss.backward()
    graph.update_grads()
    graph.module_types = {p: type(m).__name__ for p, m in model.named_modules()}
    viz.render(graph, os.path.join(HERE, "mlp_forward.svg"))
    viz.render(graph, os.path.join(HERE, "mlp_backward.svg"), view="backward")


def cnn() -> None:
    """The digits CNN at depth=1: each stage of the model as one box."""
    gradlab.manual_seed(0)
    model = DigitsCNN()
    x = gradlab.randn(4, 1, 8, 8)
    x.name = "images"
    with viz.trace() as tape:
        loss = F.cross_entropy(model(x), gradlab.tensor([3, 1, 4, 1]))
        loss.name = "loss"
    viz.render(loss, os.path.join(HERE, "cnn_depth1.svg"), model=model, trace=tape, depth=1)
    viz.render(loss, os.path.join(HERE, "cnn_full.svg"), model=model, trace=tape)


def plots() -> None:
    """Two of the matplotlib figures: optimizers on Rosenbrock's valley, memory by category."""
    viz.plot_optimizer_paths("rosenbrock", ["sgd", "momentum", "rmsprop", "adam"],
                             path=os.path.join(HERE, "optimizer_paths.png"))
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = gradlab.optim.Adam(model.parameters(), lr=1e-3)
    x, y = gradlab.randn(256, 64), gradlab.randint(0, 10, (256,))
    recorded = []
    gradlab.reset_peak_memory_stats()
    before = gradlab.memory_stats()  # what exists already: the parameters, the data
    with gradlab.events.subscribe(recorded.append):
        for _ in range(3):
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
    viz.plot_memory(recorded, initial=before, title="3 Adam steps of a 64-128-10 MLP, "
                    "batch 256", path=os.path.join(HERE, "memory.png"))


if __name__ == "__main__":
    scalar_expression()
    mlp()
    cnn()
    plots()
    print("wrote", ", ".join(sorted(n for n in os.listdir(HERE) if n.endswith(".svg"))))
