"""Lesson 23: complex numbers, gradients in the plane and the Fourier transform.

Three tasks, marked TODO:

1. plane_gradient(loss, z): ∂L/∂x + i·∂L/∂y of a real loss at z = x + iy, by central
   differences along both axes.
2. fit_gain(x, y, lr, steps): the complex g with g·x ≈ y, by gradient descent.
3. apply_filter(w, x) and learn_filter(x, y, lr, steps): a filter as one complex gain per
   frequency (rfft, times w, irfft), learned by gradient descent.

Check them with `gradlab check 23` (or press k in the app). Press r in the app to run
this file under the debugger.
"""

import math

import gradlab
from gradlab import fft


def plane_gradient(loss, z, h=1e-6):
    """∂L/∂x + i·∂L/∂y of the real loss ``loss`` at the complex point ``z = x + iy`` (a
    0-d complex128 tensor), by central differences along the real and the imaginary
    axis. ``loss`` takes a complex tensor and returns a real 0-d tensor."""
    # TODO: one central difference along x (z ± h) and one along y (z ± 1j * h);
    #       return dx + 1j * dy
    raise NotImplementedError("plane_gradient")


def fit_gain(x, y, lr, steps):
    """The complex gain g (a 0-d complex128 tensor) with g·x ≈ y, by ``steps`` steps of
    plain gradient descent with learning rate ``lr`` on mean(|g·x − y|²), from g = 0."""
    # TODO: g = 0 as a complex128 leaf that requires grad; `steps` times: the real loss
    #       mean(|g·x − y|²), backward, g -= lr * g.grad under no_grad, clear g.grad;
    #       return g
    raise NotImplementedError("fit_gain")


def apply_filter(w, x):
    """Filter the real signals ``x`` (shape (..., n)) in the frequency domain: multiply
    bin k of each signal's rfft by the complex gain w[k], and go back to n samples."""
    # TODO: rfft of x, times w, irfft back to x.shape[-1] samples
    raise NotImplementedError("apply_filter")


def learn_filter(x, y, lr, steps):
    """The gains w (one complex128 per rfft bin, from 0) that make apply_filter(w, x) ≈ y,
    by ``steps`` steps of plain gradient descent on the squared error summed over each
    signal's samples and averaged over the signals."""
    # TODO: w = zeros(n // 2 + 1), complex128, requires grad; `steps` times: loss =
    #       squared error summed over each signal's samples, averaged over the
    #       signals; backward, w -= lr * w.grad under no_grad, clear w.grad;
    #       return w
    raise NotImplementedError("learn_filter")


if __name__ == "__main__":
    # What the app runs when you press r.
    gradlab.manual_seed(0)

    # 1. The gradient of |z|² at 1 + 2i: finite differences and autograd agree on 2z.
    z = gradlab.tensor(1 + 2j, dtype=gradlab.complex128, requires_grad=True)
    loss = z.abs() ** 2
    loss.backward()
    print("finite differences:", plane_gradient(lambda w: w.abs() ** 2, z.detach()))
    print("autograd:          ", z.grad)

    # 2. A gain that amplifies by 2 and turns by 30°, seen through a little noise.
    true_gain = 2 * complex(math.cos(math.pi / 6), math.sin(math.pi / 6))
    x = gradlab.randn(40, dtype=gradlab.complex128)
    y = true_gain * x + 0.05 * gradlab.randn(40, dtype=gradlab.complex128)
    g = fit_gain(x, y, lr=0.3, steps=20)
    print(f"gain: |g| = {g.abs().item():.3f}, angle = {math.degrees(g.angle().item()):.1f}°")

    # 3. An unknown echo filter: y[t] = x[t] + 0.5·x[t − 3] (going round the end).
    n = 32
    x = gradlab.randn(8, n, dtype=gradlab.float64)
    y = x + 0.5 * x.roll(3, dims=-1)
    w = learn_filter(x, y, lr=0.1, steps=100)
    echo = fft.rfft(gradlab.tensor([1.0, 0, 0, 0.5] + [0.0] * (n - 4), dtype=gradlab.float64))
    print("learned |w| :", w.detach().abs()[:6])
    print("the echo's  :", echo.abs()[:6])
