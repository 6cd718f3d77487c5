"""Lesson 22: where the time goes.

Fill in the three functions marked TODO, then check them with `gradlab check 22`
(or press k in the app). Press r to run this file under the debugger and open the
Time tab: it shows, for the iteration on screen, what each op cost.
"""

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.profiler import profile, record_function


def op_totals(events):
    """{op name: (calls, self microseconds)} over the op intervals of ``events``
    (what ``prof.events()`` returns)."""
    # TODO: keep the intervals whose .kind is "op"; per .name count them and add up
    #       .self_cpu_time_total
    raise NotImplementedError("op_totals")


def kernel_share(events):
    """The fraction of the profile's wall time (events.wall_us) spent inside the ops'
    array calls."""
    # TODO: the op intervals' self times, summed, divided by events.wall_us
    raise NotImplementedError("kernel_share")


def profiled_steps(model, x, y, lr, steps):
    """Train ``steps`` plain-SGD steps on cross_entropy under the profiler and return it.

    Each step is three ranges, "forward", "backward" and "update", and ends with
    prof.step(), so the profile shows ProfilerStep#0, #1, ... each holding those three.
    """
    # TODO: with profile() as prof: for each step: the three record_function ranges
    #       (forward + loss; loss.backward(); p.add_(p.grad, alpha=-lr) and p.grad = None
    #       under no_grad), then prof.step(); return prof
    raise NotImplementedError("profiled_steps")


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
