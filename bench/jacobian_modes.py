"""A full Jacobian by forward mode (n jvps) vs reverse mode (m vjps), for f: R^n -> R^m.

The function, the same lines for gradlab and PyTorch, in float64::

    f(x) = tanh(W2 @ tanh(W1 @ x)),   W1: (64, n),  W2: (m, 64)

at three shapes: n ≪ m (4 -> 256), n = m (64 -> 64) and n ≫ m (256 -> 4).
Forward mode builds J one column per pass (a jvp with tangent e_k), reverse
mode one row per pass (a vjp with cotangent e_k), so the textbook answer is
that forward mode wins when n < m and reverse mode when n > m, by about the
ratio of the two. This measures whether it does, and at what cost per pass.

Contestants, each in its own process:

* **gradlab**: ``gradlab.func.jacfwd`` (n forward passes carrying one
  tangent each) and ``gradlab.func.jacrev`` (one forward, m backward passes).
  gradlab has no batched vmap (its vmap is a loop): both loop in Python.
* **PyTorch**, two ways. ``torch.func.jacfwd``/``jacrev`` *vmap* the jvp or
  vjp: every column (row) in one batched pass, so their cost hardly depends on
  the loop length. The like-for-like loops: reverse,
  ``torch.autograd.functional.jacobian(f, x, vectorize=False,
  strategy="reverse-mode")`` (one forward, m ``autograd.grad`` calls);
  forward, a hand loop of n ``torch.autograd.forward_ad`` passes
  (``jacobian``'s forward mode exists only with ``vectorize=True``).
* **NumPy**: the Jacobian written out, J = diag(1 - y²) W2 diag(1 - h²) W1
  with h = tanh(W1 x), y = tanh(W2 h): one matrix product, the floor.

Before timing, each worker compares every Jacobian it computes with the
analytic one (max abs difference); the NumPy worker checks the analytic one
against central finite differences.

    python bench/jacobian_modes.py [--markdown] [--json]
"""

from __future__ import annotations

import argparse
import sys

import _harness as h

HIDDEN = 64
SHAPES = ((4, 256), (64, 64), (256, 4))  # (n, m): f maps R^n to R^m
AGREE = 1e-10  # max abs difference allowed between two float64 Jacobians
FD_AGREE = 1e-6  # ... between the analytic Jacobian and central finite differences

# method -> (who, label in the tables)
METHODS = {
    "gradlab/fwd": ("gradlab", "gradlab.func.jacfwd"),
    "gradlab/rev": ("gradlab", "gradlab.func.jacrev"),
    "torch/loop-fwd": ("torch", "PyTorch forward_ad loop"),
    "torch/loop-rev": ("torch", "PyTorch autograd.functional.jacobian"),
    "torch/vmap-fwd": ("torch", "PyTorch torch.func.jacfwd (vmap)"),
    "torch/vmap-rev": ("torch", "PyTorch torch.func.jacrev (vmap)"),
    "numpy/analytic": ("numpy", "NumPy, analytic"),
}


def case_name(n: int, m: int, method: str) -> str:
    return f"n{n}-m{m}/{method}"


def make_problem(n: int, m: int):
    """W1, W2 and x in float64, identical in every worker."""
    import numpy as np

    rng = np.random.RandomState(7 + n + 1000 * m)
    w1 = rng.standard_normal((HIDDEN, n)) / n ** 0.5
    w2 = rng.standard_normal((m, HIDDEN)) / HIDDEN ** 0.5
    x = rng.standard_normal(n)
    return w1, w2, x


def analytic_jacobian(w1, w2, x):
    """J = diag(1 - y²) W2 diag(1 - h²) W1, with h = tanh(W1 x) and y = tanh(W2 h)."""
    import numpy as np

    hidden = np.tanh(w1 @ x)
    y = np.tanh(w2 @ hidden)
    return ((1 - y * y)[:, None] * w2 * (1 - hidden * hidden)) @ w1


def f(w1, w2, x):
    """The function, written once for gradlab and torch tensors."""
    return (w2 @ (w1 @ x).tanh()).tanh()


# --- workers --------------------------------------------------------------------------------

def _check_then_time(methods: dict, prefix: str, opts, sync) -> tuple[dict, dict]:
    """For each shape and method: the max abs difference from the analytic J, then the timing.

    ``methods[name](n, m)`` returns ``(jacobian_fn, x, to_numpy)``.
    """
    cases, diffs = {}, {}
    for n, m in SHAPES:
        reference = analytic_jacobian(*make_problem(n, m))
        for name, build in methods.items():
            jac, x, to_numpy = build(n, m)
            case = case_name(n, m, f"{prefix}/{name}")
            got = to_numpy(jac(x))
            diffs[case] = (float(abs(got - reference).max()) if got.shape == reference.shape
                           else f"shape {got.shape}, expected {reference.shape}")
            cases[case] = h.measure(lambda jac=jac, x=x: jac(x), min_time=opts.min_time,
                                    repeat=opts.repeat, sync=sync)
    return cases, diffs


def worker_gradlab(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    from gradlab.func import jacfwd, jacrev

    dev = opts.device
    sync = gradlab.cuda.synchronize if dev == "cuda" else None

    def build(transform):
        def make(n, m):
            w1, w2, x = (gradlab.tensor(a, device=dev) for a in make_problem(n, m))
            return transform(lambda x: f(w1, w2, x)), x, lambda j: j.cpu().numpy()
        return make

    cases, diffs = _check_then_time({"fwd": build(jacfwd), "rev": build(jacrev)}, "gradlab",
                                    opts, sync)
    return {"cases": cases, "diffs": diffs}


def worker_torch(opts) -> dict:
    torch = h.import_torch(opts.device)
    import torch.autograd.forward_ad as fwad

    dev = opts.device
    sync = torch.cuda.synchronize if dev == "cuda" else None

    def loop_fwd(func, n):
        """n forward-mode passes, one basis tangent each: what gradlab's jacfwd does."""
        basis = torch.eye(n, dtype=torch.float64, device=dev)

        def jac(x):
            columns = []
            for k in range(n):
                with fwad.dual_level():
                    out = func(fwad.make_dual(x, basis[k]))
                    columns.append(fwad.unpack_dual(out).tangent)
            return torch.stack(columns, dim=-1)
        return jac

    def loop_rev(func):
        return lambda x: torch.autograd.functional.jacobian(func, x, vectorize=False,
                                                            strategy="reverse-mode")

    def build(kind):
        def make(n, m):
            w1, w2, x = (torch.tensor(a, device=dev) for a in make_problem(n, m))

            def func(x):
                return f(w1, w2, x)

            jac = {"loop-fwd": lambda: loop_fwd(func, n), "loop-rev": lambda: loop_rev(func),
                   "vmap-fwd": lambda: torch.func.jacfwd(func),
                   "vmap-rev": lambda: torch.func.jacrev(func)}[kind]()
            return jac, x, lambda j: j.detach().cpu().numpy()
        return make

    kinds = ("loop-fwd", "loop-rev", "vmap-fwd", "vmap-rev")
    cases, diffs = _check_then_time({k: build(k) for k in kinds}, "torch", opts, sync)
    return {"cases": cases, "diffs": diffs, "versions": {"torch": torch.__version__}}


def worker_numpy(opts) -> dict:
    """The analytic Jacobian: the floor; checked here against central finite differences."""
    import numpy as np

    if opts.device != "cpu":
        raise h.Skip("the analytic NumPy Jacobian is a CPU reference only")
    cases, fd = {}, {}
    for n, m in SHAPES:
        w1, w2, x = make_problem(n, m)
        eps = 1e-6
        columns = [(np.tanh(w2 @ np.tanh(w1 @ (x + eps * e))) -
                    np.tanh(w2 @ np.tanh(w1 @ (x - eps * e)))) / (2 * eps) for e in np.eye(n)]
        reference = analytic_jacobian(w1, w2, x)
        fd[f"n{n}-m{m}"] = float(abs(np.stack(columns, axis=-1) - reference).max())
        cases[case_name(n, m, "numpy/analytic")] = h.measure(
            lambda w1=w1, w2=w2, x=x: analytic_jacobian(w1, w2, x),
            min_time=opts.min_time, repeat=opts.repeat)
    return {"cases": cases, "finite_differences": fd, "versions": {"numpy": np.__version__}}


WORKERS = {"gradlab": worker_gradlab, "torch": worker_torch, "numpy": worker_numpy}


# --- driver ---------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=5, min_time=0.05)
    return p


def collect(opts: argparse.Namespace) -> dict:
    contestants = ["gradlab", "torch"] + (["numpy"] if opts.device == "cpu" else [])
    return h.run_contestants(__file__, contestants, h.passed_on(opts), rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    def t(n, m, method):
        return h.case_time(results.get(METHODS[method][0], {}), case_name(n, m, method))

    def cell(n, m, method):
        r = results.get(METHODS[method][0], {})
        return h.status_cell(r, case_name(n, m, method), "ms") if r else "-"

    sec = h.Section(f"Jacobians: forward vs reverse mode ({opts.device}, float64, f: R^n → R^m, "
                    f"f(x) = tanh(W2 @ tanh(W1 @ x)), hidden {HIDDEN})")
    _agreement(sec, results)
    for n, m in SHAPES:
        tab = h.Table(["mode", "passes", "gradlab ms", "PyTorch loop ms", "torch.func ms",
                       "gradlab/loop", "gradlab/torch.func"], left=2)
        for mode, passes in (("fwd", f"{n} jvps"), ("rev", f"1 forward + {m} vjps")):
            g, lp, vm = f"gradlab/{mode}", f"torch/loop-{mode}", f"torch/vmap-{mode}"
            tab.add("forward" if mode == "fwd" else "reverse", passes, cell(n, m, g),
                    cell(n, m, lp), cell(n, m, vm), h.fmt_ratio(t(n, m, g), t(n, m, lp)),
                    h.fmt_ratio(t(n, m, g), t(n, m, vm)))
        tab.add("forward/reverse", "", *(h.fmt_ratio(t(n, m, f"{who}fwd"), t(n, m, f"{who}rev"))
                                         for who in ("gradlab/", "torch/loop-", "torch/vmap-")),
                "", "")
        floor = t(n, m, "numpy/analytic")
        best = min((x for x in (t(n, m, "gradlab/fwd"), t(n, m, "gradlab/rev")) if x),
                   default=None)
        sec.table(f"n = {n}, m = {m}: ms per Jacobian ({m}×{n}); the analytic one in NumPy "
                  f"(the floor) takes {cell(n, m, 'numpy/analytic')} ms", tab)
        sec.note(_reading(n, m, t) + (f" gradlab's faster mode takes "
                                      f"{best / floor:.0f}× the NumPy floor."
                                      if best and floor else ""))
    return h.close_section(
        sec, results, opts,
        "torch.func.jacfwd/jacrev vmap the jvp/vjp, so all columns (rows) go through one "
        "batched pass: their time hardly depends on n or m. gradlab's vmap loops: one "
        "pass per column (row), like the PyTorch loops: forward, a hand loop of "
        "torch.autograd.forward_ad passes (autograd.functional.jacobian has forward mode only "
        "with vectorize=True); reverse, autograd.functional.jacobian(vectorize=False, "
        "strategy='reverse-mode'). Ratios are gradlab's time / the other's.")


def _reading(n: int, m: int, t) -> str:
    """One line: which mode won, by how much, and whether that is what n vs m predicts."""
    def verdict(prefix):
        fwd, rev = t(n, m, f"{prefix}fwd"), t(n, m, f"{prefix}rev")
        if not fwd or not rev:
            return None, None, "-"
        winner = "forward" if fwd < rev else "reverse"
        factor = max(fwd, rev) / min(fwd, rev)
        text = f"about even ({fwd / rev:.2f})" if factor < 1.1 else f"{winner} by {factor:.1f}×"
        return winner, factor, text

    winner, factor, text = verdict("gradlab/")
    others = (f"PyTorch's loops: {verdict('torch/loop-')[2]}; "
              f"torch.func (vmap): {verdict('torch/vmap-')[2]}.")
    if winner is None:
        return f"Reading: gradlab did not run; {others}"
    if n == m:
        return f"Reading: n = m, so both modes make {n} passes; gradlab: {text}; {others}"
    expected = "forward" if n < m else "reverse"
    how = "as expected" if winner == expected else "AGAINST expectation"
    return (f"Reading: {winner} mode wins when n {'<' if n < m else '>'} m, {how}, by "
            f"{factor:.1f}× in gradlab ({n} jvps vs 1 forward + {m} vjps); {others}")


def _agreement(sec: h.Section, results: dict) -> None:
    """The max abs difference of every Jacobian from the analytic one, and a verdict."""
    tab = h.Table(["Jacobian by", *(f"n={n}, m={m}" for n, m in SHAPES)])
    bad = []
    for method, (who, label) in METHODS.items():
        r = results.get(who, {})
        if method == "numpy/analytic":
            fd = r.get("finite_differences") if r.get("status") == "ok" else None
            if fd:
                tab.add("analytic vs finite differences",
                        *(f"{fd[f'n{n}-m{m}']:.1e}" for n, m in SHAPES))
                bad += [f"analytic at n={n}, m={m}" for n, m in SHAPES
                        if not fd[f"n{n}-m{m}"] <= FD_AGREE]
            continue
        if r.get("status") != "ok":
            continue
        row = []
        for n, m in SHAPES:
            d = r["diffs"][case_name(n, m, method)]
            row.append(f"{d:.1e}" if isinstance(d, float) else d)
            if not (isinstance(d, float) and d <= AGREE):
                bad.append(f"{label} at n={n}, m={m}")
        tab.add(label, *row)
    sec.table("Max abs difference from the analytic Jacobian, checked before timing:", tab)
    if not tab.rows:
        sec.note("No contestant ran: no Jacobians to compare.")
    elif bad:
        sec.note("**JACOBIANS DISAGREE**: " + "; ".join(bad) + ". Their times mean nothing "
                 "until that is fixed.")
    else:
        sec.note(f"Every Jacobian agrees with the analytic one to {AGREE:.0e} (and the analytic "
                 f"one with central finite differences to {FD_AGREE:.0e}).")


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
