"""Lesson 6: gradient accumulation and zero_grad.

Three functions to write:

1. two_gradients(w, loss_a, loss_b): the gradient of each of two losses that share a
   graph, each on its own.
2. train_step(model, optimizer, loss_fn, inputs, targets): one correct training step.
3. accumulated_gradient(model, loss_fn, inputs, targets, k): a whole batch's gradient,
   computed k micro-batches at a time.

Check them with `gradlab check 6` (or press k in the app). Press r in the app to run
this file under the debugger.
"""

import gradlab
from gradlab import nn, optim


def two_gradients(w, loss_a, loss_b):
    """(grad_a, grad_b): the gradients of ``loss_a`` and of ``loss_b`` with respect to
    ``w``, each on its own. Both losses come from one forward pass, so they share a
    graph; ``w.grad`` may already hold something when this is called."""
    # TODO: clear w.grad; loss_a.backward(retain_graph=True) so the graph survives;
    #       keep a copy of w.grad; clear it again; loss_b.backward(); return both
    raise NotImplementedError("two_gradients")


def train_step(model, optimizer, loss_fn, inputs, targets):
    """One training step on (inputs, targets); returns the loss as a Python float.
    Whatever ``.grad`` held before the call must not change the step."""
    # TODO: clear the old gradients, compute the loss, backward, step, return loss.item()
    raise NotImplementedError("train_step")


def accumulated_gradient(model, loss_fn, inputs, targets, k):
    """Leave in every parameter's ``.grad`` the gradient of the whole batch's loss,
    ``loss_fn(model(inputs), targets)``, computed one micro-batch at a time
    (``inputs.chunk(k)``, ``targets.chunk(k)``); return that loss as a Python float."""
    # TODO: zero the gradients; for each micro-batch, backward its loss times its share
    #       of the batch, len(xb) / len(inputs); add up the scaled losses and return them
    raise NotImplementedError("accumulated_gradient")


if __name__ == "__main__":
    # What the app runs when you press r: n steps ops, b backward nodes, o optimizer updates.
    # .grad adds up: two backward calls, and w.grad holds the sum of both.
    w = gradlab.tensor(3.0, requires_grad=True)
    (w * w).backward()
    (w * w).backward()
    print(f"after two backward calls w.grad = {w.grad.item()}: each call added 2w = 6")

    # A few steps of fitting y = 2x + 1 with your train_step.
    gradlab.manual_seed(0)
    x = gradlab.linspace(-1, 1, 16).reshape(16, 1)
    y = 2 * x + 1
    model = nn.Linear(1, 1)
    optimizer = optim.SGD(model.parameters(), lr=0.5)
    for step in range(5):
        loss = train_step(model, optimizer, nn.MSELoss(), x, y)
        print(f"step {step}: loss {loss:.4f}")
    loss = accumulated_gradient(model, nn.MSELoss(), x, y, 4)
    print(f"loss {loss:.4f}; weight's gradient from 4 micro-batches {model.weight.grad.item():.4f}")

    # Two losses on one shared part, h: one forward, two backward calls.
    v = gradlab.randn(1, 3, requires_grad=True)
    h = (x @ v + 1).tanh()
    grad_a, grad_b = two_gradients(v, (h**2).mean(), h.sum())
    print(f"d mean(h²)/dv = {grad_a.tolist()}\nd sum(h)/dv    = {grad_b.tolist()}")
