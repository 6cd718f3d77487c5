"""Lesson 13: conditioning and learning rates (the reference solution)."""

import math

import numpy as np

import gradlab


def quadratic(A, x):
    """f(x) = ½ xᵀAx, the loss of this lesson; its gradient is A x (A symmetric)."""
    return 0.5 * (x @ (A @ x))


def largest_stable_lr(A):
    """The learning rate above which gradient descent on ½ xᵀAx diverges: 2 / λ_max."""
    # eigvalsh: the eigenvalues of a symmetric matrix, in ascending order
    eigenvalues = np.linalg.eigvalsh(A.numpy())
    return float(2.0 / eigenvalues[-1])


def convergence_rate(A, lr):
    """How much one step of gradient descent shrinks the error in its slowest direction:
    max over the eigenvalues λ of |1 − lr·λ| (below 1: converges)."""
    eigenvalues = np.linalg.eigvalsh(A.numpy())
    return float(np.max(np.abs(1.0 - lr * eigenvalues)))


def steps_to_converge(A, x0, lr, tol=1e-6, max_steps=10_000):
    """Steps of gradient descent from x0 until f(x) <= tol·f(x0) (0 if x0 already is);
    None if that does not happen within max_steps (too slow, or diverging)."""
    x = x0.detach().clone().requires_grad_(True)
    target = tol * quadratic(A, x0).item()
    for step in range(max_steps + 1):
        loss = quadratic(A, x)
        value = loss.item()
        if value <= target:
            return step
        if not math.isfinite(value) or step == max_steps:
            return None
        loss.backward()
        with gradlab.no_grad():
            x -= lr * x.grad
        x.grad = None
    return None


def warmup_cosine(step, total_steps, warmup_steps, base_lr, min_lr=0.0):
    """The learning rate at ``step`` (0, 1, ...): a linear warmup to base_lr over
    warmup_steps steps, then a cosine from base_lr down towards min_lr at total_steps."""
    if step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return min_lr + (base_lr - min_lr) * (1 + math.cos(math.pi * progress)) / 2


if __name__ == "__main__":
    # What the app runs when you press r: gradient descent on f = ½(x² + 10y²) with three
    # learning rates around the limit 2/10 = 0.2. Watch the loss in the Training panel.
    A = gradlab.tensor([[1.0, 0.0], [0.0, 10.0]], dtype=gradlab.float64)
    x0 = gradlab.tensor([-4.0, 2.0], dtype=gradlab.float64)
    for lr in (0.05, 0.18, 0.21):
        x = x0.clone().requires_grad_(True)
        optimizer = gradlab.optim.SGD([x], lr=lr)
        for _ in range(20):
            optimizer.zero_grad()
            quadratic(A, x).backward()
            optimizer.step()
        print(f"lr {lr}: loss after 20 steps {quadratic(A, x).item():.3g}")
    # Your functions:
    print(f"largest stable lr: {largest_stable_lr(A):.3f}")
    for lr in (0.05, 0.18, 0.21):
        print(f"lr {lr}: rate {convergence_rate(A, lr):.2f}, steps to f <= 1e-6 f(x0): "
              f"{steps_to_converge(A, x0, lr, max_steps=300)}")
    print("warmup + cosine, 10 steps:",
          [round(warmup_cosine(t, 10, 3, 0.1), 4) for t in range(10)])
