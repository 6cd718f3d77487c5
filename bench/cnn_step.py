"""One SGD step of LeNet-5 on 1x28x28 images: gradlab vs hand-written NumPy vs PyTorch.

The model (``_models.build_lenet``): conv 6@5x5, ReLU, max-pool 2, conv
16@5x5, ReLU, max-pool 2, then Linear 256-120-84-10 with ReLUs, the batch
mean of the cross-entropy, and SGD (lr 0.01). Batch 64, float32.

* **gradlab** and **PyTorch** run the same tutorial-style code
  (``nn.Sequential`` of ``nn.Conv2d`` ..., ``F.cross_entropy``,
  ``optim.SGD``): only the library object differs.
* **NumPy**: the forward and a hand-derived backward as an expert would
  write them: channels-last layout throughout (so no transposes), im2col
  through a strided view and one matmul per convolution, 2x2 pooling from
  four strided corners, col2im as 25 strided adds.

Two timings per contestant: the whole step, and forward + backward alone
(``zero_grad``, forward, loss, ``backward``); the issue's target is gradlab
at most 1.0x PyTorch's time for forward + backward. The first two losses of
each contestant are printed, and must agree.

    python bench/cnn_step.py [--device cuda] [--batch 64] [--markdown]
"""

from __future__ import annotations

import argparse
import sys

import _harness as h
import _models

LR = 0.01
TARGET_TORCH = 1.0  # gradlab / PyTorch, forward + backward


def make_data(batch: int):
    """Images, labels and the parameters in PyTorch's layout, identical in every worker."""
    import numpy as np

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.randint(0, 10, size=batch).astype(np.int64)
    shapes = [((6, 1, 5, 5), 25), ((16, 6, 5, 5), 150), ((120, 256), 256), ((84, 120), 120),
              ((10, 84), 84)]
    params = []
    for shape, fan_in in shapes:
        bound = 1 / fan_in ** 0.5
        params.append(rng.uniform(-bound, bound, shape).astype(np.float32))
        params.append(rng.uniform(-bound, bound, shape[0]).astype(np.float32))
    return x, y, params


def _library_worker(lib, opts, sync) -> dict:
    cases, losses = {}, {}
    for batch in opts.batch:
        xn, yn, pn = make_data(batch)
        x, y = lib.tensor(xn, device=opts.device), lib.tensor(yn, device=opts.device)
        model = _models.build_lenet(lib, pn, opts.device)
        optimizer = lib.optim.SGD(model.parameters(), lr=LR)
        step, forward_backward = _models.training_step(lib, model, optimizer, x, y)
        losses[f"b{batch}"] = [step(want_loss=True), step(want_loss=True)]
        for name, fn in (("step", step), ("fwdbwd", forward_backward)):
            cases[f"{name}-b{batch}"] = h.measure(fn, min_time=opts.min_time,
                                                  repeat=opts.repeat, sync=sync)
    return {"cases": cases, "losses": losses}


def worker_gradlab(opts) -> dict:
    gradlab = h.import_gradlab(opts.device)
    sync = gradlab.cuda.synchronize if opts.device == "cuda" else None
    return _library_worker(gradlab, opts, sync)


def worker_torch(opts) -> dict:
    torch = h.import_torch(opts.device)
    sync = torch.cuda.synchronize if opts.device == "cuda" else None
    return dict(_library_worker(torch, opts, sync), versions={"torch": torch.__version__})


# --- NumPy (or CuPy), backward by hand -------------------------------------------------------

class HandWrittenLeNet:
    """LeNet-5's step with a hand-derived backward, channels-last (N, H, W, C) throughout.

    A convolution is ``cols @ Wm + b`` where ``cols`` holds one k·k·C window
    per output pixel (a strided view, copied once by the reshape) and ``Wm``
    the kernel as a (k·k·C, out) matrix; its backward is ``dWm = colsᵀ dout``,
    ``db = Σ dout`` and, for the input, ``dcols = dout Wmᵀ`` added back
    window by window (col2im). Pooling 2x2 is the maximum of each window's
    four strided corners; its backward sends each gradient to the corner
    that held the maximum.
    """

    def __init__(self, xp, x, y, params):
        self.xp, self.y = xp, y
        self.x = xp.ascontiguousarray(x.transpose(0, 2, 3, 1))  # NCHW -> NHWC, once
        c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b, f3w, f3b = params
        # Kernels as (k*k*C, out) matrices in the window order (ki, kj, c).
        to_matrix = lambda w: xp.ascontiguousarray(  # noqa: E731
            w.transpose(2, 3, 1, 0).reshape(-1, w.shape[0]))
        # fc1 sees the features flattened as (h, w, c) instead of PyTorch's (c, h, w).
        f1w = f1w.reshape(120, 16, 4, 4).transpose(0, 2, 3, 1).reshape(120, 256)
        self.params = [to_matrix(c1w), c1b, to_matrix(c2w), c2b,
                       xp.ascontiguousarray(f1w.T), f1b, xp.ascontiguousarray(f2w.T), f2b,
                       xp.ascontiguousarray(f3w.T), f3b]
        self.grads = [xp.empty_like(p) for p in self.params]
        self.rows = xp.arange(x.shape[0])

    def _cols(self, a, k):
        n, hh, ww, c = a.shape
        ho, wo = hh - k + 1, ww - k + 1
        s = a.strides
        view = self.xp.lib.stride_tricks.as_strided(
            a, (n, ho, wo, k, k, c), (s[0], s[1], s[2], s[1], s[2], s[3]))
        return view.reshape(n * ho * wo, k * k * c), (n, ho, wo)

    def _pool(self, a):
        """2x2 max-pool as three maximums of the four strided corners of each window."""
        corners = [a[:, i::2, j::2, :] for i in (0, 1) for j in (0, 1)]
        out = self.xp.maximum(self.xp.maximum(corners[0], corners[1]),
                              self.xp.maximum(corners[2], corners[3]))
        return out, corners

    def _unpool(self, grad, corners, out):
        """Each window's gradient goes to the corner that held its maximum."""
        n, hh, ww, c = out.shape
        dx = self.xp.zeros((n, hh * 2, ww * 2, c), grad.dtype)
        for k, (i, j) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
            dx[:, i::2, j::2, :] = grad * (corners[k] == out)
        return dx

    def step(self, want_loss=False):
        xp = self.xp
        c1, c1b, c2, c2b, f1, f1b, f2, f2b, f3, f3b = self.params
        g = self.grads
        n = self.x.shape[0]
        # forward
        cols1, (_, h1, w1) = self._cols(self.x, 5)
        a1 = cols1 @ c1
        a1 += c1b
        xp.maximum(a1, 0, out=a1)
        p1, m1 = self._pool(a1.reshape(n, h1, w1, 6))
        cols2, (_, h2, w2) = self._cols(p1, 5)
        a2 = cols2 @ c2
        a2 += c2b
        xp.maximum(a2, 0, out=a2)
        p2, m2 = self._pool(a2.reshape(n, h2, w2, 16))
        flat = p2.reshape(n, 256)
        z1 = flat @ f1
        z1 += f1b
        xp.maximum(z1, 0, out=z1)
        z2 = z1 @ f2
        z2 += f2b
        xp.maximum(z2, 0, out=z2)
        z = z2 @ f3
        z += f3b
        z -= z.max(axis=1, keepdims=True)
        e = xp.exp(z)
        total = e.sum(axis=1, keepdims=True)
        loss = xp.log(total).mean() - z[self.rows, self.y].mean()
        # backward
        e /= total
        e[self.rows, self.y] -= 1
        e *= 1.0 / n
        xp.matmul(z2.T, e, out=g[8])
        e.sum(axis=0, out=g[9])
        dz2 = e @ f3.T
        dz2 *= z2 > 0
        xp.matmul(z1.T, dz2, out=g[6])
        dz2.sum(axis=0, out=g[7])
        dz1 = dz2 @ f2.T
        dz1 *= z1 > 0
        xp.matmul(flat.T, dz1, out=g[4])
        dz1.sum(axis=0, out=g[5])
        dflat = dz1 @ f1.T
        da2 = self._unpool(dflat.reshape(p2.shape), m2, p2).reshape(-1, 16)
        da2 *= a2 > 0
        xp.matmul(cols2.T, da2, out=g[2])
        da2.sum(axis=0, out=g[3])
        dcols2 = (da2 @ c2.T).reshape(n, h2, w2, 5, 5, 6)
        dp1 = xp.zeros_like(p1)
        for i in range(5):
            for j in range(5):
                dp1[:, i:i + h2, j:j + w2, :] += dcols2[:, :, :, i, j, :]
        da1 = self._unpool(dp1, m1, p1).reshape(-1, 6)
        da1 *= a1 > 0
        xp.matmul(cols1.T, da1, out=g[0])
        da1.sum(axis=0, out=g[1])
        for p, grad in zip(self.params, g):
            grad *= LR
            p -= grad
        return float(loss) if want_loss else None


def worker_numpy(opts) -> dict:
    if opts.device == "cuda":
        import cupy as xp

        sync, label = xp.cuda.runtime.deviceSynchronize, f"CuPy {xp.__version__}"
    else:
        import numpy as xp

        sync, label = None, f"NumPy {xp.__version__}"
    cases, losses = {}, {}
    for batch in opts.batch:
        xn, yn, pn = make_data(batch)
        model = HandWrittenLeNet(xp, xp.asarray(xn), xp.asarray(yn),
                                 [xp.asarray(p) for p in pn])
        losses[f"b{batch}"] = [model.step(want_loss=True), model.step(want_loss=True)]
        cases[f"step-b{batch}"] = h.measure(model.step, min_time=opts.min_time,
                                            repeat=opts.repeat, sync=sync)
    return {"cases": cases, "losses": losses, "label": label}


WORKERS = {"gradlab": worker_gradlab, "numpy": worker_numpy, "torch": worker_torch}


# --- driver ---------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=5, min_time=0.2)
    p.add_argument("--batch", type=int, nargs="+", default=[64],
                   help="batch sizes (default: 64)")
    return p


def collect(opts: argparse.Namespace) -> dict:
    args = h.passed_on(opts) + ["--batch", *map(str, opts.batch)]
    return h.run_contestants(__file__, list(WORKERS), args, rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    g, n, t = results["gradlab"], results["numpy"], results["torch"]
    hand = "CuPy" if opts.device == "cuda" else "NumPy"
    sec = h.Section(f"LeNet-5 SGD step, 1x28x28 images ({opts.device}, float32)")
    tab = h.Table(["batch", "timed", "gradlab ms", f"{hand} ms", "PyTorch ms",
                   f"gradlab/{hand}", "gradlab/PyTorch"])
    for batch in opts.batch:
        for kind, label in (("step", "whole step"), ("fwdbwd", "forward + backward")):
            case = f"{kind}-b{batch}"
            gt, nt, tt = (h.case_time(r, case) for r in (g, n, t))
            tab.add(batch, label, h.status_cell(g, case, "ms"),
                    h.status_cell(n, case, "ms") if kind == "step" else "",
                    h.status_cell(t, case, "ms"), h.fmt_ratio(gt, nt) if nt else "",
                    h.fmt_ratio(gt, tt))
    sec.table("Time per step (the hand-written NumPy step is only timed whole):", tab)
    h.compare_losses(sec, {"gradlab": g, hand: n, "PyTorch": t}, opts.batch)
    case = f"fwdbwd-b{opts.batch[0]}"
    gt, tt = h.case_time(g, case), h.case_time(t, case)
    if gt and tt and opts.device == "cpu":
        verdict = "meets" if gt / tt <= TARGET_TORCH else "misses"
        sec.note(f"Target gradlab/PyTorch ≤ {TARGET_TORCH:.2f} for forward + backward at "
                 f"batch {opts.batch[0]}: {gt / tt:.2f}, {verdict} it.")
    return h.close_section(sec, results, opts, f"lr = {LR}, the same batch every step.")


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
