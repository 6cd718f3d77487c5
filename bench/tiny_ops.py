"""Per-op cost of tiny ops: where a Python engine's dispatch overhead is everything.

For tensors of shape (4,) (and 8x8 for matmul), the arithmetic takes
nanoseconds; what is measured is the bookkeeping around it: argument checks,
output wrapping, graph recording, the backward engine, gradient accumulation.

Cases, each on float32 leaves that require grad:

* ``fwd+bwd``: one op, then ``.backward()`` through it (with a gradient of
  ones for non-scalar outputs), then the leaves' ``.grad`` reset to None.
  Reported per op: one forward, its backward, the engine's walk.
* ``fwd (no_grad)``: the op alone under ``no_grad()``.
* ``chain10``: ten mixed ops (mul, add, exp, sub, tanh, mul by a number,
  relu, add, sigmoid, sum), then ``.backward()``; reported per op (/10).

Contestants: gradlab and PyTorch; raw NumPy joins the forward-only table as
the floor (the cost of the arithmetic call alone, no tensor wrapper).

    python bench/tiny_ops.py [--device cuda] [--markdown]
"""

from __future__ import annotations

import argparse
import math
import sys

import _harness as h

TARGET = 0.75  # gradlab / PyTorch, per op, forward + backward
SHAPE = (4,)
MATMUL_SHAPE = (8, 8)

# name -> (number of leaves, shape, function written once for gradlab and torch)
OPS = {
    "add": (2, SHAPE, lambda a, b: a + b),
    "mul": (2, SHAPE, lambda a, b: a * b),
    "exp": (1, SHAPE, lambda a: a.exp()),
    "tanh": (1, SHAPE, lambda a: a.tanh()),
    "relu": (1, SHAPE, lambda a: a.relu()),
    "sum": (1, SHAPE, lambda a: a.sum()),
    "matmul": (2, MATMUL_SHAPE, lambda a, b: a @ b),
}
CHAIN_LENGTH = 10


def chain10(a, b):
    """Ten mixed ops ending in a scalar; the same code runs on gradlab and torch."""
    t = a * b
    t = t + a
    t = t.exp()
    t = t - b
    t = t.tanh()
    t = t * 0.5
    t = t.relu()
    t = t + b
    t = t.sigmoid()
    return t.sum()


def _numpy_chain10(np):
    def chain(a, b):
        t = a * b
        t = t + a
        t = np.exp(t)
        t = t - b
        t = np.tanh(t)
        t = t * np.float32(0.5)
        t = np.maximum(t, 0)
        t = t + b
        t = 1 / (1 + np.exp(-t))  # sigmoid: NumPy has none, so this one is 4 calls
        return t.sum()
    return chain


def _inputs(n_leaves, shape):
    """The same float32 data in every worker."""
    import numpy as np

    rng = np.random.RandomState(0)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n_leaves)]


# --- workers --------------------------------------------------------------------------------

def _autograd_cases(opts, make_leaf, ones_like, no_grad, sync) -> dict:
    """Every case for an autograd library (gradlab or torch): fwd+bwd, then fwd under no_grad."""
    cases = {}
    timing = dict(min_time=opts.min_time, repeat=opts.repeat, sync=sync)
    table = {name: (n, shape, fn, 1) for name, (n, shape, fn) in OPS.items()}
    table["chain10"] = (2, SHAPE, chain10, CHAIN_LENGTH)
    steps = {}
    for name, (n, shape, fn, per) in table.items():
        leaves = [make_leaf(x) for x in _inputs(n, shape)]
        out = fn(*leaves)
        grad = None if out.ndim == 0 else ones_like(out)

        def step(fn=fn, leaves=leaves, grad=grad):
            fn(*leaves).backward(grad)
            for t in leaves:
                t.grad = None

        steps[name] = (step, fn, leaves, per)
    for _ in range(200):  # warm every path first, so the first case pays no one-time costs
        for step, *_ in steps.values():
            step()
    for name, (step, fn, leaves, per) in steps.items():
        cases[f"{name}/fwd+bwd"] = h.measure(step, per=per, **timing)
        with no_grad():
            cases[f"{name}/fwd"] = h.measure(lambda fn=fn, leaves=leaves: fn(*leaves),
                                             per=per, **timing)
    return cases


def worker_gradlab(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    dev = opts.device
    sync = gradlab.cuda.synchronize if dev == "cuda" else None
    cases = _autograd_cases(
        opts,
        make_leaf=lambda x: gradlab.tensor(x, device=dev, requires_grad=True),
        ones_like=gradlab.ones_like, no_grad=gradlab.no_grad, sync=sync)
    return {"cases": cases, "versions": h.versions("numpy", "cupy")}


def worker_torch(opts) -> dict:
    torch = h.import_torch(opts.device)
    dev = opts.device
    sync = torch.cuda.synchronize if dev == "cuda" else None
    cases = _autograd_cases(
        opts,
        make_leaf=lambda x: torch.tensor(x, device=dev, requires_grad=True),
        ones_like=torch.ones_like, no_grad=torch.no_grad, sync=sync)
    return {"cases": cases, "versions": {"torch": torch.__version__}}


def worker_numpy(opts) -> dict:
    """Forward only, raw NumPy on the CPU: the floor under any tensor library's forward."""
    import numpy as np

    if opts.device != "cpu":
        raise h.Skip("the NumPy floor is a CPU reference only")
    raw = {"add": np.add, "mul": np.multiply, "exp": np.exp, "tanh": np.tanh,
           "relu": lambda a: np.maximum(a, 0), "sum": np.sum, "matmul": np.matmul}
    cases = {}
    for name, (n, shape, _) in OPS.items():
        args = _inputs(n, shape)
        fn = raw[name]
        cases[f"{name}/fwd"] = h.measure(lambda fn=fn, args=args: fn(*args),
                                         min_time=opts.min_time, repeat=opts.repeat)
    chain, args = _numpy_chain10(np), _inputs(2, SHAPE)
    cases["chain10/fwd"] = h.measure(lambda: chain(*args), per=CHAIN_LENGTH,
                                     min_time=opts.min_time, repeat=opts.repeat)
    return {"cases": cases, "versions": {"numpy": np.__version__}}


WORKERS = {"gradlab": worker_gradlab, "torch": worker_torch, "numpy": worker_numpy}


# --- driver ---------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=5, min_time=0.03)
    return p


def collect(opts: argparse.Namespace) -> dict:
    contestants = ["gradlab", "torch"] + (["numpy"] if opts.device == "cpu" else [])
    return h.run_contestants(__file__, contestants, h.passed_on(opts), rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    g, t, n = results["gradlab"], results["torch"], results.get("numpy", {})
    names = list(OPS) + ["chain10"]
    sec = h.Section(f"Tiny ops, per op ({opts.device}, float32, shape {SHAPE}, "
                    f"matmul {MATMUL_SHAPE[0]}x{MATMUL_SHAPE[1]})")

    fb = h.Table(["op", "gradlab µs", "PyTorch µs", "gradlab/PyTorch", f"≤ {TARGET}?"])
    ratios = []
    for name in names:
        case = f"{name}/fwd+bwd"
        gt, tt = h.case_time(g, case), h.case_time(t, case)
        if gt and tt:
            ratios.append(gt / tt)
        label = name + (" (per op)" if name == "chain10" else "")
        fb.add(label, h.status_cell(g, case, "us"), h.status_cell(t, case, "us"),
               h.fmt_ratio(gt, tt), _meets(gt, tt))
    if ratios:
        gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
        fb.add("geometric mean", "", "", f"{gm:.2f}", "yes" if gm <= TARGET else "no")
    sec.table("Forward + backward (one op, then `.backward()`, then `.grad = None`):", fb)

    fw = h.Table(["op", "gradlab µs", "PyTorch µs", "NumPy µs", "gradlab/PyTorch",
                  "gradlab/NumPy"])
    for name in names:
        case = f"{name}/fwd"
        gt, tt, nt = h.case_time(g, case), h.case_time(t, case), h.case_time(n, case)
        fw.add(name + (" (per op)" if name == "chain10" else ""),
               h.status_cell(g, case, "us"), h.status_cell(t, case, "us"),
               h.status_cell(n, case, "us") if n else "-",
               h.fmt_ratio(gt, tt), h.fmt_ratio(gt, nt))
    sec.table("Forward only, under `no_grad()` (NumPy: the bare array call, the floor):", fw)
    return h.close_section(sec, results, opts,
                           f"Target: gradlab/PyTorch ≤ {TARGET} for forward + backward.")


def _meets(gt, tt) -> str:
    if not gt or not tt:
        return "-"
    return "yes" if gt / tt <= TARGET else "no"


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
