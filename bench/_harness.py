"""What every benchmark here shares: one subprocess per contestant, timing, tables.

A benchmark script plays two roles:

* **driver** (``python bench/tiny_ops.py``): starts one fresh Python process
  per contestant (gradlab, PyTorch, NumPy ...), reads the timings each one
  prints as JSON, and prints a table with ratios. The driver never imports
  gradlab or torch itself, so one library's threads, allocator or import
  side effects cannot slow another down.
* **worker** (``python bench/tiny_ops.py --worker torch``): imports one
  library, runs the measurements and prints one JSON line.

Every worker runs with ``OPENBLAS_NUM_THREADS=1`` (and the OMP/MKL
variants); the torch workers also call ``torch.set_num_threads(1)``. All
contestants therefore use one core, and the figures do not depend on the
machine's core count.

Timing: each case is first run until it has taken ``min_time`` seconds in
one go (this both warms it up and picks how many calls make one timed run),
then timed ``repeat`` times. The report gives the best and the median of the
runs; tables and ratios use the best. On the CPU the clock is the process's
CPU time, so time spent waiting for a core does not count. Contestants take
turns for ``rounds`` rounds, each case keeping its best round. The garbage
collector stays on, as in a real training loop: a Python engine pays for
the objects it creates.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
JSON_MARKER = "@@bench-json@@ "

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


class Skip(Exception):
    """Raised by a worker whose library (or device) is not there: reported, not a crash."""


# --- the driver side ------------------------------------------------------------------------

def worker_env() -> dict[str, str]:
    """The environment of a worker: one BLAS/OpenMP thread, and the repo importable."""
    env = dict(os.environ)
    for name in THREAD_VARIABLES:
        env[name] = "1"
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + path if path else "")
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def run_worker(script: str | Path, contestant: str, args: list[str],
               timeout: float = 600.0) -> dict:
    """Run ``script --worker contestant *args`` in a fresh interpreter; return its JSON.

    The result always has a ``status``: "ok", "skipped" (with ``reason``) or
    "error" (with ``reason`` and the end of the worker's stderr).
    """
    cmd = [sys.executable, str(Path(script).resolve()), "--worker", contestant, *args]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=worker_env(), capture_output=True, text=True,
                              timeout=timeout, cwd=REPO_ROOT)
    except subprocess.TimeoutExpired:
        return {"status": "error", "contestant": contestant,
                "reason": f"timed out after {timeout:.0f} s"}
    wall = time.perf_counter() - start
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(JSON_MARKER):
            result = json.loads(line[len(JSON_MARKER):])
            result["wall_s"] = wall
            if result["status"] == "error":
                result["stderr"] = _tail(proc.stderr)
            return result
    return {"status": "error", "contestant": contestant, "wall_s": wall,
            "reason": f"worker exited with code {proc.returncode} and no result",
            "stderr": _tail(proc.stderr + proc.stdout)}


def run_contestants(script: str | Path, contestants: list[str], args: list[str],
                    *, rounds: int = 1, verbose: bool = True) -> dict[str, dict]:
    """One worker process per contestant, one after the other (never two at once).

    With ``rounds`` > 1 the contestants take turns (A B A B ...), and each
    case keeps its best round: a burst of other work on a shared machine then
    spoils one round of one contestant, not the comparison.
    """
    results: dict[str, dict] = {}
    for round_ in range(rounds):
        for name in contestants:
            if name in results and results[name]["status"] == "skipped":
                continue  # a missing library stays missing
            tag = f"[{Path(script).stem}] {name}" + (f" ({round_ + 1}/{rounds})" if rounds > 1
                                                      else "")
            if verbose:
                print(f"  {tag} ...", file=sys.stderr, flush=True)
            r = run_worker(script, name, args)
            if verbose:
                extra = f": {r.get('reason')}" if r["status"] != "ok" else ""
                print(f"  {tag}: {r['status']} ({r.get('wall_s', 0):.1f} s){extra}",
                      file=sys.stderr, flush=True)
            results[name] = _best_of(results.get(name), r)
    return results


def _best_of(old: dict | None, new: dict) -> dict:
    """Merge two rounds of one contestant: per case, the round with the faster best run."""
    if old is None or old["status"] != "ok":
        return new if old is None or new["status"] == "ok" else old
    if new["status"] != "ok":
        return old
    merged = dict(old, rounds=old.get("rounds", 1) + 1)
    merged["cases"] = {case: min(entry, new["cases"].get(case, entry), key=lambda e: e["best"])
                       for case, entry in old["cases"].items()}
    return merged


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def problems(results: dict[str, dict]) -> list[str]:
    """One line per contestant that did not run: skipped (why) or failed (with stderr)."""
    out = []
    for name, r in results.items():
        if r["status"] == "skipped":
            out.append(f"{name}: skipped ({r['reason']})")
        elif r["status"] == "error":
            out.append(f"{name}: ERROR ({r['reason']})\n" + _indent(r.get("stderr", "")))
    return out


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def common_args(parser: argparse.ArgumentParser, *, repeat: int, min_time: float) -> None:
    """Options every benchmark takes (the worker gets them passed on unchanged)."""
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="where gradlab and PyTorch run (default: cpu)")
    parser.add_argument("--repeat", type=int, default=repeat,
                        help=f"timed runs per case (default: {repeat})")
    parser.add_argument("--min-time", type=float, default=min_time,
                        help=f"seconds one timed run lasts at least (default: {min_time})")
    parser.add_argument("--rounds", type=int, default=2,
                        help="worker processes per contestant, taking turns; each case keeps "
                             "its best round (default: 2)")
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON")
    parser.add_argument("--worker", help=argparse.SUPPRESS)


def passed_on(opts: argparse.Namespace) -> list[str]:
    """The options a driver hands to its workers."""
    return ["--device", opts.device, "--repeat", str(opts.repeat),
            "--min-time", str(opts.min_time)]


# --- the worker side ------------------------------------------------------------------------

def worker_main(opts: argparse.Namespace, contestants: dict[str, Callable]) -> None:
    """Run ``contestants[opts.worker](opts)`` and print its result as one JSON line.

    The contestant returns a dict (its ``cases`` and anything else to report);
    ``Skip`` or an ``ImportError`` of its library becomes status "skipped".
    """
    name = opts.worker
    try:
        if name not in contestants:
            raise Skip(f"unknown contestant {name!r}; known: {', '.join(contestants)}")
        result = {"status": "ok", "contestant": name, **contestants[name](opts)}
    except Skip as exc:
        result = {"status": "skipped", "contestant": name, "reason": str(exc)}
    except ImportError as exc:
        result = {"status": "skipped", "contestant": name,
                  "reason": f"{exc.name or exc} is not installed"}
    except Exception as exc:  # report, don't crash the driver
        traceback.print_exc()
        result = {"status": "error", "contestant": name,
                  "reason": f"{type(exc).__name__}: {exc}"}
    sys.stdout.flush()
    print(JSON_MARKER + json.dumps(result), flush=True)


def import_torch(device: str):
    """Import torch for a worker: one thread, and the device checked (else ``Skip``)."""
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # only allowed before any parallel work; harmless if too late
        pass
    if device == "cuda" and not torch.cuda.is_available():
        raise Skip(f"torch {torch.__version__} has no CUDA device here")
    return torch


def import_gradlab(device: str):
    """Import gradlab for a worker; ``Skip`` if the device is missing."""
    import gradlab

    if device == "cuda" and not gradlab.cuda.is_available():
        raise Skip("gradlab sees no CUDA device (is CuPy installed, is there a GPU?)")
    return gradlab


def measure(step: Callable[[], object], *, min_time: float, repeat: int, per: int = 1,
            sync: Callable[[], object] | None = None) -> dict:
    """Time ``step()``: warm up and calibrate, then ``repeat`` timed runs.

    Returns seconds per unit (``per`` units in one call of ``step``, e.g. the
    10 ops of a chain): ``best`` and ``median`` over the runs, plus how many
    calls made one run. Tables use ``best``: other work on the machine only
    ever adds time, so the fastest run is the one closest to the true cost.

    The clock: with no ``sync`` (the CPU), the process's CPU time, which
    stops while the OS runs someone else, so other work on a shared machine
    does not land in the figures; with ``sync`` (a GPU), wall time, since
    the work happens off the CPU.
    """
    timer = time.perf_counter if sync else time.process_time
    sync = sync or _nothing
    number = 1
    while True:  # calibrate: double the calls until one run lasts min_time (also warms up)
        sync()
        start = timer()
        for _ in range(number):
            step()
        sync()
        elapsed = timer() - start
        if elapsed >= min_time or number >= 1 << 24:
            break
        number = number * 2 if elapsed < min_time / 8 else int(number * min_time / elapsed) + 1
    runs = []
    for _ in range(repeat):
        sync()
        start = timer()
        for _ in range(number):
            step()
        sync()
        runs.append((timer() - start) / (number * per))
    return {"median": statistics.median(runs), "best": min(runs), "number": number,
            "repeat": repeat, "per": per}


def _nothing() -> None:
    pass


def versions(*packages: str) -> dict[str, str]:
    """Installed versions (read from package metadata, nothing imported)."""
    out = {}
    for name in packages:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


# --- tables ---------------------------------------------------------------------------------

@dataclass
class Table:
    """A table that prints as aligned text or as markdown.

    The first ``left`` columns (labels) align left, the rest (numbers) right.
    """

    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    left: int = 1

    def add(self, *cells) -> None:
        self.rows.append([str(c) for c in cells])

    def text(self) -> str:
        widths = [max(len(r[i]) for r in [self.headers, *self.rows])
                  for i in range(len(self.headers))]

        def line(cells):
            return "  ".join(c.ljust(w) if i < self.left else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths)))

        return "\n".join([line(self.headers), line(["-" * w for w in widths]),
                          *(line(r) for r in self.rows)])

    def markdown(self) -> str:
        def line(cells):
            return "| " + " | ".join(cells) + " |"

        rule = "|" + "|".join(":---" if i < self.left else "---:"
                              for i in range(len(self.headers))) + "|"
        return "\n".join([line(self.headers), rule, *(line(r) for r in self.rows)])


@dataclass
class Section:
    """A benchmark's report: a title, tables with captions, and notes."""

    title: str
    parts: list[tuple[str, Table | str]] = field(default_factory=list)

    def table(self, caption: str, table: Table) -> None:
        self.parts.append((caption, table))

    def note(self, text: str) -> None:
        self.parts.append(("", text))

    def render(self, markdown: bool = False) -> str:
        out = [f"### {self.title}" if markdown else f"== {self.title} =="]
        for caption, part in self.parts:
            if isinstance(part, Table):
                if caption:
                    out.append(f"\n{caption}\n" if markdown else f"\n{caption}")
                out.append(part.markdown() if markdown else part.text())
            else:
                out.append("\n" + part)
        return "\n".join(out) + "\n"


def close_section(section: Section, results: dict, opts: argparse.Namespace,
                  detail: str = "", *, timing: str | None = None) -> Section:
    """End a report: how the figures were taken (plus ``detail``), then what failed to run.

    ``timing`` replaces the usual sentence (:func:`timing_note`) for a benchmark
    that times differently (wall time of a child process, its own repeats).
    """
    section.note((timing or timing_note(opts)) + (" " + detail if detail else ""))
    for line in problems(results):
        section.note(line)
    return section


def timing_note(opts: argparse.Namespace) -> str:
    """How the figures were taken, in one sentence for a report."""
    clock = "wall time" if opts.device == "cuda" else "CPU time"
    rounds = f", over {opts.rounds} alternating rounds" if opts.rounds > 1 else ""
    return (f"Best of {opts.repeat} timed runs of at least {opts.min_time * 1e3:.0f} ms each"
            f"{rounds}; one thread; {clock}.")


def fmt_time(seconds: float | None, unit: str) -> str:
    """``seconds`` in µs or ms, with about three significant digits."""
    if seconds is None:
        return "-"
    value = seconds * (1e6 if unit == "us" else 1e3)
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def fmt_ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}"


def case_time(result: dict, case: str, stat: str = "best") -> float | None:
    """A contestant's time for ``case``, or None if it did not run (or lacks the case)."""
    if result.get("status") != "ok":
        return None
    entry = result.get("cases", {}).get(case)
    return None if entry is None else entry[stat]


def status_cell(result: dict, case: str, unit: str) -> str:
    """The table cell for one contestant and case: a time, "skipped" or "error"."""
    if result.get("status") != "ok":
        return result.get("status", "error")
    return fmt_time(case_time(result, case), unit)


def compare_losses(section: Section, contestants: dict[str, dict], batches) -> None:
    """Add the table of each contestant's first two losses, and whether they agree.

    Every step benchmark starts its contestants from the same data and
    weights, so their losses must agree (the second one checks the update):
    a fast time for a wrong step means nothing.
    """
    losses = Table(["batch", "contestant", "loss, step 1", "loss, step 2"], left=2)
    agree, compared = True, 0
    for batch in batches:
        case = f"b{batch}"
        seen = []
        for name, r in contestants.items():
            if r["status"] == "ok":
                seen.append(r["losses"][case])
                losses.add(batch, name, *(f"{v:.6f}" for v in seen[-1]))
        for other in seen[1:]:
            compared += 1
            agree &= all(abs(a - b) <= 1e-4 * abs(a) + 1e-5 for a, b in zip(seen[0], other))
    section.table("Same data, same weights: the losses must agree (step 2 checks the update):",
                  losses)
    if not compared:
        section.note("Fewer than two contestants ran: no losses to compare.")
    elif agree:
        section.note("The losses agree to 1e-4 (relative).")
    else:
        section.note("**THE LOSSES DISAGREE**: some contestant computes a different step; its "
                     "time means nothing until that is fixed.")


# --- the machine ----------------------------------------------------------------------------

def machine_info() -> dict[str, str]:
    """What the figures depend on: CPU, cores, library versions, commit, date, load."""
    import datetime
    import platform

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 0
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {"date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "commit": git_commit(), "cpu": model, "nproc": str(cores),
            "python": platform.python_version()}
    info.update(versions("numpy", "torch", "cupy-cuda12x", "cupy-cuda13x"))
    info = {k: v for k, v in info.items() if not (k.startswith("cupy") and v == "not installed")}
    try:
        info["load average"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        pass
    return info


def git_commit() -> str:
    """The checked-out commit, short (read-only: takes no lock, changes nothing)."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() or "unknown"


def run_benchmark(argv, parser, workers, collect, report) -> None:
    """The command line every benchmark shares: a worker, raw JSON, or the report."""
    opts = parser().parse_args(argv)
    if opts.worker:
        return worker_main(opts, workers)
    results = collect(opts)
    if opts.json:
        print(json.dumps(results, indent=1))
    else:
        print(report(results, opts).render(markdown=opts.markdown))
    return None
