"""Lesson 6: gradient accumulation and zero_grad (the reference solution)."""

import gradlab
from gradlab import nn, optim


def two_gradients(w, loss_a, loss_b):
    """(grad_a, grad_b): the gradients of ``loss_a`` and of ``loss_b`` with respect to
    ``w``, each on its own. Both losses come from one forward pass, so they share a
    graph; ``w.grad`` may already hold something when this is called."""
    w.grad = None  # backward adds into .grad: start from nothing
    # The first backward would free the tensors the shared part saved (tanh's output,
    # say); retain_graph=True keeps them for the second backward.
    loss_a.backward(retain_graph=True)
    grad_a = w.grad.clone()  # its own copy: w.grad.zero_() would change it in place
    w.grad = None
    loss_b.backward()
    return grad_a, w.grad


def train_step(model, optimizer, loss_fn, inputs, targets):
    """One training step on (inputs, targets); returns the loss as a Python float.
    Whatever ``.grad`` held before the call must not change the step."""
    optimizer.zero_grad()  # else this step would also use every earlier step's gradient
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()  # a float: returning the tensor would keep its graph alive


def accumulated_gradient(model, loss_fn, inputs, targets, k):
    """Leave in every parameter's ``.grad`` the gradient of the whole batch's loss,
    ``loss_fn(model(inputs), targets)``, computed one micro-batch at a time
    (``inputs.chunk(k)``, ``targets.chunk(k)``); return that loss as a Python float."""
    model.zero_grad()
    n, total = len(inputs), 0.0
    for xb, yb in zip(inputs.chunk(k), targets.chunk(k)):
        # loss_fn averages over its micro-batch; the whole batch's mean is the sum of the
        # micro-batch means weighted by their share of the samples (1/k if equal).
        part = loss_fn(model(xb), yb) * (len(xb) / n)
        part.backward()  # adds this share of the gradient into .grad
        total += part.item()
    return total


if __name__ == "__main__":
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
