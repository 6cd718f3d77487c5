"""Lesson 13's checks: random symmetric positive definite matrices with known eigenvalues,
gradient descent run in NumPy next to the student's numbers, and gradlab's own
schedulers (SequentialLR of LinearLR and CosineAnnealingLR) for the schedule."""

import math

import numpy as np

import gradlab
from gradlab.optim import lr_scheduler
from lessons.expect import check, expect, expect_close, expect_equal


def _spd(rng, n, eigenvalues):
    """A random symmetric matrix Q diag(eigenvalues) Qᵀ, as a float64 gradlab tensor."""
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    array = q @ np.diag(eigenvalues) @ q.T
    return gradlab.tensor((array + array.T) / 2, dtype=gradlab.float64), array


def _random_matrix(rng):
    n = int(rng.integers(3, 7))
    lam_min = float(rng.uniform(0.2, 2.0))
    kappa = float(rng.uniform(5, 40))
    eigenvalues = np.sort(np.concatenate([[lam_min, lam_min * kappa],
                                          rng.uniform(lam_min, lam_min * kappa, n - 2)]))
    A, array = _spd(rng, n, eigenvalues)
    return A, array, eigenvalues


def _gd_losses(array, x0, lr, steps):
    x = np.array(x0, dtype=np.float64)
    out = [0.5 * x @ array @ x]
    for _ in range(steps):
        x = x - lr * (array @ x)
        out.append(0.5 * x @ array @ x)
    return np.array(out)


def _describe(eigenvalues):
    return f"{len(eigenvalues)}×{len(eigenvalues)} A, eigenvalues {eigenvalues.min():.3g}.." \
           f"{eigenvalues.max():.3g}"


@check("largest_stable_lr")
def largest_stable_lr(student, rng):
    for _ in range(3):
        A, array, eigenvalues = _random_matrix(rng)
        got = student.largest_stable_lr(A)
        expect(isinstance(got, float), "largest_stable_lr returns a Python float", "a float",
               f"a {type(got).__name__}", "float(...) turns a NumPy number into one")
        expect_close(got, 2 / eigenvalues.max(), f"the limit for a {_describe(eigenvalues)}",
                     rtol=1e-8, atol=0)
    x0 = rng.normal(size=len(eigenvalues))
    below = _gd_losses(array, x0, 0.98 * got, 400)
    above = _gd_losses(array, x0, 1.02 * got, 400)
    expect(below[-1] < below[0], "gradient descent at 0.98 × your lr converges",
           "loss going down", f"loss {below[0]:.3g} → {below[-1]:.3g} in 400 steps")
    expect(above[-1] > above[0], "gradient descent at 1.02 × your lr diverges",
           "loss going up", f"loss {above[0]:.3g} → {above[-1]:.3g} in 400 steps")


@check("convergence_rate")
def convergence_rate(student, rng):
    A, array, eigenvalues = _random_matrix(rng)
    limit = 2 / eigenvalues.max()
    best = 2 / (eigenvalues.min() + eigenvalues.max())
    for lr in (float(rng.uniform(0.1, 0.9)) * best, best, float(rng.uniform(1.05, 1.2)) * limit):
        got = student.convergence_rate(A, lr)
        want = float(np.max(np.abs(1 - lr * eigenvalues)))
        expect_close(got, want, f"the rate at lr = {lr:.4g} for a {_describe(eigenvalues)}",
                     rtol=1e-8, atol=1e-12)
    kappa = eigenvalues.max() / eigenvalues.min()
    expect_close(student.convergence_rate(A, best), (kappa - 1) / (kappa + 1),
                 f"at the best lr 2/(λmin + λmax) the rate is (κ − 1)/(κ + 1), κ = {kappa:.3g}",
                 rtol=1e-8, atol=1e-12)
    # The rate is what gradient descent really does: the error shrinks by it per step.
    x0 = rng.normal(size=len(eigenvalues))
    lr = float(rng.uniform(0.3, 0.9)) * best
    losses = _gd_losses(array, x0, lr, 400)
    observed = math.sqrt(losses[-1] / losses[-2])
    expect_close(student.convergence_rate(A, lr), observed,
                 f"the rate against √(f(x₄₀₀)/f(x₃₉₉)) of a real run at lr = {lr:.4g}",
                 rtol=1e-3, atol=0)


def _reference_steps(array, x0, lr, tol, max_steps):
    x = np.array(x0, dtype=np.float64)
    target = tol * (0.5 * x @ array @ x)
    for step in range(max_steps + 1):
        value = 0.5 * x @ array @ x
        if value <= target:
            return step
        if not math.isfinite(value) or step == max_steps:
            return None
        x = x - lr * (array @ x)
    return None


@check("steps_to_converge")
def steps_to_converge(student, rng):
    A, array, eigenvalues = _random_matrix(rng)
    x0_array = rng.normal(size=len(eigenvalues))
    x0 = gradlab.tensor(x0_array, dtype=gradlab.float64)
    limit = 2 / eigenvalues.max()
    best = 2 / (eigenvalues.min() + eigenvalues.max())
    tol = float(10.0 ** -rng.uniform(4, 8))
    for lr in (best, float(rng.uniform(0.3, 0.8)) * best, float(rng.uniform(0.9, 0.99)) * limit):
        want = _reference_steps(array, x0_array, lr, tol, 10_000)
        got = student.steps_to_converge(A, x0, lr, tol=tol)
        expect_equal(got, want, f"steps until f ≤ {tol:.2g}·f(x0), lr = {lr:.4g}, "
                                f"{_describe(eigenvalues)}")
    kappa = eigenvalues.max() / eigenvalues.min()
    rate = (kappa - 1) / (kappa + 1)
    bound = math.ceil(math.log(1 / tol) / (2 * math.log(1 / rate)))
    got = student.steps_to_converge(A, x0, best, tol=tol)
    expect(got is not None and got <= bound,
           f"at the best lr it takes at most ln(1/tol) / (2 ln(1/r)) steps, κ = {kappa:.3g}",
           f"at most {bound}", repr(got))
    expect_equal(student.steps_to_converge(A, x0, 1.05 * limit, tol=tol, max_steps=1000), None,
                 "above the limit (lr = 1.05 · 2/λmax, max_steps = 1000) it never converges: "
                 "None")
    slow = _reference_steps(array, x0_array, 0.05 * best, tol, 10_000)
    cap = max(1, slow // 2)
    expect_equal(student.steps_to_converge(A, x0, 0.05 * best, tol=tol, max_steps=cap), None,
                 f"a run that needs {slow} steps, given max_steps = {cap}: None")
    x_start = gradlab.tensor(x0_array * 1e-6, dtype=gradlab.float64)
    expect_equal(student.steps_to_converge(A, x_start, best, tol=1.0), 0,
                 "with tol = 1 the start already qualifies: 0 steps")


def _gradlab_schedule(total, warmup, base, low):
    params = [gradlab.nn.Parameter(gradlab.zeros(1))]
    optimizer = gradlab.optim.SGD(params, lr=base)
    scheduler = lr_scheduler.SequentialLR(
        optimizer,
        [lr_scheduler.LinearLR(optimizer, start_factor=1 / warmup, total_iters=warmup - 1),
         lr_scheduler.CosineAnnealingLR(optimizer, T_max=total - warmup, eta_min=low)],
        milestones=[warmup])
    lrs = []
    for _ in range(total):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return lrs


@check("warmup_cosine")
def warmup_cosine(student, rng):
    total, warmup = int(rng.integers(40, 120)), int(rng.integers(3, 15))
    base = float(rng.uniform(0.01, 1.0))
    for low in (0.0, base * float(rng.uniform(0.01, 0.2))):
        want = _gradlab_schedule(total, warmup, base, low)
        got = [student.warmup_cosine(t, total, warmup, base, min_lr=low) for t in range(total)]
        expect_close(got, want, f"lr at steps 0..{total - 1}, warmup {warmup}, base "
                                f"{base:.3g}, min {low:.3g}, against gradlab's SequentialLR "
                                "(LinearLR, then CosineAnnealingLR)", rtol=1e-9, atol=1e-12)
    expect_close(student.warmup_cosine(0, total, warmup, base), base / warmup,
                 "the first step's lr is base_lr / warmup_steps", rtol=1e-12, atol=0)
    expect_close(student.warmup_cosine(total, total, warmup, base), 0.0,
                 "at step total_steps the cosine has reached min_lr (0)", rtol=0, atol=1e-12)
