"""The one prepared check for a machine with an NVIDIA GPU: tests and benchmarks on cuda.

Device time on a lent GPU machine is short, so everything that needs the GPU
runs from this one script, in one call, and ends well inside ten minutes:

1. what is there: ``nvidia-smi``, CuPy and its CUDA runtime, PyTorch's CUDA,
   and which of gradlab's dependencies are importable;
2. ``pytest -x -q tests`` with the cuda device visible (the test suite
   parametrizes over devices, so every device test also runs on "cuda");
3. ``tiny_ops.py``, ``mlp_step.py`` and ``cnn_step.py`` with ``--device cuda`` for gradlab,
   PyTorch-CUDA and hand-written CuPy (each skipped if missing).

The report goes to ``$OUT/gpu_report.md`` when ``OUT`` is set (rewritten
after each part, so a run cut short still leaves what it found), else to
stdout. gradlab need not be installed: the repo root is put on the path.

    python3 bench/gpu_check.py [--test-timeout 300] [--skip-tests] [--skip-bench]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import _harness as h
import cnn_step
import mlp_step
import tiny_ops

if str(h.REPO_ROOT) not in sys.path:  # gradlab importable without being installed
    sys.path.insert(1, str(h.REPO_ROOT))

NEEDED = ["numpy", "ml_dtypes", "cupy", "torch", "pytest", "hypothesis", "pytest_timeout",
          "textual", "graphviz", "matplotlib"]


class Report:
    """Markdown parts, flushed to ``$OUT/gpu_report.md`` (or stdout) as they come."""

    def __init__(self) -> None:
        out = os.environ.get("OUT")
        self.path = Path(out) / "gpu_report.md" if out else None
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text.rstrip() + "\n")
        if self.path is None:
            print(text.rstrip() + "\n", flush=True)
        else:
            self.path.write_text("\n".join(self.parts), encoding="utf-8")
            print(f"[gpu_check] {text.strip().splitlines()[0]}", file=sys.stderr, flush=True)


def run_command(cmd: list[str], timeout: float, env=None) -> tuple[int | str, str]:
    """Run ``cmd``; return (exit code or "timeout"/"missing", combined output)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=env, cwd=h.REPO_ROOT)
    except FileNotFoundError:
        return "missing", f"{cmd[0]}: not found"
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"") + (exc.stderr or b"")
        return "timeout", out.decode(errors="replace") if isinstance(out, bytes) else out
    return proc.returncode, proc.stdout + proc.stderr


def code_block(text: str, lines: int | None = None) -> str:
    body = text.strip().splitlines() or ["(no output)"]
    if lines is not None and len(body) > lines:
        body = [f"... ({len(body) - lines} lines above cut)"] + body[-lines:]
    return "```\n" + "\n".join(body) + "\n```"


def environment() -> str:
    out = ["## Machine and libraries", ""]
    info = h.machine_info()
    out += [h.Table(["", ""], [[k, v] for k, v in info.items()], left=2).markdown(), ""]
    code, smi = run_command(["nvidia-smi"], timeout=30)
    out += ["`nvidia-smi`:", "", code_block(smi), ""]
    found = {name: importlib.util.find_spec(name) is not None for name in NEEDED}
    missing = [name for name, ok in found.items() if not ok]
    out.append("Importable: " + ", ".join(n for n, ok in found.items() if ok) + ".")
    if missing:
        out.append(f"**Missing: {', '.join(missing)}** (tests needing them fail or skip; carry "
                   "them as wheels, see the device README).")
    out += ["", _cupy_info(), _gradlab_info(), _torch_info()]
    return "\n".join(out)


def _cupy_info() -> str:
    try:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        free, total = cupy.cuda.runtime.memGetInfo()
        return (f"- CuPy {cupy.__version__}, CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}, "
                f"driver {cupy.cuda.runtime.driverGetVersion()}, "
                f"{cupy.cuda.runtime.getDeviceCount()} device(s); device 0: {name}, "
                f"{total / 2**30:.0f} GiB ({free / 2**30:.0f} GiB free)")
    except Exception as exc:
        return f"- CuPy: not usable ({type(exc).__name__}: {exc})"


def _gradlab_info() -> str:
    try:
        import gradlab

        ok = gradlab.cuda.is_available()
        line = f"- gradlab {gradlab.__version__}: cuda available = {ok}"
        if ok:
            x = gradlab.ones(3, device="cuda")
            line += f"; a (3,) tensor on {x.device} sums to {(x * 2).sum().item()}"
        return line
    except Exception as exc:
        return f"- gradlab on cuda: FAILED ({type(exc).__name__}: {exc})"


def _torch_info() -> str:
    try:
        import torch

        if not torch.cuda.is_available():
            return f"- PyTorch {torch.__version__}: no CUDA"
        return (f"- PyTorch {torch.__version__}: CUDA {torch.version.cuda}, "
                f"{torch.cuda.get_device_name(0)}")
    except Exception as exc:
        return f"- PyTorch: not usable ({type(exc).__name__}: {exc})"


def tests(timeout: float) -> str:
    # pyproject's addopts already has -q; a second -q would hide the "N passed" line.
    cmd = [sys.executable, "-m", "pytest", "-x", "tests", "-p", "no:cacheprovider"]
    start = time.perf_counter()
    code, output = run_command(cmd, timeout=timeout, env=h.worker_env())
    took = time.perf_counter() - start
    verdict = {0: "passed", "timeout": f"TIMED OUT after {timeout:.0f} s"}.get(
        code, f"FAILED (exit code {code})")
    return "\n".join([f"## Tests on cpu and cuda: {verdict} ({took:.0f} s)", "",
                      f"`{' '.join(cmd[1:])}`", "", code_block(output, lines=80)])


def benchmark(module, argv: list[str]) -> str:
    opts = module.parser().parse_args(["--device", "cuda", *argv])
    start = time.perf_counter()
    section = module.report(module.collect(opts), opts).render(markdown=True)
    return section + f"\n({time.perf_counter() - start:.0f} s)\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--test-timeout", type=float, default=300,
                   help="seconds the test suite may take (default: 300)")
    p.add_argument("--skip-tests", action="store_true")
    p.add_argument("--skip-bench", action="store_true")
    opts = p.parse_args(argv)
    for name in h.THREAD_VARIABLES:
        os.environ[name] = "1"
    report = Report()
    report.add(f"# gpu_check · {time.strftime('%Y-%m-%d %H:%M')} · commit {h.git_commit()}")
    for title, part in [
        ("environment", environment),
        ("tests", None if opts.skip_tests else lambda: tests(opts.test_timeout)),
        ("tiny ops", None if opts.skip_bench else lambda: benchmark(tiny_ops, [])),
        ("mlp step", None if opts.skip_bench else
         lambda: benchmark(mlp_step, ["--batch", "32", "256", "2048"])),
        ("cnn step", None if opts.skip_bench else
         lambda: benchmark(cnn_step, ["--batch", "64", "512"])),
    ]:
        if part is None:
            continue
        try:
            report.add(part())
        except Exception as exc:  # one broken part must not lose the others
            report.add(f"## {title}: the check itself FAILED\n\n"
                       f"{code_block(f'{type(exc).__name__}: {exc}')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
