"""Lesson 15: initialization and normalization (the reference solution)."""

import math

import gradlab
from gradlab import nn


def kaiming_normal_(weight):
    """Fill weight, in place, from N(0, 2 / fan_in): He's init for layers followed by ReLU.

    weight is (out_features, in_features) for a Linear layer and (out_channels,
    in_channels, *kernel) for a convolution; returns weight itself.
    """
    # Each output sums in_channels * (kernel size) inputs: that is fan_in.
    fan_in = weight.shape[1] * math.prod(weight.shape[2:])
    std = math.sqrt(2.0 / fan_in)
    with gradlab.no_grad():  # a weight requires grad: change it outside the graph
        weight.copy_(gradlab.randn(*weight.shape, dtype=weight.dtype) * std)
    return weight


def layer_norm(x, weight, bias, eps=1e-5):
    """Normalize each sample over its last dim, then scale by weight and shift by bias."""
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # biased: divide by D, not D - 1
    return (x - mean) / (var + eps).sqrt() * weight + bias


def batch_norm(x, weight, bias, eps=1e-5):
    """Training-mode batch norm of an (N, C) batch: each feature normalized over the batch."""
    mean = x.mean(dim=0, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=0, keepdim=True)
    return (x - mean) / (var + eps).sqrt() * weight + bias


def activation_stds(x, init, depth=20):
    """The std of the activations after each of depth Linear + ReLU layers (a list of floats).

    Every layer is nn.Linear(width, width, bias=False) with its weight set by init(weight).
    """
    stds = []
    width = x.shape[-1]
    with gradlab.no_grad():  # only looking: no graph needed
        for _ in range(depth):
            layer = nn.Linear(width, width, bias=False)
            init(layer.weight)
            x = gradlab.relu(layer(x))
            stds.append(x.std().item())
    return stds


class DeepMLP(nn.Module):
    """depth hidden layers of Linear -> your layer_norm -> ReLU, then a Linear to one output."""

    def __init__(self, depth=8, width=32):
        super().__init__()
        self.hidden = nn.ModuleList(nn.Linear(width if i else 1, width) for i in range(depth))
        self.gains = nn.ParameterList(nn.Parameter(gradlab.ones(width)) for _ in range(depth))
        self.shifts = nn.ParameterList(nn.Parameter(gradlab.zeros(width)) for _ in range(depth))
        self.out = nn.Linear(width, 1)
        for layer in self.hidden:
            kaiming_normal_(layer.weight)

    def forward(self, x):
        for layer, gain, shift in zip(self.hidden, self.gains, self.shifts):
            x = gradlab.relu(layer_norm(layer(x), gain, shift))
        return self.out(x)


if __name__ == "__main__":
    # What the app runs when you press r: watch the ops with n, iterations with i.
    gradlab.manual_seed(0)
    x = gradlab.randn(256, 64)
    for name, init in (("nn.Linear's own init", lambda w: w),  # leave the weight as it is
                       ("N(0, 0.05²)", lambda w: nn.init.normal_(w, std=0.05)),
                       ("your Kaiming", kaiming_normal_)):
        stds = activation_stds(x, init)
        print(f"{name:20s} std after layers 1, 10, 20: "
              f"{stds[0]:.3g}, {stds[9]:.3g}, {stds[19]:.3g}")

    # A deep net with your init and your layer norm learns sin(x) in a few steps.
    xs = gradlab.linspace(-3, 3, 128).unsqueeze(1)
    ys = gradlab.sin(xs)
    model = DeepMLP()
    optimizer = gradlab.optim.Adam(model.parameters(), lr=0.003)
    for step in range(1, 41):
        loss = nn.functional.mse_loss(model(xs), ys)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == 1 or step % 10 == 0:
            print(f"step {step:2d}  loss {loss.item():.4f}")
