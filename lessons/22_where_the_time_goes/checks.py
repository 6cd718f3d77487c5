"""Lesson 22's checks: sums over a real profile against the same sums done here (the
times differ from run to run, the arithmetic must not), and the structure of a profiled
training loop (steps, ranges, what nests in them) with the trained weights against plain
SGD."""

import copy

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.profiler import profile
from lessons.expect import check, expect, expect_close, expect_equal


def _mlp(rng):
    """A random MLP, a batch for it, and how many Linear layers it has."""
    sizes = [int(s) for s in rng.integers(3, 24, size=int(rng.integers(3, 5)))]
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU() if rng.random() < 0.5 else nn.Tanh()]
    model = nn.Sequential(*layers[:-1])
    batch = int(rng.integers(4, 40))
    x = gradlab.tensor(rng.normal(size=(batch, sizes[0])), dtype=gradlab.float32)
    y = gradlab.tensor(rng.integers(0, sizes[-1], size=batch))
    return model, x, y, len(sizes) - 1


def _some_profile(rng):
    model, x, y, _ = _mlp(rng)
    with profile() as prof:
        for _ in range(int(rng.integers(1, 4))):
            F.cross_entropy(model(x), y).backward()
    return prof.events()


def _reference_totals(events):
    totals = {}
    for e in events:
        if e.kind == "op":
            calls, us = totals.get(e.name, (0, 0.0))
            totals[e.name] = (calls + 1, us + e.self_cpu_time_total)
    return totals


@check("op_totals")
def op_totals(student, rng):
    events = _some_profile(rng)
    want = _reference_totals(events)
    got = student.op_totals(events)
    expect(isinstance(got, dict), "op_totals returns a dict", "a dict", type(got).__name__)
    expect_equal(sorted(got), sorted(want), "the op names (only the op intervals: no "
                                            "backward nodes, no ranges)")
    expect_equal({k: v[0] for k, v in got.items()}, {k: v[0] for k, v in want.items()},
                 "calls per op")
    for name in sorted(want):
        expect_close(got[name][1], want[name][1], f"self microseconds of {name}", rtol=1e-9)


@check("kernel_share")
def kernel_share(student, rng):
    events = _some_profile(rng)
    inside = sum(e.self_cpu_time_total for e in events if e.kind == "op")
    want = inside / events.wall_us
    got = student.kernel_share(events)
    expect_close(got, want, f"the share of {events.wall_us / 1e3:.2f} ms spent in the ops",
                 rtol=1e-9)
    expect(0 < got < 1, "a share is between 0 and 1", "0 < share < 1", f"{got}")


def _reference_steps(model, x, y, lr, steps):
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with gradlab.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-lr)
                p.grad = None


@check("profiled_steps")
def profiled_steps(student, rng):
    model, x, y, linears = _mlp(rng)
    lr, steps = float(rng.uniform(0.05, 0.3)), int(rng.integers(2, 5))
    mine, theirs = copy.deepcopy(model), copy.deepcopy(model)
    _reference_steps(mine, x, y, lr, steps)
    prof = student.profiled_steps(theirs, x, y, lr, steps)
    expect(isinstance(prof, profile), "profiled_steps returns the profile", "a profile",
           type(prof).__name__, "return prof after the `with profile() as prof:` block")
    events = prof.events()
    top = [e for e in events if e.parent is None]
    expect_equal([e.name for e in top], [f"ProfilerStep#{k}" for k in range(steps)],
                 f"the top-level intervals: one ProfilerStep per step ({steps} steps)")
    params = len(list(model.parameters()))
    for k, step in enumerate(top):
        parts = [c.name for c in step.children]
        expect_equal(parts, ["forward", "backward", "update"], f"the ranges inside step {k}")
        forward, backward, update = step.children
        expect_equal([c.name for c in forward.children].count("linear"), linears,
                     f"linear ops inside step {k}'s forward range")
        expect_equal([c.name for c in backward.children if c.kind == "backward"].count(
            "AddmmBackward0"), linears, f"Linear backward nodes inside step {k}'s backward")
        expect_equal([c.name for c in update.children], ["add_"] * params,
                     f"one in-place add_ per parameter inside step {k}'s update")
    for (name, p), q in zip(mine.named_parameters(), theirs.parameters()):
        expect_close(q, p, f"{name} after {steps} SGD steps with lr = {lr:.3f}", rtol=1e-5,
                     atol=1e-6)
