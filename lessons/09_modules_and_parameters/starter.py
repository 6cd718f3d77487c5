"""Lesson 9: modules and parameters.

Write a Linear layer from scratch as an nn.Module (with nn.Linear's init), an MLP
built from it, a function that counts a model's parameters and one that names the
parameters that got no gradient. Check your work with `gradlab check 9` (or press
k in the app); run this file under the debugger with r.
"""

import math  # noqa: F401  (you will want math.sqrt)

import gradlab
import gradlab.nn.functional as F
from gradlab import nn


class Linear(nn.Module):
    """y = x @ W.T + b with W of shape (out_features, in_features), as nn.Linear."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()  # first: it sets up the registries that __setattr__ fills
        # TODO: keep in_features and out_features; make self.weight an nn.Parameter of
        #       shape (out_features, in_features) and self.bias one of shape
        #       (out_features,), or register_parameter("bias", None) when bias is False;
        #       then fill both from U(-1/sqrt(in_features), 1/sqrt(in_features)) with
        #       nn.init.uniform_ (gradlab's generator: manual_seed makes it repeatable)
        raise NotImplementedError("Linear.__init__")

    def forward(self, x):
        # TODO: x @ W.T, plus the bias if there is one
        raise NotImplementedError("Linear.forward")


class MLP(nn.Module):
    """Linear layers of the given sizes, ReLU between them (none after the last).

    MLP([2, 16, 3]) is Linear(2, 16), ReLU, Linear(16, 3).
    """

    def __init__(self, sizes):
        super().__init__()
        # TODO: self.layers = an nn.ModuleList of your Linear layers, one per pair of
        #       neighbouring sizes (a Python list would hide them from parameters())
        raise NotImplementedError("MLP.__init__")

    def forward(self, x):
        # TODO: each layer in turn, F.relu after every layer but the last
        raise NotImplementedError("MLP.forward")


def count_parameters(model, trainable_only=False):
    """The number of numbers in the model's parameters (each shared parameter once)."""
    # TODO: add up p.numel() over model.parameters(); with trainable_only, only the
    #       parameters that require grad
    raise NotImplementedError("count_parameters")


def params_without_grad(model):
    """Names of the parameters whose .grad is None, in named_parameters() order."""
    # TODO: a list of the names from model.named_parameters() whose .grad is None
    raise NotImplementedError("params_without_grad")


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
