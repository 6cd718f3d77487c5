"""The built-in demo: a small MLP learns the two-moons data, with raw tensor ops.

Everything here is plain gradlab: tensors, ``@``, ``relu``, ``log_softmax``,
``backward()`` and a hand-written SGD step. While it trains, an event
listener counts what the engine does (ops run forward, backward nodes,
gradient accumulations), which is what the debugger will show.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter

import numpy as np

import gradlab
from gradlab import events


def two_moons(n: int, noise: float = 0.1, seed: int = 0):
    """Two interleaving half circles: a classic dataset a straight line can't separate."""
    rng = np.random.default_rng(seed)
    half = n // 2
    angle = rng.uniform(0, math.pi, n)
    x = np.where(np.arange(n)[:, None] < half,
                 np.stack([np.cos(angle), np.sin(angle)], 1),
                 np.stack([1 - np.cos(angle), 0.5 - np.sin(angle)], 1))
    x += rng.normal(0, noise, x.shape)
    y = (np.arange(n) >= half).astype(np.int64)
    return gradlab.tensor(x, dtype=gradlab.float32), gradlab.tensor(y)


def init_layer(n_in: int, n_out: int, name: str):
    """Weights scaled by 1/sqrt(n_in) (so activations keep their size), zero biases."""
    w = (gradlab.randn(n_in, n_out) / math.sqrt(n_in)).requires_grad_()
    b = gradlab.zeros(n_out, requires_grad=True)
    w.name, b.name = f"{name}.weight", f"{name}.bias"
    return w, b


def run(steps: int = 300, lr: float = 0.5, hidden: int = 16, out=None) -> float:
    """Train and print progress (to ``out``, default stdout); returns the final accuracy."""
    out = sys.stdout if out is None else out
    gradlab.manual_seed(0)
    x, y = two_moons(256)
    params = [*init_layer(2, hidden, "fc1"), *init_layer(hidden, hidden, "fc2"),
              *init_layer(hidden, 2, "fc3")]
    w1, b1, w2, b2, w3, b3 = params

    seen = Counter()
    phase = ["forward"]  # which part of the step the ops belong to

    def count(event):
        if isinstance(event, events.Phase):
            phase[0] = "backward" if event.kind == "backward_begin" else "update"
        elif isinstance(event, events.OpForward):
            seen[f"ops in {phase[0]}"] += 1
        else:
            seen[type(event).__name__] += 1

    print(f"gradlab {gradlab.__version__} demo: a 2-{hidden}-{hidden}-2 MLP learns two moons "
          f"({len(y)} points), SGD lr={lr}", file=out)
    start = time.perf_counter()
    accuracy = 0.0
    with events.subscribe(count):
        for step in range(1, steps + 1):
            phase[0] = "forward"
            h = (x @ w1 + b1).relu()
            h = (h @ w2 + b2).relu()
            logits = h @ w3 + b3
            logp = logits.log_softmax(dim=1)
            loss = -logp[gradlab.arange(len(y)), y].mean()
            loss.backward()
            phase[0] = "update"
            with gradlab.no_grad():
                for p in params:
                    p -= lr * p.grad
                    p.grad = None
            phase[0] = "report"  # not part of training: not counted below
            if step == 1 or step % 50 == 0:
                accuracy = (logits.argmax(1) == y).float().mean().item()
                bar = "#" * int(accuracy * 20)
                print(f"  step {step:4d}  loss {loss.item():.4f}  accuracy {accuracy:6.1%}  "
                      f"|{bar:<20}|", file=out)
    elapsed = time.perf_counter() - start
    per_step = {k: v / steps for k, v in seen.items()}
    print(f"done in {elapsed:.2f} s. What the engine did in one step:\n"
          f"  forward pass   {per_step.get('ops in forward', 0):4.0f} ops, each recording a "
  "backward node\n"
          f"  backward pass  {per_step.get('BackwardNode', 0):4.0f} nodes, whose formulas ran "
          f"{per_step.get('ops in backward', 0):.0f} ops; "
          f"{per_step.get('GradAccumulated', 0):.0f} gradients accumulated into .grad\n"
          f"  SGD update     {per_step.get('ops in update', 0):4.0f} ops under no_grad\n"
          f"  peak memory    {gradlab.max_memory_allocated() / 1024:.0f} KiB", file=out)
    return accuracy
