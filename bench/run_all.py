"""Run every benchmark and print one markdown section with the figures and the machine.

    python bench/run_all.py            # print the section
    python bench/run_all.py --write    # ... and make it the new bench/RESULTS.md

Each benchmark still runs each contestant in its own process (see
``_harness.py``); this script only calls them in turn and assembles their
tables. On a 2-core machine the whole run takes about a minute.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import _harness as h
import cnn_step
import debug_overhead
import event_bus
import fft_ops
import graph_mode
import jacobian_modes
import mlp_step
import render_graph
import tiny_ops
import tui_graph

BENCHMARKS = {
    "tiny_ops": tiny_ops, "mlp_step": mlp_step, "cnn_step": cnn_step, "event_bus": event_bus,
    "render_graph": render_graph, "tui_graph": tui_graph, "debug_overhead": debug_overhead,
    "jacobian_modes": jacobian_modes, "graph_mode": graph_mode, "fft_ops": fft_ops,
}
RESULTS = h.BENCH_DIR / "RESULTS.md"

PREAMBLE = """\
# Benchmark results

Written by `python bench/run_all.py --write` (see `bench/README.md` for what
each benchmark measures and how to read the ratios). Every contestant runs in
its own process on one thread. Times are the best of several runs (CPU
time); a ratio below 1 means gradlab is faster. The figures are a snapshot
of the commit named below and move as the engine changes: re-run the script
rather than editing this file.
"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--write", action="store_true",
                   help=f"also replace {RESULTS.relative_to(h.REPO_ROOT)} with the results")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--only", nargs="+", choices=list(BENCHMARKS), default=list(BENCHMARKS),
                   help="run only these benchmarks")
    return p


def machine_table(info: dict[str, str]) -> h.Table:
    table = h.Table(["", ""], left=2)
    for key, value in info.items():
        table.add(key, value)
    return table


def run(device: str = "cpu", only=None) -> str:
    """Run the benchmarks; return the markdown section."""
    info = h.machine_info()
    start = time.perf_counter()
    sections = []
    for name in only or BENCHMARKS:
        module = BENCHMARKS[name]
        opts = module.parser().parse_args(["--device", device])
        sections.append(module.report(module.collect(opts), opts).render(markdown=True))
    took = time.perf_counter() - start
    if "load average" in info:
        info["load average"] += " at the start; " + " ".join(
            f"{x:.2f}" for x in os.getloadavg()) + " at the end"
    head = (f"## {info['date']} · commit {info['commit']} · {device}\n\n"
            f"{machine_table(info).markdown()}\n\n"
            f"All benchmarks together took {took:.0f} s. The commit is the checked-out HEAD; "
            "the working tree may have held uncommitted changes. A load average above "
            f"{info['nproc']} (the cores) means other work competed for them.\n")
    return "\n".join([head, *sections])


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` in one step: a reader sees the old file or the new, never half."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a results file is for everyone
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None) -> None:
    opts = parser().parse_args(argv)
    section = run(opts.device, opts.only)
    print(section)
    if opts.write:
        write_atomically(RESULTS, PREAMBLE + "\n" + section)
        print(f"wrote {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
