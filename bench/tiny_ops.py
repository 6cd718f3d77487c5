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
the floor (the cost of the arithmetic call alone, no tensor wrapper). The
forward + backward table has a floor too, "Python floor": a bare
micrograd-style reverse-mode autograd on NumPy arrays (about 50 lines below,
no checks, no events, no memory accounting), i.e. what any Python autograd on
NumPy must pay; the rest of gradlab's time is its own bookkeeping.

    python bench/tiny_ops.py [--device cuda] [--markdown]
"""

from __future__ import annotations

import argparse
import math
import sys

import _harness as h
import numpy as np

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


# --- the Python floor: the least a reverse-mode autograd on NumPy can do ---------------------

class FloorTensor:
    """A micrograd-style tensor: an array, its gradient, the tensors it was made from
    (``parents``) and ``backprop``, which turns its gradient into one per parent.
    No checks, no events, no memory accounting: the floor under any Python engine."""

    __slots__ = ("data", "grad", "parents", "backprop")

    def __init__(self, data, parents=(), backprop=None):
        self.data = data
        self.grad = None
        self.parents = parents
        self.backprop = backprop

    @property
    def ndim(self):
        return self.data.ndim

    def __add__(self, other):
        if isinstance(other, FloorTensor):
            return FloorTensor(self.data + other.data, (self, other), lambda g: (g, g))
        return FloorTensor(self.data + other, (self,), lambda g: (g,))

    def __sub__(self, other):
        return FloorTensor(self.data - other.data, (self, other), lambda g: (g, -g))

    def __mul__(self, other):
        a = self.data
        if isinstance(other, FloorTensor):
            b = other.data
            return FloorTensor(a * b, (self, other), lambda g: (g * b, g * a))
        return FloorTensor(a * other, (self,), lambda g: (g * other,))

    def __matmul__(self, other):
        a, b = self.data, other.data
        return FloorTensor(a @ b, (self, other), lambda g: (g @ b.T, a.T @ g))

    def _unary(self, out, local):  # local(out): d(out)/d(input), elementwise
        return FloorTensor(out, (self,), lambda g: (g * local(out),))

    def exp(self):
        return self._unary(np.exp(self.data), lambda y: y)

    def tanh(self):
        return self._unary(np.tanh(self.data), lambda y: 1 - y * y)

    def relu(self):
        return self._unary(np.maximum(self.data, 0),
                           lambda y: y > 0)

    def sigmoid(self):
        return self._unary(1 / (1 + np.exp(-self.data)), lambda y: y * (1 - y))

    def sum(self):
        x = self.data
        return FloorTensor(x.sum(), (self,), lambda g: (g * np.ones_like(x),))

    def backward(self, grad=None):
        """Reverse mode: a topological order (iterative DFS), then each node's backprop."""
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((p, False) for p in node.parents if p not in seen)
        self.grad = np.ones_like(self.data) if grad is None else grad
        for node in reversed(order):
            if node.backprop is not None:
                for parent, g in zip(node.parents, node.backprop(node.grad)):
                    parent.grad = g if parent.grad is None else parent.grad + g


# --- workers --------------------------------------------------------------------------------

def _autograd_cases(opts, make_leaf, ones_like, no_grad, sync) -> dict:
    """Every case for an autograd library (gradlab or torch): fwd+bwd, then fwd under no_grad
    (skipped with ``no_grad=None``: the Python floor times fwd+bwd only)."""
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
        if no_grad is None:
            continue
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


def worker_floor(opts) -> dict:
    """Forward + backward with :class:`FloorTensor`: the bare cost of autograd in Python."""
    if opts.device != "cpu":
        raise h.Skip("the Python floor is a CPU reference only")
    cases = _autograd_cases(opts, make_leaf=FloorTensor, ones_like=lambda t: np.ones_like(t.data),
                            no_grad=None, sync=None)
    return {"cases": cases, "versions": {"numpy": np.__version__}}


WORKERS = {"gradlab": worker_gradlab, "torch": worker_torch, "numpy": worker_numpy,
           "floor": worker_floor}


# --- driver ---------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=5, min_time=0.03)
    return p


def collect(opts: argparse.Namespace) -> dict:
    contestants = ["gradlab", "torch"] + (["numpy", "floor"] if opts.device == "cpu" else [])
    return h.run_contestants(__file__, contestants, h.passed_on(opts), rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    g, t, n = results["gradlab"], results["torch"], results.get("numpy", {})
    f = results.get("floor", {})
    names = list(OPS) + ["chain10"]
    sec = h.Section(f"Tiny ops, per op ({opts.device}, float32, shape {SHAPE}, "
                    f"matmul {MATMUL_SHAPE[0]}x{MATMUL_SHAPE[1]})")

    fb = h.Table(["op", "gradlab µs", "PyTorch µs", "Python floor µs", "gradlab/PyTorch",
                  f"≤ {TARGET}?"])
    ratios = []
    for name in names:
        case = f"{name}/fwd+bwd"
        gt, tt = h.case_time(g, case), h.case_time(t, case)
        if gt and tt:
            ratios.append(gt / tt)
        label = name + (" (per op)" if name == "chain10" else "")
        fb.add(label, h.status_cell(g, case, "us"), h.status_cell(t, case, "us"),
               h.status_cell(f, case, "us") if f else "-", h.fmt_ratio(gt, tt), _meets(gt, tt))
    if ratios:
        gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
        fb.add("geometric mean", "", "", "", f"{gm:.2f}", "yes" if gm <= TARGET else "no")
    sec.table("Forward + backward (one op, then `.backward()`, then `.grad = None`; Python "
              "floor: a bare micrograd-style autograd on NumPy, what any Python engine pays, so "
              "the rest of gradlab's time is its own bookkeeping):", fb)

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
