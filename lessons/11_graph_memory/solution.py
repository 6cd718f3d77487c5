"""Lesson 11: what the graph keeps alive in memory (the reference solution)."""

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.autograd.graph import saved_tensors_hooks


def evaluate(model, X):
    """model(X) for reading only: no graph is built, so nothing is saved for backward."""
    # no_grad stops the recording itself: no op saves its inputs, and the output
    # has no grad_fn. (Calling .detach() afterwards would also give a tensor
    # without a graph, but the graph would have been built and held meanwhile.)
    with gradlab.no_grad():
        return model(X)


def train_with_log(model, X, y, X_val, y_val, steps, lr):
    """Train with plain SGD on the mean squared error; log both losses as floats.

    Each step: forward, loss, backward, update; then the validation loss of the
    updated model. Returns (train_losses, val_losses), two lists of floats.
    """
    optimizer = gradlab.optim.SGD(model.parameters(), lr=lr)
    train_losses, val_losses = [], []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(X), y)
        loss.backward()
        optimizer.step()
        train_losses.append(loss.item())  # a float: the loss tensor (and its graph) can go
        val_losses.append(F.mse_loss(evaluate(model, X_val), y_val).item())
    return train_losses, val_losses


def run_in_chunks(cell, xs, h, chunk):
    """Run a recurrent cell over xs (steps, batch, features) ``chunk`` steps at a time.

    After each chunk: loss = mean of h² at its last step, backward (gradients add
    up in the cell's .grad), then cut the graph before the next chunk.
    Returns (losses as floats, the final hidden state without a graph).
    """
    losses = []
    for start in range(0, xs.shape[0], chunk):
        for t in range(start, min(start + chunk, xs.shape[0])):
            h = cell(xs[t], h)
        loss = h.pow(2).mean()
        loss.backward()
        losses.append(loss.item())
        # The next chunk starts from h's value, not from its history: without this the
        # next backward would walk into this chunk's graph, already freed.
        h = h.detach()
    return losses, h


def offload_step(model, X, y):
    """One forward, MSE loss and backward, with every saved tensor kept as a NumPy copy.

    Returns (the loss as a float, the activation bytes gradlab counts right after the
    forward and loss).
    """
    def pack(t):  # the node keeps this NumPy copy instead of the tensor
        return t.detach().numpy().copy()

    def unpack(kept):  # backward gets a tensor with the same values back
        return gradlab.from_numpy(kept)

    with saved_tensors_hooks(pack, unpack):
        loss = F.mse_loss(model(X), y)
    held = gradlab.memory_stats()["activation_bytes"]  # 0: nothing gradlab counts is saved
    loss.backward()  # each node unpacks what it kept, with the hooks it saved with
    return loss.item(), held


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
