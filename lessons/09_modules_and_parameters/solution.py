"""Lesson 9: modules and parameters (the reference solution)."""

import math

import gradlab
import gradlab.nn.functional as F
from gradlab import nn


class Linear(nn.Module):
    """y = x @ W.T + b with W of shape (out_features, in_features), as nn.Linear."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()  # first: it sets up the registries that __setattr__ fills
        self.in_features, self.out_features = in_features, out_features
        # Assigning an nn.Parameter registers it under the attribute's name.
        self.weight = nn.Parameter(gradlab.empty(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(gradlab.empty(out_features))
        else:
            self.register_parameter("bias", None)  # a bias slot that holds nothing
        self.reset_parameters()

    def reset_parameters(self):
        # nn.Linear's init: U(-1/sqrt(in), 1/sqrt(in)) for both, drawn from gradlab's
        # generator, so gradlab.manual_seed makes it repeatable.
        bound = 1 / math.sqrt(self.in_features)
        nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        # What print(model) shows inside the parentheses, as nn.Linear does.
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias


class MLP(nn.Module):
    """Linear layers of the given sizes, ReLU between them (none after the last)."""

    def __init__(self, sizes):
        super().__init__()
        # nn.ModuleList, not a Python list: only a ModuleList registers its layers,
        # so that parameters(), state_dict(), eval() and .to() see them.
        self.layers = nn.ModuleList(
            [Linear(n_in, n_out) for n_in, n_out in zip(sizes[:-1], sizes[1:])])

    def forward(self, x):
        for k, layer in enumerate(self.layers):
            x = layer(x)
            if k < len(self.layers) - 1:
                x = F.relu(x)
        return x


def count_parameters(model, trainable_only=False):
    """The number of numbers in the model's parameters (each shared parameter once)."""
    return sum(p.numel() for p in model.parameters()
               if p.requires_grad or not trainable_only)


def params_without_grad(model):
    """Names of the parameters whose .grad is None, in named_parameters() order."""
    return [name for name, p in model.named_parameters() if p.grad is None]


if __name__ == "__main__":
    # Step with n (ops), b (backward) and o (optimizer updates); watch the Optimizer panel.
    gradlab.manual_seed(0)
    model = MLP([2, 16, 16, 3])
    print(model)
    print(f"{count_parameters(model)} parameters:",
          ", ".join(f"{name} {tuple(p.shape)}" for name, p in model.named_parameters()))
    X = gradlab.randn(32, 2)
    y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()  # three classes
    optimizer = gradlab.optim.SGD(model.parameters(), lr=0.5)
    for step in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        if step == 0:
            print("no gradient:", params_without_grad(model) or "none")
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")
    model.eval()
    print("after eval(): training flags", {m.training for m in model.modules()})
