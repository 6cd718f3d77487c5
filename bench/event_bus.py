"""What the event bus costs: nothing listening, a no-op listener, and gradlab.profiler.

gradlab emits an event at each op, each backward node, each gradient
accumulation and each allocation, but only after one check of
``gradlab.events.listeners``. This measures the tiny-op chain of
``tiny_ops.py`` (ten mixed ops on (4,) tensors, then ``.backward()``) in
two fresh processes:

* **idle**: nobody subscribed; every emit point pays one truth test of a list.
  The cost of that test alone is measured too, and shown as a share of an op.
* **listening**: ``gradlab.events.subscribe(lambda event: None)``; now every
  event is built (a frozen dataclass with tensor refs and a sequence number)
  and handed to the listener. The difference is the price of being watched.
* **profiled**: inside ``gradlab.profiler.profile()``, which listens and also
  keeps an interval per op and backward node: the price of ``gradlab profile``.

    python bench/event_bus.py [--device cuda] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections import Counter

import _harness as h
from tiny_ops import CHAIN_LENGTH, SHAPE, _inputs, chain10

CASES = {"chain10/fwd+bwd": "chain of 10 ops + backward",
         "chain10/fwd": "chain of 10 ops, no_grad",
         "mul/fwd+bwd": "one mul + backward"}


def _cases(gradlab, opts) -> dict:
    dev = opts.device
    sync = gradlab.cuda.synchronize if dev == "cuda" else None
    timing = dict(min_time=opts.min_time, repeat=opts.repeat, sync=sync)
    a, b = (gradlab.tensor(x, device=dev, requires_grad=True) for x in _inputs(2, SHAPE))
    grad = gradlab.ones_like(a)

    def chain_step():
        chain10(a, b).backward()
        a.grad = b.grad = None

    def mul_step():
        (a * b).backward(grad)
        a.grad = b.grad = None

    cases = {"chain10/fwd+bwd": h.measure(chain_step, per=CHAIN_LENGTH, **timing),
             "mul/fwd+bwd": h.measure(mul_step, **timing)}
    with gradlab.no_grad():
        cases["chain10/fwd"] = h.measure(lambda: chain10(a, b), per=CHAIN_LENGTH, **timing)
    return cases


def _events_per_chain(gradlab, opts) -> dict:
    """Which events one chain + backward emits (counted once, outside the timings)."""
    counts = Counter()
    a, b = (gradlab.tensor(x, device=opts.device, requires_grad=True)
            for x in _inputs(2, SHAPE))
    chain10(a, b)  # warm: first-use allocations are not part of a steady step
    with gradlab.events.subscribe(lambda event: counts.update([type(event).__name__])):
        chain10(a, b).backward()
    return dict(counts)


def worker_idle(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    if gradlab.events.listeners:
        raise RuntimeError("a listener is subscribed at import; the idle case would be wrong")
    cases = _cases(gradlab, opts)
    # The idle check by itself: `if events.listeners:` minus an empty statement, per check.
    number = 2_000_000
    env = {"events": gradlab.events}
    check = min(timeit.repeat("if events.listeners: pass", globals=env, number=number, repeat=5))
    empty = min(timeit.repeat("pass", globals=env, number=number, repeat=5))
    return {"cases": cases, "check_s": max(check - empty, 0.0) / number,
            "events": _events_per_chain(gradlab, opts)}


def worker_listening(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    subscription = gradlab.events.subscribe(lambda event: None)
    try:
        return {"cases": _cases(gradlab, opts)}
    finally:
        subscription.remove()


def worker_profiled(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    with gradlab.profiler.profile():
        return {"cases": _cases(gradlab, opts)}


WORKERS = {"idle": worker_idle, "listening": worker_listening, "profiled": worker_profiled}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=5, min_time=0.03)
    return p


def collect(opts: argparse.Namespace) -> dict:
    return h.run_contestants(__file__, list(WORKERS), h.passed_on(opts), rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    idle, listening, profiled = results["idle"], results["listening"], results["profiled"]
    sec = h.Section(f"Event bus: no listener vs a no-op listener vs the profiler "
                    f"({opts.device})")
    tab = h.Table(["case", "idle µs/op", "listening µs/op", "listening/idle",
                   "extra µs/op", "profiled µs/op", "profiled/idle"])
    for case, label in CASES.items():
        it, lt = h.case_time(idle, case), h.case_time(listening, case)
        pt = h.case_time(profiled, case)
        extra = "-" if it is None or lt is None else h.fmt_time(lt - it, "us")
        tab.add(label, h.status_cell(idle, case, "us"), h.status_cell(listening, case, "us"),
                h.fmt_ratio(lt, it), extra, h.status_cell(profiled, case, "us"),
                h.fmt_ratio(pt, it))
    sec.table("Per op (the chain's time / 10):", tab)
    if idle["status"] == "ok":
        check = idle["check_s"]
        op = h.case_time(idle, "chain10/fwd+bwd")
        share = f", {100 * check / op:.2f}% of one op with its backward" if op else ""
        sec.note(f"The idle check `if events.listeners:` costs {check * 1e9:.0f} ns{share}.")
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(idle["events"].items()))
        sec.note(f"One chain + backward emits, when listened to: {counts or 'no events'}.")
    return h.close_section(sec, results, opts, "Each column runs in its own process.")


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
