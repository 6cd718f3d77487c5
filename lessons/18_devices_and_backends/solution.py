"""Lesson 18: devices and backends (the reference solution)."""

import time

import gradlab
import gradlab.nn.functional as F
from gradlab import nn


def pick_device():
    """The GPU if gradlab can use one, else the CPU, as a gradlab.device."""
    return gradlab.device("cuda" if gradlab.cuda.is_available() else "cpu")


def to_device(batch, device):
    """``batch`` with every tensor in it moved to ``device``; tuples, lists and dicts are
    rebuilt with the same structure, anything else is returned as it is."""
    if isinstance(batch, gradlab.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(item, device) for item in batch)
    return batch                            # numbers, strings, None: nothing to move


def train_step(model, batch, optimizer):
    """One step of classification training wherever the model lives; the loss as a float."""
    device = next(model.parameters()).device    # ask the model, don't assume
    inputs, targets = to_device(batch, device)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()                      # .item() copies to the host (and waits for the GPU)


def timed_steps(model, batch, optimizer, steps):
    """Run ``steps`` train_steps; (the list of losses, seconds per step)."""
    device = next(model.parameters()).device
    train_step(model, batch, optimizer)     # warm-up: first calls compile GPU kernels
    losses = []
    if device.type == "cuda":
        gradlab.cuda.synchronize()          # nothing queued from before may end up timed
    start = time.perf_counter()
    for _ in range(steps):
        losses.append(train_step(model, batch, optimizer))
    if device.type == "cuda":
        gradlab.cuda.synchronize()          # wait until the GPU has really finished
    return losses, (time.perf_counter() - start) / steps


if __name__ == "__main__":
    # The same script runs on the CPU and on a GPU: only `device` changes.
    gradlab.manual_seed(0)
    device = pick_device()
    print("training on", device)
    images, labels = gradlab.datasets.load_digits()
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    model.to(device)                        # the parameters move; the batches come later
    optimizer = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(20):
        rows = gradlab.randint(0, len(labels), (128,))
        loss = train_step(model, (images[rows], labels[rows]), optimizer)
        if step % 5 == 0:
            print(f"step {step:2d}: loss {loss:.3f}")
    losses, seconds = timed_steps(model, (images[:512], labels[:512]), optimizer, steps=5)
    print(f"{seconds * 1000:.2f} ms per step of 512 digits on {device}")
    print(gradlab.memory.memory_summary(device))
