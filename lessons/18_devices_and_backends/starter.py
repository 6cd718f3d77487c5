"""Lesson 18: devices and backends.

Fill in the four functions marked TODO, then check them with `gradlab check 18`
(or press k in the app). Run this file under the debugger with r in the app.
Without a CUDA GPU the last check is skipped: your code then runs on the CPU only.
"""

import time

import gradlab
import gradlab.nn.functional as F
from gradlab import nn


def pick_device():
    """The GPU if gradlab can use one, else the CPU, as a gradlab.device."""
    # TODO: gradlab.device("cuda") when gradlab.cuda.is_available(), else gradlab.device("cpu")
    raise NotImplementedError("pick_device")


def to_device(batch, device):
    """``batch`` with every tensor in it moved to ``device``; tuples, lists and dicts are
    rebuilt with the same structure, anything else is returned as it is."""
    # TODO: a tensor -> tensor.to(device); a dict / list / tuple -> the same kind of
    #       container with every item moved (call to_device on each); anything else as it is
    raise NotImplementedError("to_device")


def train_step(model, batch, optimizer):
    """One step of classification training wherever the model lives; the loss as a float."""
    # TODO: find the model's device from its parameters, move the batch (inputs, targets)
    #       there, then zero_grad, cross-entropy loss, backward, step; return the loss as a float
    raise NotImplementedError("train_step")


def timed_steps(model, batch, optimizer, steps):
    """Run ``steps`` train_steps; (the list of losses, seconds per step)."""
    # TODO: one untimed warm-up train_step; then time `steps` train_steps with
    #       time.perf_counter(), calling gradlab.cuda.synchronize() before reading the clock
    #       when the model is on a cuda device; return (losses, seconds per step)
    raise NotImplementedError("timed_steps")


if __name__ == "__main__":
    # What the app runs when you press r: watch the Memory panel, step with n and i.
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
