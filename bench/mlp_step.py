"""One SGD training step of a 784-256-256-10 MLP: gradlab vs hand-written NumPy vs PyTorch.

The step, the same math in all three::

    h1 = relu(x @ W1 + b1); h2 = relu(h1 @ W2 + b2); z = h2 @ W3 + b3
    loss = mean over the batch of -log_softmax(z)[i, y_i]
    backward; then for every parameter p: p -= lr * p.grad

* **gradlab** and **PyTorch**: raw tensor ops and SGD by hand
  (``with no_grad(): p -= lr * p.grad; p.grad = None``).
* **NumPy**: the forward and a hand-derived backward, written the way an
  expert would: preallocated buffers, ``out=`` everywhere, in-place updates,
  no needless copies. This is the bar: gradlab adds autograd on top of the
  same NumPy calls, and the target is to cost at most 10% more at batch 256.
  On ``--device cuda`` the same code runs on CuPy.

All three start from the same float32 data and weights; the first step's
loss (and the loss after one update) is printed for each, so a wrong
gradient shows up as a mismatch, not as a fast time.

    python bench/mlp_step.py [--device cuda] [--batch 32 256] [--markdown]
"""

from __future__ import annotations

import argparse
import sys

import _harness as h

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


# --- gradlab --------------------------------------------------------------------------------

def worker_gradlab(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    dev = opts.device
    sync = gradlab.cuda.synchronize if dev == "cuda" else None
    log_softmax, nll, path = _gradlab_loss_parts(gradlab, dev)
    cases, losses = {}, {}
    for batch in opts.batch:
        xn, yn, pn = make_data(batch)
        x = gradlab.tensor(xn, device=dev)
        target = nll.prepare(yn)
        params = [gradlab.tensor(p, device=dev, requires_grad=True) for p in pn]

        def step(want_loss=False, x=x, target=target, params=params):
            w1, b1, w2, b2, w3, b3 = params
            hidden = (x @ w1 + b1).relu()
            hidden = (hidden @ w2 + b2).relu()
            loss = nll(log_softmax(hidden @ w3 + b3), target)
            loss.backward()
            with gradlab.no_grad():
                for p in params:
                    p -= LR * p.grad
                    p.grad = None
            return loss.item() if want_loss else None

        cases[f"b{batch}"], losses[f"b{batch}"] = _time_steps(step, opts, sync)
    return {"cases": cases, "losses": losses, "path": path}


def _gradlab_loss_parts(gradlab, dev):
    """log_softmax and NLL from gradlab's own ops where they exist, else from primitives.

    ``log_softmax`` and indexing with a tensor of row numbers are being
    written; until they land, the fallbacks compute the same values:
    ``z - m - log(sum(exp(z - m)))`` with ``m`` the row max taken as a
    constant (log-softmax does not change when a constant is subtracted
    from a row, so the gradient is exact), and the NLL as a one-hot product.
    """
    import numpy as np

    probe = gradlab.tensor(np.zeros((2, 3), np.float32), device=dev, requires_grad=True)
    used = []
    try:
        probe.log_softmax(1)

        def log_softmax(z):
            return z.log_softmax(1)

        used.append("log_softmax")
    except (AttributeError, NotImplementedError):
        max_op = _row_max(gradlab, probe)

        def log_softmax(z):
            if max_op is not None:
                z = z - max_op(z)
            return z - z.exp().sum(1, keepdim=True).log()

        used.append("log_softmax from " + ("max, " if max_op else "") + "exp/sum/log")

    class NLL:
        """-mean(logp[i, y_i]): by indexing if gradlab can, else by a one-hot product."""

        def __init__(self):
            rows = gradlab.arange(2, device=dev)
            try:
                probe[rows, gradlab.tensor(np.array([0, 2]), device=dev)]
                self.indexing = True
            except (TypeError, NotImplementedError, IndexError, AttributeError):
                self.indexing = False

        def prepare(self, labels):
            if self.indexing:
                n = len(labels)
                return gradlab.arange(n, device=dev), gradlab.tensor(labels, device=dev)
            onehot = np.zeros((len(labels), SIZES[-1]), np.float32)
            onehot[np.arange(len(labels)), labels] = 1
            return gradlab.tensor(onehot, device=dev), None

        def __call__(self, logp, target):
            if self.indexing:
                rows, labels = target
                return -logp[rows, labels].mean()
            onehot, _ = target
            return -(logp * onehot).sum() / logp.shape[0]

    nll = NLL()
    used.append("indexing" if nll.indexing else "one-hot NLL")
    return log_softmax, nll, " + ".join(used)


def _row_max(gradlab, probe):
    """A function giving each row's max as a constant (no graph), if gradlab has one."""
    for name in ("amax", "max"):
        try:
            out = getattr(probe, name)(dim=1, keepdim=True)
        except (AttributeError, NotImplementedError, TypeError):
            continue
        if name == "max" and isinstance(out, tuple):
            return lambda z: z.detach().max(dim=1, keepdim=True)[0]
        return lambda z, name=name: getattr(z.detach(), name)(dim=1, keepdim=True)
    return None


# --- PyTorch --------------------------------------------------------------------------------

def worker_torch(opts) -> dict:
    torch = h.import_torch(opts.device)
    dev = opts.device
    sync = torch.cuda.synchronize if dev == "cuda" else None
    cases, losses = {}, {}
    for batch in opts.batch:
        xn, yn, pn = make_data(batch)
        x, y = torch.tensor(xn, device=dev), torch.tensor(yn, device=dev)
        rows = torch.arange(batch, device=dev)
        params = [torch.tensor(p, device=dev, requires_grad=True) for p in pn]

        def step(want_loss=False, x=x, y=y, rows=rows, params=params):
            w1, b1, w2, b2, w3, b3 = params
            hidden = (x @ w1 + b1).relu()
            hidden = (hidden @ w2 + b2).relu()
            logp = (hidden @ w3 + b3).log_softmax(1)
            loss = -logp[rows, y].mean()
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p -= LR * p.grad
                    p.grad = None
            return loss.item() if want_loss else None

        cases[f"b{batch}"], losses[f"b{batch}"] = _time_steps(step, opts, sync)
    return {"cases": cases, "losses": losses, "versions": {"torch": torch.__version__}}


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


WORKERS = {"gradlab": worker_gradlab, "numpy": worker_numpy, "torch": worker_torch}


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
    g, n, t = results["gradlab"], results["numpy"], results["torch"]
    hand = "CuPy" if opts.device == "cuda" else "NumPy"
    sec = h.Section(f"MLP {'-'.join(map(str, SIZES))} SGD step ({opts.device}, float32)")
    tab = h.Table(["batch", "gradlab ms", f"{hand} ms", "PyTorch ms", f"gradlab/{hand}",
                   "gradlab/PyTorch", f"{hand}/PyTorch"])
    for batch in opts.batch:
        case = f"b{batch}"
        gt, nt, tt = (h.case_time(r, case) for r in (g, n, t))
        tab.add(batch, h.status_cell(g, case, "ms"), h.status_cell(n, case, "ms"),
                h.status_cell(t, case, "ms"), h.fmt_ratio(gt, nt), h.fmt_ratio(gt, tt),
                h.fmt_ratio(nt, tt))
    sec.table("Time per training step (forward, backward, SGD update):", tab)

    losses = h.Table(["batch", "contestant", "loss, step 1", "loss, step 2"], left=2)
    agree, compared = True, 0
    for batch in opts.batch:
        case = f"b{batch}"
        seen = []
        for name, r in (("gradlab", g), (hand, n), ("PyTorch", t)):
            if r["status"] == "ok":
                seen.append(r["losses"][case])
                losses.add(batch, name, *(f"{v:.6f}" for v in seen[-1]))
        for other in seen[1:]:
            compared += 1
            agree &= all(abs(a - b) <= 1e-4 * abs(a) + 1e-5 for a, b in zip(seen[0], other))
    sec.table("Same data, same weights: the losses must agree (step 2 checks the update):",
              losses)
    if not compared:
        sec.note("Fewer than two contestants ran: no losses to compare.")
    elif agree:
        sec.note("The losses agree to 1e-4 (relative).")
    else:
        sec.note("**THE LOSSES DISAGREE**: some contestant computes a different step; its time "
                 "means nothing until that is fixed.")
    if g["status"] == "ok":
        sec.note(f"gradlab's loss is built from: {g['path']}.")
    gt, nt = h.case_time(g, f"b{TARGET_BATCH}"), h.case_time(n, f"b{TARGET_BATCH}")
    if gt and nt and opts.device == "cpu":
        verdict = "meets" if gt / nt <= TARGET_NUMPY else "misses"
        sec.note(f"Target gradlab/NumPy ≤ {TARGET_NUMPY:.2f} at batch {TARGET_BATCH}: "
                 f"{gt / nt:.2f}, {verdict} it.")
    sec.note(h.timing_note(opts) + f" lr = {LR}, the same batch every step.")
    for line in h.problems(results):
        sec.note(line)
    return sec


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
