"""How long gradlab.viz takes to draw a big graph: a ~2,000-op network to SVG.

The issue's bar: "a 2,000-op graph renders in a few seconds". Two programs:

* **residual**: 666 identical residual blocks (linear, tanh, add) under one
  ``nn.Sequential`` plus a head: 2,000 ops in modules, where repeated
  siblings collapse into one box by default;
* **chain**: 2,000 ops with no modules at all (one weight reused by a loop),
  so nothing collapses: the worst case for Graphviz's layout.

Each is rendered to SVG in the forward and the backward view, and the
residual one also with ``collapse_repeats=None`` (every block drawn). The
clock is wall time, because most of the work happens in Graphviz's ``dot``
program, a child process whose time a CPU clock would not see; the best of
``--repeat`` runs is shown. There is no other contestant: the table gives
seconds, not ratios.

    python bench/render_graph.py [--repeat 3] [--markdown]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import _harness as h

BLOCKS = 666  # 3 ops a block, plus the head and the sum: 2,000 ops
CASES = {
    "residual/forward": ("residual", {"view": "forward"}),
    "residual/backward": ("residual", {"view": "backward"}),
    "residual/forward/all-blocks": ("residual", {"view": "forward", "collapse_repeats": None}),
    "chain/forward": ("chain", {"view": "forward"}),
    "chain/backward": ("chain", {"view": "backward"}),
}


def _programs(gradlab):
    nn = gradlab.nn
    gradlab.manual_seed(0)

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x).tanh() + x

    model = nn.Sequential(nn.Sequential(*[Block() for _ in range(BLOCKS)]), nn.Linear(4, 1))
    residual = model(gradlab.randn(2, 4)).sum()
    w = gradlab.randn(4, 4, requires_grad=True)
    h_ = gradlab.randn(2, 4)
    for _ in range(1000):  # 2 ops a step: 2,000 ops, one shared weight
        h_ = (h_ @ w).tanh()
    return {"residual": (residual, model), "chain": (h_.sum(), None)}


def worker_gradlab(opts) -> dict:
    gradlab = h.import_gradlab("cpu")
    if shutil.which("dot") is None:
        raise h.Skip("Graphviz's dot program is not installed")
    from gradlab import viz

    programs = _programs(gradlab)
    cases = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (program, options) in CASES.items():
            out, model = programs[program]
            path = Path(tmp) / f"{name.replace('/', '_')}.svg"
            runs = []
            for _ in range(opts.repeat):
                start = time.perf_counter()
                viz.render(out, path, model=model, **options)
                runs.append(time.perf_counter() - start)
            cases[name] = {"best": min(runs), "median": sorted(runs)[len(runs) // 2],
                           "calls": 1, "bytes": path.stat().st_size}
    ops = {k: len(viz.capture(v[0]).ops) for k, v in programs.items()}
    return {"cases": cases, "ops": ops}


WORKERS = {"gradlab": worker_gradlab}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=3, min_time=0.0)
    return p


def collect(opts: argparse.Namespace) -> dict:
    return h.run_contestants(__file__, list(WORKERS), h.passed_on(opts), rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    g = results["gradlab"]
    sec = h.Section("Graph images: a ~2,000-op graph to SVG (cpu, wall time)")
    tab = h.Table(["program", "view", "ms", "SVG KiB"])
    for name in CASES:
        program, _, rest = name.partition("/")
        cell = h.status_cell(g, name, "ms")
        size = g["cases"][name]["bytes"] / 1024 if g.get("status") == "ok" else None
        tab.add(program, rest, cell, "" if size is None else f"{size:.0f}")
    sec.table("Time of one `viz.render(..., 'graph.svg')` call (graph capture, layout, SVG):",
              tab)
    if g.get("status") == "ok":
        sec.note("Ops per program: " + ", ".join(f"{k} {v}" for k, v in g["ops"].items())
                 + ". Target: a few seconds.")
    return h.close_section(sec, results, opts, timing=(
        f"Best of {opts.repeat} runs; wall time (Graphviz runs as a child process)."))


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
