"""Lesson 23: complex numbers, gradients in the plane and the Fourier transform (the
reference solution)."""

import math

import gradlab
from gradlab import fft


def plane_gradient(loss, z, h=1e-6):
    """∂L/∂x + i·∂L/∂y of the real loss ``loss`` at the complex point ``z = x + iy`` (a
    0-d complex128 tensor), by central differences along the real and the imaginary
    axis. ``loss`` takes a complex tensor and returns a real 0-d tensor."""
    dx = (loss(z + h) - loss(z - h)) / (2 * h)            # a step to the right
    dy = (loss(z + 1j * h) - loss(z - 1j * h)) / (2 * h)  # a step up
    return dx + 1j * dy


def fit_gain(x, y, lr, steps):
    """The complex gain g (a 0-d complex128 tensor) with g·x ≈ y, by ``steps`` steps of
    plain gradient descent with learning rate ``lr`` on mean(|g·x − y|²), from g = 0."""
    g = gradlab.zeros((), dtype=gradlab.complex128, requires_grad=True)
    for _ in range(steps):
        loss = ((g * x - y).abs() ** 2).mean()  # a real loss: |·|² of each residual
        loss.backward()
        with gradlab.no_grad():
            g -= lr * g.grad  # g.grad = ∂L/∂Re g + i·∂L/∂Im g: the uphill direction
        g.grad = None
    return g


def apply_filter(w, x):
    """Filter the real signals ``x`` (shape (..., n)) in the frequency domain: multiply
    bin k of each signal's rfft by the complex gain w[k], and go back to n samples."""
    return fft.irfft(w * fft.rfft(x), n=x.shape[-1])


def learn_filter(x, y, lr, steps):
    """The gains w (one complex128 per rfft bin, from 0) that make apply_filter(w, x) ≈ y,
    by ``steps`` steps of plain gradient descent on the squared error summed over each
    signal's samples and averaged over the signals."""
    n = x.shape[-1]
    w = gradlab.zeros(n // 2 + 1, dtype=gradlab.complex128, requires_grad=True)
    for _ in range(steps):
        loss = ((apply_filter(w, x) - y) ** 2).sum(dim=-1).mean()
        loss.backward()  # through irfft (fft_c2r), the product and rfft (fft_r2c)
        with gradlab.no_grad():
            w -= lr * w.grad
        w.grad = None
    return w


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
