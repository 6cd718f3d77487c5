"""One SGD training step of a 784-256-256-10 MLP: gradlab vs hand-written NumPy vs PyTorch.

The step, the same math in all three::

    h1 = relu(x @ W1 + b1); h2 = relu(h1 @ W2 + b2); z = h2 @ W3 + b3
    loss = mean over the batch of -log_softmax(z)[i, y_i]
    backward; then for every parameter p: p -= lr * p.grad

* **gradlab** and **PyTorch**, each written two ways, with the same lines
  for both libraries: raw tensor ops and SGD by hand
  (``with no_grad(): p -= lr * p.grad; p.grad = None``), and the way
  tutorials write it: ``nn.Sequential`` of ``nn.Linear``/``nn.ReLU``,
  ``F.cross_entropy`` and ``optim.SGD`` (see ``_models.py``).
* **NumPy**: the forward and a hand-derived backward, written the way an
  expert would: preallocated buffers, ``out=`` everywhere, in-place updates,
  no needless copies. This is the bar: gradlab adds autograd on top of the
  same NumPy calls, and the target is to cost at most 10% more at batch 256.
  On ``--device cuda`` the same code runs on CuPy.

All start from the same float32 data and weights; the first step's
loss (and the loss after one update) is printed for each, so a wrong
gradient shows up as a mismatch, not as a fast time.

    python bench/mlp_step.py [--device cuda] [--batch 32 256] [--markdown]
"""

from __future__ import annotations

import argparse
import sys

import _harness as h
import _models

SIZES = (784, 256, 256, 10)
LR = 0.01
TARGET_NUMPY = 1.10  # gradlab / NumPy at batch TARGET_BATCH
TARGET_BATCH = 256


def make_data(batch: int):
    """Inputs, labels and (W1, b1, W2, b2, W3, b3), identical in every worker."""
    import numpy as np

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((batch, SIZES[0])).astype(np.float32)
    y = rng.randint(0, SIZES[-1], size=batch).astype(np.int64)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) * (2.0 / fan_in) ** 0.5)
                      .astype(np.float32))
        params.append((0.01 * rng.standard_normal(fan_out)).astype(np.float32))
    return x, y, params


def _time_steps(step, opts, sync) -> tuple[dict, list[float]]:
    """The timings, and the losses of the first step and of the second (after one update)."""
    losses = [step(want_loss=True), step(want_loss=True)]
    timing = h.measure(step, min_time=opts.min_time, repeat=opts.repeat, sync=sync)
    return timing, losses


# --- gradlab and PyTorch: the same code, with either library ---------------------------------

def _raw_step(lib, x, y, params):
    """The step in raw tensor ops with SGD by hand (identical lines for both libraries)."""
    rows = lib.arange(x.shape[0], device=x.device)

    def step(want_loss=False):
        w1, b1, w2, b2, w3, b3 = params
        hidden = (x @ w1 + b1).relu()
        hidden = (hidden @ w2 + b2).relu()
        logp = (hidden @ w3 + b3).log_softmax(1)
        loss = -logp[rows, y].mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        return loss.item() if want_loss else None

    return step


def _library_worker(lib, opts, sync, api: str) -> dict:
    """Time the step written with raw ops (``api="raw"``) or with nn + optim (``"nn"``)."""
    dev = opts.device
    cases, losses = {}, {}
    for batch in opts.batch:
        xn, yn, pn = make_data(batch)
        x, y = lib.tensor(xn, device=dev), lib.tensor(yn, device=dev)
        if api == "raw":
            params = [lib.tensor(p, device=dev, requires_grad=True) for p in pn]
            step = _raw_step(lib, x, y, params)
        else:  # nn.Linear keeps its weight as (out, in): the transpose of x @ W's W
            arrays = [p.T if p.ndim == 2 else p for p in pn]
            model = _models.build_mlp(lib, SIZES, arrays, dev)
            optimizer = lib.optim.SGD(model.parameters(), lr=LR)
            step, _ = _models.training_step(lib, model, optimizer, x, y)
        cases[f"b{batch}"], losses[f"b{batch}"] = _time_steps(step, opts, sync)
    return {"cases": cases, "losses": losses}


def _gradlab(opts, api: str) -> dict:
    gradlab = h.import_gradlab(opts.device)
    sync = gradlab.cuda.synchronize if opts.device == "cuda" else None
    return _library_worker(gradlab, opts, sync, api)


def _torch(opts, api: str) -> dict:
    torch = h.import_torch(opts.device)
    sync = torch.cuda.synchronize if opts.device == "cuda" else None
    return dict(_library_worker(torch, opts, sync, api), versions={"torch": torch.__version__})


# --- NumPy (or CuPy), backward by hand -------------------------------------------------------

class HandWrittenMLP:
    """The MLP step with its backward derived by hand, on NumPy or CuPy arrays (``xp``).

    Gradients, for the batch mean of the NLL of log-softmax (n rows):

        dz  = (softmax(z) - onehot(y)) / n
        dW3 = h2ᵀ dz,  db3 = Σ_rows dz,  dh2 = dz W3ᵀ ⊙ [h2 > 0]
        dW2 = h1ᵀ dh2, db2 = Σ_rows dh2, dh1 = dh2 W2ᵀ ⊙ [h1 > 0]
        dW1 = xᵀ dh1,  db1 = Σ_rows dh1

    Every intermediate and gradient lives in a buffer allocated once.
    """

    def __init__(self, xp, x, y, params):
        self.xp, self.x, self.y, self.params = xp, x, y, params
        n = x.shape[0]
        f32 = xp.float32
        self.rows = xp.arange(n)
        self.h1 = xp.empty((n, SIZES[1]), f32)
        self.h2 = xp.empty((n, SIZES[2]), f32)
        self.z = xp.empty((n, SIZES[3]), f32)
        self.e = xp.empty_like(self.z)
        self.dh1 = xp.empty_like(self.h1)
        self.dh2 = xp.empty_like(self.h2)
        self.grads = [xp.empty_like(p) for p in params]

    def step(self, want_loss=False):
        xp, x, rows = self.xp, self.x, self.rows
        w1, b1, w2, b2, w3, b3 = self.params
        dw1, db1, dw2, db2, dw3, db3 = self.grads
        h1, h2, z, e, dh1, dh2 = self.h1, self.h2, self.z, self.e, self.dh1, self.dh2
        n = x.shape[0]
        # forward
        xp.matmul(x, w1, out=h1)
        h1 += b1
        xp.maximum(h1, 0, out=h1)
        xp.matmul(h1, w2, out=h2)
        h2 += b2
        xp.maximum(h2, 0, out=h2)
        xp.matmul(h2, w3, out=z)
        z += b3
        z -= z.max(axis=1, keepdims=True)  # log_softmax(z) = z - m - log Σ exp(z - m)
        xp.exp(z, out=e)
        total = e.sum(axis=1, keepdims=True)
        loss = xp.log(total).mean() - z[rows, self.y].mean()
        # backward: e becomes dz = (softmax - onehot) / n
        e /= total
        e[rows, self.y] -= 1
        e *= 1.0 / n
        dz = e
        xp.matmul(h2.T, dz, out=dw3)
        dz.sum(axis=0, out=db3)
        xp.matmul(dz, w3.T, out=dh2)
        xp.multiply(dh2, h2 > 0, out=dh2)
        xp.matmul(h1.T, dh2, out=dw2)
        dh2.sum(axis=0, out=db2)
        xp.matmul(dh2, w2.T, out=dh1)
        xp.multiply(dh1, h1 > 0, out=dh1)
        xp.matmul(x.T, dh1, out=dw1)
        dh1.sum(axis=0, out=db1)
        # SGD, in place
        for p, g in zip(self.params, self.grads):
            g *= LR
            p -= g
        return float(loss) if want_loss else None


def worker_numpy(opts) -> dict:
    if opts.device == "cuda":
        import cupy as xp

        sync = xp.cuda.runtime.deviceSynchronize
        label = f"CuPy {xp.__version__}"
    else:
        import numpy as xp

        sync = None
        label = f"NumPy {xp.__version__}"
    cases, losses = {}, {}
    for batch in opts.batch:
        xn, yn, pn = make_data(batch)
        model = HandWrittenMLP(xp, xp.asarray(xn), xp.asarray(yn), [xp.asarray(p) for p in pn])
        cases[f"b{batch}"], losses[f"b{batch}"] = _time_steps(model.step, opts, sync)
    return {"cases": cases, "losses": losses, "label": label}


WORKERS = {
    "gradlab": lambda opts: _gradlab(opts, "raw"),
    "torch": lambda opts: _torch(opts, "raw"),
    "gradlab-nn": lambda opts: _gradlab(opts, "nn"),
    "torch-nn": lambda opts: _torch(opts, "nn"),
    "numpy": worker_numpy,
}


# --- driver ---------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=5, min_time=0.1)
    p.add_argument("--batch", type=int, nargs="+", default=[32, 256],
                   help="batch sizes (default: 32 256)")
    return p


def collect(opts: argparse.Namespace) -> dict:
    args = h.passed_on(opts) + ["--batch", *map(str, opts.batch)]
    return h.run_contestants(__file__, list(WORKERS), args, rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    n = results["numpy"]
    hand = "CuPy" if opts.device == "cuda" else "NumPy"
    sec = h.Section(f"MLP {'-'.join(map(str, SIZES))} SGD step ({opts.device}, float32)")
    tab = h.Table(["batch", "written with", "gradlab ms", f"{hand} ms", "PyTorch ms",
                   f"gradlab/{hand}", "gradlab/PyTorch"])
    for batch in opts.batch:
        case = f"b{batch}"
        nt = h.case_time(n, case)
        for api, label in (("", "raw ops, SGD by hand"), ("-nn", "nn.Linear, F.cross_entropy, "
                                                             "optim.SGD")):
            g, t = results["gradlab" + api], results["torch" + api]
            gt, tt = h.case_time(g, case), h.case_time(t, case)
            tab.add(batch, label, h.status_cell(g, case, "ms"), h.status_cell(n, case, "ms"),
                    h.status_cell(t, case, "ms"), h.fmt_ratio(gt, nt), h.fmt_ratio(gt, tt))
    sec.table("Time per training step (forward, backward, SGD update):", tab)
    h.compare_losses(sec, {"gradlab (raw)": results["gradlab"],
                           "gradlab (nn)": results["gradlab-nn"], hand: n,
                           "PyTorch (raw)": results["torch"],
                           "PyTorch (nn)": results["torch-nn"]}, opts.batch)
    nt = h.case_time(n, f"b{TARGET_BATCH}")
    for api, label in (("", "raw ops"), ("-nn", "nn + optim")):
        gt = h.case_time(results["gradlab" + api], f"b{TARGET_BATCH}")
        if gt and nt and opts.device == "cpu":
            verdict = "meets" if gt / nt <= TARGET_NUMPY else "misses"
            sec.note(f"Target gradlab/NumPy ≤ {TARGET_NUMPY:.2f} at batch {TARGET_BATCH} "
                     f"({label}): {gt / nt:.2f}, {verdict} it.")
    return h.close_section(sec, results, opts, f"lr = {LR}, the same batch every step.")


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
