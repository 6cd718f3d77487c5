"""Lesson 13: conditioning and learning rates.

Fill in the four functions marked TODO, then check them with `gradlab check 13`
(or press k in the app). Run this file under the debugger with r in the app.
"""

import math

import numpy as np

import gradlab


def quadratic(A, x):
    """f(x) = ½ xᵀAx, the loss of this lesson; its gradient is A x (A symmetric)."""
    return 0.5 * (x @ (A @ x))


def largest_stable_lr(A):
    """The learning rate above which gradient descent on ½ xᵀAx diverges: 2 / λ_max."""
    # TODO: the eigenvalues of A (np.linalg.eigvalsh(A.numpy())); return 2 / the largest,
    #       as a Python float
    raise NotImplementedError("largest_stable_lr")


def convergence_rate(A, lr):
    """How much one step of gradient descent shrinks the error in its slowest direction:
    max over the eigenvalues λ of |1 − lr·λ| (below 1: converges)."""
    # TODO: the largest |1 - lr * λ| over the eigenvalues λ of A, as a Python float
    raise NotImplementedError("convergence_rate")


def steps_to_converge(A, x0, lr, tol=1e-6, max_steps=10_000):
    """Steps of gradient descent from x0 until f(x) <= tol·f(x0) (0 if x0 already is);
    None if that does not happen within max_steps (too slow, or diverging)."""
    # TODO: gradient descent x <- x - lr * grad f(x) from x0, counting steps; return the
    #       count once f(x) <= tol * f(x0); None if f(x) is not finite or the count reaches
    #       max_steps first
    raise NotImplementedError("steps_to_converge")


def warmup_cosine(step, total_steps, warmup_steps, base_lr, min_lr=0.0):
    """The learning rate at ``step`` (0, 1, ...): a linear warmup to base_lr over
    warmup_steps steps, then a cosine from base_lr down towards min_lr at total_steps."""
    # TODO: steps 0 .. warmup_steps - 1: base_lr * (step + 1) / warmup_steps;
    #       then min_lr + (base_lr - min_lr) * (1 + cos(pi * progress)) / 2, where progress
    #       goes from 0 at warmup_steps to 1 at total_steps
    raise NotImplementedError("warmup_cosine")


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
