"""Lesson 11: what the graph keeps alive in memory.

Fill in the four functions marked TODO, then check them with `gradlab check 11`
(or press k in the app). Run this file under the debugger with r in the app and
watch the Memory panel.
"""

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.autograd.graph import saved_tensors_hooks


def evaluate(model, X):
    """model(X) for reading only: no graph is built, so nothing is saved for backward."""
    # TODO: run the model without recording a graph (gradlab.no_grad) and return its output
    raise NotImplementedError("evaluate")


def train_with_log(model, X, y, X_val, y_val, steps, lr):
    """Train with plain SGD on the mean squared error; log both losses as floats.

    Each step: forward, loss, backward, update; then the validation loss of the
    updated model. Returns (train_losses, val_losses), two lists of floats.
    """
    optimizer = gradlab.optim.SGD(model.parameters(), lr=lr)
    train_losses, val_losses = [], []
    # TODO: `steps` times: zero the gradients, loss = F.mse_loss(model(X), y), backward, step;
    #       append the training loss and then the validation loss F.mse_loss(..., y_val),
    #       both as Python floats (a validation forward needs no graph)
    raise NotImplementedError("train_with_log")


def run_in_chunks(cell, xs, h, chunk):
    """Run a recurrent cell over xs (steps, batch, features) ``chunk`` steps at a time.

    After each chunk: loss = mean of h² at its last step, backward (gradients add
    up in the cell's .grad), then cut the graph before the next chunk.
    Returns (losses as floats, the final hidden state without a graph).
    """
    # TODO: for each chunk of steps: h = cell(xs[t], h) for each of its steps;
    #       loss = h.pow(2).mean(); loss.backward(); keep loss.item();
    #       then cut h from its graph before the next chunk (the last h too)
    raise NotImplementedError("run_in_chunks")


def offload_step(model, X, y):
    """One forward, MSE loss and backward, with every saved tensor kept as a NumPy copy.

    Returns (the loss as a float, the activation bytes gradlab counts right after the
    forward and loss).
    """
    # TODO: a pack hook that returns t.detach().numpy().copy() and an unpack hook that
    #       returns gradlab.from_numpy(...) of it; compute loss = F.mse_loss(model(X), y)
    #       inside `with saved_tensors_hooks(pack, unpack):`, read
    #       gradlab.memory_stats()["activation_bytes"], then loss.backward()
    raise NotImplementedError("offload_step")


if __name__ == "__main__":
    # What the app runs when you press r. Watch the Memory panel: "activation" rises
    # during a forward and falls to zero when backward frees what the graph saved.
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 1))
    X, y = gradlab.randn(256, 64), gradlab.randn(256, 1)
    X_val, y_val = gradlab.randn(128, 64), gradlab.randn(128, 1)
    loss = F.mse_loss(model(X), y)  # one step written out: step it with n, then b
    print(f"after the forward: {gradlab.memory_stats()['activation_bytes']} activation bytes")
    loss.backward()
    print(f"after backward:    {gradlab.memory_stats()['activation_bytes']} activation bytes")
    model.zero_grad()
    # Your functions:
    train, val = train_with_log(model, X, y, X_val, y_val, steps=3, lr=0.05)
    print("train losses", [round(v, 4) for v in train])
    print("val losses  ", [round(v, 4) for v in val])
    preds = evaluate(model, X_val)
    print(f"evaluate: requires_grad={preds.requires_grad}, "
          f"activation bytes held={gradlab.memory_stats()['activation_bytes']}")
    cell = nn.RNNCell(8, 16)
    losses, h = run_in_chunks(cell, gradlab.randn(12, 4, 8), gradlab.zeros(4, 16), chunk=4)
    print("chunk losses", [round(v, 4) for v in losses], "h.grad_fn =", h.grad_fn)
    model.zero_grad()
    loss, held = offload_step(model, X, y)
    print(f"offloaded step: loss {loss:.4f}, activation bytes after the forward: {held}")
