"""Small programs whose graphs the viz tests draw (and whose DOT text is kept as golden files)."""

from __future__ import annotations

import gradlab
import gradlab.nn as nn
import gradlab.nn.functional as F
from gradlab import viz


def scalar():
    """L = (a*b + c) * f, traced: every value and gradient is known."""
    a = gradlab.tensor(2.0, requires_grad=True, name="a")
    b = gradlab.tensor(-3.0, requires_grad=True, name="b")
    c = gradlab.tensor(10.0, requires_grad=True, name="c")
    f = gradlab.tensor(-2.0, requires_grad=True, name="f")
    with viz.trace() as tape:
        e = a * b
        e.name = "e"
        d = e + c
        d.name = "d"
        L = d * f
        L.name = "L"
        L.backward()
    return L, tape, (a, b, c, d, e, f)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(self.act(self.hidden(x)))


def mlp():
    """A 3-4-2 MLP and an MSE loss, traced; returns (loss, model, tape, x)."""
    gradlab.manual_seed(0)
    model = MLP()
    x = gradlab.randn(5, 3)
    x.name = "x"
    with viz.trace() as tape:
        loss = F.mse_loss(model(x), gradlab.zeros(5, 2))
        loss.name = "loss"
    return loss, model, tape, x


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(x).tanh() + x


def deep(blocks: int = 6, width: int = 4):
    """A stack of identical residual blocks: ``layers.0`` ... ``layers.{blocks-1}``."""
    gradlab.manual_seed(0)

    class Deep(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.Sequential(*[Block(width) for _ in range(blocks)])
            self.head = nn.Linear(width, 1)

        def forward(self, x):
            return self.head(self.layers(x))

    model = Deep()
    loss = model(gradlab.randn(2, width)).sum()
    return loss, model
