"""The models the step benchmarks train, written once for PyTorch and gradlab alike.

gradlab follows PyTorch's API, so ``build_mlp(gradlab, ...)`` and
``build_mlp(torch, ...)`` run the very same lines: the contestants differ
only in the library object passed in. Weights come from NumPy arrays made
by the benchmark, so every contestant starts from identical numbers.
"""

from __future__ import annotations


def load_weights(lib, model, arrays, device) -> None:
    """Copy ``arrays`` (in ``model.parameters()`` order) into the model's parameters."""
    params = list(model.parameters())
    if len(params) != len(arrays):
        raise ValueError(f"model has {len(params)} parameters, got {len(arrays)} arrays")
    with lib.no_grad():
        for p, a in zip(params, arrays):
            p.copy_(lib.tensor(a, device=device))


def build_mlp(lib, sizes, arrays, device):
    """Linear-ReLU-...-Linear with ``sizes`` features; ``arrays`` are (W, b) per layer."""
    nn = lib.nn
    layers = []
    for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(fan_in, fan_out))
        if k < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers).to(device)
    load_weights(lib, model, arrays, device)
    return model


def build_lenet(lib, arrays, device):
    """LeNet-5 for 1x28x28 inputs: two conv-ReLU-maxpool stages, then three Linear layers."""
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 4 * 4, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10),
    ).to(device)
    load_weights(lib, model, arrays, device)
    return model


def training_step(lib, model, optimizer, x, y):
    """One step the way tutorials write it; returns a function running it."""
    cross_entropy = lib.nn.functional.cross_entropy

    def step(want_loss=False):
        optimizer.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item() if want_loss else None

    def forward_backward(want_loss=False):
        optimizer.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        return loss.item() if want_loss else None

    return step, forward_backward
