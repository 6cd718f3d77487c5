"""Graph mode: a traced model's replay beside the eager model, in gradlab and in PyTorch.

``gradlab.jit.trace`` replays the recorded ops without the Python around
them (module calls, argument checks), so the question is what that saves,
and what PyTorch's ``torch.jit.trace`` saves on the same model. Cases, each
contestant in its own process, one BLAS thread:

* ``mlp b32 fwd``: a 784-256-256-10 MLP (``_models.build_mlp``), forward only
  under ``no_grad``, batch 32;
* ``mlp b32 step``: forward, ``cross_entropy``, backward, batch 32;
* ``chain10``: the ten tiny ops of ``tiny_ops.py`` on (4,) tensors, forward and
  backward (per op), where dispatch is everything.

    python bench/graph_mode.py [--device cuda] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import warnings

import _harness as h
import _models
import mlp_step
from tiny_ops import CHAIN_LENGTH, SHAPE, _inputs, chain10

BATCH = 32
CASES = {"mlp/fwd": f"MLP forward, batch {BATCH} (ms)",
         "mlp/step": f"MLP forward + backward, batch {BATCH} (ms)",
         "chain10": "chain of 10 tiny ops + backward (µs per op)"}
UNITS = {"mlp/fwd": "ms", "mlp/step": "ms", "chain10": "us"}


def _cases(lib, trace, opts) -> dict:
    dev = opts.device
    sync = lib.cuda.synchronize if dev == "cuda" else None
    timing = dict(min_time=opts.min_time, repeat=opts.repeat, sync=sync)
    xn, yn, pn = mlp_step.make_data(BATCH)
    arrays = [p.T if p.ndim == 2 else p for p in pn]
    model = _models.build_mlp(lib, mlp_step.SIZES, arrays, dev)
    x, y = lib.tensor(xn, device=dev), lib.tensor(yn, device=dev)
    a, b = (lib.tensor(v, device=dev, requires_grad=True) for v in _inputs(2, SHAPE))
    with warnings.catch_warnings():  # torch.jit.trace's notes on tracing are not news here
        warnings.simplefilter("ignore")
        net = trace(model, x)
        chain = trace(chain10, (a, b))
    cross_entropy = lib.nn.functional.cross_entropy

    def forward():
        with lib.no_grad():
            net(x)

    def step():
        model.zero_grad()
        cross_entropy(net(x), y).backward()

    def chain_step():
        chain(a, b).backward()
        a.grad = b.grad = None

    return {"mlp/fwd": h.measure(forward, **timing), "mlp/step": h.measure(step, **timing),
            "chain10": h.measure(chain_step, per=CHAIN_LENGTH, **timing)}


def _eager(model, example):
    return model


def worker_gradlab(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    return {"cases": _cases(gradlab, _eager, opts)}


def worker_gradlab_traced(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    return {"cases": _cases(gradlab, gradlab.jit.trace, opts)}


def worker_torch(opts) -> dict:
    torch = h.import_torch(opts.device)
    return {"cases": _cases(torch, _eager, opts), "versions": {"torch": torch.__version__}}


def worker_torch_traced(opts) -> dict:
    torch = h.import_torch(opts.device)
    return {"cases": _cases(torch, torch.jit.trace, opts)}


WORKERS = {"gradlab": worker_gradlab, "gradlab-traced": worker_gradlab_traced,
           "torch": worker_torch, "torch-traced": worker_torch_traced}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=5, min_time=0.05)
    return p


def collect(opts: argparse.Namespace) -> dict:
    return h.run_contestants(__file__, list(WORKERS), h.passed_on(opts), rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    sec = h.Section(f"Graph mode: traced replay vs eager ({opts.device})")
    tab = h.Table(["case", "gradlab eager", "gradlab traced", "traced/eager", "PyTorch eager",
                   "torch.jit.trace", "traced/eager "])
    for case, label in CASES.items():
        unit = UNITS[case]
        ge, gt = (h.case_time(results[k], case) for k in ("gradlab", "gradlab-traced"))
        te, tt = (h.case_time(results[k], case) for k in ("torch", "torch-traced"))
        tab.add(label, h.status_cell(results["gradlab"], case, unit),
                h.status_cell(results["gradlab-traced"], case, unit), h.fmt_ratio(gt, ge),
                h.status_cell(results["torch"], case, unit),
                h.status_cell(results["torch-traced"], case, unit), h.fmt_ratio(tt, te))
    sec.table("Time per call (a ratio below 1: the traced model is faster):", tab)
    return h.close_section(sec, results, opts, "Each column runs in its own process.")


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
