"""Lesson 22: where the time goes (the reference solution)."""

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.profiler import profile, record_function


def op_totals(events):
    """{op name: (calls, self microseconds)} over the op intervals of ``events``
    (what ``prof.events()`` returns)."""
    totals = {}
    for e in events:
        if e.kind != "op":  # backward nodes and ranges hold ops; count each op once
            continue
        calls, us = totals.get(e.name, (0, 0.0))
        totals[e.name] = (calls + 1, us + e.self_cpu_time_total)
    return totals


def kernel_share(events):
    """The fraction of the profile's wall time (events.wall_us) spent inside the ops'
    array calls."""
    inside = sum(e.self_cpu_time_total for e in events if e.kind == "op")
    return inside / events.wall_us


def profiled_steps(model, x, y, lr, steps):
    """Train ``steps`` plain-SGD steps on cross_entropy under the profiler and return it.

    Each step is three ranges, "forward", "backward" and "update", and ends with
    prof.step(), so the profile shows ProfilerStep#0, #1, ... each holding those three.
    """
    with profile() as prof:
        for _ in range(steps):
            with record_function("forward"):
                loss = F.cross_entropy(model(x), y)
            with record_function("backward"):
                loss.backward()
            with record_function("update"):
                with gradlab.no_grad():
                    for p in model.parameters():
                        p.add_(p.grad, alpha=-lr)
                        p.grad = None
            prof.step()
    return prof


if __name__ == "__main__":
    # What the app runs when you press r: a small MLP at two batch sizes.
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    for batch in (8, 512):
        x, y = gradlab.randn(batch, 64), gradlab.randint(0, 10, (batch,))
        prof = profiled_steps(model, x, y, lr=0.05, steps=3)
        events = prof.events()
        print(f"batch {batch}: {kernel_share(events):.0%} of the time inside the ops")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=8))
        print(sorted(op_totals(events).items(), key=lambda kv: -kv[1][1])[:3])
