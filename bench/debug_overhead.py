"""What watching costs: the demo's training throughput alone, under a debug Session, in the app.

The demo (two moons, a 2-32-32-2 MLP, batch 32, SGD with momentum) trains
for a fixed number of iterations in three fresh processes:

* **bare**: nobody listening.
* **session**: a :class:`gradlab.debug.Session` runs the training function in
  its worker thread, running freely (no breakpoint): it listens lightly and
  records one iteration in full every 0.1 s.
* **app**: the same, with the terminal app attached (headless, 120x40): its
  UI thread polls the session and repaints the graph and panels up to ten
  times a second while training runs.

Times are wall-clock seconds per iteration measured inside the training
function, after a warm-up; the app's own work on the UI thread competes
with training for the interpreter, which is the point. Target: the app
running freely costs at most 1.5x the bare loop.

    python bench/debug_overhead.py [--iterations 1500] [--markdown]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import _harness as h

CONTESTANTS = ("bare", "session", "app")


def _trainer(gradlab, iterations: int):
    """A function that trains the demo model and returns per-iteration times (seconds)."""
    from gradlab import nn
    from gradlab.examples import moons_mlp
    from gradlab.utils.data import DataLoader

    gradlab.manual_seed(0)
    train_set, _ = moons_mlp.make_data()
    loader = DataLoader(train_set, batch_size=32, shuffle=True)
    model = moons_mlp.make_model()
    optimizer = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def train() -> list[float]:
        times: list[float] = []
        while len(times) < iterations:
            for X, y in loader:
                start = time.perf_counter()
                optimizer.zero_grad()
                loss = loss_fn(model(X), y)
                loss.backward()
                optimizer.step()
                times.append(time.perf_counter() - start)
                if len(times) == iterations:
                    break
        return times

    return train


def _figures(times: list[float]) -> dict:
    steady = times[len(times) // 5:]  # the first fifth warms caches and allocators up
    chunks = [steady[i:i + 50] for i in range(0, len(steady) - 49, 50)]
    means = [statistics.fmean(c) for c in chunks]
    return {"cases": {"iteration": {"best": min(means), "median": statistics.median(means),
                                    "number": 50, "repeat": len(means), "per": 1}}}


def worker_bare(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    return _figures(_trainer(gradlab, opts.iterations)())


def _run_in_session(session, train) -> list[float]:
    result: dict = {}
    run = session.run_function(lambda: result.setdefault("times", train()))
    if not session.wait_finished(timeout=600):
        raise RuntimeError("the training run did not finish within 600 s")
    if run.error is not None:
        raise RuntimeError(f"the training run failed:\n{run.traceback}")
    return result["times"]


def worker_session(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    from gradlab.debug import Session

    train = _trainer(gradlab, opts.iterations)
    with Session() as session:
        times = _run_in_session(session, train)
        iterations_seen = session.snapshot().iteration
    return {**_figures(times), "iterations_seen": iterations_seen}


def worker_app(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    import asyncio

    from gradlab.debug import Session
    from tui.app import GradlabApp

    train = _trainer(gradlab, opts.iterations)
    result: dict = {}

    async def drive() -> None:
        session = Session()
        app = GradlabApp(session=session)
        async with app.run_test(size=(120, 40)) as pilot:
            run = session.run_function(lambda: result.setdefault("times", train()))
            while not run.done.is_set():
                await pilot.pause(0.05)  # the app keeps polling and repainting meanwhile
            result["paints"] = getattr(app, "refresh_count", None)
        if run.error is not None:
            raise RuntimeError(f"the training run failed:\n{run.traceback}")

    asyncio.run(drive())
    return {**_figures(result["times"]), "paints": result.get("paints")}


WORKERS = {"bare": worker_bare, "session": worker_session, "app": worker_app}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=1, min_time=0.0)
    p.add_argument("--iterations", type=int, default=1500,
                   help="training iterations per contestant (default 1500)")
    return p


def collect(opts: argparse.Namespace) -> dict:
    args = [*h.passed_on(opts), "--iterations", str(opts.iterations)]
    return h.run_contestants(__file__, list(CONTESTANTS), args, rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    sec = h.Section(f"Debugger overhead: the demo's training alone, in a Session, in the app "
                    f"({opts.device})")
    tab = h.Table(["contestant", "ms / iteration", "× bare"])
    bare = h.case_time(results["bare"], "iteration")
    for name in CONTESTANTS:
        t = h.case_time(results[name], "iteration")
        tab.add(name, h.status_cell(results[name], "iteration", "ms"), h.fmt_ratio(t, bare))
    sec.table(f"Wall time per iteration ({opts.iterations} iterations, the best 50-iteration "
              "mean after warm-up):", tab)
    sec.note("Target: app / bare <= 1.5 with the app running freely.")
    sec.note(f"Each contestant runs in its own process, {opts.rounds} alternating rounds, each "
             "keeping its best; wall-clock time, since the app works on another thread.")
    for line in h.problems(results):
        sec.note(line)
    return sec


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
